--- rock.agent.swebench.specs_c: SWE-bench 4.1.0's specs for its C/C++
-- repositories (MAP_REPO_VERSION_TO_SPECS_C in swebench/harness/constants/
-- c.py at tag v4.1.0: SWE-bench Multilingual), as data: repo -> version ->
-- fields. The eval script (rock.agent.swebench.eval_script, as 4.1.0's
-- make_eval_script_list_common) runs build after the test patch and
-- test_cmd (a string, or a list of lines) between the markers; it runs
-- no install, no pre_install and activates no env. pre_install, install
-- and docker_specs say how SWE-bench builds the instance's image (rock
-- does not build images; kept so the table is the spec); apt-pkgs is left
-- out (image building only). Edit a row to change how that repo and
-- version is graded; a task's own test_cmd / eval_script / log_parser
-- fields override these.
return {
  ["redis/redis"] = {
    ["13115"] = {
      build = { "make distclean", "make" },
      test_cmd = { "TERM=dumb ./runtest --durable --single unit/scripting" },
    },
    ["12472"] = {
      build = { "make distclean", "make" },
      test_cmd = { "TERM=dumb ./runtest --durable --single unit/acl --only \"/.*ACL GETUSER.*\"" },
    },
    ["12272"] = {
      build = { "make distclean", "make" },
      test_cmd = {
        "TERM=dumb ./runtest --durable --single unit/type/string --only \"/.*(GETRANGE|SETRANGE).*\"",
      },
    },
    ["11734"] = {
      build = { "make distclean", "make" },
      test_cmd = { "TERM=dumb ./runtest --durable --single unit/bitops" },
    },
    ["10764"] = {
      build = { "make distclean", "make" },
      test_cmd = { "TERM=dumb ./runtest --durable --single unit/type/zset --only \"BZMPOP\"" },
    },
    ["10095"] = {
      build = { "make distclean", "make" },
      test_cmd = { "TERM=dumb ./runtest --durable --single unit/type/list --only \"/.*(LPOP|RPOP)\"" },
    },
    ["9733"] = {
      build = { "make distclean", "make" },
      test_cmd = { "TERM=dumb ./runtest --durable --single unit/introspection-2" },
    },
    ["10068"] = {
      build = { "make distclean", "make" },
      test_cmd = { "TERM=dumb ./runtest --durable --single unit/type/stream --only \"/*XTRIM*\"" },
    },
    ["11631"] = {
      build = { "make distclean", "make" },
      test_cmd = { "TERM=dumb ./runtest --durable --single unit/geo --only \"/.*GEOSEARCH .*\"" },
    },
    ["11510"] = {
      build = { "make distclean", "make" },
      test_cmd = { "TERM=dumb ./runtest --durable --single unit/introspection --only \"/.*MONITOR.*\"" },
    },
    ["11279"] = {
      build = { "make distclean", "make" },
      test_cmd = { "TERM=dumb ./runtest --durable --single unit/acl" },
    },
    ["13338"] = {
      build = { "make distclean", "make" },
      test_cmd = { "TERM=dumb ./runtest --durable --single unit/type/stream-cgroups" },
    },
  },
  ["jqlang/jq"] = {
    ["2839"] = {
      build = {
        "git submodule update --init",
        "autoreconf -fi",
        "./configure --with-oniguruma=builtin",
        "make clean",
        "touch src/parser.y src/lexer.l",
        "make -j$(nproc)",
      },
      test_cmd = { "make check" },
    },
    ["2650"] = {
      build = {
        "git submodule update --init",
        "autoreconf -fi",
        "./configure --with-oniguruma=builtin",
        "make clean",
        "touch src/parser.y src/lexer.l",
        "make -j$(nproc)",
      },
      test_cmd = { "make check" },
    },
    ["2235"] = {
      build = {
        "git submodule update --init",
        "autoreconf -fi",
        "./configure --with-oniguruma=builtin",
        "make clean",
        "touch src/parser.y src/lexer.l",
        "make -j$(nproc)",
      },
      test_cmd = { "make check" },
    },
    ["2658"] = {
      build = {
        "git submodule update --init",
        "autoreconf -fi",
        "./configure --with-oniguruma=builtin",
        "make clean",
        "touch src/parser.y src/lexer.l",
        "make -j$(nproc)",
      },
      test_cmd = { "make check" },
    },
    ["2750"] = {
      build = {
        "git submodule update --init",
        "autoreconf -fi",
        "./configure --with-oniguruma=builtin",
        "make clean",
        "touch src/parser.y src/lexer.l",
        "make -j$(nproc)",
      },
      test_cmd = { "make check" },
    },
    ["2681"] = {
      build = {
        "git submodule update --init",
        "autoreconf -fi",
        "./configure --with-oniguruma=builtin",
        "make clean",
        "touch src/parser.y src/lexer.l",
        "make -j$(nproc)",
      },
      test_cmd = { "make check" },
    },
    ["2919"] = {
      build = {
        "git submodule update --init",
        "autoreconf -fi",
        "./configure --with-oniguruma=builtin",
        "make clean",
        "touch src/parser.y src/lexer.l",
        "make -j$(nproc)",
      },
      test_cmd = { "make check" },
    },
    ["2598"] = {
      build = {
        "git submodule update --init",
        "autoreconf -fi",
        "./configure --with-oniguruma=builtin",
        "make clean",
        "touch src/parser.y src/lexer.l",
        "make -j$(nproc)",
      },
      test_cmd = { "make check" },
    },
    ["2728"] = {
      build = {
        "git submodule update --init",
        "autoreconf -fi",
        "./configure --with-oniguruma=builtin",
        "make clean",
        "touch src/parser.y src/lexer.l",
        "make -j$(nproc)",
      },
      test_cmd = { "make check" },
    },
  },
  ["nlohmann/json"] = {
    ["4237"] = {
      build = { "mkdir -p build", "cd build", "cmake ..", "make test-udt_cpp11", "cd .." },
      test_cmd = { "./build/tests/test-udt_cpp11 -s -r=xml" },
    },
  },
  ["micropython/micropython"] = {
    ["15898"] = {
      pre_install = { "python -m venv .venv", "source .venv/bin/activate" },
      build = {
        "source ./tools/ci.sh",
        "ci_unix_build_helper VARIANT=standard",
        "gcc -shared -o tests/ports/unix/ffi_lib.so tests/ports/unix/ffi_lib.c",
      },
      test_cmd = {
        "cd tests",
        "MICROPY_CPYTHON3=python3 MICROPY_MICROPYTHON=../ports/unix/build-standard/micropython ./run-tests.py -i string_format",
      },
    },
    ["13569"] = {
      pre_install = { "python -m venv .venv", "source .venv/bin/activate" },
      build = {
        "source ./tools/ci.sh",
        "ci_unix_build_helper VARIANT=standard",
        "gcc -shared -o tests/ports/unix/ffi_lib.so tests/ports/unix/ffi_lib.c",
      },
      test_cmd = {
        "cd tests",
        "MICROPY_CPYTHON3=python3 MICROPY_MICROPYTHON=../ports/unix/build-standard/micropython ./run-tests.py -i try",
      },
    },
    ["13039"] = {
      pre_install = { "python -m venv .venv", "source .venv/bin/activate" },
      build = {
        "source ./tools/ci.sh",
        "ci_unix_build_helper VARIANT=standard",
        "gcc -shared -o tests/unix/ffi_lib.so tests/unix/ffi_lib.c",
      },
      test_cmd = {
        "cd tests",
        "MICROPY_CPYTHON3=python3 MICROPY_MICROPYTHON=../ports/unix/build-standard/micropython ./run-tests.py -i slice",
      },
    },
    ["12158"] = {
      pre_install = { "python -m venv .venv", "source .venv/bin/activate" },
      build = {
        "source ./tools/ci.sh",
        "ci_unix_build_helper VARIANT=standard",
        "gcc -shared -o tests/unix/ffi_lib.so tests/unix/ffi_lib.c",
      },
      test_cmd = {
        "cd tests",
        "MICROPY_CPYTHON3=python3 MICROPY_MICROPYTHON=../ports/unix/build-standard/micropython ./run-tests.py -d thread",
      },
    },
    ["10095"] = {
      pre_install = {
        "python -m venv .venv",
        "source .venv/bin/activate",
        "sed -i 's/uint mp_import_stat/mp_import_stat_t mp_import_stat/' mpy-cross/main.c",
      },
      build = { "source ./tools/ci.sh", "ci_unix_build_helper VARIANT=standard" },
      test_cmd = {
        "cd tests",
        "MICROPY_CPYTHON3=python3 MICROPY_MICROPYTHON=../ports/unix/build-standard/micropython ./run-tests.py -i basics/fun",
      },
    },
  },
  ["valkey-io/valkey"] = {
    ["928"] = {
      build = { "make distclean", "make" },
      test_cmd = {
        "TERM=dumb ./runtest --durable --single unit/cluster/replica-migration --only \"/.*NOREPLICAS.*\"",
      },
    },
    ["790"] = {
      build = { "make distclean", "make" },
      test_cmd = { "TERM=dumb ./runtest --durable --single unit/cluster/cluster-shards" },
    },
    ["1499"] = {
      build = { "make distclean", "make" },
      test_cmd = { "TERM=dumb ./runtest --durable --single unit/introspection-2" },
    },
    ["1842"] = {
      build = { "make distclean", "make" },
      test_cmd = { "TERM=dumb ./runtest --durable --single unit/acl --only \"/.*ACL LOAD.*\"" },
    },
  },
  ["fmtlib/fmt"] = {
    ["3863"] = {
      build = {
        "mkdir -p build",
        "cmake -B build -S .",
        "cmake --build build --parallel $(nproc) --target ranges-test",
      },
      test_cmd = { "ctest --test-dir build -V -R ranges-test" },
    },
    ["3158"] = {
      build = {
        "mkdir -p build",
        "cmake -B build -S .",
        "cmake --build build --parallel $(nproc) --target ranges-test",
      },
      test_cmd = { "ctest --test-dir build -V -R ranges-test" },
    },
    ["2457"] = {
      build = {
        "mkdir -p build",
        "cmake -B build -S .",
        "cmake --build build --parallel $(nproc) --target ranges-test",
      },
      test_cmd = { "ctest --test-dir build -V -R ranges-test" },
    },
    ["3901"] = {
      build = {
        "mkdir -p build",
        "cmake -B build -S .",
        "cmake --build build --parallel $(nproc) --target format-test",
      },
      test_cmd = { "ctest --test-dir build -V -R format-test" },
    },
    ["3750"] = {
      build = {
        "mkdir -p build",
        "cmake -B build -S .",
        "cmake --build build --parallel $(nproc) --target format-test",
      },
      test_cmd = { "ctest --test-dir build -V -R format-test" },
    },
    ["3248"] = {
      build = {
        "mkdir -p build",
        "cmake -B build -S .",
        "cmake --build build --parallel $(nproc) --target format-test",
      },
      test_cmd = { "ctest --test-dir build -V -R format-test" },
    },
    ["2317"] = {
      build = {
        "mkdir -p build",
        "cmake -B build -S .",
        "cmake --build build --parallel $(nproc) --target format-test",
      },
      test_cmd = { "ctest --test-dir build -V -R format-test" },
    },
    ["2310"] = {
      build = {
        "mkdir -p build",
        "cmake -B build -S .",
        "cmake --build build --parallel $(nproc) --target format-test",
      },
      test_cmd = { "ctest --test-dir build -V -R format-test" },
    },
    ["3272"] = {
      build = {
        "mkdir -p build",
        "cmake -B build -S .",
        "cmake --build build --parallel $(nproc) --target xchar-test",
      },
      test_cmd = { "ctest --test-dir build -V -R xchar-test" },
    },
    ["3729"] = {
      build = {
        "mkdir -p build",
        "cmake -B build -S .",
        "cmake --build build --parallel $(nproc) --target std-test",
      },
      test_cmd = { "ctest --test-dir build -V -R std-test" },
    },
    ["1683"] = {
      build = {
        "mkdir -p build",
        "cmake -B build -S .",
        "cmake --build build --parallel $(nproc) --target printf-test",
      },
      test_cmd = { "ctest --test-dir build -V -R printf-test" },
    },
  },
}
