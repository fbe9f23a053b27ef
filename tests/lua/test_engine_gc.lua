-- test_engine_gc.lua: nothing outlives a dead host. A host killed with -9
-- leaves containers, socket dirs and local sandboxes; `rock gc` removes
-- them all. A container whose lease lapses ends itself with no host alive.
-- Live owners' sandboxes are never touched. `rock ps` lists them.
local rock = require "rock"
local cjson = require "cjson"
local state = require "rock.state"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")

local IMAGE = "rock-test/debian:12"
local ROCK = T.rock_exe()
local docker = rock.engine.connect("docker")

--- Start a host running code (which prints lines and then sleeps), call
--- fn(pid, lines) with the lines it printed before "READY"; the host is
--- killed with -9 (if fn did not) and reaped whatever fn does.
local function with_host(code, fn)
  local path = state.dir() .. "/host-" .. tostring(rock.uv.hrtime()) .. ".lua"
  local f = assert(io.open(path, "w"))
  f:write("local rock = require 'rock'\nprint(rock.core.getpid())\n", code,
    "\nprint('READY')\nio.stdout:flush()\nrock.sleep(600)\n")
  f:close()
  local p = assert(io.popen(ROCK .. " " .. path))
  local pid = tonumber(p:read("l"))
  local lines = {}
  for line in p:lines() do
    if line == "READY" then break end
    lines[#lines + 1] = line
  end
  local ok, err = pcall(fn, pid, lines)
  rock.uv.kill(pid, "sigkill")
  p:close()
  os.remove(path)
  if not ok then error(err, 0) end
end

local gone = T.gone

local wait_until = T.wait_until

T.test("kill -9 of a host with 5 live sandboxes, then rock gc: nothing left", function()
  local procs, containers, ids = {}, {}, {}
  with_host([[
    for i = 1, 5 do
      local sb = rock.sandbox.start{ backend = i <= 3 and "docker" or "local", image = i <= 3 and "]] .. IMAGE .. [[" or nil }
      sb:create_session{ session = "s" }
      sb:run_in_session{ session = "s", command = "sleep 300 &" }
      print(sb.backend, sb.id, sb.container or sb.pid)
    end]], function(pid, lines)
  T.eq(#lines, 5, "sandboxes started: " .. table.concat(lines, "\n"))
  for _, line in ipairs(lines) do
    local backend, id, ref = line:match("^(%S+)\t(%S+)\t(%S+)$")
    ids[#ids + 1] = id
    local top = math.tointeger(backend == "docker" and docker:container_inspect(ref).State.Pid
      or tonumber(ref))
    if backend == "docker" then containers[#containers + 1] = ref end
    procs[#procs + 1] = top
    for _, kid in ipairs(T.children(top)) do procs[#procs + 1] = kid end -- bash sessions
  end
  T.ok(#procs >= 10, "rocklets and bashes found: " .. #procs)
  rock.uv.kill(pid, "sigkill")
  wait_until("the host is gone", function() return gone(pid) end, 5)
  end)
  local out, ok = T.sh(ROCK .. " gc")
  T.ok(ok, out)
  T.match(out, "gc: %d+ removed, 0 error")
  for _, c in ipairs(containers) do T.raises("not_found", docker.container_inspect, docker, c) end
  for _, id in ipairs(ids) do
    T.ok(not rock.uv.fs_stat(state.sandboxes_dir() .. "/" .. id), "dir of " .. id .. " removed")
  end
  wait_until("every rocklet and bash is gone", function()
    for _, p in ipairs(procs) do if not gone(p) then return false end end
    return true
  end, 10)
end)

T.test("a lapsed lease ends the container with no host alive; gc removes it", function()
  local id, container
  with_host([[
    local sb = rock.sandbox.start{ backend = "docker", image = "]] .. IMAGE .. [[", auto_clear_seconds = 2 }
    print(sb.id, sb.container)]], function(pid, lines)
    id, container = lines[1]:match("^(%S+)\t(%S+)$")
  end)
  T.eq(docker:container_inspect(container).State.Running, true)
  wait_until("the container stops by itself", function()
    return not docker:container_inspect(container).State.Running
  end, 15)
  local report = rock.gc.run()
  T.eq(#report.errors, 0, "gc errors: " .. table.concat(report.errors, "; "))
  T.ok(#report.removed >= 1, "gc removed it")
  T.raises("not_found", docker.container_inspect, docker, container)
  T.ok(not rock.uv.fs_stat(state.sandboxes_dir() .. "/" .. id), "socket dir removed")
end)

T.test("gc leaves the sandboxes of live owners; ps lists them with their lease", function()
  local a = rock.sandbox.start{ backend = "docker", image = IMAGE, auto_clear_seconds = 300 }
  local b = rock.sandbox.start{ backend = "local" }
  local report = rock.gc.run()
  T.eq(#report.removed, 0)
  T.ok(a:is_alive() and b:is_alive(), "both alive")
  local out, ok = T.sh(ROCK .. " ps --json")
  T.ok(ok, out)
  local rows = {}
  for line in out:gmatch("[^\n]+") do
    local r = cjson.decode(line)
    rows[r.id] = r
  end
  T.ok(rows[a.id] and rows[b.id], "both listed: " .. out)
  T.eq(rows[a.id].backend, "docker")
  T.eq(rows[a.id].state, "running")
  T.eq(rows[a.id].owner_alive, true)
  T.ok(rows[a.id].lease_left > 250 and rows[a.id].lease_left <= 300, "lease left " .. tostring(rows[a.id].lease_left))
  T.eq(rows[b.id].backend, "local")
  local human = T.sh(ROCK .. " ps")
  T.ok(human:find(a.id, 1, true) and human:find(b.id, 1, true), "human listing: " .. human)
  a:stop()
  b:stop()
end)

-- issue 7 item 8: a container between create and start belongs to a host
-- that is starting it; gc must look at its owner, not at its state.
T.test("issue7-8: gc leaves a live owner's container that is not started; removes a dead owner's", function()
  local container = require "rock.backends.container"
  local function create(owner) -- as a start does, up to its create
    local sb = { id = state.new_id(), image = IMAGE, nonce = state.new_id() }
    sb.dir = state.make_sandbox_dir(sb.id)
    local config = container.config(sb, {})
    if owner then config.Labels["rock.owner"] = owner end
    state.write_record(sb.dir, { id = sb.id, backend = "docker", owner = config.Labels["rock.owner"],
      engine_socket = docker.socket, container_name = container.container_name(sb.id), nonce = sb.nonce })
    return docker:container_create(container.container_name(sb.id), config), sb.id
  end
  local me = state.me()
  local dead = state.owner_label{ host = me.host, pid = me.pid, start = me.start + 1 } -- a reused pid
  local live_c, live_id = create(nil) -- owned by this (live) process
  local dead_c, dead_id = create(dead)
  local ok, err = pcall(function()
    T.eq(docker:container_inspect(live_c).State.Status, "created")
    local report = rock.gc.run()
    T.eq(#report.errors, 0, "gc errors: " .. table.concat(report.errors, "; "))
    T.eq(docker:container_inspect(live_c).State.Status, "created", "live owner's container left")
    T.raises("not_found", docker.container_inspect, docker, dead_c)
    local why
    for _, r in ipairs(report.removed) do why = why or r.why end
    T.eq(why, "owner dead")
  end)
  T.ok(not rock.uv.fs_stat(state.sandboxes_dir() .. "/" .. dead_id), "the dead owner's dir removed")
  pcall(docker.container_remove, docker, live_c, true)
  pcall(docker.container_remove, docker, dead_c, true)
  pcall(state.remove_dir, state.sandboxes_dir() .. "/" .. live_id)
  pcall(state.remove_dir, state.sandboxes_dir() .. "/" .. dead_id)
  if not ok then error(err, 0) end
end)

-- issue 15 item 9: images made by /commit kept rock's labels and the
-- rocklet as entrypoint, so a container a user started from one with a
-- plain `docker run` was reaped by gc as a dead sandbox.
T.test("issue15-9: containers a user starts from committed images are not sandboxes: gc leaves them", function()
  local S = dofile(arg[0]:match("(.*/)") .. "serve_client.lua")
  local srv = S.start{ backend = "docker" }
  local made, images = {}, {}
  local ok, err = pcall(function()
    local id = S.start_sandbox(srv, { image = IMAGE })
    local sbc = docker:container_list("rock.sandbox=" .. id)[1].Id
    local env = srv.post("execute", { sandbox_id = id, command = { "sh", "-c", "echo mine > /etc/user-mark" } })
    T.eq(env.status, "Success", cjson.encode(env))
    -- rock's /commit: the image's own config, no rock label
    local tag = T.tmp_image("committed")
    T.eq(srv.post("commit", { sandbox_id = id, image_tag = tag }).status, "Success")
    images[#images + 1] = tag
    local src, img = docker:image_inspect(IMAGE).Config, docker:image_inspect(tag).Config
    for k in pairs(img.Labels ~= cjson.null and img.Labels or {}) do
      T.ok(k:sub(1, 5) ~= "rock.", "label " .. k .. " on the committed image")
    end
    T.eq(cjson.encode(img.Entrypoint), cjson.encode(src.Entrypoint), "entrypoint")
    T.eq(cjson.encode(img.Cmd), cjson.encode(src.Cmd), "cmd")
    T.eq(img.User, src.User, "user")
    -- a user's own `docker commit` of the sandbox: it keeps rock's labels
    local raw = T.tmp_image("raw")
    docker:container_commit(sbc, raw:match("^(.*):"), raw:match(":([^:]*)$"))
    images[#images + 1] = raw
    srv.kill("KILL") -- the owner dies: its sandbox is garbage now
    srv.wait(10)
    -- `docker run -d IMAGE sleep 300` of each, through the Engine API
    local plain = { { Image = tag, Cmd = { "sleep", "300" } },
                    { Image = raw, Entrypoint = { "sleep" }, Cmd = { "300" } } }
    for i, cfg in ipairs(plain) do
      cfg.HostConfig = { NetworkMode = "none" }
      made[i] = docker:container_create(nil, cfg)
      docker:container_start(made[i])
      T.eq(docker:container_inspect(made[i]).State.Running, true, "plain container " .. i .. " runs")
    end
    local out, gc_ok = T.sh(ROCK .. " gc")
    T.ok(gc_ok, out)
    T.raises("not_found", docker.container_inspect, docker, sbc) -- the sandbox went
    T.ok(not rock.uv.fs_stat(state.sandboxes_dir() .. "/" .. id), "its dir went")
    for i, c in ipairs(made) do
      T.eq(docker:container_inspect(c).State.Running, true, "plain container " .. i .. " left running")
    end
  end)
  for _, c in ipairs(made) do pcall(docker.container_remove, docker, c, true) end
  for _, i in ipairs(images) do pcall(docker.image_remove, docker, i, true) end
  srv.stop()
  if not ok then error(err, 0) end
end)

T.done()
