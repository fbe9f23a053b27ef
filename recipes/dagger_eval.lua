-- dagger_eval.lua: the DAgger evaluator. In rounds, every task is run by a
-- mixture of a student and a teacher policy (the teacher's action executed
-- with probability beta_r, a seeded draw), every turn labelled with the
-- teacher's action; finish-only trajectories reach the aggregated dataset;
-- a hook between rounds may train the student (docs/dagger.md).
--   rock recipes/dagger_eval.lua --instances FILE --out DIR
--     --student model|replay|oracle --teacher model|replay|oracle
--     [--student-model M] [--student-base-url U] [--student-replay FILE]
--     [--teacher-model M] [--teacher-base-url U] [--teacher-replay FILE]
--     [--rounds 3] [--beta-schedule exp|linear|const|@FILE.lua] [--beta0 1]
--     [--beta-decay 0.5] [--seed 0] [--between-rounds CMD|@FILE.lua]
--     [--nodes URL,...|@FILE] [--node-cpu 96] [--node-memory-gb 320]
--     [--node-gpu 0] [--sandbox-cpu 4] [--sandbox-memory-gb 16]
--     [--concurrency 4] [--backend slurm [--partition P] [--account A]
--      [--qos Q] [--constraint C] [--nodelist L] [--sbatch-arg X ...]
--      [--shared-dir D] [--node-backend E] [--queue-timeout S]]
--     [--dry-run] [--resume] [the agent recipe's flags]
-- Writes DIR/rounds/<r>/{trajectories,dataset,preds}.jsonl,
-- DIR/rounds/<r>/summary.json, DIR/dataset.jsonl, DIR/run.json and
-- DIR/report/ (the run as a static site, its rounds tabled and plotted,
-- refreshed as tasks finish; --no-report skips it: docs/report.md). --student-model may
-- name the round: 'name-r{round}'. --between-rounds CMD runs as
-- `sh -c 'CMD "$1"' sh DIR/dataset.jsonl` with ROCK_DAGGER_ROUND and
-- ROCK_DAGGER_OUT set, waited for; a failure ends the run (--resume runs
-- it again). A Lua function instead (a file that returns it): @FILE.lua
-- for --beta-schedule (function(r, R) -> beta) and for --between-rounds
-- (function(r, dataset_path, summary)). Ctrl-C or SIGTERM ends the
-- round's running tasks as aborted; --resume goes on from the round and
-- task reached. A flag that cannot work (an unknown schedule, a policy
-- that cannot be built) is said in one line, exit 2, nothing started.
local rock = require "rock"
local dagger = rock.agent.dagger

local usage = "rock recipes/dagger_eval.lua --instances FILE --out DIR --student P --teacher P [flags]"
local spec = {
  instances = { help = "SWE-bench tasks, JSONL" },
  out = { help = "output dir" },
  student = { default = "replay", help = "model|replay|oracle" },
  teacher = { default = "oracle", help = "model|replay|oracle" },
  student_model = { help = "the student's model; {round} is the round (default $ROCK_LLM_MODEL)" },
  student_base_url = { help = "the student's endpoint (default $ROCK_LLM_BASE_URL)" },
  student_replay = { help = "the student's replay file (--student replay)" },
  teacher_model = { help = "the teacher's model (default $ROCK_LLM_MODEL)" },
  teacher_base_url = { help = "the teacher's endpoint (default $ROCK_LLM_BASE_URL)" },
  teacher_replay = { help = "the teacher's replay file (--teacher replay)" },
  mode = { default = "tools", help = "model policies: tools | text" },
  rounds = { type = "number", default = 3, help = "rounds R" },
  beta_schedule = { default = "exp", help = "exp | linear | const | @FILE.lua (returns function(r, R) -> beta)" },
  beta0 = { type = "number", default = 1, help = "beta of round 1" },
  beta_decay = { type = "number", default = 0.5, help = "exp: beta_r = beta0 * decay^(r-1)" },
  seed = { type = "number", default = 0, help = "seed of the mixture's draws" },
  between_rounds = { help = "command run after each round but the last, given the aggregated dataset's path; @FILE.lua: a Lua function(r, dataset_path, summary)" },
  nodes = { help = "rock serve nodes: URL,URL,... or @FILE (the fleet; default $ROCK_NODES)" },
  node_cpu = { type = "number", default = 96, help = "CPUs per node" },
  node_memory_gb = { type = "number", default = 320, help = "GB of memory per node" },
  node_gpu = { type = "number", default = 0, help = "GPUs per node" },
  sandbox_cpu = { type = "number", default = 4, help = "CPUs per sandbox" },
  sandbox_memory_gb = { type = "number", default = 16, help = "GB of memory per sandbox" },
  concurrency = { type = "number", help = "sandbox starts at once per node (default $ROCK_ENV_CONCURRENCY, else 4)" },
  dry_run = { type = "boolean", default = false, help = "print the plan, start nothing" },
  workers = { type = "number", default = 0, help = "tasks run at once (default: the plan's sandboxes at once)" },
  backend = { default = "auto", help = "auto|docker|podman|local|slurm (--nodes: the fleet)" },
  strategy = { default = "spread", help = "with --nodes: spread (least used node) | pack (most used that fits)" },
  step_limit = { type = "number", default = 250, help = "steps per task (0 = none)" },
  cost_limit = { type = "number", default = 3, help = "USD per task, both policies (0 = none)" },
  token_limit = { type = "number", default = 0, help = "tokens per task (0 = none)" },
  wall_limit = { type = "number", default = 0, help = "seconds of agent time per task (0 = none)" },
  command_timeout = { type = "number", default = 60, help = "seconds per bash command" },
  memory = { help = "each sandbox's memory limit (default: --sandbox-memory-gb)" },
  pids_limit = { type = "number", help = "each sandbox's process limit (default 1024; 0 = none)" },
  disk = { help = "each sandbox's disk limit (default 10g; 0 = none)" },
  eval_in_place = { type = "boolean", default = false, help = "grade in the agent's sandbox" },
  no_eval = { type = "boolean", default = false, help = "do not grade" },
  resume = { type = "boolean", default = false, help = "go on from the round and task a killed run reached" },
  report = { type = "boolean", default = true, help = "write DIR/report/ (the run and its rounds as a static site) as tasks finish" },
}
-- --backend slurm: each sandbox a Slurm job; the agent recipe's flags (--partition, ...)
local slurm_backend = require "rock.backends.slurm"
for k, v in pairs(slurm_backend.FLAGS) do spec[k] = v end
local o = rock.flags.parse(arg, spec, usage)
if not o.instances or (not o.out and not o.dry_run) then
  io.stderr:write("dagger_eval: --instances and --out are required\nusage: ", usage, "\n")
  os.exit(2)
end

-- a flag that cannot work: one line, exit 2, nothing started
local function refuse(fmt, ...)
  io.stderr:write("dagger_eval: ", string.format(fmt, ...), "\n")
  os.exit(2)
end
local function message(err) return rock.errors.is(err) and err.message or tostring(err) end

-- the function a Lua file returns (--beta-schedule @FILE, --between-rounds @FILE)
local function lua_function(flag, spec)
  local path = spec:sub(2)
  local chunk, why = loadfile(path)
  if not chunk then refuse("%s: %s", flag, why) end
  local ok, f = pcall(chunk)
  if not ok then refuse("%s: %s: %s", flag, path, message(f)) end
  if type(f) ~= "function" then refuse("%s: %s returns a %s, not a function", flag, path, type(f)) end
  return f
end

local tasks, bad = rock.agent.tasks.load(o.instances)
for _, e in ipairs(bad) do
  io.stderr:write(string.format("dagger_eval: %s line %d: %s (skipped)\n", o.instances, e.line, e.message))
end

local nodes_spec = o.nodes or os.getenv("ROCK_NODES")
local node_list
if nodes_spec and nodes_spec ~= "" then
  local ok_n, list = pcall(rock.fleet.parse_nodes, nodes_spec)
  if not ok_n then refuse("%s", message(list)) end
  node_list = list
end
local concurrency = o.concurrency or math.tointeger(tonumber(os.getenv("ROCK_ENV_CONCURRENCY") or "")) or 4
if not math.tointeger(concurrency) or concurrency < 1 then refuse("--concurrency: a whole number from 1 up, got %s", concurrency) end
concurrency = math.tointeger(concurrency)
local kind = o.beta_schedule
if kind:sub(1, 1) == "@" then kind = lua_function("--beta-schedule", kind)
elseif not dagger.schedule.KINDS[kind] then
  refuse("--beta-schedule: expected exp, linear, const or @FILE.lua (a Lua file returning function(r, R) -> beta), got %s", kind)
end
local schedule = dagger.schedule.new(kind, { beta0 = o.beta0, decay = o.beta_decay, rounds = o.rounds })
-- every round's beta, checked before anything starts (a function's too)
local betas = {}
for r = 1, o.rounds do
  local ok, b = pcall(schedule, r)
  if not ok then refuse("--beta-schedule %s: %s", o.beta_schedule, message(b)) end
  betas[r] = b
