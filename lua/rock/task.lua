--- rock.task: tasks (coroutines) on the one libuv loop.
-- A task parks itself in M.await while a C or luv operation runs; the
-- operation's completion queues the task and one idle handle resumes queued
-- tasks from the top of the loop, never from inside another task or a C
-- callback. Outside any task (stock lua5.4), await drives the loop itself
-- until the operation completes, so the same API also works there.
-- Read next: _main.lua (the main task), http.lua (an await user).
local uv = require "luv"
local errors = require "rock.errors"
local log = require "rock.log"

local M = {}

local tasks = {}      -- coroutine -> task, for every live task
local live = 0
local ready = {}      -- tasks to resume, with their values
local idle            -- luv idle handle draining `ready`
local CANCEL = {}     -- first value of a resume that aborts an await
local IDLE = {}       -- what a task yields in M.idle
local check_deadlines -- defined with the deadlines, below

---@class rock.Task
---@field done boolean
---@field ok boolean|nil     true when it returned, false when it raised
---@field result table|nil   packed return values or {error}
local Task = {}
Task.__index = Task

local function traceback(e)
  if type(e) == "table" then
    if e.traceback == nil and errors.is(e) then
      e.traceback = debug.traceback("", 2)
    end
    return e
  end
  return debug.traceback(tostring(e), 2)
end

local schedule -- defined below

-- Resume t's coroutine; returns what it yielded (IDLE from M.idle) while
-- it is not done. A task that yields by itself (coroutine.yield, not in
-- M.await or M.idle: nothing would ever wake it, and a server stopping
-- would wait for it for ever) gives way: it is resumed on the next turn.
local function resume(t, ...)
  local co = t.co
  local ok, a, b = coroutine.resume(co, ...)
  if coroutine.status(co) ~= "dead" then
    if a ~= IDLE and not t.cancel then schedule(t) end -- await sets t.cancel
    return a
  end
  -- the body is xpcall(fn): a = its ok flag, b.. = results or error
  tasks[co] = nil
  live = live - 1
  t.done = true
  if not ok then -- a bug in the task machinery itself
    t.ok, t.result = false, { traceback(a) }
  else
    t.ok = a
    t.result = b
  end
  if not t.ok and #t.joiners == 0 and not t.quiet then
    local e = t.result[1]
    log.error("task", "task failed: %s%s", tostring(e),
      errors.is(e) and e.traceback and ("\n" .. e.traceback) or "")
  end
  for _, wake in ipairs(t.joiners) do wake() end
  t.joiners = {}
end

local function drain()
  while #ready > 0 do
    local batch = ready
    ready = {}
    for _, item in ipairs(batch) do
      resume(item[1], table.unpack(item, 2, item.n))
    end
  end
  idle:stop()
end

