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

-- the rocklet's own client, for the fields sandbox.lua does not send yet
local rocklet = require "rock.rocklet"
local function call(path, body) return rocklet.call(sb.socket, path, body, 30) end

T.test("read_file refuses a FIFO at once; the rocklet keeps serving (issue 7 item 10)", function()
  local fifo = tmp .. "/fifo"
  sb:execute{ command = { "mkfifo", fifo } }
  local reader = rock.spawn(function()
    return select(2, pcall(sb.read_file, sb, { path = fifo }))
  end)
  rock.sleep(0.1) -- let read_file reach the rocklet first
  T.eq(sb:is_alive(), true, "is_alive while read_file runs")
  local err = rock.wait(reader)
  T.ok(rock.errors.is(err), "read_file of a FIFO fails")
  T.eq(err.code, "invalid_argument")
  T.match(err.message, "not a regular file")
  -- devices too: /dev/zero would never end
  err = T.raises("invalid_argument", sb.read_file, sb, { path = "/dev/zero" })
  T.match(err.message, "not a regular file")
  T.raises("invalid_argument", sb.read_file, sb, { path = "/dev/null" })
end)

T.test("read_file over 32 MiB is refused and says what to use", function()
  local big = tmp .. "/sparse"
  sb:execute{ command = { "truncate", "-s", "40M", big } }
  local err = T.raises("invalid_argument", sb.read_file, sb, { path = big })
  T.match(err.message, "larger than 32 MiB")
  T.match(err.message, "/execute")
  sb:execute{ command = { "truncate", "-s", tostring(32 * 2 ^ 20 + 1), big } } -- one byte over
  T.raises("invalid_argument", sb.read_file, sb, { path = big })
  sb:execute{ command = { "rm", big } }
end)

T.test("binary files round-trip with encoding base64 (issue 7 item 18)", function()
  local bytes = {}
  for i = 0, 255 do bytes[#bytes + 1] = string.char(i) end
  local all = table.concat(bytes) .. table.concat(bytes):reverse() .. "\0\0\255"
  local path = tmp .. "/bin/all.bytes"
  local w = call("/write_file", { path = path, content = rock.core.base64_encode(all),
    encoding = "base64" })
  T.eq(w.success, true)
  T.match(w.message, "wrote " .. #all .. " bytes")
  local r = call("/read_file", { path = path, encoding = "base64" })
  T.eq(r.encoding, "base64")
  T.eq(rock.core.base64_decode(r.content), all)
  T.eq(sb:execute{ command = { "wc", "-c", path } }.stdout, #all .. " " .. path .. "\n")
  -- without an encoding read_file still answers cleaned text
  T.eq(sb:read_file{ path = path }.content:sub(1, 3), "\0\1\2")
  local e = T.raises("invalid_argument", call, "/write_file",
    { path = path, content = "not base64!", encoding = "base64" })
  T.match(e.message, "not base64")
  T.raises("invalid_argument", call, "/read_file", { path = path, encoding = "latin1" })
  T.eq(rock.core.base64_decode(call("/read_file", { path = path, encoding = "base64" }).content), all,
    "a refused write changes nothing")
end)

T.test("write_file never follows a symlink planted at its temp path", function()
  local path = tmp .. "/target.txt"
  local victim = tmp .. "/victim.txt"
  sb:write_file{ path = victim, content = "precious" }
  local pid = call("/is_alive", {}).pid
  -- the temp names write_file used (<path>.rock-tmp.<pid>) and a few more
  sb:execute{ command = "for s in " .. pid .. " x y; do ln -s " .. victim .. " " .. path
    .. ".rock-tmp.$s; done" }
  sb:write_file{ path = path, content = "new" }
  T.eq(sb:read_file{ path = victim }.content, "precious")
  T.eq(sb:read_file{ path = path }.content, "new")
  local left = sb:execute{ command = "ls -A " .. tmp .. " | grep -c rock-tmp" }.stdout
  T.eq(left, "3\n", "only the planted links, no temp file left")
  sb:execute{ command = "rm -f " .. path .. ".rock-tmp.*" }
end)

T.test("a 250 MB body is refused before it is read; the rocklet lives (issue 7 item 14)", function()
  local host = os.tmpname()
  T.sh("truncate -s 250M " .. host)
  -- -T streams the file (PUT, made a POST): nothing is buffered by curl
  local out = T.sh(string.format("curl -sS -X POST -T %s -w '\\n%%{http_code}' --unix-socket %s "
    .. "http://rocklet/write_file", host, sb.socket))
  os.remove(host)
  T.match(out, "\n413$")
  T.match(out, "larger than 33554432 bytes")
  T.eq(sb:is_alive(), true)
  T.eq(sb:read_file{ path = tmp .. "/empty" }.content, "")
end)

T.test("read_file text escapes quotes, backslashes and every control byte", function()
  local bytes = {}
  for i = 1, 127 do -- not CR and ESC, which cleaning changes
    if i ~= 13 and i ~= 27 then bytes[#bytes + 1] = string.char(i) end
  end
  local text = table.concat(bytes) .. '"\\" \\\\ \u{2028} ü'
  local path = tmp .. "/ctl.txt"
  call("/write_file", { path = path, content = rock.core.base64_encode(text), encoding = "base64" })
  T.eq(sb:read_file{ path = path }.content, text)
end)

if sb.backend == "local" then
  T.test("reading a 32 MiB file holds it about twice, not five times", function()
    local path = tmp .. "/32m.txt"
    sb:execute{ command = "yes abcdefghijklmnopqrstuvwxyz012345678 | head -c 33554432 > " .. path }
    local pid = call("/is_alive", {}).pid
    T.eq(#sb:read_file{ path = path }.content, 33554432)
    local hwm = tonumber(T.sh("grep VmHWM /proc/" .. pid .. "/status"):match("(%d+) kB"))
    print(string.format("     rocklet peak RSS %d KiB after reading 32 MiB", hwm))
    T.rss_under(hwm, 80 * 1024, "peak RSS under 80 MiB")
    sb:execute{ command = { "rm", path } }
  end)
end

sb:stop()
T.done()