end

local slurm = o.backend == "slurm"
if node_list and slurm then refuse("--backend slurm and --nodes (or ROCK_NODES) exclude each other") end
local ok_flags, slurm_opts = pcall(slurm_backend.from_flags, o, o.backend)
if not ok_flags then refuse("%s", message(slurm_opts)) end
local ok_p, plan = pcall(dagger.budget.plan, { node_cpu = o.node_cpu, node_memory_gb = o.node_memory_gb,
  node_gpu = o.node_gpu, sandbox_cpu = o.sandbox_cpu, sandbox_memory_gb = o.sandbox_memory_gb,
  concurrency = concurrency, nodes = node_list and #node_list or (not slurm and 1 or nil),
  slurm = slurm and slurm_opts.slurm or nil, tasks = #tasks, workers = o.workers > 0 and o.workers or nil })
if not ok_p then refuse("%s", message(plan)) end

if o.dry_run then
  print(dagger.budget.describe(plan, node_list and "fleet: " .. nodes_spec
    or slurm and "Slurm places each sandbox as a job; per node as below"
    or (o.backend .. " engine")))
  local shown = {}
  for r = 1, o.rounds do shown[r] = string.format("%.4g", betas[r]) end
  print(string.format("rounds: %d; beta (%s): %s; seed %d", o.rounds, o.beta_schedule, table.concat(shown, ", "), o.seed))
  os.exit(0)
end

-- a policy factory for one side, round r
local function policy(side, r)
  local name = o[side]
  if name == "model" then
    local model = o[side .. "_model"]
    if model then model = model:gsub("{round}", tostring(r)) end
    local llm = rock.llm.new{ model = model, base_url = o[side .. "_base_url"] }
    return rock.agent.policy("model", { llm = llm, mode = o.mode })
  end
  if name == "replay" and not o[side .. "_replay"] then refuse("--%s replay needs --%s-replay FILE", side, side) end
  return rock.agent.policy(name, { replay = o[side .. "_replay"] })
end
-- both built before anything starts (round 1's student is the one built here)
local ok_t, teacher = pcall(policy, "teacher", 1)
if not ok_t then refuse("the teacher (--teacher %s): %s", o.teacher, message(teacher)) end
local ok_s, student1 = pcall(policy, "student", 1)
if not ok_s then refuse("the student (--student %s): %s", o.student, message(student1)) end

local backend, sandbox, pool = o.backend, { memory = o.memory or (math.floor(o.sandbox_memory_gb) .. "g"),
  pids_limit = o.pids_limit, disk = o.disk }, nil
for k, v in pairs(slurm_opts) do sandbox[k] = v end
-- a fleet node and Slurm account each sandbox's CPUs (admission, the
-- job's --cpus-per-task); on one machine they are no limit (docker would
-- refuse more than the machine has). Starts: --concurrency per node (the
-- pool places none on a node with that many in flight), under the run's
-- semaphore of nodes x concurrency
if node_list then
  pool = rock.fleet.pool{ nodes = node_list, strategy = o.strategy, max_starting = concurrency }
  backend, sandbox.fleet, sandbox.cpus = "fleet", pool, o.sandbox_cpu
elseif slurm then
  sandbox.cpus = o.sandbox_cpu
end

local hook
if o.between_rounds and o.between_rounds:sub(1, 1) == "@" then
  hook = lua_function("--between-rounds", o.between_rounds)
elseif o.between_rounds then
  hook = function(r, path)
    local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
    local cmd = string.format("ROCK_DAGGER_ROUND=%d ROCK_DAGGER_OUT=%s sh -c %s sh %s", r, q(o.out), q(o.between_rounds .. ' "$1"'), q(path))
    local ok, how, code = os.execute(cmd)
    if not ok then
      rock.errors.raise("hook_failed", string.format("--between-rounds after round %d: %s %s", r, tostring(how), tostring(code)))
    end
  end
end

-- the report (docs/report.md): run.json once the run holds DIR, a task's
-- page as it ends and the index (with the rounds) every few seconds, all
-- at the end
local report = require("rock.report").for_run(o, "dagger_eval.lua")

local ok, summaries, interrupted = pcall(dagger.run, tasks, {
  out = o.out, rounds = o.rounds, schedule = schedule, seed = o.seed, resume = o.resume,
  student = function(r) return r == 1 and student1 or policy("student", r) end, teacher = teacher, between_rounds = hook,
  on_round = function(s) print(dagger.records.table(s)) end,
  agent = { workers = plan.at_once, backend = backend, sandbox = sandbox, start_concurrency = plan.starts_at_once,
    step_limit = o.step_limit, cost_limit = o.cost_limit, token_limit = o.token_limit,
    wall_limit = o.wall_limit, command_timeout = o.command_timeout,
    eval = o.no_eval and "none" or (o.eval_in_place and "in_place" or "fresh"),
    on_trajectory = report and function(traj) report:task_done(traj) end or nil },
})
if pool then pool:close() end
if report then report:finish() end
if not ok then -- a hook that failed, a run already on --out, a resume refused: said, exit 1
  io.stderr:write("dagger_eval: ", rock.errors.is(summaries) and summaries.message or tostring(summaries), "\n")
  os.exit(1)
end
if not interrupted then
  local n = #rock.agent.output.read_jsonl(o.out .. "/dataset.jsonl")
  print(string.format("dataset: %d records in %s/dataset.jsonl (%d rounds)", n, o.out, #summaries))
end
-- interrupted: the host exits 128+signal by itself (rock.on_signal)
if #bad > 0 and not interrupted then os.exit(1) end
