-- test_fleet.lua: rock.fleet over real `rock serve` nodes (local backend,
-- small real sandboxes; budgets are accounting only). Three nodes on
-- loopback ports: placement never past a node's budget (read from the
-- nodes' own reports), spread against pack, more demand than capacity
-- (FIFO, wait timeouts, nothing started twice), rock.sandbox.start{fleet=},
-- a node killed with kill -9 mid-run (its sandboxes' calls fail node_lost,
-- new starts go elsewhere, it rejoins after restart; its dead run's dirs
-- and records are there to reap, and after `rock gc` on its ROCK_HOME no
-- dir, record or process of them is left).
-- The partition cases (a link down and up) are test_fleet_netns.lua.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local S = dofile(here .. "serve_client.lua")
local fleet = rock.fleet
local json = rock.json

local GB = 1 << 30
local IMAGE = "rock-test/debian:12" -- the nodes run the local backend: the image is recorded, not run
local SB = { image = IMAGE, cpus = 4, memory = "16g" }
-- each node: 8 CPUs, 32 GB: two sandboxes of 4 / 16
local BUDGET = { "--budget-cpu", "8", "--budget-memory-gb", "32", "--max-starting", "4" }

local home = T.sh("mktemp -d /tmp/rock-fleet-test.XXXXXX"):gsub("%s+$", "")
local nodes = {}
local function start_node(i, port)
  local args = {}
  for _, a in ipairs(BUDGET) do args[#args + 1] = a end
  if port then args[#args + 1] = "--port"; args[#args + 1] = tostring(port) end
  T.sh("mkdir -p " .. home .. "/n" .. i)
  nodes[i] = S.start{ backend = "local", args = args, home = home .. "/n" .. i }
  return nodes[i]
end
for i = 1, 3 do start_node(i) end

local function urls() return { nodes[1].url, nodes[2].url, nodes[3].url } end

local function node_report(srv)
  local env = srv.get("node")
  assert(env.status == "Success", json.encode(env))
  return env.result
end

local function within_budgets()
  for i, srv in ipairs(nodes) do
    local r = node_report(srv)
    T.ok(r.reserved.cpus <= r.budget.cpus and r.reserved.memory <= r.budget.memory,
      string.format("node %d within its budget (%s)", i, json.encode(r.reserved)))
  end
end

local function running_on(srv)
  return node_report(srv).running
end

-- Processes whose cwd or command line is under dir (from /proc).
local function procs_under(dir)
  local out = {}
  local me = tostring(rock.core.getpid())
  local h = rock.uv.fs_scandir("/proc")
  while h do
    local name = rock.uv.fs_scandir_next(h)
    if not name then break end
    if name:match("^%d+$") and name ~= me then
      local cwd = rock.uv.fs_readlink("/proc/" .. name .. "/cwd") or ""
      local f = io.open("/proc/" .. name .. "/cmdline")
      local cmd = f and f:read("a") or ""
      if f then f:close() end
      if cwd:sub(1, #dir) == dir or cmd:find(dir, 1, true) then out[#out + 1] = name .. " " .. cmd:gsub("%z", " ") end
    end
  end
  return out
end

-- What node i's server, killed with kill -9, left of sandboxes ids in its
-- state dir: ids with a dir, with a record naming that dead server.
local function left_on(i, ids)
  local dirs, recs = {}, {}
  for _, id in ipairs(ids) do
    local dir = home .. "/n" .. i .. "/sandboxes/" .. id
    if rock.uv.fs_stat(dir) then dirs[#dirs + 1] = id end
    local rec = require("rock.state").read_record(dir)
    if rec and rec.owner then recs[#recs + 1] = id end
  end
  return dirs, recs
end

-- Node i was killed with kill -9 holding sandboxes ids: its state dir
-- holds their dirs and records (something to reap: the check after can
-- fail); restarted on its port, then `rock gc` run on its ROCK_HOME, no
-- dir, record or process of them is left.
local function restart_and_gc(i, ids, port)
  local dirs, recs = left_on(i, ids)
  T.eq(#dirs, #ids, "the dead server left its sandboxes' dirs: " .. table.concat(dirs, " "))
  T.eq(#recs, #ids, "and their records")
  start_node(i, port)
  local out, ok = T.sh(string.format("ROCK_HOME=%s %s gc", home .. "/n" .. i, T.rock_exe()))
  T.ok(ok, "rock gc on the node's ROCK_HOME: " .. out)
  T.match(out, "gc: %d+ removed, 0 error%(s%)")
  dirs, recs = left_on(i, ids)
  T.eq(#dirs, 0, "no dir of the dead run left: " .. table.concat(dirs, " "))
  T.eq(#recs, 0, "no record of it")
  for _, id in ipairs(ids) do
    local p = procs_under(home .. "/n" .. i .. "/sandboxes/" .. id)
    T.eq(#p, 0, "no process of " .. id .. " left: " .. table.concat(p, "; "))
  end
  T.eq(running_on(nodes[i]), 0, "the node, back, runs nothing of it")
end

-- what a failed test left on the nodes, stopped, so the next starts afresh
local function clean_nodes()
  for _, srv in ipairs(nodes) do
    if srv.alive ~= false then
      local env = srv.get("sandboxes", { page_size = 500 })
      for _, it in ipairs(env.status == "Success" and env.result.items or {}) do
        srv.post("stop", { sandbox_id = it.sandbox_id })
        srv.post("delete", { sandbox_id = it.sandbox_id })
      end
    end
  end
end

local test = T.test
T.test = function(name, fn) clean_nodes(); return test(name, fn) end

local function stop_all(list)
  for _, sb in ipairs(list) do pcall(sb.stop, sb) end
end

T.test("spread puts one per node first, the nodes' budgets hold, the 7th waits for a stop", function()
  local pool = fleet.pool{ nodes = urls(), strategy = "spread", health_every = 0.2 }
  local sbs = {}
  for i = 1, 3 do sbs[i] = pool:start(SB) end
  local seen = {}
  for _, sb in ipairs(sbs) do seen[sb.node_url] = true end
  T.eq((function() local c = 0 for _ in pairs(seen) do c = c + 1 end return c end)(), 3, "one on each node")
  for i = 4, 6 do sbs[i] = pool:start(SB) end
  within_budgets()
  for _, srv in ipairs(nodes) do T.eq(running_on(srv), 2) end
  -- the 7th: no room anywhere; it waits, and starts when one stops
  local t = rock.spawn(function() return pool:start(SB) end)
  rock.sleep(0.5)
  T.eq(t.done, false, "the 7th waits")
  local freed = sbs[2].node_url
  sbs[2]:stop()
  local s7 = rock.wait(t)
  T.eq(s7.node_url, freed, "it takes the freed room")
  sbs[2] = s7
  within_budgets()
  -- data plane through the node
  s7:create_session{}
  local o = s7:run_in_session{ command = "echo hi from $((40 + 2))" }
  T.eq(o.output, "hi from 42\n")
  stop_all(sbs)
  pool:close()
end)

T.test("pack fills one node before the next", function()
  local pool = fleet.pool{ nodes = urls(), strategy = "pack", health_every = 0.2 }
  local a, b = pool:start(SB), pool:start(SB)
  T.eq(a.node_url, b.node_url, "both on one node")
  local c = pool:start(SB)
  T.ok(c.node_url ~= a.node_url, "the third on another")
  stop_all{ a, b, c }
  pool:close()
end)

T.test("more demand than capacity: FIFO order, wait timeouts, nothing started twice", function()
  local pool = fleet.pool{ nodes = urls(), health_every = 0.2 }
  local sbs = {}
  for i = 1, 6 do sbs[i] = pool:start(SB) end
  local order = {}
  local waiters = {}
  for i = 1, 3 do
    waiters[i] = rock.spawn(function()
      local sb = pool:start(SB)
      order[#order + 1] = i
      return sb
    end)
    rock.sleep(0.05) -- queue in this order
  end
  local late = T.raises("timeout", function() return pool:start{ image = IMAGE, cpus = 4, memory = "16g", startup_timeout = 0.3 } end)
  T.ok(late.message:match("no node had room for 4 CPU / 16 GB"), late.message)
  for i = 1, 3 do sbs[i]:stop(); rock.sleep(0.3) end
  local got = {}
  for i = 1, 3 do got[i] = rock.wait(waiters[i]) end
  T.eq(table.concat(order, ","), "1,2,3", "FIFO")
  within_budgets()
  local total = 0
  for _, srv in ipairs(nodes) do total = total + running_on(srv) end
  T.eq(total, 6, "6 running: none started twice, the timed-out one never")
  stop_all(sbs)
  stop_all(got)
  pool:close()
end)

T.test("a queued start cut by rock.timeout leaves the queue; nothing starts for it later", function()
  local pool = fleet.pool{ nodes = urls(), health_every = 0.2 }
  local sbs = {}
  for i = 1, 6 do sbs[i] = pool:start(SB) end
  local t0 = rock.uv.hrtime()
  local e = T.raises("timeout", rock.timeout, 0.5, pool.start, pool, SB)
  local took = (rock.uv.hrtime() - t0) / 1e9
  T.match(e.message, "^timed out after 0.5s", "cut by the rock.timeout, not the pool's own wait")
  T.ok(took < 2, "cut at its deadline, not after the start's wait (" .. took .. " s)")
  T.eq(pool:report().queued, 0, "its place in the queue is gone")
  -- room frees: the cut start must not take it, now or at the next rounds
  local freed = sbs[1].node_url
  sbs[1]:stop()
  rock.sleep(1) -- several health rounds, each waking the queue
  local total = 0
  for _, srv in ipairs(nodes) do total = total + running_on(srv) end
  T.eq(total, 5, "5 running: the cut start never started")
  T.eq(pool:report().sandboxes, 5)
  sbs[1] = pool:start(SB)
  T.eq(sbs[1].node_url, freed, "the freed room is there for the next start")
  stop_all(sbs)
  pool:close()
end)

T.test("a request no node can ever hold is refused at once, naming the shortfall", function()
  local pool = fleet.pool{ nodes = urls() }
  local e = T.raises("insufficient_resources", pool.start, pool, { image = IMAGE, cpus = 4, memory = "64g" })
  T.ok(e.message:match("no node can ever hold 4 CPU / 64 GB"), e.message)
  pool:close()
end)

T.test("rock.sandbox.start{fleet=} and get_status name the node", function()
  local pool = fleet.pool{ nodes = urls(), strategy = "spread" }
  local sbs, seen = {}, {}
  for i = 1, 3 do -- spread: one on each of the three nodes of this machine
    sbs[i] = rock.sandbox.start{ fleet = pool, image = IMAGE, cpus = 4, memory = "16g" }
    local st = sbs[i]:get_status()
    T.ok(st.is_alive, "alive")
    T.ok(type(st.host_name) == "string" and st.host_name ~= "", "host_name")
    T.eq(st.node_url, sbs[i].node_url, "get_status names the node it was placed on")
    -- the node itself holds it: its own list names the id
    local srv
    for _, n in ipairs(nodes) do if n.url == st.node_url then srv = n end end
    T.ok(srv, "node_url is one of the pool's nodes: " .. tostring(st.node_url))
    local items = srv.get("sandboxes", { page_size = 500 }).result.items
    T.eq(#items, 1, "that node holds one sandbox")
    T.eq(items[1].sandbox_id, sbs[i].id, "and it is this one")
    seen[st.node_url] = true
  end
  local count = 0
  for _ in pairs(seen) do count = count + 1 end
  T.eq(count, 3, "three sandboxes, three node_urls: host_name and host_ip alone cannot tell them apart")
  stop_all(sbs)
  pool:close()
end)

T.test("a node killed with kill -9: node_lost there, starts go elsewhere, it rejoins, gc leaves nothing", function()
  local pool = fleet.pool{ nodes = urls(), strategy = "pack", health_every = 0.2, health_timeout = 0.5 }
  local a = pool:start(SB)
  local b = pool:start(SB)
  T.eq(a.node_url, b.node_url)
  local victim
  for i, srv in ipairs(nodes) do if srv.url == a.node_url then victim = i end end
  local port = nodes[victim].port
  nodes[victim].kill("KILL")
  nodes[victim].wait(10)
  T.raises("node_lost", a.create_session, a, {})
  rock.sleep(0.6)
  local c = pool:start(SB)
  T.ok(c.node_url ~= a.node_url, "placed elsewhere")
  c:create_session{}
  T.eq(c:run_in_session{ command = "echo ok" }.output, "ok\n")
  -- back on its port, and rock gc there: nothing of the dead run is left
  restart_and_gc(victim, { a.id, b.id }, port)
  local back = false
  for _ = 1, 50 do
    rock.sleep(0.2)
    for _, n in ipairs(pool:report().nodes) do if n.url == a.node_url and n.up then back = true end end
    if back then break end
  end
  T.ok(back, "rejoined")
  pcall(a.stop, a)
  pcall(b.stop, b)
  c:stop()
  pool:close()
end)

T.test("rock.group on the pool: 6 over 3 nodes, one refusing (full behind a stale report)", function()
  -- reports refreshed only by hand: node 3 fills up behind the pool's back
  local pool = fleet.pool{ nodes = urls(), health_every = 60 }
  pool:refresh()
  local direct = {}
  for i = 1, 2 do direct[i] = S.start_sandbox(nodes[3], { image = IMAGE, cpus = 4, memory = "16g" }) end
  local g = rock.group.start{ fleet = pool, size = 6, start_concurrency = 2, image = IMAGE, cpus = 2, memory = "8g" }
  T.eq(#g, 6, "all six started")
  T.eq(#g.failures, 0)
  for _, sb in ipairs(g) do T.ok(sb.node_url ~= nodes[3].url, "none on the full node") end
  local refused = 0
  for _, n in ipairs(pool:report().nodes) do if n.url == nodes[3].url then refused = n.refusals end end
  T.ok(refused >= 1, "node 3 refused a start (" .. refused .. ") and it went elsewhere")
  T.eq(running_on(nodes[1]) + running_on(nodes[2]), 6)
  T.eq(running_on(nodes[3]), 2, "nothing more started on node 3")
  within_budgets()
  g[1]:create_session{}
  T.eq(g[1]:run_in_session{ command = "echo grouped" }.output, "grouped\n")
  T.eq(#g:stop(), 0)
  T.eq(running_on(nodes[1]) + running_on(nodes[2]), 0, "group:stop stopped them all")
  for _, id in ipairs(direct) do nodes[3].post("stop", { sandbox_id = id }) end
  pool:close()
end)

T.test("the agent on the pool: a node lost mid-episode ends that trajectory aborted, the other finishes", function()
  local pool = fleet.pool{ nodes = urls(), strategy = "pack", health_every = 0.2, health_timeout = 0.5 }
  local function task_in(name)
    local t = T.git_task(home .. "/" .. name, { ["calc.py"] = "def add(a, b):\n    return a - b\n" },
      { instance_id = "local__" .. name, problem_statement = "add() subtracts.", image = IMAGE })
    return t
  end
  local a, b = task_in("lost"), task_in("kept")
  local victim
  local factory = { name = "kill", episode = function(_, t)
    local p = require("rock.agent.policies.scripted").new("kill",
      { { tool = "bash", command = "echo one" }, { tool = "bash", command = "echo two" }, { tool = "submit" } })
    if t.instance_id == a.instance_id then
      local act = p.act
      p.act = function(self, ctx)
        if self.next == 2 then -- after a first command ran there: its node dies
          for i, srv in ipairs(nodes) do if srv.url == ctx.env.sb.node_url then victim = i end end
          nodes[victim].kill("KILL")
          nodes[victim].wait(10)
        end
        return act(self, ctx)
      end
    end
    return p
  end }
  local summary, trajs = rock.agent.run({ a, b }, { policy = factory, sandbox = { fleet = pool, cpus = 4, memory = "16g" },
    out = home .. "/agent-out", eval = "none", progress = false, workers = 1, on_signal = false })
  T.eq(summary.total, 2)
  local by = {}
  for _, tr in ipairs(trajs) do by[tr.instance_id] = tr end
  local lost, kept = by[a.instance_id], by[b.instance_id]
  T.eq(lost.termination_reason, "aborted")
  T.eq(lost.exit_status, "node_lost")
  T.eq(lost.sandbox.backend, "fleet")
  T.eq(lost.sandbox.node, nodes[victim].url)
  T.eq(kept.termination_reason, "finish")
  T.ok(kept.sandbox.node ~= nodes[victim].url, "the next task ran on a live node")
  T.eq(rock.sandbox.live_count(), 0, "every sandbox stopped")
  -- the node back on its port, and rock gc there: nothing of the lost sandbox is left
  restart_and_gc(victim, { lost.sandbox.id }, nodes[victim].port)
  pool:close()
end)

T.test("bad pool options are clear errors", function()
  T.raises("invalid_argument", fleet.pool, { nodes = {} })
  T.raises("invalid_argument", fleet.pool, { nodes = { "not a url" } })
  T.raises("invalid_argument", fleet.pool, { nodes = { nodes[1].url, nodes[1].url } })
  T.raises("invalid_argument", fleet.pool, { nodes = urls(), strategy = "random" })
  T.raises("invalid_argument", fleet.parse_nodes, "@/nonexistent/nodes")
  local f = home .. "/nodes.txt"
  local out = io.open(f, "w")
  out:write("# the fleet\n" .. nodes[1].url .. " tok1\n\n" .. nodes[2].url .. "\n")
  out:close()
  local list = fleet.parse_nodes("@" .. f)
  T.eq(#list, 2)
  T.eq(list[1].token, "tok1")
  T.eq(#fleet.parse_nodes(nodes[1].url .. "," .. nodes[2].url), 2)
end)

for _, srv in ipairs(nodes) do srv.stop() end
os.execute("rm -rf '" .. home .. "'")
T.done()
