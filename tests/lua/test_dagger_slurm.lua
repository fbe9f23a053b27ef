-- test_dagger_slurm.lua: recipes/dagger_eval.lua --backend slurm on a
-- real 3-node Slurm cluster started here (tests/slurm/cluster; each node
-- CPUs=96 RealMemory=327680, the evaluator's budget) and stopped after:
-- the two rounds of test_dagger.lua (a failing replay student, the oracle
-- teacher, beta0 1, exp decay 0.5, seed 7), each sandbox a Slurm job of
-- 4 CPU / 16 GB running the local backend on its node, give the same
-- records as the same rounds on this machine; every job is gone after.
-- --dry-run counts the partition's nodes as Slurm has them (3: 60 at
-- once). Exits 77 (a skip for ctest) without Slurm or root.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local C = dofile(here .. "../slurm/cluster.lua")
local json = rock.json
local dagger = rock.agent.dagger

local cl, why = C.up()
if not cl then
  print("SKIP test_dagger_slurm: " .. why)
  os.exit(77) -- ctest: SKIP_RETURN_CODE (tests/CMakeLists.txt)
end

-- No engine here (the local backend on the nodes and on this machine):
-- every rock process, each job's `rock serve` too (sbatch passes this
-- environment on), would otherwise sweep the shared docker and podman at
-- its start (gc.once), stalling on one another test keeps busy.
rock.uv.os_setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
rock.uv.os_setenv("ROCK_PODMAN_SOCKET", "/nonexistent/podman.sock")

local root = T.sh("mktemp -d " .. (os.getenv("TMPDIR") or "/tmp") .. "/rock-dagger-slurm.XXXXXX"):gsub("%s+$", "")
local rock_exe = T.rock_exe()
local recipe = T.sh("cd " .. here .. "../.. && pwd"):gsub("%s+$", "") .. "/recipes/dagger_eval.lua"
local shared = os.getenv("ROCK_HOME") .. "/slurm-shared"

local GOLD = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"

local tasks = {}
for i = 1, 6 do
  tasks[i] = T.git_task(string.format("%s/repo%d", root, i), { ["calc.py"] = "def add(a, b):\n    return a - b\n" },
    { instance_id = "slurm-" .. i, problem_statement = "add() subtracts.", patch = GOLD })
end

local function write_jsonl(path, list)
  local lines = {}
  for i, v in ipairs(list) do lines[i] = json.encode(v) end
  T.write(path, table.concat(lines, "\n") .. "\n")
  return path
end

local replay = {}
for i, t in ipairs(tasks) do
  local wrong = { tool = "str_replace_editor", command = "str_replace", path = t.repo_dir .. "/calc.py",
    old_str = "return a - b", new_str = "return a * b" }
  replay[i] = { instance_id = t.instance_id, actions = i % 2 == 1
    and { { tool = "bash", command = "grep -n 'a - b' calc.py" }, wrong, { tool = "submit" } }
    or { wrong, { tool = "submit" } } }
end
local rf = write_jsonl(root .. "/replay.jsonl", replay)
local tf = write_jsonl(root .. "/tasks.jsonl", tasks)

