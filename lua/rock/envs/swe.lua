--- rock.envs.swe: a SWE-bench task as an environment, swe:<instance_id>
-- (docs/environments.md). reset starts the task's sandbox with the repo at
-- base_commit, a clean tree and the agent's session open in repo_dir, and
-- returns the problem statement; step takes a bash command (a string or
-- {tool="bash", command=}) or an editor call ({tool="str_replace_editor",
-- ...}) and returns its observation (rock.agent.tools); {tool="submit"}
-- (or mini-swe-agent's submit marker) takes the patch and grades it as the
-- agent does: reward 1 if resolved, else 0, terminated; step_limit turns
-- end it truncated. The agent loop (rock.agent.episode) is a policy over
-- this environment: it calls start and act, and grades and tears down by
-- its own run's options.
local errors = require "rock.errors"
local tools = require "rock.agent.tools"
local prompts = require "rock.agent.prompts"

local M = {}

-- What the agent's shell gets (mini-swe-agent's SWE-bench environment).
M.SESSION_ENV = { PAGER = "cat", MANPAGER = "cat", LESS = "-R", PIP_PROGRESS_BAR = "off", TQDM_DISABLE = "1" }

--- The resource limits of an agent's sandbox by default (docs/agent.md,
--- Limits): a fork bomb, a runaway allocation or a disk fill by the agent
--- stops inside its sandbox. 0 is none.
M.SANDBOX_LIMITS = { memory = "8g", pids_limit = 1024, disk = "10g" }
local LIMIT_FIELDS = { "memory", "pids_limit", "disk" }

M.START_RETRIES, M.COMMAND_TIMEOUT = 2, 60 -- rock.agent.episode's defaults

local function git(sb, repo_dir, args, timeout)
  local argv = { "git", "-C", repo_dir }
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  local r = sb:execute{ command = argv, timeout = timeout }
  if r.exit_code ~= 0 then
    errors.raise("setup_failed", string.format("git %s in %s failed (exit %s): %s",
      args[1], repo_dir, tostring(r.exit_code), (r.stderr or "") .. (r.stdout or "")))
  end
  return r
end

--- The limits for task t's sandboxes (rock.sandbox.start's memory,
--- pids_limit, disk): SANDBOX_LIMITS, then opts.sandbox's (the run's
--- flags), then the task's own fields (a task that needs more says so).
---@return table {memory=, pids_limit=, disk=}
function M.sandbox_limits(t, opts)
  local out = {}
  for _, k in ipairs(LIMIT_FIELDS) do
    local v = M.SANDBOX_LIMITS[k]
    if (opts.sandbox or {})[k] ~= nil then v = opts.sandbox[k] end
    if t[k] ~= nil then v = t[k] end
    out[k] = v
  end
  return out
end

--- A sandbox's start phases as a trajectory keeps them: a list in start
--- order of {name, status, seconds (whole: the phases' clock is
--- os.time), message}.
local PHASE_ORDER = { "image_pull", "container_create", "container_start", "rocklet_ready" }
function M.phases(ph)
  if type(ph) ~= "table" then return nil end
  local out = require("rock.json").array()
  for _, name in ipairs(PHASE_ORDER) do
    local p = ph[name]
    if type(p) == "table" then
      out[#out + 1] = { name = name, status = p.status, message = p.message,
        seconds = p.started_at and p.completed_at and p.completed_at - p.started_at or nil }
    end
  end
  return out
end

--- Start the task's sandbox and make it ready: the repo at base_commit with
--- a clean tree (untracked files removed; ignored ones, such as built
--- extensions, kept), the agent's session open in repo_dir. Fills
--- traj.sandbox. Returns the sandbox and the session's startup.
function M.setup(t, opts, traj)
  local start = { backend = opts.backend, start_retry_times = opts.start_retries or M.START_RETRIES }
  if require("rock.backends").takes_image(opts.backend) then start.image = t.image end
  for k, v in pairs(opts.sandbox or {}) do start[k] = v end
  local limits = M.sandbox_limits(t, opts)
  for k, v in pairs(limits) do start[k] = v end
  if opts.on_phase then start.on_phase = function(...) opts.on_phase(t, ...) end end
  local sb
  local function go() sb = require("rock.sandbox").start(start) end
  if opts.start_sem then opts.start_sem:with(go) else go() end
  traj.sandbox = { id = sb.id, image = start.image, backend = sb.backend, limits = limits,
    node = sb.node_url or sb.slurm_node, -- a pool's sandbox (rock.fleet), a Slurm job: the node it runs on
    slurm_job_id = sb.job_id and tostring(sb.job_id) or nil,
    phases = M.phases(sb.phases) } -- the start's phases and their seconds (the report shows them)
  local setup_timeout = opts.setup_timeout -- nil: the calls' own defaults
  git(sb, t.repo_dir, { "checkout", "-f", "-q", t.base_commit }, setup_timeout)
  git(sb, t.repo_dir, { "clean", "-fdq" }, setup_timeout)
  local startup = { session = "agent", cwd = t.repo_dir, startup_source = t.startup_source,
                    env = M.SESSION_ENV, startup_timeout = setup_timeout }
  sb:create_session(startup)
  return sb, startup
