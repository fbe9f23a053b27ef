-- `rock serve` on docker (issue 9): a server killed with SIGKILL and started
-- again on the same ROCK_HOME serves its live sandboxes; commit, statistics,
-- warmup (a failed pull is said), a start that times out is stopped.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local S = dofile(here .. "serve_client.lua")
local json = rock.json

local image = "rock-test/debian:12"
local function ok(env, what)
  if type(env) ~= "table" or env.status ~= "Success" then error((type(what) == "string" and what or "call") .. ": " .. json.encode(env), 2) end
  return env.result
end

local e = rock.engine.connect("docker")
local function containers(id)
  local list = e:container_list("rock.sandbox=" .. id)
  return #list
end

T.test("SIGKILL, restart on the same ROCK_HOME: its live sandboxes are served again", function()
  local srv = S.start{ backend = "docker" }
  local id = S.start_sandbox(srv, { image = image }, { ["X-User-Id"] = "alice" })
  ok(srv.post("create_session", { sandbox_id = id, session = "s" }))
  ok(srv.post("run_in_session", { sandbox_id = id, session = "s", command = "echo before > /tmp/mark" }))
  srv.kill("KILL")
  srv.wait(10)
  T.eq(containers(id), 1) -- a container is no child of the server: it lives on
  local srv2 = S.start{ backend = "docker" }
  local done, err = pcall(function()
    local st = ok(srv2.get("get_status", { sandbox_id = id }))
    T.eq(st.is_alive, true)
    T.eq(st.state, "running")
    T.eq(st.user_id, "alice")
    T.eq(ok(srv2.post("execute", { sandbox_id = id, command = { "cat", "/tmp/mark" } })).stdout, "before\n")
    ok(srv2.post("create_session", { sandbox_id = id, session = "s2" }))
    T.eq(ok(srv2.post("run_in_session", { sandbox_id = id, session = "s2", command = "echo after" })).output, "after\n")
    -- a gc pass from another host does not take the served sandbox
    local out = T.sh(T.rock_exe() .. " gc")
    T.ok(not out:find(id, 1, true), "gc spared it: " .. out)
    T.eq(containers(id), 1)
    ok(srv2.post("stop", { sandbox_id = id }))
    T.eq(containers(id), 0)
  end)
  srv2.stop()
  if not done then error(err, 0) end
end)

T.test("commit, statistics, warmup, a start that cannot finish", function()
  local srv = S.start{ backend = "docker" }
  local done, err = pcall(function()
    local id = S.start_sandbox(srv, { image = image })
    ok(srv.post("execute", { sandbox_id = id, command = { "sh", "-c", "echo committed > /etc/rock-mark" } }))
    local stats = ok(srv.get("get_sandbox_statistics", { sandbox_id = id }))
    T.ok(type(stats.cpu) == "number" and type(stats.mem) == "number" and type(stats.disk) == "number", json.encode(stats))
    T.ok(stats.mem_bytes > 0, "memory in use")
    local tag = T.tmp_image("commit")
    T.eq(ok(srv.post("commit", { sandbox_id = id, image_tag = tag })), id .. " commited")
    ok(srv.post("stop", { sandbox_id = id }))
    local id2 = S.start_sandbox(srv, { image = tag })
    T.eq(ok(srv.post("execute", { sandbox_id = id2, command = { "cat", "/etc/rock-mark" } })).stdout, "committed\n")
    ok(srv.post("stop", { sandbox_id = id2 }))
    e:image_remove(tag, true)
    -- warmup: a present image is Success; one no registry has is Failed, said so
    T.eq(srv.post("warmup/tasks", { image = image }).status, "Success")
    local w = srv.post("warmup/tasks", { image = "rock-test-tmp/no-such-image:404" })
    T.eq(w.status, "Failed")
    T.eq(w.message, "start warmup failed")
    -- a start whose image cannot be had: Failed, its phase says why, nothing left
    local env = srv.post("start", { image = "rock-test-tmp/no-such-image:404", sandbox_id = "rk-serve-nope" })
    T.eq(env.status, "Failed")
    T.eq(containers("rk-serve-nope"), 0)
    local st = ok(srv.get("get_status", { sandbox_id = "rk-serve-nope", include_all_states = true }))
    T.eq(st.state, "stopped")
    T.eq(st.status.image_pull.status, "failed")
  end)
  srv.stop()
  if not done then error(err, 0) end
end)

T.done()
