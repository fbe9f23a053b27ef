-- `rock serve` under a hostile user (issue 9): what ROCK's SDK and rock's
-- remote backend hit at the edges: a sandbox whose rocklet died, then
-- deleted or restarted; include_all_states spellings; stop during a
-- pending start; the remote backend's error codes. Local backend.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local S = dofile(here .. "serve_client.lua")
local json = rock.json

local srv = S.start{ backend = "local" }
local function ok(env, what)
  if type(env) ~= "table" or env.status ~= "Success" then
    error((what or "call") .. ": " .. json.encode(env), 2)
  end
  return env.result
end

local function has_dir(id)
  for _, s in ipairs(require("rock.state").list()) do if s.id == id then return true end end
  return false
end

-- Kill the sandbox's rocklet (the session shell's parent), by its pid.
local function kill_rocklet(id)
  local r = ok(srv.post("run_in_session", { sandbox_id = id, command = "echo $PPID", check = "ignore" }))
  local pid = r.output:match("%d+")
  T.ok(pid, "the rocklet's pid")
  T.sh("kill -9 " .. pid)
  for _ = 1, 200 do
    local st = ok(srv.get("get_status", { sandbox_id = id, include_all_states = "True" }))
    if st.state == "stopped" then return st end
    rock.sleep(0.05)
  end
  error("the dead rocklet's sandbox never read stopped")
end

T.test("a sandbox whose rocklet died: delete removes its files, restart brings it back", function()
  local id = S.start_sandbox(srv, { image = "local" })
  ok(srv.post("create_session", { sandbox_id = id }))
  T.ok(has_dir(id), "its dir while running")
  local st = kill_rocklet(id)
  T.eq(st.is_alive, false)
  local f = srv.post("run_in_session", { sandbox_id = id, command = "true" })
  T.eq(f.status, "Failed")
  T.eq(f.result.rock_code, "sandbox_not_alive")
  -- restart a stopped sandbox: same id, alive again
  ok(srv.post("restart", { sandbox_id = id }))
  local alive = false
  for _ = 1, 600 do
    local s = srv.get("get_status", { sandbox_id = id, include_all_states = "1" })
    if s.status == "Success" and s.result.is_alive then alive = true; break end
    if s.status == "Success" and s.result.state == "stopped" then
      error("restart failed: " .. json.encode(s))
    end
    rock.sleep(0.05)
  end
  T.ok(alive, "restarted")
  ok(srv.post("create_session", { sandbox_id = id }))
  T.eq(ok(srv.post("run_in_session", { sandbox_id = id, command = "echo back" })).output, "back\n")
  kill_rocklet(id)
  ok(srv.post("delete", { sandbox_id = id }))
  T.ok(not has_dir(id), "the dead sandbox's files are gone after delete")
  ok(srv.post("delete", { sandbox_id = id })) -- twice: a no-op
end)

T.test("two restarts at once of a dead sandbox: one wins, nothing is leaked", function()
  local id = S.start_sandbox(srv, { image = "local" })
  ok(srv.post("create_session", { sandbox_id = id }))
  kill_rocklet(id)
  local ts = {}
  for i = 1, 2 do ts[i] = rock.task.spawn(function() return srv.post("restart", { sandbox_id = id }) end) end
  local vals = rock.task.wait(ts)
  local wins = 0
  for i = 1, 2 do
    if vals[i].status == "Success" then wins = wins + 1 else T.eq(vals[i].result.rock_code, "conflict", json.encode(vals[i])) end
  end
  T.eq(wins, 1, "one restart wins")
  for _ = 1, 400 do
    local s = ok(srv.get("get_status", { sandbox_id = id, include_all_states = "true" }))
    if s.state ~= "pending" then T.eq(s.state, "running", json.encode(s)); break end
    rock.sleep(0.05)
  end
  local n = 0
  for _, it in ipairs(ok(srv.get("sandboxes", {})).items) do if it.sandbox_id == id then n = n + 1 end end
  T.eq(n, 1, "listed once")
  ok(srv.post("stop", { sandbox_id = id }))
  ok(srv.post("delete", { sandbox_id = id }))
  T.ok(not has_dir(id), "nothing left")
end)

T.test("include_all_states spelled as the SDK and curl users do", function()
  local id = S.start_sandbox(srv, { image = "local" })
  ok(srv.post("stop", { sandbox_id = id }))
  for _, v in ipairs{ "True", "true", "1" } do
    T.eq(ok(srv.get("get_status", { sandbox_id = id, include_all_states = v })).state, "stopped", v)
  end
  for _, v in ipairs{ "False", "false", "0" } do
    local f = srv.get("get_status", { sandbox_id = id, include_all_states = v })
    T.eq(f.status, "Failed", v)
    T.eq(f.result.code, 4000)
  end
  local f = srv.post("run_in_session", { sandbox_id = id, command = "true" })
  T.eq(f.status, "Failed")
  T.match(f.error, "stopped")
  ok(srv.post("delete", { sandbox_id = id }))
end)

