-- test_serve_pool.lua: `rock serve --pool IMAGE=N` (issue 23, item 4):
-- ROCK's start answered by warm sandboxes, over real HTTP (local backend:
-- the image is recorded, not run; lua.test_serve_pool.docker runs them). The warm ones hold their budget, are
-- listed and found by no route until claimed; a start as ROCK's SDK sends
-- it gets one (its sandbox_id is a warm one's, alive at the first poll),
-- the pool refills; other starts start as always; concurrent starts never
-- share one; warm ones killed from the host right before a start are not
-- handed out; a server stopped or killed leaves nothing (a restart removes
-- the previous server's warm ones).
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local S = dofile(here .. "serve_client.lua")
local json = rock.json

local IMAGE = "rock-test/debian:12"
local BACKEND = os.getenv("ROCK_TEST_BACKEND") or "local" -- lua.test_serve_pool.docker: in containers
local home = T.sh("mktemp -d /tmp/rock-serve-pool.XXXXXX"):gsub("%s+$", "")
local SDK = { image = IMAGE, memory = "8g", cpus = 2, auto_clear_time_minutes = 30, auto_clear_time = 30,
  pull = "missing" } -- what ROCK's SDK sends by default

local function dirs()
  local out = {}
  for _, name in ipairs(T.listdir(home .. "/sandboxes")) do out[name] = true end
  return out
end
local function count(t) local n = 0 for _ in pairs(t) do n = n + 1 end return n end

local function pool_report(srv)
  local env = srv.get("node")
  assert(env.status == "Success", json.encode(env))
  return env.result.pools and env.result.pools[IMAGE], env.result
end

local function warm(srv, n)
  T.wait_until(n .. " warm", function()
    local p = pool_report(srv)
    return p and p.idle == n and p.starting == 0
  end, 30)
end

local srv = S.start{ backend = BACKEND, home = home, args = { "--pool", IMAGE .. "=3" } }

T.test("the warm ones hold their budget and no route lists or finds them", function()
  warm(srv, 3)
  local _, node = pool_report(srv)
  T.eq(node.reserved.cpus, 6, "three of 2 CPUs reserved")
  local env = srv.get("sandboxes")
  T.eq(env.result.total, 0, "none listed")
  local ids = dirs()
  T.eq(count(ids), 3)
  for id in pairs(ids) do
    local st = srv.get("get_status", { sandbox_id = id })
    T.eq(st.status, "Failed", "a warm one is not found: " .. json.encode(st))
    local ex = srv.post("execute", { sandbox_id = id, command = "true" })
    T.eq(ex.status, "Failed", "nor usable")
  end
end)

T.test("a start as ROCK's SDK sends it is a warm one, alive at once; the pool refills", function()
  local before = dirs()
  local env = srv.post("start_async", SDK, { ["X-User-Id"] = "alice" })
  T.eq(env.status, "Success", json.encode(env))
  local id = env.result.sandbox_id
  T.ok(before[id], "the answer's sandbox_id is a warm one's")
  local st = srv.get("get_status", { sandbox_id = id })
  T.eq(st.result.is_alive, true, "alive at the first poll")
  T.eq(st.result.user_id, "alice", "the caller's now")
  local r = srv.post("execute", { sandbox_id = id, command = { "echo", "warm" } })
  T.eq(r.result.stdout, "warm\n", json.encode(r))
  T.eq(srv.get("sandboxes").result.total, 1, "listed once claimed")
  warm(srv, 3)
  local m = srv.raw{ path = "/metrics" }.body
  T.match(m, "rock_pool_claims_total 1\n")
  srv.post("stop", { sandbox_id = id })
end)

T.test("other starts start as always; the pool is left as it is", function()
  local before = dirs()
  local id = S.start_sandbox(srv, { image = IMAGE, memory = "4g" })
  T.ok(not before[id], "a 4g start is not a warm 8g one")
  srv.post("stop", { sandbox_id = id })
  id = S.start_sandbox(srv, { image = IMAGE, auto_clear_time_minutes = 100 })
  T.ok(not before[id], "a lease past the warm rocklets' own is started for it")
  srv.post("stop", { sandbox_id = id })
  id = S.start_sandbox(srv, { image = IMAGE, sandbox_id = "mine-1" })
  T.eq(id, "mine-1", "its own id: started for it")
  T.eq(pool_report(srv).claimed, 1)
  srv.post("stop", { sandbox_id = id })
end)

T.test("12 starts at once: each gets its own sandbox, the warm ones first", function()
  warm(srv, 3)
  local before = dirs()
  local ids, ts = {}, {}
  for i = 1, 12 do
    ts[i] = rock.spawn(function() ids[i] = S.start_sandbox(srv, SDK) end)
  end
  rock.wait(ts)
  local seen, from_pool = {}, 0
  for i = 1, 12 do
    T.ok(not seen[ids[i]], "sandbox " .. ids[i] .. " answered once")
    seen[ids[i]] = true
    if before[ids[i]] then from_pool = from_pool + 1 end
  end
  T.ok(from_pool >= 3, "the three warm ones were claimed: " .. from_pool)
  for i = 1, 12 do srv.post("stop", { sandbox_id = ids[i] }) end
  warm(srv, 3)
end)

-- Kill warm sandbox id from the host, from its record: its rocklet
-- (local), its container's PID 1 (runc), its container (an engine's).
local function kill_warm(id)
  local rec = json.decode(T.must("cat " .. T.q(home .. "/sandboxes/" .. id .. "/sandbox.json")))
  if rec.backend == "local" then T.must("kill -9 " .. math.tointeger(rec.pid))
  elseif rec.backend == "runc" then T.must("kill -9 " .. math.tointeger(rec.init_pid))
  else T.must(rec.backend .. " rm -f " .. rec.container .. " >/dev/null") end
end

T.test("warm ones killed from the host right before a start are not handed out", function()
  warm(srv, 3)
  local before = dirs()
  for id in pairs(before) do kill_warm(id) end
  local env = srv.post("start_async", SDK)
  T.eq(env.status, "Success", json.encode(env))
  local id = env.result.sandbox_id
  T.ok(not before[id], "not one of the dead warm ones")
  T.wait_until("it runs", function()
    local st = srv.get("get_status", { sandbox_id = id }).result
    return st and st.is_alive == true
  end, 60)
  T.eq(srv.post("execute", { sandbox_id = id, command = { "echo", "fresh" } }).result.stdout, "fresh\n")
  srv.post("stop", { sandbox_id = id })
  warm(srv, 3)
  local now = dirs()
  for old in pairs(before) do T.ok(not now[old], "dead warm " .. old .. " removed") end
end)

T.test("kill -9 and a restart on the same home: the old warm ones go, the new pool fills", function()
  warm(srv, 3)
  local old = dirs()
  srv.kill("KILL")
  srv.wait(10)
  srv = S.start{ backend = BACKEND, home = home, args = { "--pool", IMAGE .. "=2" } }
  warm(srv, 2)
  local now = dirs()
  for id in pairs(old) do T.ok(not now[id], "the previous server's warm " .. id .. " removed") end
  T.eq(count(now), 2)
  T.eq(srv.get("sandboxes").result.total, 0, "none adopted as somebody's")
end)

T.test("a bad --pool is refused at start with the reason", function()
  for _, spec in ipairs({ "noequals", IMAGE .. "=x", IMAGE .. "=1," .. IMAGE .. "=2" }) do
    local out, ok = T.sh(T.rock_exe() .. " serve --port 0 --backend local --pool " .. T.q(spec))
    T.ok(not ok, spec .. " refused")
    T.match(out, "%-%-pool", spec)
  end
end)

T.test("the server stopped: nothing left", function()
  srv.stop()
  T.wait_until("no sandbox dir left", function() return count(dirs()) == 0 end, 10)
end)

T.must("rm -rf " .. T.q(home))
T.done()
