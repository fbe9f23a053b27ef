-- test_fleet_retry.lua: never a double start. A node honours a start's
-- idempotency_key (sent twice in a row, at once, after the first started:
-- one sandbox; deleted, the key is free again), and the pool's retries
-- keep to it: a start whose answer is lost (a TCP proxy in front of a real
-- `rock serve` passes the start to the node, drops its answer and then
-- refuses everything, as a node that stopped answering mid-start) is sent
-- again to that node once it answers and is the one sandbox there, alive;
-- placed elsewhere meanwhile, the one it left is stopped when that node
-- rejoins (stop_orphans). Counted from the nodes' own lists and metrics.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local S = dofile(here .. "serve_client.lua")
local fleet = rock.fleet
local json = rock.json
local uv = rock.uv

local IMAGE = "rock-test/debian:12" -- the nodes run the local backend: the image is recorded, not run
local SB = { image = IMAGE, cpus = 4, memory = "16g" }
local BUDGET = { "--budget-cpu", "8", "--budget-memory-gb", "32", "--max-starting", "4" }

local home = T.sh("mktemp -d /tmp/rock-fleet-retry.XXXXXX"):gsub("%s+$", "")
local nodes = {}
for i = 1, 2 do
  T.sh("mkdir -p " .. home .. "/n" .. i)
  nodes[i] = S.start{ backend = "local", args = BUDGET, home = home .. "/n" .. i }
end

-- every entry the node lists (running, pending or stopped), by id
local function listed(srv)
  local env = srv.get("sandboxes", { page_size = 500 })
  assert(env.status == "Success", json.encode(env))
  local by = {}
  for _, it in ipairs(env.result.items) do by[it.sandbox_id] = it end
  return by, #env.result.items
end

-- the starts the node carried out (its /metrics)
local function starts(srv)
  local res = srv.raw{ path = "/metrics" }
  return tonumber(res.body:match('rock_sandbox_starts_total{result="success"} (%d+)')) or 0
end

local function clean_nodes()
  for _, srv in ipairs(nodes) do
    for id in pairs(listed(srv)) do
      srv.post("stop", { sandbox_id = id })
      srv.post("delete", { sandbox_id = id })
    end
  end
end
local test = T.test
T.test = function(name, fn) clean_nodes(); return test(name, fn) end

-- A TCP proxy in front of the node on port: it passes bytes both ways.
-- Armed, it sends the next start_async on to the node, drops the node's
-- answer and goes down: every connection, open or new, closed at once,
-- until up(). (Host names the node: it refuses another, DNS rebinding.)
local function proxy(port)
  local P = { armed = false, down = false, dropped = 0, pairs = {} }
  local server = uv.new_tcp()
  assert(server:bind("127.0.0.1", 0))
  P.url = "http://127.0.0.1:" .. server:getsockname().port
  local host = "\r\nHost: 127.0.0.1:" .. port .. "\r\n"
  local function close(pair)
    P.pairs[pair] = nil
    for _, h in ipairs({ pair.c, pair.u }) do if not h:is_closing() then h:close() end end
  end
  local function go_down()
    P.down = true
    for pair in pairs(P.pairs) do close(pair) end
  end
  assert(server:listen(64, function()
    local c = uv.new_tcp()
    server:accept(c)
    if P.down then c:close() return end
    local pair = { c = c, u = uv.new_tcp() }
    P.pairs[pair] = true
    pair.u:connect("127.0.0.1", port, function(err)
      if err or not P.pairs[pair] then return close(pair) end
      pair.u:read_start(function(e, data)
        if e or not data then return close(pair) end
        if pair.drop then -- the node answered the start: the answer is lost
          P.dropped = P.dropped + 1
          return go_down()
        end
        pair.c:write(data)
      end)
      pair.c:read_start(function(e, data)
        if e or not data then return close(pair) end
        if P.armed and data:find("POST /apis/envs/sandbox/v1/start_async", 1, true) then
          P.armed, pair.drop = false, true
        end
        pair.u:write((data:gsub("\r\nHost: [^\r]*\r\n", host))) -- the node's own (it refuses another)
      end)
    end)
  end))
  function P.up() P.down = false end
  function P.close()
    go_down()
    if not server:is_closing() then server:close() end
  end
  return P
end

