--- rock.group: start many sandboxes alike, as ROCK's SandboxGroup.
--   local g = rock.group.start{ size = 8, start_concurrency = 4, image = "python:3.11" }
--   for _, sb in ipairs(g) do sb:execute{ command = "true" } end
--   g:stop()
-- At most start_concurrency starts run at once (a semaphore, FIFO: member
-- 1 first); a failed start is retried start_retry_times times after a
-- backoff (retry_backoff, doubling, at most MAX_BACKOFF), during which its
-- permit goes to the next member. Every failed attempt is removed by
-- rock.sandbox.start itself (ROCK's group leaves them to the server).
-- The group is the list of the members that started, in member order;
-- g.failures says which did not and why; require_all makes any failure
-- stop the rest and raise. Cancelled (a rock.timeout around start, a
-- task.cancel), start cancels the starts under way, stops what started
-- and re-raises. Built on rock.sandbox.start and sb:stop() only, so a
-- group runs on any backend those take. Read next: sandbox.lua, task.lua.
local errors = require "rock.errors"
local log = require "rock.log"
local task = require "rock.task"

local M = {}

--- ROCK's SandboxGroupConfig defaults (ROCK_DEFAULT_GROUP_SIZE,
--- ROCK_DEFAULT_START_CONCURRENCY, ROCK_DEFAULT_START_RETRY_TIMES),
M.DEFAULT_SIZE = 2
M.DEFAULT_START_CONCURRENCY = 2
M.DEFAULT_START_RETRY_TIMES = 3
--- seconds before the first retry of a member (then doubling), the most
--- one backoff waits, the largest group and the most stops run at once.
M.DEFAULT_RETRY_BACKOFF = 0.5
M.MAX_BACKOFF = 10
M.MAX_SIZE = 10000
M.STOP_CONCURRENCY = 16

-- the group's own options; every other option goes to rock.sandbox.start
local OWN = { size = true, start_concurrency = true, start_retry_times = true,
              require_all = true, retry_backoff = true, prepare = true }

---@class rock.Group
---@field size integer        members asked for
---@field failures table      {index=, attempts=, error=, errors={...}} per member that did not start
---@field attempts table      every start attempt: {index=, attempt=, ok=, error=, started=, seconds=}
local Group = {}
Group.__index = Group
M.Group = Group

local function whole(v, field, lo, hi, default)
  if v == nil then return default end
  local n = type(v) == "number" and math.tointeger(v)
  if not n or n < lo or n > hi then
    errors.raise("invalid_argument", string.format(
      "group.start: '%s' must be a whole number from %d to %d, got %s", field, lo, hi, tostring(v)))
  end
  return n
end

