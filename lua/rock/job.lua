--- rock.job: background jobs in a sandbox (ROCK's arun(mode="nohup"), done
-- right): sb:arun{command=, mode="nohup", wait=false} returns a Job; with
-- wait (the default) it waits for the job and returns its result.
--   local job = sb:arun{ command = "make test", mode = "nohup", wait = false }
--   local r = job:wait(600)    -- {output, exit_code, failure_reason, ...}
-- The job runs outside every session (closing one does not end it) and
-- ends with the sandbox. Its real exit code comes back (ROCK says 0). The
-- wire is the rocklet's /jobs/* (docs/rocklet-api.md); sandbox.lua holds
-- the entry points (arun, jobs). Every call waits: run it inside a task.
local errors = require "rock.errors"
local task = require "rock.task"

local M = {}

--- Grace on top of a wait's own timeout for the HTTP exchange.
local CALL_MARGIN = 30

---@class rock.Job
---@field id integer       the job's id in its sandbox
---@field pid integer      its process (and process group) in the sandbox
---@field output_file string where its stdout and stderr go
---@field command string
local Job = {}
Job.__index = Job
M.Job = Job

local function opt(v, kind, fname, field)
  if v ~= nil and type(v) ~= kind then
    errors.raise("invalid_argument", string.format("%s: '%s' must be a %s", fname, field, kind))
  end
  return v
end

-- numbers nested in a record read as integers where they are whole
local function record(r)
  for _, k in ipairs { "job_id", "pid", "exit_code", "dropped_bytes", "output_bytes" } do
    if type(r[k]) == "number" then r[k] = math.tointeger(r[k]) or r[k] end
  end
  for k, v in pairs(r) do
    if type(v) == "userdata" then r[k] = nil end -- JSON null (nested: cjson.null)
  end
  return r
end

-- a wait's answer as arun's result: failure_reason "timeout" while it runs
local function result(r)
  r = record(r)
  r.failure_reason = r.running and "timeout" or ""
  return r
end

--- Start a job in sb. opts: command (string, run by bash -c; /bin/sh
--- without bash), cwd, env ({K=v}), output_file (default: a file in the
--- rocklet's dir; one given is created with its parents).
---@return rock.Job
function M.start(sb, opts)
  local r = sb:_op("jobs/start", {
    command = opt(opts.command, "string", "arun", "command") or
      errors.raise("invalid_argument", "arun: 'command' must be a string"),
    cwd = opt(opts.cwd, "string", "arun", "cwd"),
    env = opt(opts.env, "table", "arun", "env"),
    output_file = opt(opts.output_file, "string", "arun", "output_file"),
  }, CALL_MARGIN)
  return setmetatable({ _sb = sb, id = r.job_id, pid = r.pid, output_file = r.output_file,
                        command = r.command }, Job)
end

--- Wait up to timeout seconds (nil: until it ends; 0: just look) for the
--- job to end. A job still running is not killed. max_output: bytes of
--- output returned (head and tail kept), default 1 MiB.
--- Returns {output, exit_code (nil while running; 128+signal if killed),
--- failure_reason = "" | "timeout" (still running), running, output_file,
--- job_id, pid, truncated, dropped_bytes, output_bytes, started_at,
--- ended_at, command}.
function Job:wait(timeout, max_output)
  task.check_seconds(timeout, "job:wait: 'timeout'", true)
  opt(max_output, "number", "job:wait", "max_output")
  return result(self._sb:_op("jobs/wait", {
    job_id = self.id, timeout = timeout, max_output = max_output,
  }, timeout and timeout + CALL_MARGIN or nil))
end

--- The job's state and output so far, without waiting (job:wait(0)).
function Job:status(max_output)
  return self:wait(0, max_output)
end

--- Send signal ("TERM" by default, "KILL", "INT", ... or a number) to
--- every process of the job. Returns {signalled (false: it had ended),
--- running}.
function Job:kill(signal)
  if signal ~= nil and type(signal) ~= "string" and math.type(signal) ~= "integer" then
    errors.raise("invalid_argument", "job:kill: 'signal' must be a name (\"TERM\") or a number")
  end
  return self._sb:_op("jobs/kill", { job_id = self.id, signal = signal }, CALL_MARGIN)
end

--- sb:arun{mode="nohup"}: start, then wait (wait ~= false) up to
--- wait_timeout seconds (default: until it ends).
function M.arun(sb, opts)
  local wait = opt(opts.wait, "boolean", "arun", "wait")
  local wt = task.check_seconds(opts.wait_timeout, "arun: 'wait_timeout'", true)
  opt(opts.max_output, "number", "arun", "max_output")
  local job = M.start(sb, opts)
  if wait == false then return job end
  return job:wait(wt, opts.max_output)
end

--- The sandbox's job records, oldest first (running ones and the last
--- finished ones), without output; opts.running = true keeps the running.
function M.list(sb, opts)
  local running = opt(opts.running, "boolean", "jobs", "running")
  local out = {}
  for _, r in ipairs(sb:_op("jobs", {}, CALL_MARGIN).jobs or {}) do
    r = record(r)
    if not running or r.running then out[#out + 1] = r end
  end
  return out
end

return M
