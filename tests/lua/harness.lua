-- harness.lua: the little test runner of the Lua tests.
--   local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
--   T.test("name", function() T.eq(1, 1) end)
--   T.done()   -- prints "N passed, M failed", exits non-zero on failure
local rock = require "rock"
local T = { passed = 0, failed = 0 }

local function fmt(v)
  if type(v) == "string" then return string.format("%q", #v > 300 and v:sub(1, 300) .. "..." or v) end
  return tostring(v)
end

function T.eq(got, want, what)
  if got ~= want then
    error(string.format("%s: got %s, want %s", what or "value", fmt(got), fmt(want)), 2)
  end
end

--- This process's resident memory, KiB.
function T.rss_kib()
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmRSS:%s+(%d+)")
    if kb then return tonumber(kb) end
  end
end

--- Send raw bytes over TCP; returns everything read until the server
--- closes the connection, or, with want, once want answers have come
--- (counted by their status lines); hang_up: close once written.
function T.raw_tcp(port, bytes, hang_up, want)
  return rock.await(function(done)
    local tcp = rock.uv.new_tcp()
    local buf, finished = {}, false
    local function fin()
      if finished then return end
      finished = true
      tcp:close()
      done(table.concat(buf))
    end
    tcp:connect("127.0.0.1", port, function(err)
      if err then return fin() end
      tcp:write(bytes, function() if hang_up then fin() end end)
      tcp:read_start(function(e, chunk)
        if e or not chunk then return fin() end
        buf[#buf + 1] = chunk
        if want then
          local _, n = table.concat(buf):gsub("HTTP/1%.1 %d%d%d", "")
          if n >= want then fin() end
        end
      end)
    end)
    return fin
  end)
end

--- A bound on memory (RSS) the rocklet must keep; not checked in an ASan
--- build (ROCK_SANITIZE sets ROCK_TEST_SANITIZED=1), whose shadow memory
--- and quarantine are not the rocklet's own.
function T.rss_under(kib, limit_kib, what)
  if os.getenv("ROCK_TEST_SANITIZED") == "1" then return end
  T.ok(kib < limit_kib, what)
end

function T.ok(cond, what)
  if not cond then error("not true: " .. (what or "?"), 2) end
end

function T.match(s, pat, what)
  if type(s) ~= "string" or not s:find(pat) then
    error(string.format("%s: %s does not match %q", what or "value", fmt(s), pat), 2)
  end
end

--- Call fn expecting a rock error with this code; returns the error.
function T.raises(code, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then error("expected error " .. code .. ", got success", 2) end
  if not rock.errors.is(err) then error("expected a rock error " .. code .. ", got " .. tostring(err), 2) end
  if err.code ~= code then error("expected error " .. code .. ", got " .. tostring(err), 2) end
  T.ok(type(err.message) == "string" and #err.message > 0, "error has a message")
  return err
end

--- ROCK_TEST_ONLY=<text>: run only the tests whose name holds that text
--- (plain find); the others are skipped, neither passed nor failed.
local only = os.getenv("ROCK_TEST_ONLY")
function T.test(name, fn)
  if only and only ~= "" and not name:find(only, 1, true) then return end
  local t0 = rock.uv.hrtime()
  local ok, err = xpcall(fn, function(e)
    return debug.traceback(tostring(e), 2)
  end)
  local ms = (rock.uv.hrtime() - t0) / 1e6
  if ok then
    T.passed = T.passed + 1
    print(string.format("ok   %-50s %7.1f ms", name, ms))
  else
    T.failed = T.failed + 1
    print(string.format("FAIL %s\n%s", name, err))
  end
end

--- Wait (sleeping 0.05 s between tries) until pred() is true; raises
--- "timed out waiting until <what>" after seconds.
function T.wait_until(what, pred, seconds)
  for _ = 1, seconds * 20 do
    if pred() then return end
    rock.sleep(0.05)
  end
  error("timed out waiting until " .. what, 2)
end

--- Pids of the processes whose parent is pid (from /proc).
function T.children(pid)
  local kids = {}
  local p = io.popen("ps -o pid= --ppid " .. pid)
  for line in p:lines() do kids[#kids + 1] = tonumber(line) end
  p:close()
  return kids
end

--- Sandbox options for the suites that run on every backend:
--- ROCK_TEST_BACKEND (default local), ROCK_TEST_IMAGE and
--- ROCK_TEST_RUNTIME (the runc backend's runtime), set by ctest.
function T.sandbox_opts(extra)
  local o = { backend = os.getenv("ROCK_TEST_BACKEND") or "local",
              image = os.getenv("ROCK_TEST_IMAGE"), runtime = os.getenv("ROCK_TEST_RUNTIME") }
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

--- A writable scratch dir inside sb: its work dir on the local backend
--- (which shares the host's files), /tmp in a container.
function T.scratch(sb)
  if sb.backend == "local" then return sb.dir .. "/work" end
  sb:execute{ command = { "mkdir", "-p", "/tmp/rock-scratch" } }
  return "/tmp/rock-scratch"
end

--- Run a shell command; returns its output (stdout and stderr) and
--- whether it exited 0.
function T.sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  return out, ok == true
end

--- s quoted for sh: '...' with every ' inside escaped.
function T.q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

--- Run cmd (sh, stderr merged); its output, or raises naming the command
--- and what it printed when it fails.
function T.must(cmd)
  local out, ok = T.sh(cmd)
  if not ok then error("command failed: " .. cmd .. "\n" .. out, 2) end
  return out
end

--- Write text to path (the whole file, bytes as they are).
--- Run fn(dir) with a tmpfs of kib KiB mounted on dir (made if missing):
--- a disk that fills up. Unmounted after, also when fn raises. Returns
--- false, without running fn, when no tmpfs can be mounted (not root).
function T.with_tmpfs(dir, kib, fn)
  os.execute("mkdir -p '" .. dir .. "'")
  local _, mounted = T.sh("mount -t tmpfs -o size=" .. kib .. "k rock-test-full '" .. dir .. "' 2>&1")
  if not mounted then return false end
  local ok, err = pcall(fn, dir)
  T.sh("umount '" .. dir .. "'")
  if not ok then error(err, 0) end
  return true
end

function T.write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

--- The size of the file at path, or nil when it cannot be opened.
function T.file_size(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local n = f:seek("end")
  f:close()
  return n
end

--- The names in dir (with dot files; none when it is missing).
function T.listdir(dir)
  local names = {}
  local p = io.popen("ls -A '" .. dir .. "' 2>/dev/null")
  for line in p:lines() do names[#names + 1] = line end
  p:close()
  return names
end

--- Run argv without blocking the loop (inside a task); returns its
--- stdout and exit code (stderr goes to ours).
function T.run(argv)
  return rock.await(function(done)
    local out = rock.uv.new_pipe()
    local chunks = {}
    local code, eof = nil, false
    local function maybe()
      if code and eof then out:close(); done(table.concat(chunks), code) end
    end
    local proc = rock.uv.spawn(argv[1], { args = { table.unpack(argv, 2) }, stdio = { nil, out, 2 } },
      function(c) code = c; maybe() end)
    assert(proc, "cannot start " .. argv[1])
    out:read_start(function(_, data)
      if data then chunks[#chunks + 1] = data else eof = true; maybe() end
    end)
    return nil
  end)
end

--- The bytes of path, or nil when it cannot be opened.
function T.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

--- A SWE task on a git repo made in dir: files ({name = text}) committed
--- as its base commit; fields (instance_id, problem_statement, ...) added.
--- The lists are JSON lists even when empty.
function T.git_task(dir, files, fields)
  os.execute("mkdir -p '" .. dir .. "'")
  for name, text in pairs(files) do T.write(dir .. "/" .. name, text) end
  local out, ok = T.sh("cd '" .. dir .. "' && git init -q && git add -A && "
    .. "git -c user.name=t -c user.email=t@t commit -qm base && git rev-parse HEAD")
  assert(ok, out)
  local json = rock.json
  local t = { repo = "local/calc", repo_dir = dir, base_commit = out:gsub("%s+$", ""),
    FAIL_TO_PASS = json.array(), PASS_TO_PASS = json.array(), test_patch = "" }
  for k, v in pairs(fields or {}) do t[k] = v end
  return t
end

--- Has process pid ended (no such process, or a zombie not reaped yet)?
function T.gone(pid)
  local f = io.open("/proc/" .. pid .. "/stat")
  if not f then return true end
  local st = f:read("a"):match("^%d+ %b() (%a)")
  f:close()
  return st == "Z"
end

--- The rock executable running this test.
function T.rock_exe()
  return (T.sh("readlink /proc/" .. rock.core.getpid() .. "/exe"):gsub("%s+$", ""))
end

--- A name for an image this test makes: rock-test-tmp/<tag>-<what>:1
--- (tests/lua/run.sh fails the test if one is left behind).
function T.tmp_image(what)
  return string.format("rock-test-tmp/%s-%s:1", os.getenv("ROCK_TEST_TAG") or "t", what)
end

--- Tag image base as a T.tmp_image(what) in engine e; returns the name.
function T.tag_image(e, base, what)
  local name = T.tmp_image(what)
  local repo, tag = name:match("^(.*):([^:]+)$")
  e:image_tag(base, repo, tag)
  return name
end

function T.done()
  print(string.format("%d passed, %d failed", T.passed, T.failed))
  if T.failed > 0 then os.exit(1) end
end

return T
