-- placement.lua: placement decisions per second over simulated nodes
-- (rock.fleet.placement, no I/O), for the fleet bench (tests/bench/fleet).
--   rock placement.lua [NODES]   -> a report on stdout
-- Each decision is what the pool does per start: choose, count it in
-- flight, settle it; each node gets a fresh report every 1,000 decisions
-- (its reserved share drifting), as health checks would bring them. The
-- issue's target: over 100,000 decisions/s with 1,000 nodes.
local rock = require "rock"
local P = require "rock.fleet.placement"
local hr = rock.uv.hrtime

local nodes = tonumber(arg[1]) or 1000
local GB = 1 << 30
local REQ = { cpus = 4, memory = 16 * GB, gpus = 0 }

local function reports(rnd)
  local r = {}
  for i = 1, nodes do
    local used = rnd(0, 19) -- sandboxes of 4/16 already there, of 20
    r[i] = { healthy = true, budget = { cpus = 96, memory = 320 * GB, gpus = 0 },
      reserved = { cpus = 4 * used, memory = 16 * GB * used, gpus = 0 }, starting = rnd(0, 3),
      max_starting = 4 }
  end
  return r
end

local function run(strategy, sample, count)
  math.randomseed(42)
  local set = P.new{ strategy = strategy, sample = sample }
  local reps = reports(math.random)
  for i = 1, nodes do set:update("n" .. i, reps[i]) end
  local t0, misses = hr(), 0
  for d = 1, count do
    local n = set:choose(REQ)
    if n then
      set:placed(n, REQ)
      set:settled(n, REQ)
    else
      misses = misses + 1
    end
    if d % 1000 == 0 then
      local i = math.random(nodes)
      set:update("n" .. i, reps[i])
    end
  end
  local s = (hr() - t0) / 1e9
  print(string.format("placement %-6s sample %-3d %5d nodes  %10.0f decisions/s  (%d without a node)",
    strategy, sample, nodes, count / s, misses))
end

for _, strategy in ipairs{ "spread", "pack" } do
  run(strategy, 8, 200000)
  run(strategy, 0, 5000) -- a full scan each time: the fallback's cost
end
