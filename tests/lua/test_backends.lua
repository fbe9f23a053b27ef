-- test_backends.lua: the backend contract (lua/rock/backends/init.lua) is
-- enough. A backend registered at runtime (wrapped_backend.lua: the local
-- backend's functions under the name "wrapped") starts, runs, reads and
-- writes, uploads, reports its status, is served by `rock serve` and
-- reached through the remote backend, shows in `rock ps`, is reaped by gc
-- after its host is killed, with no branch on its name anywhere; and
-- register() refuses a backend that lacks what the contract asks.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local backends = require "rock.backends"
local state = require "rock.state"
local W = dofile(here .. "wrapped_backend.lua")
local uv = rock.uv

T.test("register refuses a backend missing a required function, named", function()
  for _, missing in ipairs(backends.REQUIRED) do
    local impl = {}
    for _, f in ipairs(backends.REQUIRED) do if f ~= missing then impl[f] = function() end end end
    local e = T.raises("invalid_argument", backends.register, "broken", impl)
    T.match(e.message, "backend 'broken' has no " .. missing .. "%(%)")
  end
  local impl = {}
  for _, f in ipairs(backends.REQUIRED) do impl[f] = function() end end
  impl.caps = { commit = true }
  T.match(T.raises("invalid_argument", backends.register, "broken", impl).message,
    "declares 'commit' and has no commit%(%)")
  impl.caps = { teleport = true }
  T.match(T.raises("invalid_argument", backends.register, "broken", impl).message,
    "unknown capability 'teleport'")
  T.raises("invalid_argument", backends.register, "bad name!", impl)
  T.eq(backends.get("broken"), nil, "nothing registered")
  T.raises("invalid_argument", rock.sandbox.start, { backend = "broken" })
end)

T.test("the built-in backends declare what they can", function()
  T.eq(table.concat(backends.having("commit"), ","), "docker,podman,runc")
  T.eq(backends.takes_image("local"), false)
  T.eq(backends.takes_image("docker"), true)
  T.eq(backends.takes_image(nil), true, "auto picks an engine for an image")
  T.eq(backends.resolve{}, "local", "auto without an image")
  T.eq(backends.resolve{ base_url = "http://127.0.0.1:1" }, "remote")
  T.eq(backends.can("wrapped", "keep"), true)
  T.eq(backends.can("wrapped", "commit"), false)
  local where = require("rock.backends.remote").where
  T.eq(where("http://198.18.0.2:8080", { host_name = "n1", host_ip = "127.0.0.1" }).host_ip, "198.18.0.2",
    "a node bound to a wildcard is reached at base_url's address")
  T.eq(where("http://127.0.0.1:8080", { host_name = "n1", host_ip = "127.0.0.1" }).host_ip, "127.0.0.1")
  T.eq(where("http://[::1]:1", {}).host_ip, "::1")
end)

T.test("a runtime backend: start, run, files, upload, status, stop", function()
  local sb = rock.sandbox.start{ backend = "wrapped" }
  T.eq(sb.backend, "wrapped")
  sb:create_session{ session = "s" }
  local r = sb:run_in_session{ session = "s", command = "echo hi" }
  T.eq(r.output, "hi\n")
  T.eq(r.exit_code, 0)
  local bytes = "a\0b\255"
  sb:write_file{ path = sb.dir .. "/work/f", content = bytes }
  T.eq(sb:read_file{ path = sb.dir .. "/work/f", binary = true }.content, bytes)
  local src = os.getenv("ROCK_HOME") .. "/up.bin"
  T.write(src, string.rep("x", 100000))
  sb:upload{ path = sb.dir .. "/work/up/u", file = src }
  os.remove(src)
  T.eq(sb:execute{ command = { "wc", "-c", sb.dir .. "/work/up/u" } }.stdout, "100000 " .. sb.dir .. "/work/up/u\n")
  for _, op in ipairs({ "create_session", "run_in_session", "write_file", "read_file", "upload", "execute" }) do
    T.eq(W.calls[op], 1, "the backend's op " .. op)
  end
  local st = sb:get_status()
  T.eq(st.backend, "wrapped")
  T.eq(st.state, "running")
  T.eq(st.is_alive, true)
  T.eq(st.host_ip, backends.this_host().host_ip, "the node's address, from the backend")
  T.eq(sb.host_ip, st.host_ip, "the sandbox knows it")
  T.eq(st.status.rocklet_ready.status, "success")
  T.raises("invalid_argument", sb._capable, sb, "commit", "commit")
  local dir = sb.dir
  sb:stop()
  T.eq(sb:get_status().state, "stopped")
  T.ok(not uv.fs_stat(dir), "its dir is gone")
  T.raises("sandbox_not_alive", sb.run_in_session, sb, { session = "s", command = "true" })
end)

T.test("a backend without upload_stream is given the file whole (write_file)", function()
  local whole = { caps = {} }
  for k, v in pairs(W) do if type(v) == "function" then whole[k] = v end end
  backends.register("whole", whole)
  local sb = rock.sandbox.start{ backend = "whole" }
  local ups, writes = W.calls.upload or 0, W.calls.write_file or 0
  local src = os.getenv("ROCK_HOME") .. "/whole.bin"
  T.write(src, "all\0at once")
  sb:upload{ path = sb.dir .. "/work/w", file = src }
  os.remove(src)
  T.eq(sb:read_file{ path = sb.dir .. "/work/w", binary = true }.content, "all\0at once")
  T.eq(W.calls.upload or 0, ups, "no streamed upload")
  T.eq(W.calls.write_file, writes + 1, "one write_file")
  sb:stop()
  backends.unregister("whole")
end)

T.test("a runtime backend behind rock serve, reached by the remote backend", function()
  local srv = rock.serve.start{ port = 0, backend = "wrapped", log_requests = false }
  local ok, err = pcall(function()
    local sb = rock.sandbox.start{ base_url = srv.url, image = "none" }
    T.eq(sb.backend, "remote")
    sb:create_session{ session = "s" }
    T.eq(sb:run_in_session{ session = "s", command = "printf '\\377'; (exit 3)" }.exit_code, 3)
    T.eq(sb:run_in_session{ session = "s", command = "printf 'a\\0b'" }.output, "a\0b", "bytes back")
    local bytes = "\0\1\2\255"
    local path = "/tmp/" .. sb.id .. " f%20?"
    sb:write_file{ path = path, content = bytes }
    T.eq(sb:read_file{ path = path, binary = true }.content, bytes)
    local src = os.getenv("ROCK_HOME") .. "/up2.bin"
    T.write(src, "payload")
    sb:upload{ path = path, file = src }
    os.remove(src)
    T.eq(sb:read_file{ path = path }.content, "payload", "the path went over once, as is")
    os.remove(path)
    local st = sb:get_status()
    T.eq(st.backend, "remote")
    T.eq(st.host_ip, "127.0.0.1", "the node's address, as its start answered")
    local e = srv.registry:get(sb.id)
    local wire = srv.registry:status(e, true)
    T.eq(wire.backend, "wrapped", "the server's sandbox is the runtime backend's")
    T.match(wire.create_time, "^%d%d%d%d%-%d%d%-%d%dT")
    T.eq(wire.state_history[#wire.state_history].to_state, "running")
    T.match(wire.state_history[#wire.state_history].timestamp, "Z$")
    sb:stop()
  end)
  srv:stop()
  if not ok then error(err, 0) end
end)

T.test("remote.where: a node that answers its loopback is reached at the address base_url names", function()
  local remote = require "rock.backends.remote"
  local function ip(url, said) return remote.where(url, { host_ip = said }).host_ip end
  T.eq(ip("http://198.18.0.9:8080", "127.0.0.1"), "198.18.0.9", "an IP literal")
  T.eq(ip("http://[::1]:8080", nil), "::1", "an IPv6 literal, the node silent")
  T.eq(ip("http://198.18.0.9:8080", "198.18.7.7"), "198.18.7.7", "a node's own address is kept")
  T.eq(ip("http://localhost:8080", "127.0.0.1"), "127.0.0.1", "a name of loopback stays loopback")
  T.eq(ip("http://no-such-node.invalid:8080", "127.0.0.1"), "127.0.0.1", "a name that does not resolve keeps the answer")
  -- (a name that resolves elsewhere: test_fleet_netns.lua)
end)

T.test("rock ps lists it; gc reaps it after its host is killed", function()
  local sb = rock.sandbox.start{ backend = "wrapped", auto_clear_seconds = 600 }
  local rows = rock.gc.ps()
  local mine
  for _, r in ipairs(rows) do if r.id == sb.id then mine = r end end
  T.ok(mine, "ps lists it")
  T.eq(mine.backend, "wrapped")
  T.eq(mine.state, "running", "its lease read through the backend")
  T.ok(mine.lease_left, "lease_left")
  T.eq(mine.listed_by, "wrapped", "the backend's list() saw it")
  -- the one status builder: ps says what get_status says
  local st = sb:get_status()
  for _, k in ipairs({ "backend", "image", "state" }) do T.eq(mine[k], st[k], "ps and get_status agree on " .. k) end
  T.eq(mine.id, st.sandbox_id)
  T.ok(math.abs(mine.age - (os.time() - st.create_time)) <= 1, "its age from the same create_time")
  -- rock ps (the CLI, another process) prints the rows the same way: a
  -- local sandbox's as here; this one's backend it does not know (it was
  -- registered in this process), so it cannot ask it: unreachable
  local lsb = rock.sandbox.start{ backend = "local" }
  local cli = {}
  for line in T.sh(T.rock_exe() .. " ps --json"):gmatch("[^\n]+") do
    local ok, r = pcall(rock.json.decode, line)
    if ok and type(r) == "table" and r.id then cli[r.id] = r end
  end
  T.ok(cli[lsb.id] and cli[sb.id], "rock ps --json lists both")
  local lst = lsb:get_status()
  T.eq(cli[lsb.id].state, lst.state, "the local one: the state get_status says")
  T.eq(cli[lsb.id].backend, "local")
  T.eq(cli[sb.id].backend, "wrapped")
  T.eq(cli[sb.id].state, "unreachable", "a backend another process registered")
  lsb:stop()
  -- its rocklet killed under a live owner: it no longer answers
  uv.kill(sb.pid, "sigkill")
  T.wait_until("its rocklet is gone", function() return not uv.kill(sb.pid, 0) end, 10)
  for _, r in ipairs(rock.gc.ps()) do if r.id == sb.id then mine = r end end
  T.eq(mine.state, "unreachable", "ps says it does not answer")
  T.eq(mine.lease_left, nil)
  T.eq(mine.owner_alive, true)
  sb:stop()
  -- a host of its own registers the backend, starts a sandbox, and is killed
  local script = os.getenv("ROCK_HOME") .. "/child.lua"
  T.write(script, string.format([[
    local W = dofile(%q)
    local sb = require("rock").sandbox.start{ backend = "wrapped" }
    io.stdout:write(sb.id, " ", sb.pid, "\n")
    io.stdout:flush()
    require("rock").sleep(600)
  ]], here .. "wrapped_backend.lua"))
  local out = os.getenv("ROCK_HOME") .. "/child.out"
  local pid = tonumber((T.sh(string.format("ROCK_NO_GC=1 %s %s > %s 2>&1 & echo $!", T.rock_exe(), script, out))))
  local id, rpid
  T.wait_until("the child's sandbox started", function()
    id, rpid = (T.read(out) or ""):match("^(%S+) (%d+)\n")
    return id ~= nil
  end, 30)
  T.ok(state.read_record(state.sandboxes_dir() .. "/" .. id).backend == "wrapped", "its record names its backend")
  uv.kill(pid, "sigkill")
  T.wait_until("the child is gone", function() return not uv.kill(pid, 0) end, 10)
  local reaped = W.reaped
  local report = rock.gc.run()
  local removed
  for _, r in ipairs(report.removed) do if r.id == id then removed = r end end
  T.ok(removed, "gc removed it")
  T.eq(removed.backend, "wrapped")
  T.eq(removed.why, "owner dead")
  T.eq(W.released[#W.released], id, "through the backend's release")
  T.eq(W.reaped, reaped + 1, "the backend's reap ran")
  T.ok(not uv.fs_stat(state.sandboxes_dir() .. "/" .. id), "its dir is gone")
  T.wait_until("its rocklet is gone", function() return not uv.kill(tonumber(rpid), 0) end, 10)
  os.remove(script)
  os.remove(out)
end)

T.done()
