-- test_slurm.lua: backend "slurm" on a real 3-node Slurm cluster started
-- here (tests/slurm/cluster: munged, slurmctld, 3 slurmd; each node
-- CPUs=96 RealMemory=327680) and stopped after. The sandboxes run the
-- local backend inside their jobs (accounting only: a 4 CPU / 16 GB
-- request reserves that in Slurm, the sandbox itself is small). Cases:
-- 60 fit and the 61st is queued (Resources) until one stops, Slurm's own
-- view never over a node's budget; a bad partition; a job scancelled
-- from outside; a node set DOWN mid-run; the client killed with kill -9
-- (rock gc cancels its job; its lease ends another's). Skipped, loudly,
-- without Slurm or root.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local C = dofile(here .. "../slurm/cluster.lua")
local uv = rock.uv

local cl, why = C.up()
if not cl then
  print("SKIP test_slurm: " .. why)
  T.done()
  return
end

local shared = os.getenv("ROCK_HOME") .. "/slurm-shared"
local SO = { conf = cl.conf, node_backend = "local", node_address = "127.0.0.1", shared_dir = shared }
local function start(extra)
  local o = { backend = "slurm", image = "rock-test/debian:12", cpus = 4, memory = "16g", slurm = SO,
    startup_timeout = 120 }
  for k, v in pairs(extra or {}) do o[k] = v end
  return rock.sandbox.start(o)
end

local function jobs_in(states)
  local n = 0
  for _, j in ipairs(cl:jobs()) do if states[j.state] then n = n + 1 end end
  return n
end
local LIVE = { RUNNING = true, PENDING = true, CONFIGURING = true, COMPLETING = true }

-- nothing of ours left: no live job, no record, no address file
local function nothing_left(what)
  T.wait_until(what .. ": no live job", function() return jobs_in(LIVE) == 0 end, 30)
  T.eq(#T.listdir(os.getenv("ROCK_HOME") .. "/sandboxes"), 0, what .. ": sandbox records")
  T.eq(#T.listdir(shared), 0, what .. ": files in the shared dir")
end

local function within_budget(what)
  for _, n in ipairs(cl:nodes()) do
    if n.cpus_alloc > n.cpus or n.memory_alloc > n.memory then
      error(string.format("%s: node %s over its budget: %d/%d CPUs, %d/%d MB", what, n.name,
        n.cpus_alloc, n.cpus, n.memory_alloc, n.memory))
    end
  end
end

local function stop_all(list) for _, sb in pairs(list) do pcall(sb.stop, sb) end end

T.test("60 sandboxes of 4 CPU / 16 GB fit, the 61st is queued (Resources) until one stops", function()
  local sbs, errs, done = {}, {}, 0
  local sampling, samples = true, 0
  local sampler = rock.spawn(function() -- Slurm's own view, all along
    while sampling do
      within_budget("while starting")
      samples = samples + 1
      rock.sleep(0.5)
    end
  end)
  local t0 = uv.now()
  for i = 1, 60 do
    rock.spawn(function()
      local ok, sb = pcall(start)
      if ok then sbs[i] = sb else errs[#errs + 1] = tostring(sb) end
      done = done + 1
    end)
  end
  T.wait_until("60 starts done", function() return done == 60 end, 240)
  local ms = uv.now() - t0
  local ok, err = pcall(function()
    T.eq(#errs, 0, "failed starts: " .. table.concat(errs, "; "))
    print(string.format("     60 sandboxes through Slurm in %.1f s", ms / 1000))
    local per = {}
    for _, sb in pairs(sbs) do per[sb:get_status().slurm_node] = (per[sb:get_status().slurm_node] or 0) + 1 end
    T.eq(per.n1, 20, "on n1"); T.eq(per.n2, 20, "on n2"); T.eq(per.n3, 20, "on n3")
    for _, n in ipairs(cl:nodes()) do
      T.eq(n.memory_alloc, 20 * 16384, n.name .. "'s memory allocated")
      T.eq(n.cpus_alloc, 80, n.name .. "'s CPUs allocated")
    end
    -- the 61st waits in Slurm's queue, its phase saying why
    local watched
    local s61, e61
    rock.spawn(function()
      local ok2, r = pcall(start, { on_create = function(sb) watched = sb end })
      if ok2 then s61 = r else e61 = r end
    end)
    T.wait_until("the 61st queued for Resources", function()
      local q = watched and watched.phases.queued
      return q and q.status == "running" and tostring(q.message):find("PENDING (Resources)", 1, true) ~= nil
    end, 20)
    rock.sleep(2)
    T.ok(s61 == nil and e61 == nil, "still waiting")
    local pending = 0
    for _, j in ipairs(cl:jobs()) do if j.state == "PENDING" then pending = pending + 1; T.eq(j.reason, "Resources") end end
    T.eq(pending, 1, "one job pending in squeue")
    within_budget("full")
    local t1 = uv.now()
    sbs[7]:stop()
    sbs[7] = nil
    T.wait_until("the 61st started", function() return s61 ~= nil or e61 ~= nil end, 60)
    T.ok(s61, "61st: " .. tostring(e61))
    print(string.format("     the queued start ran %.1f s after a stop", (uv.now() - t1) / 1000))
    sbs[61] = s61
    T.eq(s61:execute{ command = "echo 61" }.stdout, "61\n")
    within_budget("after the swap")
  end)
  sampling = false
  rock.wait(sampler)
  stop_all(sbs)
  if not ok then error(err, 0) end
  T.ok(samples > 3, "Slurm's view sampled")
  nothing_left("after stopping all")
end)

T.test("a bad partition: sbatch's own words, nothing left", function()
  local ok, err = pcall(start, { slurm = { conf = cl.conf, node_backend = "local", shared_dir = shared,
    partition = "no-such-partition" } })
  T.ok(not ok, "refused")
  T.eq(err.code, "sandbox_start_failed")
  T.match(err.message, "Invalid partition name specified")
  nothing_left("after the refusal")
end)

T.test("a job scancelled from outside: its calls fail node_lost, its status says why", function()
  local sb = start()
  local id = sb:get_status().slurm_job_id
  T.ok(id, "job id in get_status")
  T.eq(sb:execute{ command = "echo up" }.stdout, "up\n")
  local _, ok = cl:sh("scancel " .. id)
  T.ok(ok, "scancel")
  T.wait_until("the job ended", function()
    for _, j in ipairs(cl:jobs()) do if j.id == id then return not LIVE[j.state] end end
    return true
  end, 30)
  T.raises("node_lost", sb.execute, sb, { command = "echo still" })
  T.ok(not sb:is_alive(), "not alive")
  local st = sb:get_status()
  T.eq(st.state, "stopped")
  T.match(st.stop_reason, "slurm job " .. id .. " is CANCELLED")
  sb:stop()
  nothing_left("after the cancel")
end)

T.test("a node set DOWN mid-run: its sandbox is node_lost, new starts go to the others", function()
  local sb = start({ slurm = { conf = cl.conf, node_backend = "local", node_address = "127.0.0.1",
    shared_dir = shared, nodelist = "n1" } })
  T.eq(sb:get_status().slurm_node, "n1")
  local out, ok = cl:sh("scontrol update nodename=n1 state=down reason=rock-test")
  T.ok(ok, out)
  local others = {}
  local ok2, err = pcall(function()
    T.wait_until("n1's job ended", function() return jobs_in(LIVE) == 0 end, 30)
    T.raises("node_lost", sb.execute, sb, { command = "true" })
    for i = 1, 3 do others[i] = start() end
    for _, o in ipairs(others) do T.ok(o:get_status().slurm_node ~= "n1", "placed off n1") end
  end)
  stop_all(others)
  cl:sh("scontrol update nodename=n1 state=resume")
  sb:stop()
  if not ok2 then error(err, 0) end
  T.wait_until("n1 back", function()
    for _, n in ipairs(cl:nodes()) do if n.name == "n1" then return n.state == "IDLE" end end
  end, 30)
  nothing_left("after the node came back")
end)

-- a client in a process of its own, killed with kill -9 once its sandbox runs
local function client(lease)
  local script = os.getenv("ROCK_HOME") .. "/client.lua"
  T.write(script, string.format([[
local rock = require "rock"
local sb = rock.sandbox.start{ backend = "slurm", image = "x", cpus = 1, memory = "1g",
  auto_clear_seconds = %d, slurm = { conf = %q, node_backend = "local", node_address = "127.0.0.1",
  shared_dir = %q } }
io.stdout:write(sb:get_status().slurm_job_id, "\n"); io.stdout:flush()
rock.sleep(1000)
]], lease, cl.conf, shared))
  local out = uv.new_pipe()
  local line = {}
  local proc, pid = uv.spawn(T.rock_exe(), { args = { script }, stdio = { nil, out, 2 } }, function() end)
  assert(proc, pid)
  out:read_start(function(_, d) if d then line[#line + 1] = d end end)
  T.wait_until("the client's sandbox ran", function() return table.concat(line):find("\n") end, 60)
  uv.kill(pid, "sigkill")
  rock.sleep(0.2)
  out:close(); proc:close()
  return table.concat(line):match("(%d+)")
end

T.test("client killed with kill -9: rock gc cancels its job; a lease ends one by itself", function()
  local id = client(600)
  T.eq(jobs_in(LIVE), 1, "its job runs on")
  local out, code = T.run({ T.rock_exe(), "gc" })
  T.eq(code, 0, "rock gc: " .. out)
  T.wait_until("job " .. id .. " cancelled by gc", function() return jobs_in(LIVE) == 0 end, 30)
  nothing_left("after rock gc")
  -- the lease: the job's server stops the idle sandbox and the job ends
  local id2 = client(3)
  T.ok(id2 and id2 ~= id, "a second job")
  T.wait_until("job " .. id2 .. " ended by its lease", function() return jobs_in(LIVE) == 0 end, 40)
  T.run({ T.rock_exe(), "gc" }) -- the record of the dead client
  nothing_left("after the lease")
end)

cl:down()
T.done()
