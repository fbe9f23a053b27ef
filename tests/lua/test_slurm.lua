-- test_slurm.lua: backend "slurm" on a real 3-node Slurm cluster started
-- here (tests/slurm/cluster: munged, slurmctld, 3 slurmd; each node
-- CPUs=96 RealMemory=327680) and stopped after. The sandboxes run the
-- local backend inside their jobs (accounting only: a 4 CPU / 16 GB
-- request reserves that in Slurm, the sandbox itself is small). Cases:
-- 60 fit and the 61st is queued (Resources) until one stops, Slurm's own
-- view never over a node's budget; a bad partition; --time from the
-- lease (or slurm.time, or the user's sbatch args) and a deadline, `rock
-- ps` listing the jobs; a start past its startup_timeout (its job
-- cancelled, Slurm's reason); a job that ends before it serves (its
-- output's tail); a job scancelled from outside; a node set DOWN mid-run;
-- the client killed with kill -9 (rock gc cancels its job, or keeps its
-- record while scancel fails; its lease ends another's; a job still
-- queued ends unserved once it runs, or Slurm drops it at its deadline);
-- srun steps inside an allocation. Exits 77 (a skip for ctest) without
-- Slurm or root.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local C = dofile(here .. "../slurm/cluster.lua")
local uv = rock.uv
local json = rock.json

local cl, why = C.up()
if not cl then
  print("SKIP test_slurm: " .. why)
  os.exit(77) -- ctest: SKIP_RETURN_CODE (tests/CMakeLists.txt)
end

-- No engine here: the jobs' servers run the local backend, and every
-- rock process (this one, its clients, rock gc, each job's `rock serve`,
-- which inherits this environment through sbatch) would otherwise sweep
-- the shared docker and podman at its start (gc.once), stalling on one
-- that another test keeps busy.
uv.os_setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
uv.os_setenv("ROCK_PODMAN_SOCKET", "/nonexistent/podman.sock")
-- the jobs' TMPDIR (sbatch and srun pass this environment on): each job's
-- server keeps its state in $TMPDIR/rock-slurm-..., which must go with it
local nodetmp = os.getenv("ROCK_HOME") .. "/node-tmp"
T.must("mkdir -p " .. T.q(nodetmp))
uv.os_setenv("TMPDIR", nodetmp)

local shared = os.getenv("ROCK_HOME") .. "/slurm-shared"
local SO = { conf = cl.conf, node_backend = "local", node_address = "127.0.0.1", shared_dir = shared }
local function start(extra)
  local o = { backend = "slurm", image = "rock-test/debian:12", cpus = 4, memory = "16g", slurm = SO,
    startup_timeout = 120 }
  for k, v in pairs(extra or {}) do o[k] = v end
  return rock.sandbox.start(o)
end

-- SO with extra options
local function so(extra)
  local t = {}
  for k, v in pairs(SO) do t[k] = v end
  for k, v in pairs(extra) do t[k] = v end
  return t
end

-- `rock ARGS...` (gc, ps): its output and exit code
local function rock_cli(...) return T.run({ T.rock_exe(), ... }) end

-- a field of job id as scontrol shows it (TimeLimit, Deadline, ...)
local function job_field(id, field)
  return (cl:sh("scontrol -o show job " .. id)):match(" " .. field .. "=(%S+)")
end

local function jobs_in(states)
  local n = 0
  for _, j in ipairs(cl:jobs()) do if states[j.state] then n = n + 1 end end
  return n
end
local LIVE = { RUNNING = true, PENDING = true, CONFIGURING = true, COMPLETING = true }

-- nothing of ours left: no live job, no record, no address file, no
-- job's state dir on its node
local function nothing_left(what)
  T.wait_until(what .. ": no live job", function() return jobs_in(LIVE) == 0 end, 30)
  T.eq(#T.listdir(os.getenv("ROCK_HOME") .. "/sandboxes"), 0, what .. ": sandbox records")
  T.eq(#T.listdir(shared), 0, what .. ": files in the shared dir")
  T.eq(T.sh("ls " .. T.q(nodetmp) .. " | grep '^rock-slurm-' || true"), "", what .. ": a job's state dir on its node")
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

T.test("--time from the lease, slurm.time or the user's sbatch args, with a deadline; rock ps lists the jobs", function()
  local sbs = {}
  local ok, err = pcall(function()
    sbs[1] = start{ auto_clear_seconds = 1800 }
    sbs[2] = start{ slurm = so{ time = "1:30:00" } }
    sbs[3] = start{ auto_clear_seconds = 1800, slurm = so{ sbatch_args = { "--time=2-00:00:00" } } }
    sbs[4] = start() -- no lease, no time: the partition's default
    -- the lease, 30 min, plus 10; the partition's INFINITE (365 days once backfill started it)
    local want = { "00:40:00", "01:30:00", "2-00:00:00", "UNLIMITED" }
    for i, sb in ipairs(sbs) do
      local id = sb:get_status().slurm_job_id
      local tl = job_field(id, "TimeLimit")
      T.eq(i == 4 and tl == "365-00:00:00" and "UNLIMITED" or tl, want[i], "job " .. i .. "'s time limit")
      local dl = job_field(id, "Deadline")
      if i < 4 then T.match(dl, "^%d+%-%d+%-%d+T", "job " .. i .. " has a deadline") else T.eq(dl, "N/A") end
    end
    local out, code = rock_cli("ps", "--json")
    T.eq(code, 0, "rock ps")
    local rows = {}
    for line in out:gmatch("[^\n]+") do
      local okj, r = pcall(json.decode, line)
      if okj and type(r) == "table" and r.id then rows[r.id] = r end
    end
    for _, sb in ipairs(sbs) do
      local r = rows[sb.id]
      T.ok(r, "rock ps lists " .. sb.id)
      T.eq(r.backend, "slurm")
      T.eq(r.state, "job " .. sb:get_status().slurm_job_id .. " RUNNING")
      T.ok(r.owner_alive, "its owner alive")
    end
  end)
  stop_all(sbs)
  if not ok then error(err, 0) end
  nothing_left("after the time limits")
  T.eq(require("rock.backends.slurm").time_seconds("2-03:04:05"), ((2 * 24 + 3) * 60 + 4) * 60 + 5, "D-H:M:S")
  T.eq(require("rock.backends.slurm").time_seconds("90"), 5400, "minutes")
  T.eq(require("rock.backends.slurm").time_seconds("1:30"), 90, "M:S")
  T.eq(require("rock.backends.slurm").time_seconds("UNLIMITED"), nil, "none")
end)

T.test("a start that waits past startup_timeout: its job cancelled, Slurm's reason in the error", function()
  local ok, err = pcall(start, { startup_timeout = 4, slurm = so{ sbatch_args = { "--begin=now+600" } } })
  T.ok(not ok, "it failed")
  T.eq(err.code, "timeout")
  T.match(err.message, "^slurm job %d+ did not start in 4s: PENDING %(BeginTime%)")
  nothing_left("after the timeout")
end)

T.test("a job that ends before it serves: its state and its output's tail in the error", function()
  local ok, err = pcall(start, { slurm = so{ rock = "/nonexistent/rock" } })
  T.ok(not ok, "it failed")
  T.eq(err.code, "sandbox_start_failed")
  T.match(err.message, "^slurm job %d+ ended before its sandbox started: FAILED")
  T.match(err.message, "its output: .*/nonexistent/rock: No such file or directory")
  nothing_left("after the failed job")
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

-- a client in a process of its own, killed with kill -9 once its sandbox
-- runs; o: lease (its auto_clear_seconds), alloc and cpus (a step of
-- allocation alloc, of cpus CPUs), sbatch_args, startup (its
-- startup_timeout, default 120), pre (Lua run first: the backend's
-- knobs), waiting (killed while its start still waits, once its job is
-- submitted or its srun runs). Returns its job's id (J or J.S; nil for
-- one killed waiting) and its sandbox's id.
local function client(o)
  local script = os.getenv("ROCK_HOME") .. "/client.lua"
  T.write(script, string.format([[
local rock = require "rock"
local said
%s
local sb = rock.sandbox.start{ backend = "slurm", image = "x", cpus = %d, memory = "1g",
  auto_clear_seconds = %d, startup_timeout = %d, slurm = { conf = %q, node_backend = "local",
  node_address = "127.0.0.1", shared_dir = %q, allocation = %s, sbatch_args = %s },
  on_phase = function(sb, name, status)
    if sb.id and not said then said = true; io.stdout:write("id ", sb.id, "\n"); io.stdout:flush() end
    if name == "queued" and status ~= "success" then io.stdout:write("waiting\n"); io.stdout:flush() end
  end }
io.stdout:write("job ", sb:get_status().slurm_job_id, "\n"); io.stdout:flush()
rock.sleep(1000)
]], o.pre or "", o.cpus or 1, o.lease, o.startup or 120, cl.conf, shared,
    o.alloc and string.format("%q", o.alloc) or "nil",
    o.sbatch_args and ("{" .. string.format("%q", o.sbatch_args[1]) .. "}") or "nil"))
  local out = uv.new_pipe()
  local line = {}
  local env = { "ROCK_NO_GC=1" } -- its start reaps no other killed client's sandbox: the test's gc does
  for k, v in pairs(uv.os_environ()) do env[#env + 1] = k .. "=" .. v end
  local proc, pid = uv.spawn(T.rock_exe(), { args = { script }, stdio = { nil, out, 2 }, env = env }, function() end)
  assert(proc, pid)
  out:read_start(function(_, d) if d then line[#line + 1] = d end end)
  local ok, err = pcall(T.wait_until, "the client's sandbox ran", function()
    return table.concat(line):find(o.waiting and "waiting\n" or "job %d[%.%d]*\n")
  end, 60)
  if o.waiting then rock.sleep(0.5) end -- its srun runs
  uv.kill(pid, "sigkill")
  rock.sleep(0.2)
  out:close(); proc:close()
  if not ok then error(err, 0) end
  local said = table.concat(line)
  return said:match("job (%d+[%.%d]*)"), said:match("id (%S+)")
end

T.test("client killed with kill -9: rock gc cancels its job; a lease ends one by itself", function()
  local id = client{ lease = 600 }
  T.eq(jobs_in(LIVE), 1, "its job runs on")
  local out, code = rock_cli("gc")
  T.eq(code, 0, "rock gc: " .. out)
  T.wait_until("job " .. id .. " cancelled by gc", function() return jobs_in(LIVE) == 0 end, 30)
  nothing_left("after rock gc")
  -- the lease: the job's server stops the idle sandbox and the job ends
  local id2 = client{ lease = 3 }
  T.ok(id2 and id2 ~= id, "a second job")
  T.wait_until("job " .. id2 .. " ended by its lease", function() return jobs_in(LIVE) == 0 end, 40)
  rock_cli("gc") -- the record of the dead client
  nothing_left("after the lease")
end)

T.test("client killed while its job waits: it ends unserved once it runs; Slurm drops one past its deadline", function()
  -- a job that starts after its client stopped waiting exits at once
  local _, sid = client{ lease = 600, sbatch_args = { "--begin=now+5" }, waiting = true,
    pre = 'require("rock.backends.slurm").WAITING_FRESH = 2' }
  T.ok(sid, "its sandbox's id")
  T.eq(jobs_in({ PENDING = true }), 1, "its job waits")
  T.wait_until("its job ran and ended", function() return jobs_in(LIVE) == 0 end, 40)
  local st
  for _, j in ipairs(cl:jobs()) do if j.name == "rock-" .. sid then st = j.state end end
  T.eq(st, "COMPLETED", "it ended by itself")
  T.match(T.read(shared .. "/" .. sid .. ".out") or "", "its client stopped waiting")
  local out, code = rock_cli("gc")
  T.eq(code, 0, "rock gc: " .. out)
  nothing_left("after the unserved job")
  -- one whose deadline passes while it waits: Slurm drops it (DEADLINE)
  local hold = cl:sh("sbatch --parsable --nodelist=n1 --exclusive --output=/dev/null --wrap 'sleep 600'"):match("%d+")
  local ok, err = pcall(function()
    T.wait_until("n1 held", function() return job_field(hold, "JobState") == "RUNNING" end, 30)
    client{ lease = 60, startup = 3, sbatch_args = { "--nodelist=n1" }, waiting = true,
      pre = 'require("rock.backends.slurm").DEADLINE_SLACK = 1' }
    T.wait_until("its job dropped at its deadline", function() return jobs_in({ DEADLINE = true }) == 1 end, 30)
  end)
  cl:sh("scancel " .. hold)
  if not ok then error(err, 0) end
  out, code = rock_cli("gc")
  T.eq(code, 0, "rock gc: " .. out)
  nothing_left("after the deadline")
end)

T.test("rock gc keeps a dead client's record while scancel fails (Slurm does not answer)", function()
  local id, sid = client{ lease = 600 }
  local recf = os.getenv("ROCK_HOME") .. "/sandboxes/" .. sid .. "/sandbox.json"
  local rec = json.decode(T.read(recf))
  -- its conf, the controller's port one nobody listens on
  rec.slurm_conf = os.getenv("ROCK_HOME") .. "/dead-slurm.conf"
  T.write(rec.slurm_conf, (T.read(cl.conf):gsub("\nSlurmctldPort=%d+", "\nSlurmctldPort=9")
    :gsub("\nMessageTimeout=%d+", "\nMessageTimeout=2")))
  T.write(recf, json.encode(rec))
  local out, code = rock_cli("gc")
  T.eq(code, 0, "rock gc: " .. out)
  T.ok(T.read(recf), "the record stays: the proof of job " .. id)
  T.eq(jobs_in(LIVE), 1, "its job runs on")
  rec.slurm_conf = cl.conf
  T.write(recf, json.encode(rec))
  out, code = rock_cli("gc")
  T.eq(code, 0, "rock gc: " .. out)
  nothing_left("after the second gc")
end)

-- steps of allocation id alive now, as Slurm lists them: {"J.S", ...}
local function steps_of(id)
  local out = cl:sh("squeue -h -s -j " .. id .. " -o %i")
  local list = {}
  for step in out:gmatch("(%d+%.%d+)") do list[#list + 1] = step end
  return list
end

-- sruns this test's clients left running (theirs: this cluster's conf;
-- an srun's own child, which goes with it, not counted)
local function sruns()
  local out = T.sh("pgrep -f -- '^srun --jobid=' || true")
  local mine = {}
  for pid in out:gmatch("%d+") do
    local env = T.sh("tr '\\0' '\\n' < /proc/" .. pid .. "/environ 2>/dev/null || true")
    if env:find("SLURM_CONF=" .. cl.conf, 1, true) then mine[pid] = T.sh("ps -o ppid= -p " .. pid):match("%d+") end
  end
  local n = 0
  for _, ppid in pairs(mine) do if not mine[ppid] then n = n + 1 end end
  return n
end

T.test("inside an allocation: each sandbox an srun step of it; one that does not fit waits; stop, scancel, gc", function()
  -- an allocation the user holds: 8 CPUs / 32 GB on n2, room for two steps of 4 CPU / 16 GB
  local out, ok = cl:sh("sbatch --parsable --nodelist=n2 --cpus-per-task=8 --mem=32G --output=/dev/null --wrap 'sleep 600'")
  T.ok(ok, "the allocation: " .. out)
  local alloc = out:match("(%d+)")
  T.wait_until("the allocation runs", function()
    for _, j in ipairs(cl:jobs()) do if j.id == alloc then return j.state == "RUNNING" end end
  end, 30)
  local ok_all, err = pcall(function()
    local step = { conf = cl.conf, node_backend = "local", node_address = "127.0.0.1", shared_dir = shared,
      allocation = alloc }
    -- what a step takes from its allocation is refused, as is a bad allocation
    local okp, e = pcall(start, { slurm = { conf = cl.conf, shared_dir = shared, allocation = alloc, partition = "rock" } })
    T.ok(not okp and e.code == "invalid_argument", "a partition for a step: " .. tostring(e and e.message))
    T.match(e.message, "slurm.partition is for a job of its own")
    okp, e = pcall(start, { slurm = { conf = cl.conf, shared_dir = shared, allocation = "4000000" } })
    T.ok(not okp, "no such allocation")
    T.eq(e.code, "sandbox_start_failed")
    T.match(e.message, "Invalid job id")
    -- no srun on this host: its own words
    local said = T.sh(string.format("PATH=/nonexistent %s -e %s 2>&1", T.q(T.rock_exe()), T.q(string.format(
      "local ok, e = pcall(require('rock').sandbox.start, { backend = 'slurm', image = 'x', slurm = { conf = %q, " ..
      "shared_dir = %q, allocation = %q } }) print(ok, e.code, e.message)", cl.conf, shared, alloc))))
    T.match(said, "false\tsandbox_start_failed\tsrun did not run: srun: ENOENT")
    T.eq(#T.listdir(os.getenv("ROCK_HOME") .. "/sandboxes"), 0, "nothing left of the refused")

    local sbs, errs = {}, {}
    local ts = {}
    for i = 1, 2 do ts[i] = rock.spawn(function() sbs[i] = start{ slurm = step } end) end
    local _, e2 = rock.wait(ts)
    for i = 1, 2 do T.ok(not e2[i], "step " .. i .. ": " .. tostring(e2[i] and e2[i].message)) end
    local ids = {}
    for i, sb in ipairs(sbs) do
      local st = sb:get_status()
      T.match(st.slurm_job_id, "^" .. alloc .. "%.%d+$")
      T.eq(st.slurm_allocation, alloc)
      T.eq(st.slurm_node, "n2")
      ids[i] = st.slurm_job_id
      T.eq(sb:execute{ command = "echo up" }.stdout, "up\n")
    end
    T.eq(#steps_of(alloc), 2, "Slurm lists the two steps")
    local my_sid = T.sh("ps -o sid= -p " .. uv.os_getpid()):match("%d+")
    for _, sb in ipairs(sbs) do -- a terminal's Ctrl-C is this host's, not its sruns'
      T.ok(T.sh("ps -o sid= -p " .. sb.srun_pid):match("%d+") ~= my_sid, "srun in a session of its own")
    end
    for _, j in ipairs(cl:jobs()) do T.ok(j.id == alloc or not LIVE[j.state], "no job but the allocation") end
    -- a third does not fit: it waits until one stops
    local third
    local t3 = rock.spawn(function() third = start{ slurm = step } end)
    rock.sleep(3)
    T.eq(third, nil, "the third waits for room in the allocation")
    sbs[1]:stop()
    rock.wait(t3)
    T.ok(third, "the third started once the first stopped")
    T.eq(third:execute{ command = "echo third" }.stdout, "third\n")
    -- one that waits past its startup_timeout: its srun gives up, Slurm's reason in the error
    local okt, et = pcall(start, { startup_timeout = 3, slurm = step })
    T.ok(not okt, "a fourth cannot start")
    T.eq(et.code, "timeout")
    -- (srun of Slurm 22.05 says why only after a minute: "Requested nodes are busy")
    T.match(et.message, "^slurm step of allocation " .. alloc .. " did not start in 3s: PENDING")
    T.wait_until("its srun ended", function() return sruns() == 2 end, 15)
    T.wait_until("the first's step gone", function()
      for _, id in ipairs(steps_of(alloc)) do if id == ids[1] then return false end end
      return true
    end, 20)
    -- scancel of a step from outside: node_lost, its status says why
    -- (Slurm SIGKILLs a step's processes at once: its server's state dir
    -- stays on the node, as a tmpfs per job (job_container/tmpfs) would not)
    local _, okc = cl:sh("scancel " .. ids[2])
    T.ok(okc, "scancel " .. ids[2])
    T.wait_until("the step ended", function()
      for _, id in ipairs(steps_of(alloc)) do if id == ids[2] then return false end end
      return true
    end, 30)
    T.raises("node_lost", sbs[2].execute, sbs[2], { command = "echo still" })
    T.ok(not sbs[2]:is_alive(), "not alive")
    T.match(sbs[2]:get_status().stop_reason, "slurm step " .. ids[2] .. " ended")
    sbs[2]:stop()
    T.must("rm -r " .. T.q(nodetmp) .. "/rock-slurm-" .. ids[2] .. "-" .. sbs[2].id)
    third:stop()
    T.wait_until("no step left", function() return #steps_of(alloc) == 0 end, 20)
    T.eq(#T.listdir(os.getenv("ROCK_HOME") .. "/sandboxes"), 0, "sandbox records")
    T.eq(sruns(), 0, "no srun left")
    -- kill -9 of a client with a running step, and of one whose step waits
    local running = client{ lease = 600, alloc = alloc, cpus = 8 }
    T.match(running, "^" .. alloc .. "%.%d+$")
    client{ lease = 600, alloc = alloc, cpus = 8, waiting = true } -- the allocation is full: this one waits
    T.eq(sruns(), 2, "both clients' sruns run on")
    local gout, gcode = rock_cli("gc")
    T.eq(gcode, 0, "rock gc: " .. gout)
    T.wait_until("no step left after gc", function() return #steps_of(alloc) == 0 end, 30)
    T.wait_until("no srun left after gc", function() return sruns() == 0 end, 30)
  end)
  cl:sh("scancel " .. alloc)
  if not ok_all then error(err, 0) end
  nothing_left("after the allocation")
end)

cl:down()
T.done()
