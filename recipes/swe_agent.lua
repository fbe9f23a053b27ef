-- swe_agent.lua: an agent works SWE tasks, each in its own sandbox; every
-- patch is graded as SWE-bench grades it; the trajectories are kept.
--   rock recipes/swe_agent.lua --instances FILE --policy oracle|replay|model
--     [--replay FILE] --out DIR [--workers N] [--backend auto|docker|podman|local]
--     [--nodes URL,...|@FILE [--strategy spread|pack]]
--     [--step-limit N] [--cost-limit X] [--memory 8g] [--pids-limit 1024]
--     [--disk 10g] [--resume] [--finish-only] ...
--     [--backend slurm [--partition P] [--account A] [--qos Q] [--constraint C]
--      [--nodelist L] [--sbatch-arg X ...] [--shared-dir D]
--      [--node-backend auto|docker|podman|local] [--queue-timeout S]]   (docs/clusters.md)
-- Writes DIR/trajectories.jsonl, DIR/preds.jsonl, DIR/summary.json and
-- DIR/eval/<instance_id>.log (docs/agent.md), DIR/run.json (the run's
-- flags, secrets as names only) and DIR/report/ (rock report's site,
-- refreshed as tasks finish; --no-report skips it: docs/report.md). Ctrl-C or SIGTERM ends the
-- running tasks as `aborted` (written, their sandboxes stopped); --resume
-- then runs what is left. A second run on a DIR in use (--resume too) is
-- refused at once (conflict, exit 1): DIR/.lock is held while a run lives.
local rock = require "rock"

local usage = "rock recipes/swe_agent.lua --instances FILE --policy oracle|replay|model [--replay FILE] --out DIR [flags]"
local spec = {
  instances = { help = "SWE-bench tasks, JSONL" },
  policy = { default = "oracle", help = "oracle|replay|model" },
  replay = { help = "replay file (--policy replay)" },
  out = { help = "output dir" },
  workers = { type = "number", default = 1, help = "tasks run at once" },
  backend = { default = "auto", help = "auto|docker|podman|local|slurm" },
  nodes = { help = "run the sandboxes on these `rock serve` nodes, URL,URL,... or @FILE " ..
    "(default $ROCK_NODES; rock.fleet places each; tokens from the file or $ROCK_API_TOKEN)" },
  strategy = { default = "spread", help = "with --nodes: spread (least used node) | pack (most used that fits)" },
  cpus = { type = "number", help = "each sandbox's CPUs, as a node budgets them (default 2)" },
  step_limit = { type = "number", default = 250, help = "steps per task (0 = none)" },
  cost_limit = { type = "number", default = 3, help = "USD per task (0 = none)" },
  token_limit = { type = "number", default = 0, help = "tokens per task (0 = none)" },
  wall_limit = { type = "number", default = 0, help = "seconds of agent time per task (0 = none)" },
  command_timeout = { type = "number", default = 60, help = "seconds per bash command" },
  memory = { help = "each sandbox's memory limit, e.g. 4g (default 8g; 0 = none; a task's own field wins)" },
  pids_limit = { type = "number", help = "each sandbox's process limit (default 1024; 0 = none)" },
  disk = { help = "each sandbox's disk limit, e.g. 20g (default 10g; 0 = none)" },
  mode = { default = "tools", help = "model policy: tools (tool calls) | text (one ```bash block)" },
  model = { help = "model name (default $ROCK_LLM_MODEL)" },
  base_url = { help = "OpenAI-compatible endpoint (default $ROCK_LLM_BASE_URL)" },
  eval_in_place = { type = "boolean", default = false, help = "grade in the agent's sandbox, not a fresh one" },
  no_eval = { type = "boolean", default = false, help = "do not grade" },
  keep_on_failure = { type = "boolean", default = false, help = "keep an aborted task's sandbox for debugging" },
  resume = { type = "boolean", default = false, help = "skip tasks already in DIR/trajectories.jsonl" },
  finish_only = { type = "boolean", default = false, help = "also write DIR/finished.jsonl: finish trajectories only" },
  report = { type = "boolean", default = true, help = "write DIR/report/ (the run as a static site) as tasks finish" },
}
-- --backend slurm: each sandbox a Slurm job; its flags (--partition, ...)
local slurm = require "rock.backends.slurm"
for k, v in pairs(slurm.FLAGS) do spec[k] = v end
local o = rock.flags.parse(arg, spec, usage)
local sandbox = { memory = o.memory, pids_limit = o.pids_limit, disk = o.disk, cpus = o.cpus }
for k, v in pairs(slurm.from_flags(o, o.backend)) do sandbox[k] = v end
if not o.instances or not o.out then
  io.stderr:write("swe_agent: --instances and --out are required\nusage: ", usage, "\n")
  os.exit(2)
end

local tasks, bad = rock.agent.tasks.load(o.instances)
for _, e in ipairs(bad) do
  io.stderr:write(string.format("swe_agent: %s line %d: %s (skipped)\n", o.instances, e.line, e.message))
end

local llm
if o.policy == "model" then
  llm = rock.llm.new{ model = o.model, base_url = o.base_url }
end
-- the report: run.json once the run holds DIR (its first finished task),
-- a task's page as it ends and the index every few seconds, all at the end
local report = require("rock.report").for_run(o, "swe_agent.lua")

-- --nodes: one pool places every sandbox, the agent's and the grader's
local nodes = o.nodes or os.getenv("ROCK_NODES")
if o.backend == "slurm" and nodes and nodes ~= "" then -- Slurm places, or a pool does: not both
  io.stderr:write("swe_agent: --backend slurm and --nodes (or ROCK_NODES) exclude each other\n")
  os.exit(2)
end
local pool = nodes and nodes ~= "" and rock.fleet.pool{ nodes = nodes, strategy = o.strategy } or nil
sandbox.fleet = pool
local summary = rock.agent.run(tasks, {
  on_trajectory = report and function(traj) report:task_done(traj) end,
  policy = o.policy, replay = o.replay, llm = llm, mode = o.mode, out = o.out,
  workers = o.workers, resume = o.resume, backend = o.backend,
  step_limit = o.step_limit, cost_limit = o.cost_limit, token_limit = o.token_limit,
  wall_limit = o.wall_limit, command_timeout = o.command_timeout,
  sandbox = sandbox,
  eval = o.no_eval and "none" or (o.eval_in_place and "in_place" or "fresh"),
  teardown = { keep_on_failure = o.keep_on_failure },
})
if pool then pool:close() end

if o.finish_only then
  local kept, dropped = rock.filters.finish_only_file(o.out .. "/trajectories.jsonl", o.out .. "/finished.jsonl")
  local parts = {}
  for reason, n in pairs(dropped) do parts[#parts + 1] = reason .. " " .. n end
  table.sort(parts)
  print(string.format("finish-only: %d kept in %s/finished.jsonl; dropped: %s", kept, o.out,
    #parts > 0 and table.concat(parts, ", ") or "none"))
end

if report then report:finish() end
print(rock.agent.summary_table(summary))
-- interrupted: the host exits 128+signal by itself (rock.on_signal)
if #bad > 0 and not summary.interrupted then os.exit(1) end