T.test("stop while a start is pending: nothing is left running", function()
  local env = ok(srv.post("start_async", { image = "local" }))
  local id = env.sandbox_id
  local a = ok(srv.get("is_alive", { sandbox_id = id }))
  T.eq(type(a.is_alive), "boolean")
  ok(srv.post("stop", { sandbox_id = id }))
  ok(srv.post("delete", { sandbox_id = id }))
  -- the start lands later and is stopped then: wait for its files to go
  for _ = 1, 400 do
    if not has_dir(id) then break end
    rock.sleep(0.05)
  end
  T.ok(not has_dir(id), "no sandbox left behind")
end)

T.test("start with a number out of range: invalid parameter, nothing started", function()
  local before = ok(srv.get("sandboxes", {})).total
  for _, body in ipairs{ '{"image":"local","cpus":1e400}', '{"image":"local","cpus":-1}',
      '{"image":"local","cpus":0}', '{"image":"local","memory":-5}', '{"image":"local","cpus":"-2"}',
      '{"image":"local","startup_timeout":-1e400}' } do
    local e, res = srv.post("start_async", body)
    T.eq(res.status, 200, body)
    T.eq(e.status, "Failed", body .. " " .. res.body)
    T.eq(e.message, "invalid parameter", body)
    T.match(e.error, "^body%.%a+", body)
  end
  T.eq(ok(srv.get("sandboxes", {})).total, before, "no sandbox started")
  T.eq(ok(srv.get("sandboxes", {})).total, before)
  local e = ok(srv.post("start_async", { image = "local", cpus = "1.5", memory = 1073741824 }))
  T.eq(e.cpus, 1.5)
  ok(srv.post("stop", { sandbox_id = e.sandbox_id }))
  ok(srv.post("delete", { sandbox_id = e.sandbox_id }))
end)

T.test("the remote backend raises the in-process codes", function()
  local sb = rock.sandbox.start{ base_url = srv.url, image = "local" }
  T.raises("not_found", sb.read_file, sb, { path = "/nonexistent-rock-hostile/file" })
  T.raises("session_not_found", sb.run_in_session, sb, { session = "nope", command = "ls" })
  sb:create_session{ session = "s" }
  local r = sb:run_in_session{ session = "s", command = "sleep 5", timeout = 0.5 }
  T.eq(r.failure_reason, "timeout")
  T.eq(sb:run_in_session{ session = "s", command = "echo ok" }.output, "ok\n")
  sb:stop()
end)

T.test("a remote sandbox stopped and deleted by another client: sb:stop() is quiet", function()
  local sb = rock.sandbox.start{ base_url = srv.url, image = "local" }
  ok(srv.post("stop", { sandbox_id = sb.id }))
  ok(srv.post("delete", { sandbox_id = sb.id }))
  -- a call on it: sandbox_not_alive, as in-process on a sandbox that is gone
  T.raises("sandbox_not_alive", sb.run_in_session, sb, { command = "true" })
  T.eq(sb.state, "stopped")
  sb:stop() -- as in-process: stopping what is already gone is no error
  T.eq(sb.state, "stopped")
end)

T.test("a wrong token from the remote backend: unauthorized", function()
  local home = T.sh("mktemp -d"):gsub("%s+$", "")
  local s2 = S.start{ backend = "local", host = "127.0.0.2", home = home, args = { "--token", "right" } }
  local ok2, err = pcall(rock.sandbox.start, { base_url = s2.url, token = "wrong", image = "local" })
  s2.stop()
  os.execute("rm -rf '" .. home .. "'")
  T.ok(not ok2, "refused")
  T.eq(err.code, "unauthorized", tostring(err))
end)

T.test("the server going away mid-call: node_lost", function()
  local home = T.sh("mktemp -d"):gsub("%s+$", "")
  local s3 = S.start{ backend = "local", home = home }
  local sb = rock.sandbox.start{ base_url = s3.url, image = "local" }
  sb:create_session{ session = "s" }
  local t = rock.task.spawn(function()
    return pcall(sb.run_in_session, sb, { session = "s", command = "sleep 30", timeout = 60 })
  end)
  rock.sleep(0.5)
  s3.kill("KILL")
  s3.wait()
  local okc, err = rock.task.wait(t)
  T.ok(not okc or err == nil, "the call fails")
  T.eq(err and err.code, "node_lost", json.encode(err))
  sb._released = true
  -- its sandbox died with the server (local rocklets follow their owner)
  os.execute("rm -rf '" .. home .. "'")
end)

srv.stop()
T.done()
