-- slurm.lua: sandbox start latency through Slurm against the same engine
-- directly, in one run.   rock slurm.lua N   (SLURM_CONF: a test cluster
-- of 3 nodes of 96 CPU / 320 GB, tests/bench/slurm makes it)
--   direct: rock.sandbox.start{backend = "local"} to rocklet ready
--   slurm:  rock.sandbox.start{backend = "slurm"} to rocklet ready: sbatch,
--           Slurm's placement, the job's `rock serve --once` up, its address
--           file seen, the remote start on that node (local engine there)
--   step:   the same as an srun step of an allocation held here (one
--           whole node, slurm.allocation): srun, no scheduler pass
--   each N starts at concurrency 1, 4 and 16, sandboxes of 4 CPU / 16 GB
--   queued: the cluster full (60 of them), one more start waits in Slurm's
--           queue; from a stop's return to that start's sandbox ready
local rock = require "rock"
local hr = rock.uv.hrtime

local n = tonumber(arg[1]) or 32
local shared = os.getenv("ROCK_HOME") .. "/shared"
local SLURM = { node_backend = "local", node_address = "127.0.0.1", shared_dir = shared }

local function stats(xs)
  local s = {}
  for i, v in ipairs(xs) do s[i] = v end
  table.sort(s)
  return { p50 = s[(#s + 1) // 2], p95 = s[math.max(1, math.ceil(#s * 0.95))], n = #s }
end

-- an allocation of one whole node for the steps
local alloc = io.popen("sbatch --parsable --nodes=1 --exclusive --mem=0 --output=/dev/null --wrap 'sleep 3600'")
  :read("a"):match("%d+")
assert(alloc, "sbatch of the allocation")
local STEP = { allocation = alloc }
for k, v in pairs(SLURM) do STEP[k] = v end

local function opts(kind)
  return { backend = kind == "step" and "slurm" or kind, image = "none", cpus = 4, memory = "16g",
    slurm = kind == "slurm" and SLURM or kind == "step" and STEP or nil, startup_timeout = 120 }
end

-- n starts at concurrency conc, each stopped once ready; their latencies in ms
local function run(backend, conc)
  local lat = {}
  local sem = rock.semaphore(conc)
  local tasks = {}
  local t0 = hr()
  for i = 1, n do
    tasks[i] = rock.spawn(function()
      sem:with(function()
        local t = hr()
        local sb = rock.sandbox.start(opts(backend))
        lat[i] = (hr() - t) / 1e6
        sb:stop()
      end)
    end)
  end
  rock.wait(tasks)
  return stats(lat), (hr() - t0) / 1e9
end

rock.sandbox.start(opts("local")):stop() -- warm: gc.once, the page cache
rock.sandbox.start(opts("slurm")):stop()
rock.sandbox.start(opts("step")):stop()

print(string.format("sandbox start to rocklet ready, milliseconds, %d starts per row (4 CPU / 16 GB each)", n))
print(string.format("%-12s %-30s %-30s %-30s", "concurrency", "local directly", "slurm job (local on the node)",
  "srun step of an allocation"))
for _, conc in ipairs({ 1, 4, 16 }) do
  local d, dt = run("local", conc)
  local s, st = run("slurm", conc)
  local p, pt = run("step", conc)
  print(string.format("%-12d p50 %7.1f p95 %7.1f (%4.1fs)   p50 %7.1f p95 %7.1f (%4.1fs)   p50 %7.1f p95 %7.1f (%4.1fs)",
    conc, d.p50, d.p95, dt, s.p50, s.p95, st, p.p50, p.p95, pt))
end
os.execute("scancel " .. alloc)

-- queued: fill the cluster, then each round one more start waits; a stop frees room
local full = {}
local starts = {}
for i = 1, 60 do starts[i] = rock.spawn(function() full[i] = rock.sandbox.start(opts("slurm")) end) end
rock.wait(starts)
local waits, rounds = {}, tonumber(os.getenv("ROUNDS") or "") or 5
for r = 1, rounds do
  local watched, got
  local t = rock.spawn(function()
    local o = opts("slurm")
    o.on_create = function(sb) watched = sb end
    got = rock.sandbox.start(o)
  end)
  repeat rock.sleep(0.05) until watched and watched.phases.queued and watched.phases.queued.status == "running"
  rock.sleep(1)
  assert(not got, "the extra start did not wait")
  full[r]:stop()
  local t0 = hr()
  rock.wait(t)
  waits[r] = (hr() - t0) / 1e6
  full[r] = got
end
local w = stats(waits)
print(string.format("\nqueued start (cluster full, 60 running), from a stop's return to its sandbox ready, " ..
  "ms (n=%d): p50 %.1f  p95 %.1f", w.n, w.p50, w.p95))
print("(the test cluster schedules every second: SchedulerParameters=sched_interval=1; squeue is asked every " ..
  require("rock.backends.slurm").ASK_EVERY .. " s, the address file every " .. require("rock.backends.slurm").POLL .. " s)")
for _, sb in ipairs(full) do sb:stop() end
