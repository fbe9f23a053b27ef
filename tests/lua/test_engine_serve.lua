-- `rock serve` on docker (issue 9): a server killed with SIGKILL and started
-- again on the same ROCK_HOME serves its live sandboxes (and holds their
-- reservations: serve/admission.lua); commit, statistics,
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
    -- the adopted sandbox holds its reservation (ROCK's defaults: it asked none)
    local r = ok(srv2.get("node"))
    T.eq(r.reserved.cpus, 2)
    T.eq(r.reserved.memory_gb, 8)
    T.eq(r.running, 1)
    ok(srv2.post("stop", { sandbox_id = id }))
    T.eq(containers(id), 0)
    T.eq(ok(srv2.get("node")).reserved.cpus, 0)
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

-- The images a commit of sandbox id (container cid) made, whatever
-- their name: the engine's own commit (rock.* labels, the container as
-- parent) or rock's (its history names the sandbox). Other tests' images
-- on the shared engine are not counted.
local function images_of(id, cid)
  local out = {}
  for _, img in ipairs(e:call("image_list", { all = "true" }) or {}) do
    local mine = (img.Labels ~= json.null and img.Labels or {})["rock.sandbox"] == id
    if not mine then
      local ok, info = pcall(e.image_inspect, e, img.Id)
      mine = ok and info.Container == cid
      if ok and not mine then
        local hok, hist = pcall(e.image_history, e, img.Id)
        for _, h in ipairs(hok and hist or {}) do
          if tostring(h.CreatedBy):find(id, 1, true) then mine = true end
        end
      end
    end
    if mine then out[#out + 1] = img.Id end
  end
  return out
end

-- issue 15 item 11: an empty tag "succeeded" with an untagged image,
-- x/y:1:2 became x/y:2, a tag the engine refused left an untagged image.
T.test("issue15-11: /commit checks image_tag first; a refused tag leaves no image", function()
  local srv = S.start{ backend = "docker" }
  local done, err = pcall(function()
    local id = S.start_sandbox(srv, { image = image })
    local cid = e:container_list("rock.sandbox=" .. id)[1].Id
    local before = #images_of(id, cid)
    for _, bad in ipairs({ "", "x/y:1:2", "rock-test-tmp/Upper:1", "rock-test-tmp/x:-1", "x@sha256:" .. ("a"):rep(64),
                           ("a"):rep(64), "rock-test-tmp/a..b:1", "rock-test-tmp/x:" .. ("t"):rep(129) }) do
      local r = srv.post("commit", { sandbox_id = id, image_tag = bad })
      T.eq(r.status, "Failed", "commit to " .. bad)
      T.eq(r.message, "invalid parameter", "commit to " .. bad)
      T.match(r.error, "^body%.image_tag: invalid image reference", "commit to " .. bad)
      T.eq(#images_of(id, cid), before, "images after a commit to " .. bad)
    end
    -- valid as a reference, refused by docker's tag store ("sha256" is no repository name)
    local r = srv.post("commit", { sandbox_id = id, image_tag = "sha256:1" })
    T.eq(r.status, "Failed", json.encode(r))
    T.eq(r.message, "commit sandbox failed")
    T.eq(#images_of(id, cid), before, "images after a refused tag")
    -- a full disk where the new config is written: no image either
    local tmp = os.getenv("ROCK_HOME") .. "/fulltmp"
    T.with_tmpfs(tmp, 64, function()
      T.sh("dd if=/dev/zero of=" .. tmp .. "/fill bs=4k 2>/dev/null")
      local srv2 = S.start{ backend = "docker", home = os.getenv("ROCK_HOME") .. "/other", env = "TMPDIR=" .. tmp }
      local ok2, err2 = pcall(function()
        local id2 = S.start_sandbox(srv2, { image = image })
        local cid2 = e:container_list("rock.sandbox=" .. id2)[1].Id
        local r2 = srv2.post("commit", { sandbox_id = id2, image_tag = T.tmp_image("full") })
        T.eq(r2.status, "Failed", json.encode(r2))
        T.match(r2.error, "no space left")
        T.eq(#images_of(id2, cid2), 0, "images after a commit on a full disk")
        ok(srv2.post("stop", { sandbox_id = id2 }))
      end)
      srv2.stop()
      if not ok2 then error(err2, 0) end
    end)
    -- a good one, with a registry host and port: named so, nothing else left
    local tag = "localhost:5000/" .. T.tmp_image("port")
    T.eq(ok(srv.post("commit", { sandbox_id = id, image_tag = tag })), id .. " commited")
    local made = images_of(id, cid)
    T.eq(#made, before + 1, "one image")
    T.eq(e:image_inspect(tag).Id, made[#made])
    e:image_remove(tag, true)
    ok(srv.post("stop", { sandbox_id = id }))
  end)
  srv.stop()
  if not done then error(err, 0) end
end)

T.done()