local function jsonl(path)
  local list = {}
  for l in io.lines(path) do list[#list + 1] = json.decode(l) end
  return list
end

-- what a trajectory did, for comparing two runs: who executed each turn, the end
local function shape(tr)
  local by = {}
  for i, rec in ipairs(tr.dagger.turns) do by[i] = rec.executed_by .. (rec.agree and "+" or "-") end
  return table.concat(by, ",") .. "#" .. tr.termination_reason
end

-- a decoded JSON value as text with sorted keys (two runs' key orders differ)
local function canon(v)
  if type(v) ~= "table" then return json.encode(v) end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = tostring(k) .. "=" .. canon(v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

local LIVE = { RUNNING = true, PENDING = true, CONFIGURING = true, COMPLETING = true }

T.test("--dry-run with --backend slurm: the per-node plan, nothing submitted", function()
  local log, ok = T.sh(string.format("SLURM_CONF=%s %s %s --instances %s --backend slurm --dry-run",
    cl.conf, rock_exe, recipe, tf))
  T.ok(ok, log)
  T.match(log, "Slurm places each sandbox")
  T.match(log, "capacity: 20 per node %(memory binds")
  T.match(log, "nodes: 3 %(Slurm", "the partition's 3 nodes, as sinfo says")
  -- 70 tasks: 60 at once, 20 on each of the 3 nodes
  local many = {}
  for i = 1, 70 do
    local t = {}
    for k, v in pairs(tasks[1]) do t[k] = v end
    t.instance_id = "many-" .. i
    many[i] = t
  end
  local mf = write_jsonl(root .. "/many.jsonl", many)
  log, ok = T.sh(string.format("SLURM_CONF=%s %s %s --instances %s --backend slurm --dry-run", cl.conf, rock_exe, recipe, mf))
  T.ok(ok, log)
  T.match(log, "sandboxes at once: 60;")
  log, ok = T.sh(string.format("SLURM_CONF=%s %s %s --instances %s --backend slurm --nodelist 'n[1-2]' --dry-run",
    cl.conf, rock_exe, recipe, mf))
  T.ok(ok, log)
  T.match(log, "nodes: 2 %(")
  T.match(log, "sandboxes at once: 40;")
  log, ok = T.sh(string.format("SLURM_CONF=%s %s %s --instances %s --backend slurm --partition nope --dry-run",
    cl.conf, rock_exe, recipe, mf))
  T.ok(ok, log)
  T.match(log, "nodes: 1 %(.*Slurm did not say how many")
  T.eq(#cl:jobs(), 0, "no job submitted")
  -- the agent recipe's Slurm flags, refused without --backend slurm, or with a fleet
  log, ok = T.sh(string.format("%s %s --instances %s --out %s/no --partition p 2>&1", rock_exe, recipe, tf, root))
  T.ok(not ok, log); T.match(log, "%-%-partition is for %-%-backend slurm")
  log, ok = T.sh(string.format("%s %s --instances %s --out %s/no --backend slurm --nodes http://127.0.0.1:1 2>&1",
    rock_exe, recipe, tf, root))
  T.ok(not ok, log); T.match(log, "exclude each other")
end)

T.test("the two rounds on the Slurm cluster: every sandbox a job, the same records as on this machine", function()
  local out = root .. "/out-slurm"
  local log, ok = T.sh(string.format("cd %s && SLURM_CONF=%s %s %s --instances %s --out %s --student replay "
    .. "--student-replay %s --teacher oracle --rounds 2 --seed 7 --no-eval --workers 6 --backend slurm "
    .. "--node-backend local --shared-dir %s 2>&1",
    root, cl.conf, rock_exe, recipe, tf, out, rf, shared))
  T.ok(ok, log)
  T.match(log, "round 2 %(beta 0.5%)")
  -- the same rounds on this machine (the library, the local backend)
  local here_out = root .. "/out-local"
  dagger.run(tasks, { out = here_out, rounds = 2, seed = 7,
    student = rock.agent.policy("replay", { replay = rf }), teacher = rock.agent.policy("oracle"),
    agent = { backend = "local", eval = "none", progress = false, workers = 3 } })
  -- Slurm's own view (squeue keeps ended jobs a while): a job per sandbox, named after it
  local job_of = {}
  for _, j in ipairs(cl:jobs()) do
    local id = j.name:match("^rock%-(.+)$")
    if id then job_of[id] = j end
  end
  for r = 1, 2 do
    local mine = {}
    for _, tr in ipairs(jsonl(string.format("%s/rounds/%d/trajectories.jsonl", here_out, r))) do mine[tr.instance_id] = tr end
    local trajs = jsonl(string.format("%s/rounds/%d/trajectories.jsonl", out, r))
    T.eq(#trajs, 6)
    for _, tr in ipairs(trajs) do
      T.eq(tr.sandbox.backend, "slurm", "a Slurm sandbox")
      local j = job_of[tr.sandbox.id]
      T.ok(j, "Slurm ran " .. tr.instance_id .. "'s sandbox as a job: " .. json.encode(tr.sandbox))
      T.ok(({ n1 = true, n2 = true, n3 = true })[tr.sandbox.node], "a cluster node: " .. tostring(tr.sandbox.node))
      T.eq(tr.sandbox.node, j.node, "the node Slurm says")
      T.eq(shape(tr), shape(mine[tr.instance_id]), tr.instance_id .. " round " .. r)
    end
    local a = canon(jsonl(string.format("%s/rounds/%d/dataset.jsonl", out, r)))
    T.ok(#a > 10, "records written")
    T.eq(a, canon(jsonl(string.format("%s/rounds/%d/dataset.jsonl", here_out, r))), "round " .. r .. "'s records, line for line")
  end
  T.eq(canon(jsonl(out .. "/dataset.jsonl")), canon(jsonl(here_out .. "/dataset.jsonl")), "the aggregated dataset, line for line")
  T.wait_until("no live job", function()
    for _, j in ipairs(cl:jobs()) do if LIVE[j.state] then return false end end
    return true
  end, 30)
  T.eq(#T.listdir(shared), 0, "nothing left in the shared dir")
end)

cl:down()
T.sh("rm -rf " .. root)
T.done()
