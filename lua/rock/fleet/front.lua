--- rock.fleet.front: what a front `rock serve --nodes ...` says of itself.
-- A front owns no machine: its registry starts every sandbox through a
-- pool (rock.sandbox.start{fleet = pool, ...}) and the pool queues and
-- places (fleet/init.lua), so the front has no budget of its own. This
-- stands where a node's admission.lua stands for the two answers a placer
-- or an operator reads: GET .../node is the pool's aggregate (the sums of
-- the nodes' budgets, reservations and starts, as the nodes reported them
-- at most FRESH seconds ago, over the nodes that answer; each node listed with up/down), in the
-- shape a node answers, so a front can itself be a node of another pool;
-- /metrics carries the same sums and one rock_fleet_node_up per node.
local uv = require "luv"
local json = require "rock.json"

local M = {}
local Front = {}
Front.__index = Front

local GB = 2 ^ 30

--- A front over pool (rock.fleet.pool).
function M.new(pool) return setmetatable({ pool = pool }, Front) end

-- No admission of its own: an adopted entry holds nothing here.
function Front:adopt() end

local function zero() return { cpus = 0, memory = 0, gpus = 0 } end
local function add(to, t)
  for k in pairs(to) do to[k] = to[k] + (type(t) == "table" and tonumber(t[k]) or 0) end
end
local function amounts(t)
  return { cpus = t.cpus, memory = t.memory, memory_gb = t.memory / GB, gpus = t.gpus }
end

M.FRESH = 0.2 -- seconds a round of the nodes' reports is answered from before it is asked again

-- The sums over the nodes that answer, and each node's line, from
-- reports at most FRESH old (the pool's health round, else one now).
function Front:sums()
  local at = self.pool.refreshed
  if not at or uv.now() - at > M.FRESH * 1000 then self.pool:refresh() end
  local budget, reserved = zero(), zero()
  local c = { max_starting = 0, starting = 0, waiting_to_start = 0, queued = 0, running = 0, up = 0 }
  local nodes = json.array()
  for i, n in ipairs(self.pool:report().nodes) do
    local r = n.report or {}
    nodes[i] = { url = n.url, node = n.name or json.null, up = n.up == true, why = n.why or json.null,
      budget = r.budget or json.null, reserved = r.reserved or json.null, running = r.running or json.null,
      starting = r.starting or json.null, queued = r.queued or json.null }
    if n.up then
      c.up = c.up + 1
      add(budget, r.budget)
      add(reserved, r.reserved)
      for _, k in ipairs({ "max_starting", "starting", "waiting_to_start", "queued", "running" }) do
        c[k] = c[k] + (tonumber(r[k]) or 0)
      end
    end
  end
  return budget, reserved, c, nodes
end

local function counts(registry) return registry:counts() end

--- GET .../node on a front: the pool's aggregate (admission.lua's shape,
--- plus nodes = [{url, node, up, why, budget, reserved, running, ...}]).
function Front:report(srv)
  local budget, reserved, c, nodes = self:sums()
  local free = { cpus = math.max(0, budget.cpus - reserved.cpus), memory = math.max(0, budget.memory - reserved.memory),
    gpus = math.max(0, budget.gpus - reserved.gpus) }
  local by = counts(srv.registry)
  local total = #nodes
  return {
    node = srv.registry.host_name, version = require("rock.core").version(), backend = "fleet",
    strategy = self.pool.set.strategy,
    healthy = c.up > 0, health = string.format("%d of %d node(s) answer", c.up, total),
    budget = amounts(budget), reserved = amounts(reserved), free = amounts(free),
    max_starting = c.max_starting, starting = c.starting, waiting_to_start = c.waiting_to_start,
    -- what waits: in the nodes' queues and in the pool's own
    queued = c.queued + #self.pool.queue, pool_queued = #self.pool.queue,
    running = by.running, pending = by.pending, stopped = by.stopped,
    nodes_up = c.up, nodes_total = total, nodes = nodes, queue = json.array(),
    checked = self.pool.refreshed and (uv.now() - self.pool.refreshed) / 1000 or json.null,
  }
end

--- The /metrics gauges of a front (after serve/metrics.lua's).
function Front:metrics(srv)
  local metrics = require "rock.serve.metrics"
  local budget, reserved, c, nodes = self:sums()
  local g = metrics.gauges()
  g:gauge("rock_node_budget", "the sum of the answering nodes' budgets", g:resources("rock_node_budget", budget))
  g:gauge("rock_node_reserved", "the sum of what the answering nodes reserve", g:resources("rock_node_reserved", reserved))
  g:gauge("rock_node_starting", "starts in flight on the nodes", { "rock_node_starting " .. c.starting })
  g:gauge("rock_node_queued", "starts queued on the nodes and in the front's pool",
    { "rock_node_queued " .. (c.queued + #self.pool.queue) })
  g:gauge("rock_node_running", "sandboxes running through this front", { "rock_node_running " .. counts(srv.registry).running })
  g:gauge("rock_node_healthy", "1 when a node answers", { "rock_node_healthy " .. (c.up > 0 and 1 or 0) })
  local up = {}
  for _, n in ipairs(nodes) do
    up[#up + 1] = string.format('rock_fleet_node_up{url="%s"} %d', metrics.label(n.url), n.up and 1 or 0)
  end
  g:gauge("rock_fleet_node_up", "1 when the node answers its health check", up)
  g:gauge("rock_node_info", "the front's name and rock's version",
    { string.format('rock_node_info{node="%s",version="%s"} 1', metrics.label(srv.registry.host_name),
      require("rock.core").version()) })
  return g:text()
end

return M
