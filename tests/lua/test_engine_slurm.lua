-- test_engine_slurm.lua: the agent on a real 3-node Slurm cluster started
-- here (tests/slurm/cluster) and stopped after: recipes/swe_agent.lua
-- --backend slurm works the demo tasks with the oracle, every sandbox
-- (the agent's and the fresh eval's) a Slurm job whose `rock serve`
-- runs it in docker on its node. --sbatch-arg --exclusive and
-- --exclude=n3 leave room for two jobs at once, so of three workers one
-- waits in Slurm's queue: the log says so, every task still resolves.
-- recipes/swe_eval.lua --backend slurm grades the gold patches so.
-- recipes/slurm/serve.sbatch on a 3-node allocation serves a 3-node
-- rock.fleet pool (docker on the nodes); scancel leaves nothing; a
-- server that cannot start fails the job with its words. A job scancelled
-- with its sandbox a docker container: the job's server stops it first,
-- none is left. swe_eval --allocation: each grade an srun step of an
-- allocation the user holds.
-- Needs the engines fixture and the demo images (recipes/demo/build-image);
-- exits 77 (a skip for ctest) without Slurm or root.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local C = dofile(here .. "../slurm/cluster.lua")
local json = rock.json
local q = T.q

local cl, why = C.up()
if not cl then
  print("SKIP test_engine_slurm: " .. why)
  os.exit(77) -- ctest: SKIP_RETURN_CODE (tests/CMakeLists.txt)
end

local demo = here .. "../../recipes/demo/"
local home = os.getenv("ROCK_HOME")
local shared = home .. "/slurm-shared"
local LIVE = { RUNNING = true, PENDING = true, CONFIGURING = true, COMPLETING = true }
local function live_jobs()
  local n = 0
  for _, j in ipairs(cl:jobs()) do if LIVE[j.state] then n = n + 1 end end
  return n
end

-- containers a job's server made (their rock.dir is under the job's
-- ROCK_HOME: rock-slurm-JOB-ID (or JOB.STEP-ID) for the backend's, rock-serve-JOB-NODE-PID for serve.sbatch's)
local function containers_of(jobs, kind)
  local out = T.sh("docker ps -a --format '{{.Label \"rock.dir\"}}'")
  local n = 0
  for dir in out:gmatch("[^\n]+") do
    local id = dir:match("/rock%-" .. (kind or "slurm") .. "%-(%d+[%.%d]*)[/-]")
    if id and jobs[id] then n = n + 1 end
  end
  return n
end

