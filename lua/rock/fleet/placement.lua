--- rock.fleet.placement: which node a sandbox goes to.
-- Pure decisions, no I/O: rock.fleet's pool feeds it each node's own report
-- (what its `rock serve` says it has reserved, running and starting, see
-- docs/fleet.md) at each health round, and on top of it what the pool did
-- since: starts sent there and not yet answered (in flight: placed ..
-- settled), sandboxes it started or stopped there (reserve, release), so
-- starts decided between two reports do not all land on one node. Each
-- report replaces what reserve and release changed (it counts them); what
-- is still in flight stays on top of it.
--
--   local P = require "rock.fleet.placement"
--   local set = P.new{ strategy = "spread", sample = 8 }
--   set:update("n1", report)          -- a node's report, as GET /node answers
--   local node = set:choose{ cpus = 4, memory = 16 * 2^30, gpus = 0 }
--   set:placed(node, req) ... set:settled(node, req)   -- in flight, then done
--
-- Strategies: "spread" takes the node whose most used resource (reserved
-- fraction of cpu, memory, gpu, counting the request) ends lowest; "pack"
-- the one it leaves highest that still fits. A node fits when it answers
-- (healthy), its free budget covers the request and it has a start slot
-- (starting below max_starting), so the pool queues rather than a node.
-- Large sets sample `sample` nodes at random (best-of-K, the power of K
-- choices) and scan all only when no sampled node fits: a fitting node is
-- never missed, and a decision over 1,000 nodes costs a few samples.
local errors = require "rock.errors"

local M = {}

local STRATEGIES = { spread = true, pack = true }
M.STRATEGIES = STRATEGIES

local Set = {}
Set.__index = Set

--- opts.strategy "spread" (default) | "pack"; opts.sample K (default 8):
--- sets larger than 2K are sampled; 0 always scans all.
function M.new(opts)
  opts = opts or {}
  local strategy = opts.strategy or "spread"
  if not STRATEGIES[strategy] then
    errors.raise("invalid_argument", "unknown placement strategy: " .. tostring(strategy) .. " (spread or pack)")
  end
  local sample = opts.sample or 8
  if math.type(sample) ~= "integer" or sample < 0 then
    errors.raise("invalid_argument", "placement: sample must be a whole number from 0 up")
  end
  return setmetatable({ strategy = strategy, sample = sample, nodes = {}, by_name = {},
    random = opts.random or math.random }, Set)
end

-- A node's numbers, flat for the decision loop: capacity and use per
-- resource (use = reserved in the last report + in flight since), start
-- slots, health.
local function blank(name)
  return { name = name, healthy = false,
    cap_cpu = 0, cap_mem = 0, cap_gpu = 0,
    rep_cpu = 0, rep_mem = 0, rep_gpu = 0, rep_starting = 0,
    fly_cpu = 0, fly_mem = 0, fly_gpu = 0, fly_n = 0,
    max_starting = 0 }
end

--- The node's report (healthy, budget{cpus,memory,gpus}, reserved{...},
--- starting, max_starting); nil or healthy=false marks it unreachable
--- (drained: no decision picks it until a healthy report comes).
function Set:update(name, report)
  self.full = nil
  local n = self.by_name[name]
  if not n then
    n = blank(name)
    self.by_name[name] = n
    self.nodes[#self.nodes + 1] = n
  end
  if not report or not report.healthy then
    n.healthy = false
    return n
  end
  local b, r = report.budget or {}, report.reserved or {}
  n.healthy = true
  n.cap_cpu, n.cap_mem, n.cap_gpu = b.cpus or 0, b.memory or 0, b.gpus or 0
  n.rep_cpu, n.rep_mem, n.rep_gpu = r.cpus or 0, r.memory or 0, r.gpus or 0
  n.rep_starting = report.starting or 0
  n.max_starting = report.max_starting or math.huge
  -- the reservations are the node's own from here on (what reserve and
  -- release added or took since the last report is in it). What is in
  -- flight stays on top: a report made while a start was under way may
  -- count it already, so it counts twice until the pool settles it (one
  -- start too few placed meanwhile, never one past a budget)
  return n
end

