-- test_placement.lua: rock.fleet.placement's decisions (pure: nodes' reports
-- in, a node out). Spread against pack, ROCK's evaluator budgets (cpu 96,
-- 320 GB: exactly 20 sandboxes of 4 CPU / 16 GB, the 21st does not fit), no
-- decision ever past a node's budget or start slots, drained nodes never
-- chosen, best-of-K sampling never missing the one node that fits.
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local P = require "rock.fleet.placement"

local GB = 1 << 30

local function report(cpus, mem_gb, reserved_cpus, reserved_gb, extra)
  local r = { healthy = true, budget = { cpus = cpus, memory = mem_gb * GB, gpus = 0 },
    reserved = { cpus = reserved_cpus or 0, memory = (reserved_gb or 0) * GB, gpus = 0 },
    starting = 0, max_starting = 4 }
  for k, v in pairs(extra or {}) do r[k] = v end
  return r
end

local SB = { cpus = 4, memory = 16 * GB, gpus = 0 }

-- place one: in flight, answered, counted as reserved (what the pool does)
local function place(set, req)
  local n = set:choose(req)
  if not n then return nil end
  set:placed(n, req)
  set:settled(n, req)
  set:reserve(n, req)
  return n.name
end

T.test("ROCK's evaluator budget admits exactly 20 of 4 CPU / 16 GB, not the 21st", function()
  local set = P.new{}
  set:update("n1", report(96, 320))
  for i = 1, 20 do T.eq(place(set, SB), "n1", "sandbox " .. i) end
  T.eq(set:choose(SB), nil, "the 21st")
  -- memory-bound, as ROCK's: 24 CPUs are left
  T.eq(set:node("n1").rep_cpu, 80)
end)

T.test("spread takes the least loaded node, pack the most loaded that fits", function()
  local spread, pack = P.new{ strategy = "spread" }, P.new{ strategy = "pack" }
  for _, set in ipairs{ spread, pack } do
    set:update("a", report(96, 320, 0, 0))
    set:update("b", report(96, 320, 48, 160))
    set:update("c", report(96, 320, 92, 310)) -- 4 CPUs, 10 GB free: too small
  end
  T.eq(spread:choose(SB).name, "a")
  T.eq(pack:choose(SB).name, "b")
  -- spread alternates once a and b are level
  local seen = {}
  for _ = 1, 24 do
    local name = place(spread, SB)
    seen[name] = (seen[name] or 0) + 1
  end
  T.ok(seen.a and seen.b, "both used")
  T.eq(seen.c, nil, "c never: it cannot hold one")
end)

T.test("a node is chosen only with a start slot; in-flight starts count", function()
  local set = P.new{}
  set:update("n1", report(96, 320, 0, 0, { starting = 3, max_starting = 4 }))
  local n = set:choose(SB)
  T.eq(n.name, "n1")
  set:placed(n, SB)
  T.eq(set:choose(SB), nil, "4 starting: no slot until one answers")
  set:settled(n, SB)
  T.eq(set:choose(SB).name, "n1")
end)

T.test("a drained node is never chosen and rejoins on a healthy report", function()
  local set = P.new{}
  set:update("n1", report(96, 320))
  set:update("n2", report(96, 320, 40, 100))
  set:update("n1", nil)
  T.eq(set:choose(SB).name, "n2")
  set:update("n2", { healthy = false })
  T.eq(set:choose(SB), nil)
  set:update("n1", report(96, 320))
  T.eq(set:choose(SB).name, "n1")
  T.eq(set:choose(SB, { n1 = true }), nil, "excluded after it refused")
end)

T.test("no decision ever past a node's budget (random requests, 3 strategies x sampling)", function()
  math.randomseed(7)
  for _, opts in ipairs{ { strategy = "spread" }, { strategy = "pack" }, { strategy = "spread", sample = 2 },
    { strategy = "pack", sample = 0 } } do
    local set = P.new(opts)
    for i = 1, 12 do set:update("n" .. i, report(8 * i, 32 * i)) end
    local placed = 0
    for _ = 1, 2000 do
      local req = { cpus = math.random(1, 8), memory = math.random(1, 32) * GB, gpus = 0 }
      if place(set, req) then placed = placed + 1 end
    end
    T.ok(placed > 0, "some placed")
    for _, n in ipairs(set.nodes) do
      T.ok(n.rep_cpu <= n.cap_cpu and n.rep_mem <= n.cap_mem, n.name .. " within budget")
    end
  end
end)

T.test("best-of-K on 1,000 nodes finds the single node with room", function()
  local set = P.new{ sample = 8 }
  for i = 1, 1000 do set:update("n" .. i, report(96, 320, 96, 320)) end
  set:update("n777", report(96, 320, 0, 0))
  T.eq(set:choose(SB).name, "n777")
end)

T.test("a full fleet answers nil at once and sees room as soon as it frees", function()
  local set = P.new{ sample = 2 }
  for i = 1, 10 do set:update("n" .. i, report(96, 320, 96, 320)) end
  for _ = 1, 100 do T.eq(set:choose(SB), nil) end
  T.eq(set:choose{ cpus = 1, memory = GB, gpus = 0 }, nil, "a smaller request is looked at afresh")
  set:release(set:node("n4"), SB)
  T.eq(set:choose(SB).name, "n4")
  set:reserve(set:node("n4"), SB)
  T.eq(set:choose(SB), nil)
  set:update("n9", report(96, 320, 0, 0))
  T.eq(set:choose(SB).name, "n9")
end)

T.test("bad options are clear errors", function()
  local ok, err = pcall(P.new, { strategy = "random" })
  T.ok(not ok and err.code == "invalid_argument" and err.message:match("spread or pack"), "strategy")
  ok, err = pcall(P.new, { sample = -1 })
  T.ok(not ok and err.code == "invalid_argument", "sample")
end)

T.done()