--- Stop every member, all of them whatever fails (shielded from the
--- deadlines around it, like sb:stop()); at most STOP_CONCURRENCY at once.
--- Safe to call twice. Returns the errors of the stops that failed
--- (logged too), an empty list when none did.
function Group:stop()
  local list = {}
  for i = 1, #self do list[i] = self[i] end
  return task.shield(function()
    local sem = task.semaphore(M.STOP_CONCURRENCY)
    local tasks = {}
    for i, sb in ipairs(list) do
      tasks[i] = task.spawn(function() return sem:with(sb.stop, sb) end)
    end
    local _, errs = task.wait(tasks)
    local out = {}
    for i = 1, #list do
      if errs[i] then
        out[#out + 1] = errs[i]
        log.error("group", "stopping %s: %s", tostring(list[i].id), tostring(errs[i]))
      end
    end
    return out
  end)
end

--- A plain summary (for a log line or JSON): {size=, started={ids},
--- failed={{index=, attempts=, error="code: message"}}}.
function Group:report()
  local json = require "rock.json"
  local r = { size = self.size, started = json.array({}), failed = json.array({}) }
  for i, sb in ipairs(self) do r.started[i] = sb.id end
  for i, f in ipairs(self.failures) do
    r.failed[i] = { index = f.index, attempts = f.attempts, error = tostring(f.error) }
  end
  return r
end

--- Start a group: opts are rock.sandbox.start's options plus size,
--- start_concurrency, start_retry_times (retries per member after its
--- first attempt), require_all, retry_backoff (seconds) and prepare
--- (function(opts, index, attempt) -> opts: the start options of one
--- attempt, a copy it may change). A sandbox_id gives the members
--- "<id>-<index>". Returns the group (the members that started); raises
--- when none started, or with require_all when one did not, the group's
--- report in err.group (its members stopped).
---@return rock.Group
function M.start(opts)
  if type(opts) ~= "table" then errors.raise("invalid_argument", "group.start: expects a table of options") end
  local size = whole(opts.size, "size", 1, M.MAX_SIZE, M.DEFAULT_SIZE)
  local conc = whole(opts.start_concurrency, "start_concurrency", 1, M.MAX_SIZE, M.DEFAULT_START_CONCURRENCY)
  local sandbox = require "rock.sandbox"
  local retries = whole(opts.start_retry_times, "start_retry_times", 0, sandbox.MAX_START_RETRIES,
    M.DEFAULT_START_RETRY_TIMES)
  local backoff = task.check_seconds(opts.retry_backoff, "group.start: 'retry_backoff'", true)
    or M.DEFAULT_RETRY_BACKOFF
  local prepare = opts.prepare
  if prepare ~= nil and type(prepare) ~= "function" then
    errors.raise("invalid_argument", "group.start: 'prepare' must be a function")
  end
  if opts.require_all ~= nil and type(opts.require_all) ~= "boolean" then
    errors.raise("invalid_argument", "group.start: 'require_all' must be a boolean")
  end
  local base = {}
  for k, v in pairs(opts) do if not OWN[k] then base[k] = v end end

  local g = setmetatable({ size = size, failures = {}, attempts = {} }, Group)
  local started = {}   -- index -> sandbox
  local aborted        -- the error that ends every member's attempts
  local cause          -- the first member to fail for good (the one require_all names)
  local sem = task.semaphore(conc)
  local t0 = require("luv").hrtime()
  local function clock() return (require("luv").hrtime() - t0) / 1e9 end
  local tasks = {}

  local function abort(err)
    if aborted then return end
    aborted = err
    for _, t in ipairs(tasks) do task.cancel(t, err) end
  end

  local function member(i)
    local errs, tried = {}, 0
    local function fail(err)
      if errs[#errs] ~= err then errs[#errs + 1] = err end
      local f = { index = i, attempts = tried, error = err, errors = errs }
      g.failures[#g.failures + 1] = f
      cause = cause or f
      if opts.require_all then
        abort(errors.new("cancelled", string.format("group member %d did not start (require_all): %s",
          i, tostring(err))))
      end
    end
    local ok, err = pcall(function()
      for attempt = 1, retries + 1 do
        if aborted then return fail(aborted) end
        sem:acquire()
        tried = attempt
        local rec = { index = i, attempt = attempt, started = clock() }
        g.attempts[#g.attempts + 1] = rec
        local sok, sb = pcall(function()
          local o = {}
          for k, v in pairs(base) do o[k] = v end
          if base.sandbox_id then o.sandbox_id = base.sandbox_id .. "-" .. i end
          if prepare then o = prepare(o, i, attempt) or o end
          return sandbox.start(o)
        end)
        rec.seconds = clock() - rec.started
        sem:release()
        rec.ok = sok
        if sok then
          sb.group_index = i
          started[i] = sb
          return
        end
        rec.error = sb
        errs[#errs + 1] = sb
        if aborted or attempt > retries or errors.is(sb, "invalid_argument") or task.cancelled(sb) then
          return fail(sb)
        end
        local wait = math.min(backoff * 2 ^ (attempt - 1), M.MAX_BACKOFF)
        log.warn("group", "member %d: start failed (attempt %d of %d): %s; retrying in %gs",
          i, attempt, retries + 1, tostring(sb), wait)
        task.sleep(wait)
      end
    end)
    if not ok then fail(err) end -- cancelled while it waited for a permit or a backoff
  end

  for i = 1, size do tasks[i] = task.spawn(member, i) end
  local ok, err = pcall(task.wait, tasks)
  if not ok then -- this task was cancelled (a rock.timeout): end the members, then unwind
    abort(errors.new("cancelled", "group.start was cancelled: " .. tostring(err)))
    task.shield(task.wait, tasks)
  end
  for i = 1, size do if started[i] then g[#g + 1] = started[i] end end
  table.sort(g.failures, function(a, b) return a.index < b.index end)
  if not ok or (opts.require_all and #g.failures > 0) or #g == 0 then
    g:stop()
    if ok then
      local f = cause
      err = errors.new(errors.is(f.error) and f.error.code or "sandbox_start_failed", string.format(
        "group.start: %d of %d member(s) did not start; member %d after %d attempt(s): %s",
        #g.failures, size, f.index, f.attempts, tostring(f.error)))
    end
    if errors.is(err) then err.group = g end
    error(err, 0)
  end
  if #g.failures > 0 then
    log.warn("group", "%d of %d member(s) started; %d did not (group.failures)", #g, size, #g.failures)
  end
  return g
end

return M
