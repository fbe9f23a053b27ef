--- rock.agent.dagger.budget: the evaluator's node budgets and the plan
-- they give. A node holds cpu 96 / memory 320 GB / gpu 0 and a sandbox
-- takes 4 CPU / 16 GB, so a node runs min(96/4, 320/16) = 20 at once,
-- memory binding; each node starts `concurrency` sandboxes at once
-- (ROCK_ENV_CONCURRENCY, default 4). The plan is what --dry-run prints
-- and what a run uses: the sandboxes at once (nodes x capacity, capped by
-- the tasks and --workers), the starts at once, the waves. On Slurm the
-- nodes are those Slurm would place the jobs on (sinfo: backends/slurm.lua).
local errors = require "rock.errors"

local M = {}

M.DEFAULTS = { node_cpu = 96, node_memory_gb = 320, node_gpu = 0,
               sandbox_cpu = 4, sandbox_memory_gb = 16, sandbox_gpu = 0, concurrency = 4 }

local function num(o, k)
  local v = o[k]
  if v == nil then v = M.DEFAULTS[k] end
  v = tonumber(v)
  if not v or v ~= v or v < 0 then errors.raise("invalid_argument", "budget: " .. k .. " must be a number >= 0") end
  return v
end

--- The plan: o holds the budgets (M.DEFAULTS' names), nodes (how many,
--- default 1; with slurm = the start's slurm options and no nodes, those
--- Slurm says the jobs may land on, 1 when it does not say: inside a
--- task), tasks (how many), workers (a cap, optional). Returns
--- {nodes, capacity (per node), binding ("cpu" | "memory" | "gpu"),
--- per_resource {cpu=, memory=, gpu=}, at_once, starts_at_once, waves,
--- tasks, nodes_unknown (why Slurm did not say)}. Raises
--- invalid_argument when a sandbox cannot fit a node.
function M.plan(o)
  local b = {}
  for k in pairs(M.DEFAULTS) do b[k] = num(o, k) end
  if b.sandbox_cpu <= 0 or b.sandbox_memory_gb <= 0 then
    errors.raise("invalid_argument", "budget: a sandbox needs cpu > 0 and memory > 0")
  end
  local per = { cpu = math.floor(b.node_cpu / b.sandbox_cpu), memory = math.floor(b.node_memory_gb / b.sandbox_memory_gb) }
  if b.sandbox_gpu > 0 then per.gpu = math.floor(b.node_gpu / b.sandbox_gpu) end
  local cap, binding = math.huge, nil
  for _, k in ipairs({ "cpu", "memory", "gpu" }) do
    if per[k] and per[k] < cap then cap, binding = per[k], k end
  end
  if cap < 1 then
    errors.raise("invalid_argument", string.format("budget: a sandbox (%g CPU, %g GB, %g GPU) does not fit a node (%g CPU, %g GB, %g GPU)",
      b.sandbox_cpu, b.sandbox_memory_gb, b.sandbox_gpu, b.node_cpu, b.node_memory_gb, b.node_gpu))
  end
  local nodes, unknown = o.nodes, nil
  if nodes == nil and o.slurm then nodes, unknown = require("rock.backends.slurm").nodes(o.slurm) end
  nodes = math.max(1, math.tointeger(nodes or 1) or 1)
  local tasks = math.max(0, math.tointeger(o.tasks or 0) or 0)
  local at_once = nodes * cap
  if o.workers and o.workers > 0 then at_once = math.min(at_once, math.tointeger(o.workers) or at_once) end
  if tasks > 0 then at_once = math.min(at_once, tasks) end
  local c = math.max(1, math.tointeger(b.concurrency) or 1)
  return { nodes = nodes, capacity = cap, binding = binding, per_resource = per, budget = b,
    at_once = at_once, starts_at_once = math.min(nodes * c, math.max(at_once, 1)),
    waves = tasks > 0 and math.ceil(tasks / at_once) or 0, tasks = tasks, nodes_unknown = unknown }
end

--- The plan as lines for a terminal.
function M.describe(p, where)
  local b = p.budget
  local lines = {
    string.format("nodes: %d (%s)%s", p.nodes, where or "local engine",
      p.nodes_unknown and ("; Slurm did not say how many: " .. p.nodes_unknown) or ""),
    string.format("node budget: cpu %g, memory %g GB, gpu %g; sandbox: cpu %g, memory %g GB, gpu %g",
      b.node_cpu, b.node_memory_gb, b.node_gpu, b.sandbox_cpu, b.sandbox_memory_gb, b.sandbox_gpu),
    string.format("capacity: %d per node (%s binds: cpu %d, memory %d%s)", p.capacity, p.binding,
      p.per_resource.cpu, p.per_resource.memory, p.per_resource.gpu and (", gpu " .. p.per_resource.gpu) or ""),
    string.format("sandboxes at once: %d; starts at once: %d (%d per node)", p.at_once, p.starts_at_once, math.floor(b.concurrency)),
    string.format("tasks: %d per round; waves: %d per round", p.tasks, p.waves),
  }
  return table.concat(lines, "\n")
end

return M