T.test("a node honours idempotency_key: twice in a row, at once, after it started; deleted, the key is free", function()
  local srv = nodes[1]
  local before = starts(srv)
  local body = { image = IMAGE, cpus = 1, memory = "1g", idempotency_key = "key-seq" }
  local a = srv.post("start_async", body)
  local b = srv.post("start_async", body)
  T.eq(a.status, "Success", json.encode(a))
  T.eq(b.result.sandbox_id, a.result.sandbox_id, "in a row: the same sandbox")
  -- at once: two requests in flight together
  local cbody = { image = IMAGE, cpus = 1, memory = "1g", idempotency_key = "key-conc" }
  local vals = rock.wait{
    rock.spawn(function() return srv.post("start_async", cbody) end),
    rock.spawn(function() return srv.post("start_async", cbody) end),
  }
  T.eq(vals[1].status, "Success", json.encode(vals[1]))
  T.eq(vals[2].result.sandbox_id, vals[1].result.sandbox_id, "at once: the same sandbox")
  -- after the first finished starting
  local id = a.result.sandbox_id
  T.wait_until("the first is running", function()
    return srv.get("get_status", { sandbox_id = id }).result.is_alive
  end, 30)
  local c = srv.post("start_async", body)
  T.eq(c.result.sandbox_id, id, "after it started: that sandbox again")
  T.eq(srv.get("get_status", { sandbox_id = id }).result.state, "running", "still running, not restarted")
  local by, count = listed(srv)
  T.eq(count, 2, "two keys, two sandboxes: " .. json.encode(by))
  T.wait_until("both started", function() return starts(srv) - before == 2 end, 30)
  rock.sleep(0.3)
  T.eq(starts(srv) - before, 2, "the node started two sandboxes, not five")
  -- a sandbox deleted frees its key: the same key is a new start
  srv.post("stop", { sandbox_id = id })
  srv.post("delete", { sandbox_id = id })
  local d = srv.post("start_async", body)
  T.eq(d.status, "Success", json.encode(d))
  T.ok(d.result.sandbox_id ~= id, "deleted: the key starts anew")
end)

T.test("a start whose answer was lost is sent again to that node: one sandbox there, alive", function()
  local P = proxy(nodes[1].port)
  local ok, err = pcall(function()
    local pool = fleet.pool{ nodes = { P.url }, health_every = 0.2, health_timeout = 0.5 }
    pool:refresh()
    local before = starts(nodes[1])
    P.armed = true
    local t = rock.spawn(function() return pool:start(SB) end)
    T.wait_until("the start reached the node and its answer was lost", function() return P.dropped == 1 end, 20)
    local by, count = listed(nodes[1])
    T.eq(count, 1, "the node took the start: " .. json.encode(by))
    local first = next(by)
    rock.sleep(0.6) -- health rounds find the node down
    T.eq(t.done, false, "the start waits for the node (the pool's only one)")
    for _, n in ipairs(pool:report().nodes) do T.eq(n.up, false, "drained") end
    P.up()
    local sb = rock.wait(t)
    T.eq(sb.id, first, "the node answered the first start again")
    T.eq(sb.node_url, P.url)
    rock.sleep(1) -- rounds after the rejoin: nothing may stop it now
    sb:create_session{}
    T.eq(sb:run_in_session{ command = "echo alive" }.output, "alive\n", "the sandbox answers: not stopped as an orphan")
    by, count = listed(nodes[1])
    T.eq(count, 1, "one sandbox on the node: " .. json.encode(by))
    T.eq(by[first].state, "running")
    T.eq(starts(nodes[1]) - before, 1, "the node started it once")
    sb:stop()
    pool:close()
  end)
  P.close()
  if not ok then error(err, 0) end
end)

T.test("placed elsewhere after a lost answer: the orphan is stopped when its node rejoins", function()
  local P = proxy(nodes[1].port)
  local ok, err = pcall(function()
    -- node 2 half full: spread sends the start to node 1 (behind the proxy) first
    local held = S.start_sandbox(nodes[2], { image = IMAGE, cpus = 4, memory = "16g" })
    local pool = fleet.pool{ nodes = { P.url, nodes[2].url }, strategy = "spread", health_every = 0.2,
      health_timeout = 0.5 }
    pool:refresh()
    P.armed = true
    local sb = pool:start(SB)
    T.eq(P.dropped, 1, "the start went to node 1 first and its answer was lost")
    T.eq(sb.node_url, nodes[2].url, "then to node 2")
    local by = listed(nodes[1])
    T.ok(by[sb.id], "node 1 holds what the lost start left: " .. json.encode(by))
    T.wait_until("it runs there (an orphan to stop)", function()
      return nodes[1].get("get_status", { sandbox_id = sb.id }).result.is_alive
    end, 30)
    rock.sleep(0.5)
    T.ok(listed(nodes[1])[sb.id], "not stopped while its node does not answer")
    P.up()
    T.wait_until("the orphan is stopped and deleted on node 1", function() return not listed(nodes[1])[sb.id] end, 20)
    T.eq(#T.listdir(home .. "/n1/sandboxes"), 0, "nothing of it left in node 1's state dir")
    sb:create_session{}
    T.eq(sb:run_in_session{ command = "echo here" }.output, "here\n", "the one on node 2 runs on")
    T.eq(pool:report().sandboxes, 1)
    sb:stop()
    nodes[2].post("stop", { sandbox_id = held })
    nodes[2].post("delete", { sandbox_id = held })
    pool:close()
  end)
  P.close()
  if not ok then error(err, 0) end
end)

clean_nodes()
for _, srv in ipairs(nodes) do srv.stop() end
os.execute("rm -rf '" .. home .. "'")
T.done()