function schedule(t, ...)
  local item = table.pack(t, ...)
  ready[#ready + 1] = item
  if not idle then idle = uv.new_idle() end
  if #ready == 1 then idle:start(drain) end
end

--- The running task, or nil outside any task.
function M.current()
  local co = coroutine.running()
  return tasks[co]
end

--- Number of tasks not yet finished.
function M.live() return live end

--- Start fn(...) as a new task; it begins on the next loop turn.
---@return rock.Task
function M.spawn(fn, ...)
  assert(type(fn) == "function", "rock.spawn: fn must be a function")
  local args = table.pack(...)
  local t = setmetatable({ done = false, joiners = {} }, Task)
  t.co = coroutine.create(function()
    local r = table.pack(xpcall(fn, traceback, table.unpack(args, 1, args.n)))
    if r[1] then return true, table.pack(table.unpack(r, 2, r.n)) end
    return false, { r[2] }
  end)
  tasks[t.co] = t
  live = live + 1
  schedule(t)
  return t
end

-- Before the loop blocks while a request to a rocklet (or any unix
-- socket peer) is under way, it polls for up to SPIN_NS: a rocklet answers
-- a short command in about that time, and on a virtual machine a CPU that
-- went idle costs tens of microseconds to wake (measured here: a command's
-- round trip drops by ~50 us). The poll stops at the first event and never
-- delays one; it costs at most SPIN_NS of CPU per wait. Waits for anything
-- else (a client of rock serve, a remote server, a timer) do not poll: the
-- CPU is left to the processes doing the work (2 cores: polling there
-- slowed rock serve's hop by half). ROCK_SPIN_US=0 turns it off.
local SPIN_NS = (tonumber(os.getenv("ROCK_SPIN_US") or "") or 200) * 1000
local local_pending = require("rock.core").http_local_pending

--- One turn of the loop: poll briefly until progress() is true, then, if
--- it is not, block until something happens. Returns false when nothing
--- is left that could happen.
local function turn(progress)
  if SPIN_NS > 0 and not progress() and local_pending() > 0 then
    local t0 = uv.hrtime()
    repeat
      uv.run("nowait")
      if progress() then return true end
    until uv.hrtime() - t0 >= SPIN_NS
  end
  return uv.run("once")
end

local function tasks_ready() return #ready > 0 end

--- Before handing control back to code that does not run the loop (a
--- script under stock lua5.4), let handles closed in the last callbacks
--- finish closing: luv 1.44 crashes at lua_close when a close callback is
--- still pending (a timer closed in its own callback, as sleep does).
local function settle() uv.run("nowait") end

-- Deadlines (rock.timeout) of a task: t.deadlines is a stack of scopes
-- {err=, expired=}, outermost first. A deadline that falls while the task
-- is parked cancels the wait at once; one that falls while the task is
-- queued or running Lua is marked and wins at the task's next wait or
-- resume. The outermost expired scope wins: its error passes through the
-- inner scopes, which re-raise errors that are not theirs.
-- The clock is read too, so a wait that completes at once (no loop turn
-- for the timer to fire) still sees a deadline that has passed.
function check_deadlines(t)
  if t.cancel_err and (t.shielded or 0) == 0 then -- M.cancel, while not parked
    local err = t.cancel_err
    t.cancel_err = nil
    error(err, 0)
  end
  local d = t.deadlines
  if not d or #d == 0 then return end
  local now = uv.hrtime()
  for i = 1, #d do
    if d[i].expired or now >= d[i].deadline then
      d[i].expired = true
      error(d[i].err, 0)
    end
  end
end

--- Wait for an operation. start(done) begins it and returns a cancel
--- function (or nil); the operation calls done(...) once; await returns
--- those values. Inside a task the task parks; outside, the loop runs here.
function M.await(start)
  local t = M.current()
  local woken, sync, res = false, true, nil
  if not t then
    if M.loop_running then
      errors.raise("not_in_task", "this call waits: run it inside a task (rock.spawn)")
    end
    local cancel = start(function(...)
      if not res then res = table.pack(...) end
    end)
    M.loop_running = true
    local ok, err = pcall(function()
      local function got() return res ~= nil or #ready > 0 end
      while not res do
        if not turn(got) and not res and #ready == 0 then
          errors.raise("internal", "nothing left to wait on: the operation can never finish")
        end
      end
    end)
    if ok then settle() end
    M.loop_running = false
    if not ok then
      if cancel then cancel() end
      error(err, 0)
    end
    return table.unpack(res, 1, res.n)
  end
  check_deadlines(t) -- one may have fallen while the task ran
  local cancel
  cancel = start(function(...)
    if woken then return end
    woken = true
    if sync then
      res = table.pack(...)
    else
      t.cancel = nil
      schedule(t, ...)
    end
  end)
  sync = false
  if woken then return table.unpack(res, 1, res.n) end
  t.cancel = function(err)
    if woken then return end
    woken = true
    t.cancel = nil
    if cancel then cancel() end
    schedule(t, CANCEL, err)
  end
  local r = table.pack(coroutine.yield())
  check_deadlines(t) -- one may have fallen while the task sat in the queue
  if r[1] == CANCEL then error(r[2], 0) end
  return table.unpack(r, 1, r.n)
end

--- The longest wait rock accepts, in seconds (about 3 years, the
--- rocklet's bound too): past it a duration is taken for a mistake
--- (math.huge, 1e300) and refused.
M.MAX_SECONDS = 1e8

--- Check a duration in seconds: a finite number, 0 <= v <= MAX_SECONDS.
--- Raises invalid_argument naming what (e.g. "rock.sleep: seconds").
--- nil passes when optional is true. Returns v.
function M.check_seconds(v, what, optional)
  if v == nil and optional then return nil end
  if type(v) ~= "number" or v ~= v or v < 0 or v > M.MAX_SECONDS then
    errors.raise("invalid_argument", string.format(
      "%s must be a number of seconds from 0 to %g, got %s", what, M.MAX_SECONDS, tostring(v)))
  end
  return v
end

--- Park the running task for s seconds.
function M.sleep(s)
  M.check_seconds(s, "rock.sleep: seconds")
  M.await(function(done)
    local timer = uv.new_timer()
    uv.update_time() -- timers count from the loop's cached time: refresh it
    timer:start(math.floor(s * 1000 + 0.5), 0, function()
      timer:close()
      done()
    end)
    return function() timer:close() end
  end)
end

--- Wait for a task (returns its results, raises its error) or for a list
--- of tasks (returns values, errors: the first result and the error of
--- each, by position; never raises for a task's failure).
function M.wait(what)
  local function join(t)
    if not t.done then
      M.await(function(done)
        t.joiners[#t.joiners + 1] = done
        return nil
      end)
    end
  end
  if getmetatable(what) == Task then
    what.quiet = true
    join(what)
    if not what.ok then error(what.result[1], 0) end
    return table.unpack(what.result, 1, what.result.n)
  end
  assert(type(what) == "table", "rock.wait: expects a task or a list of tasks")
  for i, t in ipairs(what) do
    if getmetatable(t) ~= Task then error(string.format("rock.wait: item %d is not a task", i), 2) end
  end
  for _, t in ipairs(what) do t.quiet = true end
  local values, errs = {}, {}
  for i, t in ipairs(what) do
    join(t)
    if t.ok then values[i] = t.result[1] else errs[i] = t.result[1] end
  end
  return values, errs
end

--- Run fn(...) in the running task with a deadline of s seconds; past it,
--- whatever the task waits on is cancelled and {code="timeout"} is raised.
--- The deadline holds in every state of the task: if it falls while the
--- task is queued or running Lua, the timeout is raised at its next wait.
--- Nested timeouts each raise their own error; an outer deadline's error
--- passes through inner ones.
function M.timeout(s, fn, ...)
  local t = M.current()
  if not t then errors.raise("not_in_task", "rock.timeout must run inside a task") end
  M.check_seconds(s, "rock.timeout: seconds")
  if type(fn) ~= "function" then
    errors.raise("invalid_argument", "rock.timeout: fn must be a function")
  end
  local scope = { err = errors.new("timeout", string.format("timed out after %gs", s)),
                  deadline = uv.hrtime() + s * 1e9, shield = t.shielded or 0 }
  t.deadlines = t.deadlines or {}
  local depth = #t.deadlines + 1
  t.deadlines[depth] = scope
  local timer = uv.new_timer()
  uv.update_time() -- after Lua that ran long, the cached time is behind
  timer:start(math.floor(s * 1000 + 0.5), 0, function()
    scope.expired = true
    -- inside a shield (M.shield) made after this scope, only mark it
    if t.cancel and (t.shielded or 0) == scope.shield then t.cancel(scope.err) end
  end)
  local r = table.pack(pcall(fn, ...))
  timer:close()
  -- drop this scope (and any inner one an error skipped over)
  for i = #t.deadlines, depth, -1 do t.deadlines[i] = nil end
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end

--- Run fn(...) in the running task shielded from the deadlines of the
--- rock.timeout scopes around it: cleanup (a failed start removing what
--- it made, sb:stop) must finish even when the deadline that interrupted
--- the task has fallen, or a container outlives it (issue 7 hostile
--- round). A deadline that falls meanwhile is only marked; it wins at
--- the task's first wait after the shield. rock.timeout inside fn works
--- as usual. Outside a task, fn(...) is called as is.
function M.shield(fn, ...)
  local t = M.current()
  if not t then return fn(...) end
  local saved = t.deadlines
  t.deadlines = nil
  t.shielded = (t.shielded or 0) + 1
  local r = table.pack(pcall(fn, ...))
  t.shielded = t.shielded - 1
  t.deadlines = saved
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end

--- Cancel task t: what it waits on is cancelled and err is raised in it
--- (once). A task queued or running Lua gets err at its next wait; one
--- inside M.shield gets it at its first wait after the shield, so its
--- cleanup finishes. A finished task is left alone. Used to end running
--- work on a signal (recipes/swe_agent.lua). Code that catches errors to
--- try again (a poll, a retry) must let err through: see M.cancelled.
function M.cancel(t, err)
  if getmetatable(t) ~= Task then error("rock.task.cancel: expects a task", 2) end
  if t.done then return end
  t.cancelled_by = err
  if t.cancel and (t.shielded or 0) == 0 then
    t.cancel(err)
  else
    t.cancel_err = err
  end
end

--- Is task t parked in a wait a cancel ends at once (not queued to
--- resume, not inside M.shield)? A watcher that cancels t's current wait,
--- and not whatever t waits on next, asks this first.
function M.parked(t)
  return t.cancel ~= nil and (t.shielded or 0) == 0
end

--- Is err the error M.cancel raised in the running task? A cancel is
--- raised once: a loop that catches a failed attempt and tries again (a
--- poll until ready, a start retried) would lose it and run on, so it
--- re-raises err when this is true.
function M.cancelled(err)
  local t = M.current()
  return t ~= nil and err ~= nil and rawequal(t.cancelled_by, err)
end

--- Workers: a task that takes jobs one after another, each started at
--- once by the code that hands it over (rock.http.serve's request
--- workers: a handler that does not wait answers before the loop turns).
--- Inside the task, M.idle() parks it idle: not waiting on anything, a
--- cancel meant for its last job dropped. It returns the values of the
--- M.hand(t, ...) that resumes it.
function M.idle()
  local t = M.current()
  assert(t, "rock.task.idle: not in a task")
  t.idle = true
  return coroutine.yield(IDLE)
end

--- Resume the idle task t with ... right here; returns true when t is idle
--- again (it did the job without waiting) or done, false when it waits on
--- something (rock.task resumes it then, as any task); nil when t was not
--- idle. Called from a loop callback, the job runs before the loop turns;
--- called from a task, t runs nested in it until t waits or is idle.
function M.hand(t, ...)
  if not t.idle then return nil end
  t.idle, t.cancel_err, t.cancelled_by = nil, nil, nil
  local yielded = resume(t, ...)
  return t.done or yielded == IDLE
end

---@class rock.Semaphore
local Semaphore = {}
Semaphore.__index = Semaphore

--- A counting semaphore with n permits.
function M.semaphore(n)
  assert(type(n) == "number" and n >= 1, "rock.semaphore: n must be >= 1")
  return setmetatable({ free = n, waiters = {} }, Semaphore)
end

function Semaphore:acquire()
  if self.free > 0 then
    self.free = self.free - 1
    return
  end
  M.await(function(done)
    local w = { done = done }
    self.waiters[#self.waiters + 1] = w
    return function() w.cancelled = true end
  end)
end

function Semaphore:release()
  while #self.waiters > 0 do
    local w = table.remove(self.waiters, 1)
    if not w.cancelled then return w.done() end -- the permit passes on
  end
  self.free = self.free + 1
end

--- Run fn(...) holding one permit; the permit is released on error too.
function Semaphore:with(fn, ...)
  self:acquire()
  local r = table.pack(pcall(fn, ...))
  self:release()
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end

--- Run the loop until pred() is true or nothing can happen any more.
--- Returns pred()'s last value.
function M.run_until(pred)
  M.loop_running = true
  while not pred() do
    if not turn(tasks_ready) and #ready == 0 and not pred() then break end
  end
  settle()
  M.loop_running = false
  return pred()
end

return M
