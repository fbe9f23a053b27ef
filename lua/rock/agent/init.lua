--- rock.agent: SWE tasks run by an agent, each in its own sandbox, graded as
-- SWE-bench grades them, kept as trajectories for training.
--   local summary = rock.agent.run(tasks, { policy = "oracle", out = "out/", workers = 4 })
-- The pieces, one file each: tasks.lua (the JSONL tasks), episode.lua (one
-- task, start to end), tools.lua (bash, the editor, submit), policies/
-- (model, replay, oracle), prompts.lua (every text a model sees),
-- grading.lua (SWE-bench's grading), output.lua (the files a run leaves),
-- progress.lua. docs/agent.md tells the whole story; dagger/ is the
-- DAgger evaluator built on it (docs/dagger.md).
local task = require "rock.task"
local errors = require "rock.errors"
local log = require "rock.log"
local episode = require "rock.agent.episode"
local output = require "rock.agent.output"

local M = {}

M.summary_table = output.summary_table

M.POLICIES = { model = true, replay = true, oracle = true }

--- The policy factory named name ("model" | "replay" | "oracle"), made
--- with opts (replay = the replay file; llm, mode for the model).
function M.policy(name, opts)
  if not M.POLICIES[name] then
    errors.raise("invalid_argument", "unknown policy " .. tostring(name) .. " (model, replay, oracle)")
  end
  return require("rock.agent.policies." .. name).new(opts or {})
end

--- Concurrent sandbox starts: n (opts.start_concurrency), else
--- ROCK_ENV_CONCURRENCY, else 4.
local function start_permits(n)
  n = math.tointeger(n or tonumber(os.getenv("ROCK_ENV_CONCURRENCY") or "")) or 4
  return task.semaphore(math.max(1, n))
end

-- Did the run's stop (a signal) cut this task short, in its turns or its eval?
local function interrupted(traj)
  local function cut(e) return type(e) == "table" and e.code == "aborted" end
  return cut(traj.error) or (type(traj.eval) == "table" and cut(traj.eval.error))
end

--- Run tasks; returns the summary (summary.json's content).
--- opts: policy (a name or a factory), out (dir, required), workers
--- (default 1), resume (skip tasks already in out/trajectories.jsonl),
--- backend, sandbox (more rock.sandbox.start options), eval ("fresh" |
--- "in_place" | "none"), teardown (a rock.teardown policy),
--- start_concurrency (sandbox starts at once: default
--- $ROCK_ENV_CONCURRENCY, else 4), the limits (step_limit, cost_limit,
--- token_limit, wall_limit, command_timeout, repeat_limit,
--- format_error_limit: episode.DEFAULTS), observation_limit
--- and editor_limit (the caps of bash's and the editor's observations,
--- bytes: tools.OBSERVATION_LIMIT, tools.EDITOR_LIMIT), prompts, progress
--- (a progress.lua object, or false), on_phase (fn(task, sb, name,
--- status, message): each start phase of a task's sandboxes; default:
--- the progress's), on_signal (default true: SIGINT or
--- SIGTERM ends running tasks as aborted and writes them with
--- interrupted=true, as is a task whose eval it cut; --resume runs those
--- again, as it runs the tasks not yet started). Raises conflict when
--- another run holds out (output.lock), io_error when a trajectory
--- cannot be written (a full disk): the running tasks end as at a signal,
--- and what was written before stays for --resume.
function M.run(tasks, opts)
  if type(tasks) ~= "table" then errors.raise("invalid_argument", "agent.run: tasks must be a list") end
  if type(opts) ~= "table" or type(opts.out) ~= "string" then
    errors.raise("invalid_argument", "agent.run: opts.out (the output dir) is required")
  end
  local factory = type(opts.policy) == "table" and opts.policy or M.policy(opts.policy or "oracle", opts)
  local writer = output.open(opts.out, { resume = opts.resume })
  local eopts = setmetatable({ start_sem = start_permits(opts.start_concurrency), eval = opts.eval or "fresh" }, { __index = opts })
  local todo = {}
  for _, t in ipairs(tasks) do
    if not writer.done[t.instance_id] then todo[#todo + 1] = t end
  end
  if #todo < #tasks then log.info("agent", "resume: %d task(s) already done, %d to run", #tasks - #todo, #todo) end
  local progress = opts.progress
  if progress == nil then progress = require("rock.agent.progress").new(#todo) end
  if progress and opts.on_phase == nil then -- the progress counts sandboxes in a cluster's queue
    eopts.on_phase = function(...) progress:phase(...) end
  end
  local workers = task.semaphore(math.max(1, math.tointeger(opts.workers or 1) or 1))
  local running, stopping, write_err = {}, nil, nil
  -- end the running tasks as aborted (a signal, or the output cannot be written)
  local function stop(why, what)
    stopping = stopping or why
    local err = errors.new("aborted", "the run was interrupted (" .. what .. ")")
    for t in pairs(running) do task.cancel(t, err) end
  end

  -- the trajectory of a task a bug ended (kept as aborted, not the task's failure)
  local function internal(t, why, patch)
    return { instance_id = t.instance_id, policy = factory.name, termination_reason = "aborted",
             exit_status = "internal", error = { code = "internal", message = tostring(why) },
             patch = type(patch) == "string" and patch or "" }
  end

  local function one(t)
    workers:acquire()
    if stopping then return workers:release() end
    local me = task.current()
    running[me] = true
    if progress then progress:started() end
    local ok, traj = pcall(episode.run, t, factory, eopts)
    running[me] = nil
    workers:release()
    if not ok then traj = internal(t, traj) end -- a bug, not the task's failure: still kept, as aborted
    if write_err then return end -- nothing more can be kept: the run is ending
    if stopping and interrupted(traj) then traj.interrupted = true end -- --resume runs it again
    local wok, werr = pcall(writer.write, writer, traj)
    if not wok and not errors.is(werr, "io_error") then
      -- a value JSON cannot carry (a bug: the sources are checked), nothing
      -- written: the task is kept as aborted, the run goes on
      log.error("agent", "%s: the trajectory cannot be written: %s", t.instance_id, tostring(werr))
      traj = internal(t, "the trajectory cannot be written as JSON: " .. tostring(werr), traj.patch)
      wok, werr = pcall(writer.write, writer, traj)
    end
    if not wok then
      write_err = werr
      log.error("agent", "%s: %s; stopping the run", t.instance_id, tostring(werr))
      return stop("io_error", "the output cannot be written")
    end
    if progress then progress:finished(traj) end
    if opts.on_trajectory then opts.on_trajectory(traj) end
  end

  if opts.on_signal ~= false then
    require("rock._main").on_signal(function(name) stop(name, name:upper()) end)
  end
  local spawned = {}
  for i, t in ipairs(todo) do spawned[i] = task.spawn(one, t) end
  task.wait(spawned)
  if opts.on_signal ~= false then require("rock._main").on_signal(nil) end
  if progress then progress:close() end
  if write_err then
    writer:close()
    error(write_err, 0)
  end
  local summary = writer:write_summary()
  writer:close()
  summary.interrupted = stopping
  return summary, writer.records
end

-- rock.agent.tasks, .grading, .prompts, .tools, ...: the pieces, on first use
local PIECES = { tasks = true, grading = true, prompts = true, tools = true, output = true,
                 progress = true, episode = true, dagger = true }
return setmetatable(M, { __index = function(t, k)
  if not PIECES[k] then return nil end
  local mod = require("rock.agent." .. k)
  rawset(t, k, mod)
  return mod
end })
