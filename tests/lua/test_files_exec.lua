-- test_files_exec.lua: execute, read_file and write_file through the Lua API.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")

local sb = rock.sandbox.start(T.sandbox_opts())
local tmp = T.scratch(sb)

T.test("execute a list with cwd and env", function()
  local r = sb:execute{ command = { "sh", "-c", "pwd; echo $K; echo oops >&2; exit 4" },
    cwd = "/usr", env = { K = "v" } }
  T.eq(r.stdout, "/usr\nv\n")
  T.eq(r.stderr, "oops\n")
  T.eq(r.exit_code, 4)
  T.eq(sb:execute{ command = { "ls", "/" } }.exit_code, 0)
end)

T.test("execute a string runs through sh", function()
  local r = sb:execute{ command = "echo a && echo b | tr b c" }
  T.eq(r.stdout, "a\nc\n")
end)

T.test("execute timeout kills the whole tree", function()
  local t0 = rock.uv.hrtime()
  local r = sb:execute{ command = "sleep 120 & sleep 121; echo never", timeout = 0.5 }
  T.ok((rock.uv.hrtime() - t0) / 1e9 < 3, "returned at the timeout")
  T.eq(r.failure_reason, "timeout")
  T.eq(r.exit_code, 137)
  rock.sleep(0.1)
  local n = sb:execute{ command = "ps -eo args= | grep -c '^sleep 12[01]$'" }.stdout
  T.eq(n, "0\n")
end)

T.test("execute errors: missing program, bad cwd, bad args", function()
  T.raises("spawn_failed", sb.execute, sb, { command = { "/no/such/program" } })
  T.raises("spawn_failed", sb.execute, sb, { command = { "true" }, cwd = "/no/such/dir" })
  T.raises("invalid_argument", sb.execute, sb, { command = 7 })
  T.raises("invalid_argument", sb.execute, sb, { command = {} })
  T.raises("invalid_argument", sb.execute, sb, { command = { "echo", 1 } })
end)

T.test("execute keeps big outputs capped with head and tail", function()
  local r = sb:execute{ command = "seq 1 500000", max_output = 2000 }
  T.eq(r.stdout:sub(1, 4), "1\n2\n")
  T.eq(r.stdout:sub(-7), "500000\n")
  T.match(r.stdout, "bytes dropped")
end)

T.test("file round trip with unicode, parents created", function()
  local path = tmp .. "/deep/er/file ü.txt"
  local content = "héllo wörld ✓ 🚀\nline 2\n\ttab\n"
  local w = sb:write_file{ path = path, content = content }
  T.eq(w.success, true)
  T.eq(sb:read_file{ path = path }.content, content)
  -- the session sees the same file
  sb:create_session{ session = "s" }
  T.eq(sb:run_in_session{ session = "s", command = "cat '" .. path .. "'" }.output, content)
  -- overwrite keeps it whole
  sb:write_file{ path = path, content = "short" }
  T.eq(sb:read_file{ path = path }.content, "short")
  sb:write_file{ path = tmp .. "/empty", content = "" }
  T.eq(sb:read_file{ path = tmp .. "/empty" }.content, "")
end)

T.test("big file round trip", function()
  local big = string.rep("0123456789abcdef", 2 ^ 16) -- 1 MiB
  sb:write_file{ path = tmp .. "/big", content = big }
  T.eq(sb:read_file{ path = tmp .. "/big" }.content, big)
end)

T.test("read_file errors", function()
  T.raises("not_found", sb.read_file, sb, { path = tmp .. "/missing" })
  T.raises("invalid_argument", sb.read_file, sb, { path = tmp })
  T.raises("invalid_argument", sb.read_file, sb, {})
  T.raises("invalid_argument", sb.write_file, sb, { path = tmp .. "/x" })
end)

sb:stop()
T.done()