--- Forget a node (removed from the pool).
function Set:remove(name)
  self.full = nil
  local n = self.by_name[name]
  if not n then return end
  self.by_name[name] = nil
  for i, m in ipairs(self.nodes) do
    if m == n then table.remove(self.nodes, i) break end
  end
end

function Set:node(name) return self.by_name[name] end

local function req_of(req)
  return req.cpus or 0, req.memory or 0, req.gpus or 0
end

-- The fraction of its most used resource node n would have with the
-- request placed, or nil when it does not fit.
local function load_after(n, c, m, g)
  if not n.healthy or n.rep_starting + n.fly_n >= n.max_starting then return nil end
  local uc, um, ug = n.rep_cpu + n.fly_cpu + c, n.rep_mem + n.fly_mem + m, n.rep_gpu + n.fly_gpu + g
  if uc > n.cap_cpu or um > n.cap_mem or ug > n.cap_gpu then return nil end
  local f = 0
  if n.cap_cpu > 0 then f = uc / n.cap_cpu end
  if n.cap_mem > 0 and um / n.cap_mem > f then f = um / n.cap_mem end
  if n.cap_gpu > 0 and ug / n.cap_gpu > f then f = ug / n.cap_gpu end
  return f
end
M.load_after = load_after

--- Whether the request could ever fit node n (its whole budget), healthy or not.
function M.could_fit(n, req)
  local c, m, g = req_of(req)
  return c <= n.cap_cpu and m <= n.cap_mem and g <= n.cap_gpu
end

--- The node to place req on, or nil (none fits now); `exclude` (a set of
--- names) skips nodes that just refused this start.
function Set:choose(req, exclude)
  local c, m, g = req_of(req)
  local nodes, count = self.nodes, #self.nodes
  if count == 0 then return nil end
  -- a full scan found no room for a request this size or smaller, and
  -- nothing changed since: no need to scan again (a full fleet queues
  -- every start; each must not cost a scan)
  local full = self.full
  if full and not exclude and c >= full[1] and m >= full[2] and g >= full[3] then return nil end
  local pack = self.strategy == "pack"
  local best, best_f
  local k = self.sample
  if k > 0 and count > 2 * k then
    local random = self.random
    for _ = 1, k do
      local n = nodes[random(count)]
      if not (exclude and exclude[n.name]) then
        local f = load_after(n, c, m, g)
        if f and (not best or (pack and f > best_f) or (not pack and f < best_f)) then
          best, best_f = n, f
        end
      end
    end
    if best then return best end
  end
  for i = 1, count do
    local n = nodes[i]
    if not (exclude and exclude[n.name]) then
      local f = load_after(n, c, m, g)
      if f and (not best or (pack and f > best_f) or (not pack and f < best_f)) then
        best, best_f = n, f
      end
    end
  end
  if not best and not exclude then self.full = { c, m, g } end
  return best
end

--- The pool sent req to node n: count it until the node's answer settles it.
function Set:placed(n, req)
  local c, m, g = req_of(req)
  n.fly_cpu, n.fly_mem, n.fly_gpu, n.fly_n = n.fly_cpu + c, n.fly_mem + m, n.fly_gpu + g, n.fly_n + 1
end

--- The start sent to n was answered (started or refused): it is no longer
--- in flight; the node's next report counts it if it holds.
function Set:settled(n, req)
  self.full = nil
  local c, m, g = req_of(req)
  n.fly_cpu, n.fly_mem, n.fly_gpu = math.max(0, n.fly_cpu - c), math.max(0, n.fly_mem - m),
    math.max(0, n.fly_gpu - g)
  n.fly_n = math.max(0, n.fly_n - 1)
end

--- A started sandbox counts as reserved on n until the next report says so.
function Set:reserve(n, req)
  local c, m, g = req_of(req)
  n.rep_cpu, n.rep_mem, n.rep_gpu = n.rep_cpu + c, n.rep_mem + m, n.rep_gpu + g
end

--- A stopped sandbox's share given back on n until the next report.
function Set:release(n, req)
  self.full = nil
  local c, m, g = req_of(req)
  n.rep_cpu, n.rep_mem, n.rep_gpu = math.max(0, n.rep_cpu - c), math.max(0, n.rep_mem - m),
    math.max(0, n.rep_gpu - g)
end

return M
