-- test_signals.lua: issue 7 item 17. SIGTERM or SIGINT to a host runs the
-- exit sweep: its sandboxes are stopped (rocklet, processes, dir) before
-- it exits, non-zero. A second signal exits at once. The docker case is in
-- test_engine_teardown.lua.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local uv = rock.uv

local ROCK = uv.exepath()

local function alive(pid)
  local f = io.open("/proc/" .. pid .. "/stat")
  if not f then return false end
  local st = f:read("a"):match("%) (%a)")
  f:close()
  return st ~= "Z"
end

local function wait_until(what, pred, seconds)
  for _ = 1, seconds * 50 do
    if pred() then return end
    rock.sleep(0.02)
  end
  error("timed out waiting until " .. what)
end

--- Run a recipe in a child host; returns {pid=, lines=fn(n) (waits for n
--- lines of its stdout), exited=nil|{code=, signal=}}.
local function host(code)
  local path = os.getenv("ROCK_HOME") .. "/recipe-" .. uv.hrtime() .. ".lua"
  local f = assert(io.open(path, "w"))
  f:write(code)
  f:close()
  local out = uv.new_pipe(false)
  local h = { buf = "" }
  local proc, pid = uv.spawn(ROCK, { args = { path }, stdio = { nil, out, 2 } }, function(c, s)
    h.exited = { code = c, signal = s }
  end)
  assert(proc, pid)
  h.pid, h.proc = pid, proc
  out:read_start(function(_, data) if data then h.buf = h.buf .. data end end)
  function h.lines(n)
    wait_until(n .. " lines from the host", function()
      local _, k = h.buf:gsub("\n", "")
      return k >= n or h.exited ~= nil
    end, 20)
    local ls = {}
    for l in h.buf:gmatch("[^\n]+") do ls[#ls + 1] = l end
    return ls
  end
  function h.close()
    if not h.exited then uv.kill(pid, "sigkill") end
    wait_until("the host exits", function() return h.exited ~= nil end, 10)
    out:close()
    proc:close()
    os.remove(path)
  end
  return h
end

local RECIPE = [[
local rock = require "rock"
local sb = rock.sandbox.start{ backend = "local" }
sb:create_session{ session = "s" }
sb:run_in_session{ session = "s", command = "sleep 300 & disown" }
print(sb.pid, sb.dir)
io.stdout:flush()
rock.sleep(600)
]]

for _, sig in ipairs({ "sigterm", "sigint" }) do
  T.test("issue7-17: " .. sig .. " to a host stops its sandboxes before it exits", function()
    local h = host(RECIPE)
    local ok, err = pcall(function()
      local line = h.lines(1)[1]
      local pid, dir = tostring(line):match("^(%d+)%s+(%S+)$")
      T.ok(pid, "the host started a sandbox: " .. tostring(line))
      pid = tonumber(pid)
      local kids = T.children(pid)
      T.ok(#kids >= 1, "the rocklet runs bash")
      uv.kill(h.pid, sig)
      wait_until("the host exits", function() return h.exited ~= nil end, 20)
      T.ok(h.exited.code ~= 0 or h.exited.signal ~= 0, "non-zero exit")
      T.eq(h.exited.code, 128 + (sig == "sigterm" and 15 or 2), "exit status")
      T.ok(not uv.fs_stat(dir), "sandbox dir removed")
      T.ok(not alive(pid), "rocklet gone")
      for _, k in ipairs(kids) do T.ok(not alive(k), "process " .. k .. " gone") end
    end)
    h.close()
    if not ok then error(err, 0) end
  end)
end

T.test("issue7-17: a second signal exits at once, a quiet host exits 0", function()
  -- a sweep that cannot finish: a task holds the loop in a sandbox stop
  -- that waits (the rocklet is stopped with SIGSTOP, so /close hangs)
  local h = host([[
local rock = require "rock"
local sb = rock.sandbox.start{ backend = "local" }
rock.uv.kill(sb.pid, "sigstop")
print(sb.pid, sb.dir)
io.stdout:flush()
rock.sleep(600)
]])
  local ok, err = pcall(function()
    local pid, dir = tostring(h.lines(1)[1]):match("^(%d+)%s+(%S+)$")
    T.ok(pid, "started")
    uv.kill(h.pid, "sigterm")
    rock.sleep(0.3)
    T.eq(h.exited, nil, "the first signal's sweep is still waiting on the stopped rocklet")
    uv.kill(h.pid, "sigterm")
    wait_until("the host exits", function() return h.exited ~= nil end, 3)
    T.eq(h.exited.code, 143)
    -- the stopped rocklet dies with its owner (PDEATHSIG) once resumed
    uv.kill(tonumber(pid), "sigcont")
    wait_until("the rocklet is gone", function() return not alive(tonumber(pid)) end, 10)
    require("rock.core").rmtree(dir)
  end)
  h.close()
  if not ok then error(err, 0) end
  -- and no signal: exit 0, the handles did not keep the loop alive
  local q = host('print("done")')
  T.eq(q.lines(1)[1], "done")
  wait_until("the quiet host exits", function() return q.exited ~= nil end, 10)
  T.eq(q.exited.code, 0)
  q.close()
end)

T.done()
