-- test_engine_swebench.lua: SWE-bench rows graded on docker in images of
-- SWE-bench's layout (tests/images/swebench/build: the repo at /testbed,
-- importable only after `conda activate testbed`, no pytest on PATH
-- before it). Each row is classic (repo, version: the test command,
-- parser and script come from SWE-bench's specs): a Django project through
-- Django's runner (dotted labels, a docstring name, names with spaces), a
-- sympy-style repo through sympy's runner (bin/test), a requests-style repo
-- through parse_log_pytest_options, a pytest repo. Gold resolves, a wrong
-- patch and an empty one do not; a 5.x row of the same task agrees; a fork
-- bomb and a leftover writer stay in the sandbox; swe_eval writes
-- SWE-bench's report.json files.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local grading = require "rock.agent.grading"
local es = require "rock.agent.swebench.eval_script"
local json = rock.json

local here = arg[0]:match("(.*/)")
local H = here .. "../images/swebench/"
local tmp = T.sh("mktemp -d /tmp/rock-engine-swe.XXXXXX"):gsub("%s+$", "")

local q = T.q
local sh = T.must

local D = "shapes.tests.AreaTests."
local ROWS = {
  django = { id = "django__django-90001", repo = "django/django", version = "5.0",
    F2P = { "Circles have an area of pi r squared.", "test_rectangle (" .. D .. "test_rectangle)" },
    P2P = { "test_square (" .. D .. "test_square)", "test_noisy (" .. D .. "test_noisy)",
            "test_skipped (" .. D .. "test_skipped)" } },
  sympy = { id = "sympy__sympy-90002", repo = "sympy/sympy", version = "1.12",
    F2P = { "test_mean_fraction", "test_mean_empty" }, P2P = { "test_mean_ints" } },
  requests = { id = "psf__requests-90003", repo = "psf/requests", version = "2.27",
    F2P = { "tests/test_paths.py::test_stem_hidden[/.hidden]" },
    P2P = { "tests/test_paths.py::test_stem[/input.txt]", "tests/test_paths.py::test_stem[/archive.tar.gz]",
            "tests/test_io.py::test_join_two", "tests/test_io.py::test_join_many[parts" } },
  pytest = { id = "pytest-dev__pytest-90004", repo = "pytest-dev/pytest", version = "7.2",
    F2P = { "testing/test_words.py::test_many_spaces", "testing/test_words.py::test_empty" },
    -- (a test pytest -rA skips shows only as "SKIPPED [1] file:line": no list names it)
    P2P = { "testing/test_words.py::test_one_word", "testing/test_words.py::test_tabs" } },
}
local NAMES = { "django", "sympy", "requests", "pytest" }

-- the row as the hub's datasets ship it: no test_cmd, no image, lists as JSON strings
local function row(name)
  local r = ROWS[name]
  local d = tmp .. "/repo-" .. name
  sh("rm -rf " .. q(d))
  local commit = sh(q(H .. "make-repo") .. " " .. name .. " " .. q(d)):gsub("%s+$", "")
  return { instance_id = r.id, repo = r.repo, version = r.version, base_commit = commit,
           problem_statement = "fix it", test_patch = T.read(H .. "patches/" .. name .. ".test.diff"),
           patch = T.read(H .. "patches/" .. name .. ".gold.diff"),
           FAIL_TO_PASS = json.encode(r.F2P), PASS_TO_PASS = json.encode(r.P2P),
           environment_setup_commit = commit }
end

local function patch_of(name, kind) return T.read(H .. "patches/" .. name .. "." .. kind .. ".diff") end

local DOCKER = { sandbox = { backend = "docker", pull = "never" } }

-- a patch adding one new file
local function new_file(path, text)
  local lines = {}
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = "+" .. l end
  return string.format("diff --git a/%s b/%s\nnew file mode 100644\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n",
    path, path, path, #lines) .. table.concat(lines, "\n") .. "\n"
end

local function verdict(r) return r.status .. ":" .. tostring(r.report and r.report.status) end

T.test("classic rows: gold resolves, a wrong patch and an empty one do not", function()
  for _, name in ipairs(NAMES) do
    local t = row(name)
    local r = grading.run(t, t.patch, DOCKER)
    T.eq(r.status, "resolved", name .. ": " .. tostring(r.report and r.report.reason) ..
      tostring(r.error and r.error.message) .. "\n" .. (r.log or ""):sub(-3000))
    T.eq(r.report.status, "RESOLVED_FULL")
    T.eq(r.test_exit_code, 0, name)
    T.ok(r.test_output:find("+ source /opt/miniconda3/bin/activate\n", 1, true), name .. ": activate")
    T.ok(r.test_output:find("\n+ conda activate testbed\n", 1, true), name .. ": the env is activated")
    local w = grading.run(t, patch_of(name, "wrong"), DOCKER)
    T.eq(w.status, "unresolved", name .. " wrong: " .. tostring(w.error and w.error.message))
    T.ok(w.applied, name .. " wrong applied")
    local e = grading.run(t, "", DOCKER)
    T.eq(e.status, "empty_patch", name .. " empty")
    ROWS[name].gold, ROWS[name].wrong = r, w
  end
  -- what each real runner printed, read by its parser
  local dj = ROWS.django.gold
  T.match(dj.test_output, "%+ %./tests/runtests%.py %-%-verbosity 2 %-%-settings=test_sqlite %-%-parallel 1 shapes%.tests\n",
    "django: a dotted label")
  T.eq(dj.tests["Circles have an area of pi r squared."], "PASSED", "a docstring name")
  T.eq(dj.tests["test_skipped (" .. D .. "test_skipped)"], "SKIPPED")
  T.eq(ROWS.django.wrong.report.status, "RESOLVED_PARTIAL", "one of two F2P fixed, P2P kept")
  T.match(ROWS.sympy.gold.test_output, "\ntest_mean_fraction ok\n", "sympy's runner")
  T.match(ROWS.sympy.gold.test_output, "%+ PYTHONWARNINGS=ignore::UserWarning,ignore::SyntaxWarning\n" ..
    "%+ bin/test %-C %-%-verbose ratlib/tests/test_mean%.py\n")
  T.eq(ROWS.requests.gold.tests["tests/test_paths.py::test_stem[/input.txt]"], "PASSED", "a path parameter's basename")
  T.eq(ROWS.requests.gold.tests["tests/test_io.py::test_join_many[parts0]"], "PASSED",
    "P2P's cut id tests/test_io.py::test_join_many[parts matched it")
  T.eq(ROWS.pytest.gold.tests["testing/test_words.py::test_tabs"], "XFAIL")
  T.match(ROWS.pytest.wrong.report.reason, "PASS_TO_PASS")
end)

T.test("a 5.x row (eval_script, log_parser, eval_type, image) gives the classic row's verdict", function()
  for _, name in ipairs({ "django", "requests" }) do
    local t = row(name)
    local five = {}
    for k, v in pairs(t) do five[k] = v end
    local nt = assert(rock.agent.tasks.normalize(t))
    five.eval_script = es.classic(nt)
    five.log_parser = nt.log_parser
    five.eval_type = "pass_and_fail"
    five.image = nt.image
    five.repo = "example/" .. name -- nothing comes from the repo's specs
    five.version = nil
    for _, kind in ipairs({ "gold", "wrong" }) do
      local r = grading.run(five, patch_of(name, kind), DOCKER)
      T.eq(verdict(r), verdict(ROWS[name][kind]), name .. " " .. kind .. ": " .. tostring(r.report and r.report.reason))
    end
  end
end)

T.test("a fork bomb in the tests ends in the sandbox, the host unharmed", function()
  local t = row("pytest")
  t.pids_limit = 64
  local bomb = table.concat({
    "import os, time",
    "deadline = time.time() + 4",
    "root, refused, kids = os.getpid(), 0, []",
    "while time.time() < deadline:",
    "    try:",
    "        pid = os.fork()",
    "    except OSError:",
    "        refused += 1",
    "        time.sleep(0.005)",
    "        continue",
    "    if pid == 0:",
    "        kids = []",
    "        continue",
    "    kids.append(pid)",
    "for k in kids:",
    "    os.waitpid(k, 0)",
    "if os.getpid() != root:",
    "    os._exit(0)",
    "def pytest_report_header(config):",
    "    return 'fork bomb: %d forks refused' % refused",
  }, "\n")
  local p = t.patch .. new_file("conftest.py", bomb)
  local function host_procs() return #T.listdir("/proc") end
  local before, peak, done = host_procs(), 0, false
  local watcher = rock.spawn(function()
    while not done do
      peak = math.max(peak, host_procs())
      rock.sleep(0.05)
    end
  end)
  local r = grading.run(t, p, { sandbox = { backend = "docker", pull = "never" }, timeout = 120 })
  done = true
  rock.wait({ watcher })
  T.eq(r.status, "resolved", tostring(r.report and r.report.reason) .. tostring(r.error and r.error.message) ..
    (r.log or ""):sub(-2000))
  local refused = tonumber(r.test_output:match("fork bomb: (%d+) forks refused"))
  T.ok(refused and refused > 0, "the pids limit refused forks: " .. tostring(refused))
  T.ok(peak - before < 64 + 40, string.format("host processes: %d before, %d at the peak", before, peak))
end)

T.test("in a container, a process the tests leave is killed before the end marker", function()
  local t = row("requests")
  local conftest = table.concat({
    "import os, time",
    "if os.fork() == 0:",
    "    os.setsid()",
    "    if os.fork() == 0:",
    "        time.sleep(1.5)",
    "        for pid in os.listdir('/proc'):",
    "            try:",
    "                out = os.readlink('/proc/%s/fd/1' % pid)",
    "            except OSError:",
    "                continue",
    "            if out.endswith('.log'):",
    "                fd = os.open(out, os.O_WRONLY | os.O_APPEND)",
    "                os.write(fd, b\"PASSED tests/test_paths.py::test_stem_hidden[/srv/data/.hidden]\\n\")",
    "                break",
    "    os._exit(0)",
    "os.wait()",
    "def pytest_unconfigure(config):",
    "    time.sleep(0.1)",
  }, "\n")
  local r = grading.run(t, new_file("conftest.py", conftest), DOCKER)
  T.eq(r.status, "unresolved", tostring(r.report and r.report.reason))
  T.eq(r.tests["tests/test_paths.py::test_stem_hidden[/.hidden]"], "FAILED")
  T.ok(not r.test_output:find("PASSED tests/test_paths.py::test_stem_hidden", 1, true), "the leftover never wrote")
end)

T.test("swe_eval: SWE-bench's per-instance report.json and run report", function()
  local inst, preds = {}, {}
  for _, name in ipairs(NAMES) do
    local t = row(name)
    inst[#inst + 1] = json.encode(t)
    preds[#preds + 1] = json.encode({ instance_id = t.instance_id, model_name_or_path = "org/model",
      model_patch = name == "pytest" and patch_of(name, "wrong") or t.patch })
  end
  T.write(tmp .. "/instances.jsonl", table.concat(inst, "\n") .. "\n")
  T.write(tmp .. "/preds.jsonl", table.concat(preds, "\n") .. "\n")
  local out, ok = T.sh(q(T.rock_exe()) .. " " .. q(here .. "../../recipes/swe_eval.lua") .. " --instances " ..
    q(tmp .. "/instances.jsonl") .. " --predictions " .. q(tmp .. "/preds.jsonl") .. " --out " .. q(tmp .. "/out") ..
    " --backend docker --workers 2 --run-id r1 --pids-limit 512 2>&1")
  T.ok(ok, out)
  local rep = json.decode(T.read(tmp .. "/out/report.json"))
  T.eq(rep.resolved_instances, 3, out); T.eq(rep.unresolved_ids[1], "pytest-dev__pytest-90004")
  T.eq(T.read(tmp .. "/out/org__model.r1.json"), T.read(tmp .. "/out/report.json"))
  local dir = tmp .. "/out/logs/run_evaluation/r1/org__model/"
  local r = json.decode(T.read(dir .. "django__django-90001/report.json"))["django__django-90001"]
  T.ok(r.resolved and r.patch_successfully_applied and r.patch_exists and not r.patch_is_None)
  T.eq(#r.tests_status.FAIL_TO_PASS.success, 2)
  r = json.decode(T.read(dir .. "pytest-dev__pytest-90004/report.json"))["pytest-dev__pytest-90004"]
  T.ok(not r.resolved and r.patch_successfully_applied)
  T.eq(r.tests_status.PASS_TO_PASS.failure[1], "testing/test_words.py::test_tabs")
  T.match(T.read(dir .. "django__django-90001/test_output.txt"), "%+ : '>>>>> Start Test Output'\n")
  T.match(T.read(dir .. "django__django-90001/eval.sh"), "\nconda activate testbed\n")
end)

sh("rm -rf " .. q(tmp))
T.done()
