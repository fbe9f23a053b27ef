--- rock.agent.episode: one task from start to end, as one trajectory: a
-- policy over the task's environment (rock.envs.swe): start the sandbox (a
-- permit of the run's start semaphore), reset the repo to base_commit,
-- open the session (the environment's start), take turns (its act) until a termination reason,
-- take the patch (git diff against base_commit), tear the sandbox down by
-- policy, grade the patch (in a fresh sandbox by default).
-- Termination reasons (docs/agent.md): finish, budget, loop,
-- context_overflow, aborted; exit_status says the same in mini-swe-agent's
-- words. `aborted` is infrastructure (the sandbox died, the model could not
-- be reached, the start failed, a signal), never the model's failure.
local uv = require "luv"
local errors = require "rock.errors"
local task = require "rock.task"
local log = require "rock.log"
local tools = require "rock.agent.tools"
local json = require "rock.json"
local swe = require "rock.envs.swe"

local M = {}

M.DEFAULTS = {
  step_limit = 250,        -- mini-swe-agent's SWE-bench defaults
  cost_limit = 3,          -- USD
  token_limit = 0,         -- 0 = none
  wall_limit = 0,          -- seconds of agent time, 0 = none
  command_timeout = 60,
  repeat_limit = 3,        -- the same action this many times in a row: loop
  format_error_limit = 3,  -- this many format errors in a row: loop
  setup_timeout = 600,
  start_retries = 2,       -- a sandbox start that fails is tried again this many times
}

-- The task's environment (rock.envs.swe) holds the sandbox's setup:
-- what the agent's shell gets, the sandbox's limits.
M.SESSION_ENV = swe.SESSION_ENV
M.SANDBOX_LIMITS = swe.SANDBOX_LIMITS
M.sandbox_limits = swe.sandbox_limits

local function now() return uv.hrtime() / 1e9 end

-- The reason an error ends an episode with, and its exit status.
local function classify(err)
  if errors.is(err, "context_overflow") then return "context_overflow", "context_overflow" end
  return "aborted", errors.is(err) and err.code or "internal"
end

local function add(messages, m)
  if m.role then messages[#messages + 1] = m
  else for _, x in ipairs(m) do messages[#messages + 1] = x end end
end

--- The turns: returns termination_reason, exit_status, submission.
local function turns(p, ctx, lim, traj, stats, t_agent)
  local same, last_key, fmt_errors = 0, nil, 0
  while true do
    if lim.step_limit > 0 and #traj.steps >= lim.step_limit then return "budget", "LimitsExceeded" end
    if lim.cost_limit > 0 and stats.instance_cost >= lim.cost_limit then return "budget", "LimitsExceeded" end
    if lim.token_limit > 0 and stats.tokens_sent + stats.tokens_received >= lim.token_limit then
      return "budget", "LimitsExceeded"
    end
    if lim.wall_limit > 0 and now() - t_agent >= lim.wall_limit then return "budget", "TimeExceeded" end
    local t0 = now()
    local turn = p:act(ctx)
    if turn.exhausted then
      traj.note = "the replay has no more actions"
      return "budget", "LimitsExceeded"
    end
    local step = { cost = turn.cost or 0 }
    if turn.usage then
      stats.api_calls = stats.api_calls + 1
      stats.tokens_sent = stats.tokens_sent + (turn.usage.prompt_tokens or 0)
      stats.tokens_received = stats.tokens_received + (turn.usage.completion_tokens or 0)
      step.tokens = turn.usage.total_tokens or ((turn.usage.prompt_tokens or 0) + (turn.usage.completion_tokens or 0))
    end
    stats.instance_cost = stats.instance_cost + step.cost
    add(ctx.messages, turn.message)
    traj.steps[#traj.steps + 1] = step
    if turn.format_error then
      step.format_error, step.observation, step.failure_reason = true, turn.format_error, "format_error"
      add(ctx.messages, p:observe(turn, turn.format_error))
      step.seconds = now() - t0
      fmt_errors, same, last_key = fmt_errors + 1, 0, nil
      if fmt_errors >= lim.format_error_limit then return "loop", "RepeatedFormatError" end
    else
      fmt_errors = 0
      step.action = turn.action
      local key = tools.key(turn.action)
      same = key == last_key and same + 1 or 1
      last_key = key
      if same >= lim.repeat_limit then
        step.failure_reason, step.seconds = "repeated_action", now() - t0
        return "loop", "RepeatedAction"
      end
      local r = ctx.environment:act(turn.action)
      step.observation, step.exit_code, step.failure_reason = r.observation, r.exit_code, r.failure_reason
      step.output_file = r.output_file
      add(ctx.messages, p:observe(turn, r.observation))
      step.seconds = now() - t0
      if r.submitted then return "finish", "Submitted", r.submission end
    end
  end
end

--- Grade the patch: eval = "fresh" (a new sandbox from the task's image),
--- "in_place" (the agent's sandbox, still up) or "none".
local function grade(t, patch, opts, sb)
  local grading = require "rock.agent.grading"
  local log_path = opts.out and (opts.out .. "/eval/" .. t.instance_id .. ".log") or nil
  if log_path then require("rock.agent.output").mkdir(opts.out .. "/eval") end
  local res
  if opts.eval == "in_place" and sb then
    res = grading.evaluate(sb, t, patch, {})
    if log_path and res.log then
      local f, why = io.open(log_path, "wb")
      if f then
        local ok, werr = f:write(res.log)
        local closed, cerr = f:close()
        why = (not ok and werr) or (not closed and cerr) or nil
      end
      if why then res.log_error = "cannot write the log: " .. tostring(why) else res.log_path = log_path end
    end
  else
    local so = { backend = opts.backend, start_retry_times = opts.start_retries or M.DEFAULTS.start_retries }
    for k, v in pairs(opts.sandbox or {}) do so[k] = v end
    if opts.on_phase then so.on_phase = function(...) opts.on_phase(t, ...) end end
    res = grading.run(t, patch, { sandbox = so, log_path = log_path, start_sem = opts.start_sem })
  end
  return res
end

--- The eval record kept in a trajectory (the log itself is in its file).
local function eval_record(res)
  return { status = res.status, resolved = res.resolved == true, applied = res.applied,
    apply_method = res.apply_method, tests = res.tests, report = res.report,
    test_exit_code = res.test_exit_code, log_path = res.log_path, log_error = res.log_error,
    error = res.error, seconds = res.seconds }
end

-- The eval record of a grading that raised: its error as {code, message},
-- whether it ran in place or fresh (a cut one says "aborted": rock.agent
-- marks it interrupted and --resume runs it again).
local function eval_failed(err)
  return { status = "error", resolved = false,
    error = { code = errors.is(err) and err.code or "internal", message = tostring(err) } }
end

--- Run one task; returns its trajectory (never raises for the task's own
--- failures: they are its termination reason). factory: a policy factory
--- (policies/*.lua), opts: see rock.agent.run. A policy with an
--- annotate(traj) method adds its own fields to the trajectory once the
--- turns end, however they end (rock.agent.dagger's mixture does).
function M.run(t, factory, opts)
  local lim = {}
  for k, v in pairs(M.DEFAULTS) do lim[k] = opts[k] or v end
  local traj = { instance_id = t.instance_id, policy = factory.name, model = factory.model or factory.name,
    steps = json.array(), messages = json.array(), timings = {} }
  local stats = { instance_cost = 0, api_calls = 0, tokens_sent = 0, tokens_received = 0 }
  traj.model_stats = stats
  local t_start = now()
  local sb, patch, p
  local ok, err = pcall(function()
    p = factory:episode(t)
    -- the environment (swe:<instance_id>): its sandbox, its tools
    local environment = swe.new(t, setmetatable({ command_timeout = lim.command_timeout }, { __index = opts }))
    sb = task.timeout(lim.setup_timeout + 300, environment.start, environment, traj)
    traj.timings.setup = now() - t_start
    local ctx = { prompts = opts.prompts, vars = { repo_dir = t.repo_dir, problem_statement = t.problem_statement,
      instance_id = t.instance_id }, messages = traj.messages }
    ctx.env, ctx.environment = environment.tools, environment
    for _, m in ipairs(p:begin(ctx)) do ctx.messages[#ctx.messages + 1] = m end
    local t_agent = now()
    local reason, status, submission
    if lim.wall_limit > 0 then
      local tok, a, b, c = pcall(task.timeout, lim.wall_limit, turns, p, ctx, lim, traj, stats, t_agent)
      if tok then reason, status, submission = a, b, c
      -- the wall limit's own timeout (not a command's); its libuv timer
      -- runs on the loop's coarse clock (whole ms, a few ms behind), so it
      -- may fire a little before wall_limit has passed by hrtime
      elseif now() - t_agent >= lim.wall_limit - 0.02 and errors.is(a, "timeout") then
        reason, status = "budget", "TimeExceeded"
      else error(a, 0) end
    else
      reason, status, submission = turns(p, ctx, lim, traj, stats, t_agent)
    end
    traj.timings.agent = now() - t_agent
    traj.termination_reason, traj.exit_status, traj.submission = reason, status, submission
    patch = require("rock.agent.grading").diff(sb, t)
  end)
  if not ok then
    traj.termination_reason, traj.exit_status = classify(err)
    traj.error = { code = errors.is(err) and err.code or "internal", message = errors.is(err) and err.message or tostring(err) }
    if not traj.sandbox and type(err) == "table" and err.phases then -- a failed start: how far it got
      traj.sandbox = { backend = opts.backend, image = t.image, phases = swe.phases(err.phases) }
    end
    if traj.termination_reason == "context_overflow" and sb then
      local dok, d = pcall(require("rock.agent.grading").diff, sb, t)
      if dok then patch = d end
    end
    if traj.termination_reason == "aborted" then
      log.warn("agent", "%s aborted: %s", t.instance_id, tostring(err))
    end
  end
  traj.patch = patch or ""
  -- a policy may add its own record to the trajectory (the DAgger mixture's labels)
  if p and p.annotate then p:annotate(traj) end
  local aborted = traj.termination_reason == "aborted"
  -- grade in place before the teardown, else after it (frees the agent's sandbox first)
  local t_eval = now()
  if not aborted and opts.eval == "in_place" and patch and patch ~= "" then
    local eok, res = pcall(grade, t, patch, opts, sb)
    traj.eval = eok and eval_record(res) or eval_failed(res)
  end
  if sb then
    traj.teardown = task.shield(require("rock.teardown").apply, sb, opts.teardown, aborted)
    traj.teardown = { stopped = traj.teardown.stopped, kept = traj.teardown.kept }
  end
  if not aborted and not traj.eval and opts.eval ~= "none" then
    if traj.patch == "" then
      traj.eval = { status = "empty_patch", resolved = false }
    else
      local eok, res = pcall(grade, t, patch, opts)
      traj.eval = eok and eval_record(res) or eval_failed(res)
    end
  end
  traj.timings.eval = now() - t_eval
  traj.timings.total = now() - t_start
  return traj
end

return M
