-- test_serve_admission.lua: a `rock serve` node's budget and admission
-- (issue 17, part 2; lua/rock/serve/admission.lua) over real HTTP, with
-- small real sandboxes on the local backend (accounting only: a 4-CPU
-- request is no limit there; docker would refuse it on a smaller host;
-- ROCK_TEST_BACKEND=docker runs it where the host has the CPUs): ROCK's
-- evaluator budgets admit exactly 20 of 4 CPU / 16 GB and queue the 21st;
-- FIFO order, wait timeouts, cancels and stops free what they held;
-- max-starting bounds the starts in flight (seen in the node's reports);
-- wait:false refuses at once; the node report and /metrics; and a remote
-- Sandbox whose node stops answering fails node_lost. The node report is
-- what rock.fleet.placement decides from (checked with it).
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local S = dofile(here .. "serve_client.lua")
local json = rock.json
local A = require "rock.serve.admission"

local backend = os.getenv("ROCK_TEST_BACKEND") or "local"
local image = os.getenv("ROCK_TEST_IMAGE") or "local"
local GB = 2 ^ 30

-- The servers a test starts are stopped when it ends, failed or not.
local servers = {}
local function serve(opts)
  local srv = S.start(opts)
  servers[#servers + 1] = srv
  return srv
end
local function test(name, fn)
  T.test(name, function()
    local okf, err = xpcall(fn, debug.traceback)
    for i = #servers, 1, -1 do servers[i].stop(); servers[i] = nil end
    if not okf then error(err, 0) end
  end)
end

local function ok(env, what)
  if type(env) ~= "table" or env.status ~= "Success" then
    error((type(what) == "string" and what or "call") .. ": " .. json.encode(env), 2)
  end
  return env.result
end

local function status(srv, id)
  return ok(srv.get("get_status", { sandbox_id = id, include_all_states = "true" }), "get_status " .. id)
end

local function node(srv) return ok(srv.get("node"), "node") end

local function start_async(srv, body)
  body.image = body.image or image
  return ok(srv.post("start_async", body), "start_async").sandbox_id
end

local function wait_state(srv, id, want, seconds)
  local st
  T.wait_until(id .. " " .. want, function()
    st = status(srv, id)
    return st.state == want and (want ~= "running" or st.is_alive)
  end, seconds or 60)
  return st
end

local function stop_delete(srv, id)
  ok(srv.post("stop", { sandbox_id = id }), "stop " .. id)
  ok(srv.post("delete", { sandbox_id = id }), "delete " .. id)
end

-- the successful starts the server counted (its /metrics)
local function starts(srv)
  local m = srv.raw{ path = "/metrics" }.body
  return tonumber(m:match('rock_sandbox_starts_total{result="success"} (%d+)') or "0")
end

test("a request's reservation: ROCK's defaults and sizes as ROCK writes them", function()
  local n = A.need({})
  T.eq(n.cpus, 2)
  T.eq(n.memory, 8 * GB)
  T.eq(n.gpus, 0)
  T.eq(A.need({ memory = "16G", cpus = 4 }).memory, 16 * GB)
  T.eq(A.need({ memory = "512m" }).memory, 512 * 2 ^ 20)
  T.eq(A.need({ memory = 1000000 }).memory, 1000000)
  T.raises("invalid_argument", A.need, { memory = "lots" })
  local a = A.new{ cpus = 96, memory_gb = 320, gpus = 0, max_starting = 4 }
  T.eq(a:shortfall(A.need{ cpus = 4, memory = "16g" }), nil)
  a.reserved.memory = 312 * GB
  T.eq(a:shortfall(A.need{ cpus = 4, memory = "16g" }), "needs 16 GB, 8 free of 320")
  T.eq(a:shortfall(A.need{ cpus = 100, memory = "1g" }, true), "needs 100 CPUs, 96 free of 96")
  T.eq(a:shortfall(A.need{ cpus = 1, memory = "1g", num_gpus = 1 }), "needs 1 GPU, 0 free of 0")
  T.raises("invalid_argument", A.new, { cpus = 0 })
  T.raises("invalid_argument", A.new, { memory_gb = 1e300 })
  T.raises("invalid_argument", A.new, { gpus = -1 })
  T.eq(A.new{ gpus = 0 }.budget.gpus, 0)
  T.raises("invalid_argument", A.new, { max_starting = 1.5 })
end)

test("defaults: this machine's CPUs and memory, max-starting from ROCK_ENV_CONCURRENCY", function()
  local srv = serve{ backend = backend, args = { "--budget-gpu", "0" }, env = "ROCK_ENV_CONCURRENCY=3" }
  local r = node(srv)
  srv.stop()
  T.eq(r.budget.cpus, rock.uv.available_parallelism())
  T.eq(r.budget.memory, math.floor(rock.uv.get_total_memory()))
  T.eq(r.budget.gpus, 0)
  T.eq(r.max_starting, 3)
  T.eq(r.healthy, true)
  T.eq(r.version, rock.core.version())
  T.eq(r.node, rock.uv.os_gethostname())
  -- a bad budget is refused at start
  local out, code = T.run{ T.rock_exe(), "serve", "--port", "0", "--budget-cpu", "-1" }
  T.ok(code ~= 0, "refused")
  local out2, code2 = T.run{ T.rock_exe(), "serve", "--port", "0", "--max-starting", "0" }
  T.ok(code2 ~= 0, "refused: " .. out .. out2)
end)

test("ROCK's evaluator budgets: exactly 20 of 4 CPU / 16 GB run, the 21st queues until a stop", function()
  local srv = serve{ backend = backend, args = { "--budget-cpu", "96", "--budget-memory-gb", "320",
    "--budget-gpu", "0", "--max-starting", "4" } }
  local ids = {}
  for i = 1, 21 do ids[i] = start_async(srv, { cpus = 4, memory = "16g", startup_timeout = 120 }) end
  for i = 1, 20 do wait_state(srv, ids[i], "running", 120) end
  local st = status(srv, ids[21])
  T.eq(st.state, "pending")
  T.eq(st.is_alive, false)
  T.eq(st.status.admission.status, "waiting")
  T.eq(st.status.admission.message, "queued: needs 16 GB, 0 free of 320")
  local r = node(srv)
  T.eq(r.budget.cpus, 96)
  T.eq(r.budget.memory_gb, 320)
  T.eq(r.reserved.cpus, 80)
  T.eq(r.reserved.memory_gb, 320)
  T.eq(r.free.memory, 0)
  T.eq(r.running, 20)
  T.eq(r.queued, 1)
  T.eq(r.starting, 0)
  T.eq(r.queue[1].sandbox_id, ids[21])
  -- the report is what rock.fleet.placement decides from: this node is full for 4 / 16
  local P = require "rock.fleet.placement"
  local set = P.new{ strategy = "spread" }
  set:update("n1", r)
  T.eq(set:choose{ cpus = 4, memory = 16 * GB, gpus = 0 }, nil)
  local m = srv.raw{ path = "/metrics" }.body
  T.match(m, 'rock_node_budget{resource="cpus"} 96\n')
  T.match(m, 'rock_node_budget{resource="memory_bytes"} ' .. math.floor(320 * GB) .. "\n")
  T.match(m, 'rock_node_reserved{resource="cpus"} 80\n')
  T.match(m, "rock_node_queued 1\n")
  T.match(m, "rock_node_running 20\n")
  T.match(m, "rock_node_max_starting 4\n")
  T.match(m, "rock_node_healthy 1\n")
  T.match(m, 'rock_node_info{node="[^"]*",version="[^"]*"} 1\n')
  -- wait:false: refused at once, naming the shortfall; nothing kept
  local f = srv.post("start_async", { image = image, cpus = 4, memory = "16g", wait = false })
  T.eq(f.status, "Failed")
  T.eq(f.message, "start sandbox failed")
  T.eq(f.result.rock_code, "insufficient_resources")
  T.eq(f.result.code, 4000)
  T.match(f.error, "needs 16 GB, 0 free of 320")
  T.eq(ok(srv.get("sandboxes")).total, 21)
  -- a stop frees its reservation: the queue's head starts
  stop_delete(srv, ids[1])
  wait_state(srv, ids[21], "running", 60)
  r = node(srv)
  T.eq(r.reserved.cpus, 80)
  T.eq(r.queued, 0)
  stop_delete(srv, ids[2])
  set:update("n1", node(srv))
  local chosen = set:choose{ cpus = 4, memory = 16 * GB, gpus = 0 }
  T.eq(chosen and chosen.name, "n1", "room for one again")
  T.eq(starts(srv), 21, "each started once")
  for i = 3, 21 do stop_delete(srv, ids[i]) end
  r = node(srv)
  T.eq(r.reserved.cpus, 0)
  T.eq(r.reserved.memory, 0)
  T.eq(r.running, 0)
  srv.stop()
end)

test("more demand than capacity: FIFO order, a wait timeout, a cancel, nothing started twice", function()
  local srv = serve{ backend = backend, args = { "--budget-cpu", "4", "--budget-memory-gb", "64" } }
  local a = start_async(srv, { cpus = 4, memory = "1g" })
  wait_state(srv, a, "running")
  local b = start_async(srv, { cpus = 2, memory = "1g", startup_timeout = 60 })
  local c = start_async(srv, { cpus = 2, memory = "1g", startup_timeout = 60 })
  local big = start_async(srv, { cpus = 4, memory = "1g", startup_timeout = 60 })
  local small = start_async(srv, { cpus = 1, memory = "1g", startup_timeout = 60 })
  local late = start_async(srv, { cpus = 1, memory = "1g", startup_timeout = 1 })
  local gone = start_async(srv, { cpus = 1, memory = "1g", startup_timeout = 60 })
  T.eq(status(srv, small).status.admission.message, "queued: needs 1 CPU, 0 free of 4 (3 ahead)")
  -- cancelled while queued: leaves the queue, holds nothing
  ok(srv.post("stop", { sandbox_id = gone }))
  local st = status(srv, gone)
  T.eq(st.state, "stopped")
  T.eq(node(srv).queued, 5)
  -- past its startup_timeout (counted from the request): stopped, its phase says why
  st = wait_state(srv, late, "stopped", 10)
  T.eq(st.status.admission.status, "timeout")
  T.match(st.failure_reason, "not admitted within its startup_timeout %(1 s%)")
  T.eq(node(srv).queued, 4)
  T.eq(node(srv).reserved.cpus, 4)
  -- a's stop admits b and c (first in), not big; small waits behind big
  stop_delete(srv, a)
  wait_state(srv, b, "running")
  wait_state(srv, c, "running")
  T.eq(status(srv, big).state, "pending")
  T.eq(status(srv, small).status.admission.message, "queued: needs 1 CPU, 0 free of 4 (1 ahead)")
  stop_delete(srv, b)
  rock.sleep(0.3)
  T.eq(status(srv, big).state, "pending", "big needs b and c gone")
  st = status(srv, small)
  T.eq(st.state, "pending", "small does not pass big")
  T.eq(st.status.admission.message, "queued: behind an earlier start (1 ahead)")
  stop_delete(srv, c)
  wait_state(srv, big, "running")
  T.eq(status(srv, small).state, "pending")
  stop_delete(srv, big)
  st = wait_state(srv, small, "running")
  T.eq(st.status.admission, nil, "the sandbox's own phases once it starts")
  T.eq(starts(srv), 5, "a, b, c, big, small: each started once")
  stop_delete(srv, small)
  for _, id in ipairs({ late, gone }) do ok(srv.post("delete", { sandbox_id = id })) end
  local r = node(srv)
  T.eq(r.reserved.cpus, 0)
  T.eq(r.queued + r.starting + r.waiting_to_start, 0)
  T.eq(ok(srv.get("sandboxes")).total, 0)
  srv.stop()
end)

test("a request bigger than the whole budget is refused at once", function()
  local srv = serve{ backend = backend, args = { "--budget-cpu", "4", "--budget-memory-gb", "8" } }
  local f = srv.post("start_async", { image = image, cpus = 2, memory = "16g" })
  T.eq(f.status, "Failed")
  T.eq(f.result.rock_code, "insufficient_resources")
  T.eq(f.error, "this node can never hold it: needs 16 GB, 8 free of 8")
  f = srv.post("start", { image = image, cpus = 8, memory = "1g" })
  T.eq(f.error, "this node can never hold it: needs 8 CPUs, 4 free of 4")
  -- ROCK's defaults (2 CPUs, 8g) fit exactly
  local id = start_async(srv, {})
  wait_state(srv, id, "running")
  T.eq(node(srv).reserved.memory_gb, 8)
  stop_delete(srv, id)
  T.eq(ok(srv.get("sandboxes")).total, 0)
  srv.stop()
end)

test("a lapsed lease and a failed start free their reservations: the queue moves on", function()
  local srv = serve{ backend = backend, args = { "--budget-cpu", "2", "--budget-memory-gb", "64", "--lease", "1" } }
  local a = start_async(srv, { cpus = 2, memory = "1g" })
  wait_state(srv, a, "running")
  local b = start_async(srv, { cpus = 2, memory = "1g", auto_clear_time_minutes = 30, startup_timeout = 60 })
  T.eq(status(srv, b).state, "pending")
  -- a is idle past its 1 s lease: stopped by the server, b admitted
  local st = wait_state(srv, b, "running", 30)
  T.eq(status(srv, a).state, "stopped")
  T.eq(node(srv).reserved.cpus, 2)
  stop_delete(srv, b)
  ok(srv.post("delete", { sandbox_id = a }))
  -- a start that fails (its sandbox dir is taken) gives back what it held
  local taken = os.getenv("ROCK_HOME") .. "/sandboxes/rk-adm-taken"
  assert(os.execute("mkdir -p " .. taken))
  local f = start_async(srv, { sandbox_id = "rk-adm-taken", cpus = 2, memory = "1g" })
  st = wait_state(srv, f, "stopped", 30)
  os.execute("rm -rf " .. taken)
  T.match(st.failure_reason, "already exists")
  T.eq(node(srv).reserved.cpus, 0)
  ok(srv.post("delete", { sandbox_id = f }))
  local c = start_async(srv, { cpus = 2, memory = "1g" })
  wait_state(srv, c, "running")
  stop_delete(srv, c)
  srv.stop()
end)

test("/start waits in the queue and answers once admitted and alive", function()
  local srv = serve{ backend = backend, args = { "--budget-cpu", "2", "--budget-memory-gb", "64" } }
  local a = start_async(srv, { cpus = 2, memory = "1g" })
  wait_state(srv, a, "running")
  local t0 = rock.uv.hrtime()
  local t = rock.spawn(function() return srv.post("start", { image = image, cpus = 2, memory = "1g" }) end)
  rock.sleep(0.5)
  T.eq(node(srv).queued, 1)
  stop_delete(srv, a)
  local env = rock.wait(t)
  local r = ok(env, "start")
  T.ok((rock.uv.hrtime() - t0) / 1e9 >= 0.5, "it waited")
  T.eq(status(srv, r.sandbox_id).state, "running")
  stop_delete(srv, r.sandbox_id)
  srv.stop()
end)

test("max-starting bounds the starts in flight, as the node's reports show them", function()
  local srv = serve{ backend = backend, args = { "--budget-cpu", "64", "--budget-memory-gb", "64",
    "--max-starting", "2" } }
  local n = 12
  local most, waiting_seen, done = 0, 0, false
  local watcher = rock.spawn(function()
    while not done do
      local r = node(srv)
      most = math.max(most, r.starting)
      waiting_seen = math.max(waiting_seen, r.waiting_to_start)
      rock.sleep(0.001)
    end
  end)
  local tasks = {}
  for i = 1, n do tasks[i] = rock.spawn(function() return start_async(srv, { cpus = 1, memory = "1g" }) end) end
  local ids = rock.wait(tasks)
  for i = 1, n do wait_state(srv, ids[i], "running") end
  done = true
  rock.wait(watcher)
  T.eq(most, 2, "two starts in flight at most, and two seen")
  T.ok(waiting_seen > 0, "starts waited for a slot")
  T.eq(starts(srv), n)
  for i = 1, n do stop_delete(srv, ids[i]) end
  srv.stop()
end)

test("a remote sandbox whose node stops answering: node_lost, at once", function()
  local home = T.sh("mktemp -d"):gsub("%s+$", "")
  local srv = serve{ backend = "local", home = home }
  local sb = rock.sandbox.start{ base_url = srv.url, image = "local" }
  T.eq(sb:execute{ command = "echo up" }.stdout, "up\n")
  srv.kill("KILL")
  srv.wait()
  local t0 = rock.uv.hrtime()
  T.raises("node_lost", sb.execute, sb, { command = "true" })
  T.ok((rock.uv.hrtime() - t0) / 1e9 < 5, "no hang")
  sb:stop() -- quiet: nothing more can be done from here (its node's lease ends it)
  T.eq(sb.state, "stopped")
  os.execute("rm -rf '" .. home .. "'")
end)

-- A node cut off mid-call (its link down, as a partition: no answer, no
-- reset): the call's connection probes the peer (keepalive) and gives up
-- after ROCK_TCP_PEER_TIMEOUT, so the client learns node_lost in seconds,
-- not after the command's timeout. The node runs in a network namespace
-- joined by a veth pair (198.18.0.0/15), made and removed here (root).
test("a node cut off mid-call: node_lost within seconds, not a hang", function()
  local pid = rock.core.getpid()
  local ns, va, vb = "rkadm" .. pid, "rka" .. pid, "rkb" .. pid
  local a, b = (pid // 64) % 256, (pid % 64) * 4
  local host_ip, node_ip = string.format("198.19.%d.%d", a, b + 1), string.format("198.19.%d.%d", a, b + 2)
  local function sh(cmd)
    local out, okc = T.sh(cmd)
    assert(okc, cmd .. ": " .. out)
  end
  local home = T.sh("mktemp -d"):gsub("%s+$", "")
  local okt, err = xpcall(function()
    sh("ip netns add " .. ns)
    sh("ip link add " .. va .. " type veth peer name " .. vb)
    sh("ip link set " .. vb .. " netns " .. ns)
    sh("ip addr add " .. host_ip .. "/30 dev " .. va .. " && ip link set " .. va .. " up")
    sh("ip netns exec " .. ns .. " sh -c 'ip addr add " .. node_ip .. "/30 dev " .. vb ..
      " && ip link set " .. vb .. " up && ip link set lo up'")
    local srv = serve{ backend = "local", home = home, host = node_ip, token = "tok",
      env = "ip netns exec " .. ns, args = { "--token", "tok" } }
    rock.uv.os_setenv("ROCK_TCP_PEER_TIMEOUT", "2") -- this process's new connections
    local sb = rock.sandbox.start{ base_url = srv.url, token = "tok", image = "local" }
    T.eq(sb:execute{ command = "echo up" }.stdout, "up\n")
    local call = rock.spawn(function() return pcall(sb.execute, sb, { command = "sleep 100", timeout = 120 }) end)
    rock.sleep(0.5)
    local t0 = rock.uv.hrtime()
    sh("ip netns exec " .. ns .. " ip link set " .. vb .. " down") -- the node is cut off
    local okc, cerr = rock.wait(call)
    local secs = (rock.uv.hrtime() - t0) / 1e9
    T.ok(not okc, "the call fails")
    T.eq(cerr.code, "node_lost", tostring(cerr))
    T.ok(secs < 30, string.format("within seconds (%.1f s), not the command's 120", secs))
    sb:stop() -- quiet
    srv.kill("KILL")
    srv.wait()
  end, debug.traceback)
  rock.uv.os_unsetenv("ROCK_TCP_PEER_TIMEOUT")
  for i = #servers, 1, -1 do servers[i].kill("KILL"); servers[i].wait(); servers[i] = nil end
  T.sh("ip netns del " .. ns .. "; ip link del " .. va)
  os.execute("rm -rf '" .. home .. "'")
  if not okt then error(err, 0) end
end)

T.done()