end

local Env = {}
Env.__index = Env

--- The environment of task t (not started). opts: rock.agent.run's
--- (backend, sandbox, start_sem, start_retries, setup_timeout,
--- command_timeout, observation_limit, editor_limit, prompts), and for
--- step: step_limit (0 = none), eval ("in_place", the default: the
--- environment's sandbox; or "fresh": a new one).
function M.new(t, opts)
  return setmetatable({ task = t, opts = opts or {}, turn = 0 }, Env)
end

--- Start the sandbox (M.setup); the tools' environment is self.tools.
function Env:start(traj)
  local t, o = self.task, self.opts
  self.sb, self.startup = M.setup(t, o, traj or {})
  self.tools = { sb = self.sb, session = "agent", repo_dir = t.repo_dir,
    timeout = o.command_timeout or M.COMMAND_TIMEOUT, limit = o.observation_limit,
    editor_limit = o.editor_limit, prompts = o.prompts or prompts, startup = self.startup }
  return self.sb, self.startup
end

--- One tool call: rock.agent.tools.run's result (no grading).
function Env:act(action) return tools.run(self.tools, action) end

--- reset(seed) -> problem_statement, info: a fresh sandbox at base_commit
--- (the seed is unused: a task is one episode).
function Env:reset(_seed)
  if self.sb then self:close() end
  self.turn, self.done = 0, false
  self:start({})
  return self.task.problem_statement, { instance_id = self.task.instance_id, repo_dir = self.task.repo_dir,
    sandbox_id = self.sb.id }
end

local function grade(self, patch)
  local grading = require "rock.agent.grading"
  if patch == "" then return { status = "empty_patch", resolved = false } end
  if (self.opts.eval or "in_place") == "in_place" then return grading.evaluate(self.sb, self.task, patch, {}) end
  local so = { backend = self.opts.backend, start_retry_times = self.opts.start_retries or M.START_RETRIES }
  for k, v in pairs(self.opts.sandbox or {}) do so[k] = v end
  return grading.run(self.task, patch, { sandbox = so, start_sem = self.opts.start_sem })
end

--- step(action) -> observation, reward, terminated, truncated, info
--- (info: exit_code, failure_reason, output_file; after a submit also
--- patch and eval {status, resolved}).
function Env:step(action)
  if not self.sb then errors.raise("conflict", "swe:" .. self.task.instance_id .. ": reset first") end
  if self.done then errors.raise("conflict", "swe:" .. self.task.instance_id .. ": the episode ended; reset") end
  if type(action) == "string" then action = { tool = "bash", command = action } end
  if type(action) ~= "table" or type(action.tool) ~= "string" then
    errors.raise("invalid_argument", "step: an action is a bash command (a string) or a table {tool=, ...}")
  end
  self.turn = self.turn + 1
  local r = self:act(action)
  local info = { exit_code = r.exit_code, failure_reason = r.failure_reason, output_file = r.output_file }
  if r.submitted then
    self.done = true
    local patch = require("rock.agent.grading").diff(self.sb, self.task)
    local res = grade(self, patch)
    info.patch, info.eval = patch, { status = res.status, resolved = res.resolved == true }
    return r.observation, res.resolved and 1.0 or 0.0, true, false, info
  end
  local limit = self.opts.step_limit or 0
  if limit > 0 and self.turn >= limit then
    self.done = true
    return r.observation, 0.0, true, true, info
  end
  return r.observation, 0.0, false, false, info
end

--- close(): the sandbox is stopped. Safe twice.
function Env:close()
  local sb = self.sb
  self.sb = nil
  if sb then pcall(sb.stop, sb) end
end

--- The spec rock.envs.make uses for "swe:<instance_id>": opts.task (a
--- task table) or opts.tasks (a tasks file, or a list of tasks) holds it.
function M.make(env_id, opts)
  local id = env_id:match("^swe:(.+)$")
  local t = opts.task
  if not t then
    local list = opts.tasks
    if type(list) == "string" then list = require("rock.agent.tasks").load(list) end
    for _, x in ipairs(list or {}) do if x.instance_id == id then t = x end end
  end
  if type(t) ~= "table" or t.instance_id ~= id then
    errors.raise("not_found", "no task " .. tostring(id) .. " in opts.task or opts.tasks", { op = "make" })
  end
  local o = {}
  for k, v in pairs(opts) do if k ~= "task" and k ~= "tasks" then o[k] = v end end
  return M.new(t, o)
end

return M
