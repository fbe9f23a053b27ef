#!/usr/bin/env bash
# test_install.sh BUILD_DIR SOURCE_DIR: `cmake --install --prefix P` puts
# everything under P, and what is installed there uses P's own files: the
# rock executable, a C program embedding librock through pkg-config, and
# stock lua5.4 with require "rock" (issue 7, item 18: packaging).
set -euo pipefail
build=$1 src=$2
P=$(mktemp -d /tmp/rock-prefix.XXXXXX)
trap 'rm -rf "$P"' EXIT
passed=0 failed=0
check() { # check NAME COND...
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $name" >&2; fi
}
under_p() { case "$1" in "$P"/*) return 0 ;; *) echo "  got: $1" >&2; return 1 ;; esac; }

cmake --install "$build" --prefix "$P" >/dev/null
# every file the install wrote is under P (the manifest lists them)
check "every installed file is under the prefix" test -z "$(grep -v "^$P/" "$build/install_manifest.txt")"
check "the rocklet is installed" test -x "$(find "$P" -name rocklet -type f)"

probe='local core = require "rock.core"; print(package.searchpath("rock", package.path)); print(core.rocklet_path())
local rock = require "rock"
local sb = rock.sandbox.start{ backend = "local" }
sb:create_session{}
print(sb:run_in_session{ command = "echo installed-ok" }.output)
sb:stop()'

# the installed rock executable
out=$(env -u ROCK_LUA_DIR -u ROCK_ROCKLET "$P/bin/rock" -e "$probe")
check "rock: Lua library from P" under_p "$(sed -n 1p <<<"$out")"
check "rock: rocklet from P" under_p "$(sed -n 2p <<<"$out")"
check "rock: a sandbox runs" grep -qx installed-ok <<<"$out"

# a program embedding librock, built with pkg-config against P
libdir=$(dirname "$(find "$P" -name rock.pc)")
export PKG_CONFIG_PATH=$libdir
check "rock.pc points into P" under_p "$(pkg-config --variable=libdir rock)"
cc -o "$P/embed" "$src/tests/embed/embed.c" $(pkg-config --cflags --libs rock)
printf '%s\n' "$probe" >"$P/probe.lua"
out=$(env -u ROCK_LUA_DIR -u ROCK_ROCKLET LD_LIBRARY_PATH=$(pkg-config --variable=libdir rock) "$P/embed" "$P/probe.lua")
check "embed: Lua library from P" under_p "$(sed -n 1p <<<"$out")"
check "embed: rocklet from P" under_p "$(sed -n 2p <<<"$out")"
check "embed: a sandbox runs" grep -qx installed-ok <<<"$out"

# stock lua5.4, require "rock" from P
cpath=$(dirname "$(dirname "$(find "$P" -name core.so)")")
out=$(env -u ROCK_LUA_DIR -u ROCK_ROCKLET LUA_PATH="$P/share/lua/5.4/?.lua;$P/share/lua/5.4/?/init.lua;;" \
  LUA_CPATH="$cpath/?.so;;" lua5.4 -e "$probe")
check "lua5.4: Lua library from P" under_p "$(sed -n 1p <<<"$out")"
check "lua5.4: rocklet from P" under_p "$(sed -n 2p <<<"$out")"
check "lua5.4: a sandbox runs" grep -qx installed-ok <<<"$out"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
