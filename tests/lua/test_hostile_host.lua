-- test_hostile_host.lua: issue 7, hostile round on the host (Lua policy,
-- gc, the local backend): records and state dirs that a sandbox or a
-- crash can leave in any shape must neither block, flood nor fool gc,
-- which every host start waits for; deadlines and signals must not cut
-- cleanup short. Needs docker (the engines fixture). Read with
-- test_gc_records.lua.
local rock = require "rock"
local state = require "rock.state"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local uv = rock.uv

--- A dir under sandboxes/ marked as owned by a dead owner, its mtime an
--- hour ago; plant(path) makes its sandbox.json.
local function dead_dir(id, plant)
  local me = state.me()
  local dead = state.owner_label{ host = me.host, pid = me.pid, start = me.start + 1 }
  local dir = state.sandboxes_dir() .. "/" .. id
  state.mkdir_p(dir)
  assert(io.open(dir .. "/owner=" .. dead, "w")):close()
  plant(dir .. "/sandbox.json")
  local old = os.time() - 3600
  uv.fs_utime(dir, old, old)
  return dir
end

--- `rock gc` in a child, bounded: returns its output and whether it
--- exited 0 in time.
local function gc_child()
  return T.sh("timeout -k 2 20 " .. T.rock_exe() .. " gc")
end

T.test("issue7-hostile: gc is not blocked by a FIFO planted as a sandbox record", function()
  local dir = dead_dir("rk-fifo", function(p) T.sh("mkfifo " .. p) end)
  local out, ok = gc_child()
  T.ok(ok, "gc finished in time: " .. out)
  T.ok(not uv.fs_stat(dir), "the dead owner's dir is removed")
end)

T.test("issue7-hostile: gc reads no endless record (a symlink to /dev/zero)", function()
  local dir = dead_dir("rk-zero", function(p) assert(uv.fs_symlink("/dev/zero", p)) end)
  local out, ok = gc_child()
  T.ok(ok, "gc finished in time: " .. out)
  T.ok(not uv.fs_stat(dir), "the dead owner's dir is removed")
end)

T.test("issue7-hostile: a symlinked record is not followed", function()
  local me = state.owner_label(state.me())
  local src = os.getenv("ROCK_HOME") .. "/elsewhere.json"
  local f = assert(io.open(src, "w"))
  f:write('{"id":"x","backend":"local","owner":"' .. me .. '"}')
  f:close()
  local dir = state.sandboxes_dir() .. "/rk-link"
  state.mkdir_p(dir)
  assert(uv.fs_symlink(src, dir .. "/sandbox.json"))
  T.eq(state.read_record(dir), nil, "record through a symlink")
  rock.core.rmtree(dir)
  os.remove(src)
end)

T.test("issue7-hostile: a record over the size cap is not read", function()
  local dir = dead_dir("rk-big", function(p)
    local f = assert(io.open(p, "w"))
    f:write('{"id":"' .. string.rep("a", state.MAX_RECORD) .. '"}')
    f:close()
  end)
  T.eq(state.read_record(dir), nil, "oversized record")
  rock.core.rmtree(dir)
end)