T.test("swe_agent --backend slurm: the oracle resolves the demo tasks; a queued task waits its turn", function()
  local tasks = rock.agent.tasks.load(demo .. "tasks.jsonl")
  local out = home .. "/out"
  local log, ok = T.sh(string.format("SLURM_CONF=%s %s %s --instances %s --policy oracle --out %s " ..
    "--backend slurm --workers 3 --partition rock --node-backend docker --shared-dir %s " ..
    "--sbatch-arg --exclusive --sbatch-arg=--exclude=n3 --queue-timeout 300",
    q(cl.conf), q(T.rock_exe()), q(here .. "../../recipes/swe_agent.lua"), q(demo .. "tasks.jsonl"),
    q(out), q(shared)))
  local jobs = {}
  local okc, err = pcall(function()
    T.ok(ok, "swe_agent ran: " .. log)
    if os.getenv("SHOWLOG") then print(log) end
    T.match(log, "resolved%s+" .. #tasks)
    -- the job behind the one that waits for room waits for it (Priority)
    T.ok(log:find(": queued %(job %d+ PENDING %(Resources%)%)") or log:find(": queued %(job %d+ PENDING %(Priority%)%)"),
      "the log shows a task waiting in Slurm's queue: " .. log)
    local n = 0
    for line in io.lines(out .. "/trajectories.jsonl") do
      local tr = json.decode(line)
      n = n + 1
      T.eq(tr.termination_reason, "finish", tr.instance_id)
      T.eq(tr.eval.status, "resolved", tr.instance_id)
      T.eq(tr.sandbox.backend, "slurm")
      T.match(tr.sandbox.image, "^rock%-demo/")
      T.match(tr.sandbox.slurm_job_id, "^%d+$", "the job id in the trajectory")
      T.ok(tr.sandbox.node == "n1" or tr.sandbox.node == "n2", "placed off n3: " .. tostring(tr.sandbox.node))
      jobs[tr.sandbox.slurm_job_id] = true
    end
    T.eq(n, #tasks)
  end)
  T.wait_until("no live job", function() return live_jobs() == 0 end, 30)
  T.eq(containers_of(jobs), 0, "no container of the jobs left")
  T.eq(#T.listdir(shared), 0, "nothing left in the shared dir")
  if not okc then error(err, 0) end
end)

T.test("scancel of a job whose sandbox is a docker container: its server stops it first, no container left", function()
  local sb = rock.sandbox.start{ backend = "slurm", image = "rock-test/debian:12", cpus = 1, memory = "1g",
    startup_timeout = 120, slurm = { conf = cl.conf, node_backend = "docker", node_address = "127.0.0.1",
      shared_dir = shared } }
  local id = sb:get_status().slurm_job_id
  local okc, err = pcall(function()
    T.eq(sb:execute{ command = "echo up" }.stdout, "up\n")
    T.eq(containers_of({ [id] = true }), 1, "its container runs")
    local _, ok = cl:sh("scancel " .. id)
    T.ok(ok, "scancel " .. id)
    T.wait_until("job " .. id .. " ended", function() return live_jobs() == 0 end, 30)
    T.eq(containers_of({ [id] = true }), 0, "no container left: the server stopped it before Slurm's KILL")
    T.raises("node_lost", sb.execute, sb, { command = "true" })
    T.match(sb:get_status().stop_reason, "slurm job " .. id .. " is CANCELLED")
  end)
  sb:stop()
  if not okc then error(err, 0) end
  T.eq(#T.listdir(shared), 0, "nothing left in the shared dir")
end)

-- processes of job id still running (srun passes the job's id in their environment)
local function processes_of(id)
  local out = T.sh("grep -lx 'SLURM_JOB_ID=" .. id .. "' --null-data /proc/[0-9]*/environ 2>/dev/null || true")
  local n = 0
  for _ in out:gmatch("/proc/%d+/environ") do n = n + 1 end
  return n
end

T.test("swe_eval --backend slurm: the gold patches resolve, each graded in a Slurm job", function()
  local tasks = rock.agent.tasks.load(demo .. "tasks.jsonl")
  local pf = home .. "/gold.jsonl"
  local lines = {}
  for _, t in ipairs(tasks) do
    lines[#lines + 1] = json.encode{ instance_id = t.instance_id, model_name_or_path = "gold", model_patch = t.patch }
  end
  T.write(pf, table.concat(lines, "\n") .. "\n")
  local out = home .. "/eval-out"
  local log, ok = T.sh(string.format("SLURM_CONF=%s %s %s --instances %s --predictions %s --out %s " ..
    "--backend slurm --workers 3 --node-backend docker --shared-dir %s --nodelist n2",
    q(cl.conf), q(T.rock_exe()), q(here .. "../../recipes/swe_eval.lua"), q(demo .. "tasks.jsonl"), q(pf),
    q(out), q(shared)))
  T.ok(ok, "swe_eval ran: " .. log)
  if os.getenv("SHOWLOG") then print(log) end
  local rep = json.decode(T.read(out .. "/report.json"))
  T.eq(rep.resolved_instances, #tasks)
  T.eq(rep.error_instances, 0)
  T.wait_until("no live job", function() return live_jobs() == 0 end, 30)
  T.eq(#T.listdir(shared), 0, "nothing left in the shared dir")
end)

T.test("swe_eval --backend slurm --allocation: each graded in an srun step of an allocation the user holds", function()
  local out, okb = T.sh(string.format("SLURM_CONF=%s sbatch --parsable --nodelist=n3 --cpus-per-task=8 --mem=32G " ..
    "--output=/dev/null --wrap 'sleep 600'", q(cl.conf)))
  T.ok(okb, "the allocation: " .. out)
  local alloc = out:match("(%d+)")
  local okc, err = pcall(function()
    -- held as salloc holds it: granted before it is used
    T.wait_until("the allocation runs", function()
      for _, j in ipairs(cl:jobs()) do if j.id == alloc then return j.state == "RUNNING" end end
    end, 30)
    local tasks = rock.agent.tasks.load(demo .. "tasks.jsonl")
    local pf = home .. "/gold-steps.jsonl"
    local lines = {}
    for _, t in ipairs(tasks) do
      lines[#lines + 1] = json.encode{ instance_id = t.instance_id, model_name_or_path = "gold", model_patch = t.patch }
    end
    T.write(pf, table.concat(lines, "\n") .. "\n")
    local dir = home .. "/eval-steps"
    local log, ok = T.sh(string.format("SLURM_CONF=%s %s %s --instances %s --predictions %s --out %s " ..
      "--backend slurm --workers 3 --node-backend docker --shared-dir %s --allocation %s",
      q(cl.conf), q(T.rock_exe()), q(here .. "../../recipes/swe_eval.lua"), q(demo .. "tasks.jsonl"), q(pf),
      q(dir), q(shared), alloc))
    T.ok(ok, "swe_eval ran: " .. log)
    if os.getenv("SHOWLOG") then print(log) end
    local rep = json.decode(T.read(dir .. "/report.json"))
    T.eq(rep.resolved_instances, #tasks)
    T.eq(rep.error_instances, 0)
    for _, j in ipairs(cl:jobs()) do -- (ids grow: a job of a grade's own would come after the allocation)
      T.ok(tonumber(j.id) <= tonumber(alloc), "no job of its own: " .. j.id)
    end
    local steps = T.sh(string.format("SLURM_CONF=%s squeue -h -s -j %s -o %%i", q(cl.conf), alloc))
    T.ok(not steps:find(alloc .. "%.%d"), "no step left: " .. steps)
  end)
  T.sh(string.format("SLURM_CONF=%s scancel %s", q(cl.conf), alloc))
  T.wait_until("no live job", function() return live_jobs() == 0 end, 30)
  T.eq(#T.listdir(shared), 0, "nothing left in the shared dir")
  if not okc then error(err, 0) end
end)

T.test("serve.sbatch: rock serve on the allocation's 3 nodes is a 3-node fleet pool; scancel leaves nothing", function()
  local nodefile = shared .. "/nodes"
  T.must("mkdir -p " .. q(shared))
  local out, ok = cl:sh(string.format("ROCK=%s sbatch --parsable --nodes=3 --exclusive --output=%s %s %s --backend docker",
    q(T.rock_exe()), q(home .. "/serve.out"), q(here .. "../../recipes/slurm/serve.sbatch"), q(nodefile)))
  T.ok(ok, "sbatch: " .. out)
  local id = out:match("^(%d+)")
  local sbs = {}
  local okc, err = pcall(function()
    T.wait_until("the node file", function() return T.read(nodefile) ~= nil end, 60)
    T.match(T.sh("stat -c %a " .. q(nodefile)), "^600", "the node file is owner-only")
    local list = rock.fleet.parse_nodes("@" .. nodefile)
    T.eq(#list, 3, "a line per node")
    T.ok(list[1].token and list[1].token == list[3].token, "one token for the allocation")
    local pool = rock.fleet.pool{ nodes = "@" .. nodefile, strategy = "spread" }
    for i = 1, 3 do sbs[i] = pool:start{ image = "rock-test/debian:12", cpus = 1, memory = "1g" } end
    local urls = {}
    for _, sb in ipairs(sbs) do
      urls[sb.node_url] = true
      T.eq(sb:execute{ command = "echo up" }.stdout, "up\n")
    end
    T.eq((function() local c = 0 for _ in pairs(urls) do c = c + 1 end return c end)(), 3, "one on each node")
    for _, n in ipairs(pool:report().nodes) do -- each budget is Slurm's view of its node
      T.eq(n.report.budget.cpus, 96, n.url .. "'s CPUs")
      T.eq(n.report.budget.memory_gb, 320, n.url .. "'s memory")
    end
    T.eq(containers_of({ [id] = true }, "serve"), 3, "3 containers, one per node's server")
    pool:close()
    -- the allocation's end: every server stops its sandboxes and exits
    local _, cok = cl:sh("scancel " .. id)
    T.ok(cok, "scancel")
    T.wait_until("the allocation ended", function() return live_jobs() == 0 end, 30)
    T.wait_until("no process of the job", function() return processes_of(id) == 0 end, 15)
    T.eq(containers_of({ [id] = true }, "serve"), 0, "no container left")
    T.eq(T.sh("ls -d /tmp/rock-serve-" .. id .. "-* " .. q((os.getenv("TMPDIR") or "/tmp") .. "/rock-serve-" .. id) ..
      "-* 2>/dev/null || true"), "", "no node state dir left")
    T.eq(#T.listdir(shared), 0, "the node file and its parts removed")
    for _, sb in ipairs(sbs) do T.raises("node_lost", sb.execute, sb, { command = "true" }) end
  end)
  for _, sb in ipairs(sbs) do pcall(sb.stop, sb) end
  if id then cl:sh("scancel " .. id) end
  if not okc then error(err, 0) end
end)

T.test("serve.sbatch: a server that cannot start ends the job with its words; nothing left", function()
  local nodefile = shared .. "/nodes"
  T.must("mkdir -p " .. q(shared))
  local outf = home .. "/serve-bad.out"
  local out, ok = cl:sh(string.format("ROCK=%s sbatch --parsable --nodes=2 --output=%s %s %s --no-such-flag",
    q(T.rock_exe()), q(outf), q(here .. "../../recipes/slurm/serve.sbatch"), q(nodefile)))
  T.ok(ok, "sbatch: " .. out)
  local id = out:match("^(%d+)")
  T.wait_until("the job ended", function() return live_jobs() == 0 end, 30)
  local st
  for _, j in ipairs(cl:jobs()) do if j.id == id then st = j.state end end
  T.eq(st, "FAILED")
  T.match(T.read(outf), "unknown flag %-%-no%-such%-flag")
  T.match(T.read(outf), "serve.sbatch: a node's rock serve did not start")
  T.wait_until("no process of the job", function() return processes_of(id) == 0 end, 15)
  T.eq(#T.listdir(shared), 0, "no node file, no parts")
  T.eq(T.sh("ls -d /tmp/rock-serve-" .. id .. "-* 2>/dev/null || true"), "", "no node state dir left")
end)

T.test("swe_agent: a Slurm flag without --backend slurm, or with a pool, is refused", function()
  local log, ok = T.sh(string.format("%s %s --instances %s --out %s --backend local --partition rock",
    q(T.rock_exe()), q(here .. "../../recipes/swe_agent.lua"), q(demo .. "tasks.jsonl"), q(home .. "/out2")))
  T.ok(not ok, "refused")
  T.match(log, "%-%-partition is for %-%-backend slurm")
  log, ok = T.sh(string.format("ROCK_NODES=http://127.0.0.1:9 %s %s --instances %s --out %s --backend slurm",
    q(T.rock_exe()), q(here .. "../../recipes/swe_agent.lua"), q(demo .. "tasks.jsonl"), q(home .. "/out3")))
  T.ok(not ok, "refused")
  T.match(log, "%-%-backend slurm and %-%-nodes %(or ROCK_NODES%) exclude each other")
end)

cl:down()
T.done()