T.test("issue7-hostile: start_retry_times out of range is refused, never a silent nil", function()
  for _, v in ipairs { -1, 0 / 0, -math.huge, math.huge, math.maxinteger, math.mininteger, 0.5, 101 } do
    local ok, err = pcall(rock.sandbox.start, { backend = "local", start_retry_times = v })
    if ok and err then err:stop() end
    T.ok(not ok and rock.errors.is(err, "invalid_argument"),
      "start_retry_times=" .. tostring(v) .. ": " .. tostring(err))
  end
  T.eq(#state.list(), 0, "sandbox dirs")
end)

T.test("issue7-hostile: rock.wait on a list holding a non-task names the item", function()
  local t = rock.spawn(function() return 1 end)
  for _, bad in ipairs { { "x" }, { 1 }, { {} }, { t, true } } do
    local ok, err = pcall(rock.wait, bad)
    T.ok(not ok, "raised")
    T.match(tostring(err), "is not a task")
  end
  rock.wait(t)
end)

T.test("issue7-hostile: rock.flags.parse refuses an argv item that is not a string", function()
  for _, bad in ipairs { { 1 }, { {} }, { "--x=1", true } } do
    T.raises("invalid_argument", rock.flags.parse, bad, { x = { default = "" } })
  end
end)

T.test("issue7-hostile: a start cut by rock.timeout at any point leaves nothing", function()
  for i = 0, 24 do
    local s
    local ok, err = pcall(rock.timeout, i * 0.002, function()
      s = rock.sandbox.start{ backend = "local" }
    end)
    if s then s:stop() end
    T.ok(ok or rock.errors.is(err, "timeout"), "timeout or success: " .. tostring(err))
    T.eq(#state.list(), 0, string.format("sandbox dirs left after a start cut at %d ms", i * 2))
  end
end)

T.test("issue7-hostile: a stop cut by rock.timeout still ends the sandbox", function()
  for i = 0, 4 do
    local sb = rock.sandbox.start{ backend = "local" }
    local pid = sb.pid
    pcall(rock.timeout, i * 0.001, function() sb:stop() end)
    T.ok(not uv.fs_stat(sb.dir), "dir removed")
    T.ok(rock.core.proc_start_time(pid) ~= sb.pid_start, "rocklet gone")
  end
end)

T.test("issue7-hostile: task.shield finishes its waits past the deadline, which wins after", function()
  local steps = {}
  local ok, err = pcall(rock.timeout, 0.01, function()
    rock.task.shield(function()
      rock.sleep(0.05) -- past the deadline
      steps[#steps + 1] = "slept"
      local iok, ierr = pcall(rock.timeout, 0.01, rock.sleep, 1) -- inner deadlines still work
      steps[#steps + 1] = (not iok and rock.errors.is(ierr, "timeout")) and "inner" or "?"
    end)
    steps[#steps + 1] = "after"
    rock.sleep(0)
    steps[#steps + 1] = "not reached"
  end)
  T.ok(not ok and rock.errors.is(err, "timeout"), "the deadline won: " .. tostring(err))
  T.eq(table.concat(steps, ","), "slept,inner,after")
end)

T.test("issue7-hostile: SIGTERM while a container's create is in flight leaves no container", function()
  local e = rock.engine.connect("docker")
  if not (uv.fs_stat(e.socket) and e:ping(2)) then error("docker is not answering", 0) end
  local home = os.getenv("ROCK_HOME") .. "/sigcreate"
  state.mkdir_p(home)
  local recipe = home .. "/recipe.lua"
  local f = assert(io.open(recipe, "w"))
  f:write([[
local rock = require "rock"
local Engine = getmetatable(rock.engine.connect("docker"))
local create = Engine.container_create
Engine.container_create = function(self, name, config)
  rock.uv.kill(rock.core.getpid(), "sigterm") -- lands while the create is in flight
  return create(self, name, config)
end
rock.sandbox.start{ backend = "docker", image = "rock-test/debian:12", sandbox_id = "rk-sigcreate" }
rock.sleep(30)
]])
  f:close()
  local out = T.sh("ROCK_HOME=" .. home .. " ROCK_NO_GC=1 timeout -k 2 60 " .. T.rock_exe() .. " " .. recipe)
  T.match(out, "SIGTERM")
  -- the engine may land the create after the host is gone: look for the
  -- container by its name for a while before counting what is left
  for _ = 1, 40 do
    if pcall(e.container_inspect, e, "rock-rk-sigcreate") then break end
    rock.sleep(0.05)
  end
  local left = {}
  for _, c in ipairs(e:container_list("rock.sandbox")) do
    local dir = (c.Labels or {})["rock.dir"] or ""
    if dir:sub(1, #home + 1) == home .. "/" then
      left[#left + 1] = c.Id
      e:container_remove(c.Id, true)
    end
  end
  T.eq(#left, 0, "containers left by the host")
  rock.core.rmtree(home)
end)

T.test("issue7-hostile: gc kills no process a record names unless it is that dir's rocklet", function()
  local proc, pid = uv.spawn("sleep", { args = { "600" } }, function() end)
  assert(proc, pid)
  local start = rock.core.proc_start_time(pid)
  local me = state.me()
  local dead = state.owner_label{ host = me.host, pid = me.pid, start = me.start + 1 }
  local dir = dead_dir("rk-names-other", function(p)
    local f = assert(io.open(p, "w"))
    f:write(rock.json.encode{ id = "rk-names-other", backend = "local", pid = pid, pid_start = start,
      owner = dead })
    f:close()
  end)
  rock.gc.run()
  T.ok(not uv.fs_stat(dir), "the dead owner's dir is removed")
  T.eq(rock.core.proc_start_time(pid), start, "the process the record names is alive")
  uv.kill(pid, "sigkill")
  proc:close()
end)

T.test("issue7-hostile: gc ends the rocklet of a local sandbox whose owner is dead", function()
  local sb = rock.sandbox.start{ backend = "local" }
  local me = state.me()
  local rec = state.read_record(sb.dir)
  rec.owner = state.owner_label{ host = me.host, pid = me.pid, start = me.start + 1 }
  state.write_record(sb.dir, rec)
  local h = uv.fs_scandir(sb.dir) -- the owner mark goes: the record alone names the dead owner
  for name in function() return uv.fs_scandir_next(h) end do
    if name:sub(1, 6) == "owner=" then os.remove(sb.dir .. "/" .. name) end
  end
  rock.gc.run()
  T.ok(not uv.fs_stat(sb.dir), "dir removed")
  T.ok(rock.core.proc_start_time(sb.pid) ~= sb.pid_start, "rocklet ended")
  sb:stop()
end)

T.done()
