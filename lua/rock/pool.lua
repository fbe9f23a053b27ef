--- rock.pool: warm sandboxes, started ahead and handed over at once.
--   local pool = rock.pool{ image = "python:3.11", size = 4, backend = "docker", memory = "4g" }
--   local sb = pool:claim()        -- an idle one at once (or the next to start)
--   ... sb is the caller's now: sb:stop() when done ...
--   pool:close()                   -- the idle ones are stopped
-- The pool keeps `size` sandboxes started and idle; each claim takes one
-- out of the idle list in the same step it looks (no yield between), so a
-- sandbox is never handed out twice, and a start is begun at once to fill
-- the gap. Before it is handed over, the claimed one must answer (its
-- rocklet's is_alive, at most CLAIM_CHECK seconds): one that died since
-- the last look is dropped and the next idle one taken. Starts run in the background within a start semaphore (shared
-- with the caller's when given, else ROCK_ENV_CONCURRENCY or 4 permits); a
-- start that fails is tried again after a backoff (0.5 s doubling to 10 s)
-- and its error kept for a claim that waits in vain. Idle members are
-- looked at every `check_every` seconds: one that died is dropped and
-- replaced; one with an idle lease (auto_clear_seconds) has it renewed by
-- that look. Members are ordinary sandboxes of this host: if the host dies
-- they go as its other sandboxes go (the exit sweep, their leases, rock gc).
-- A host embedding its own kind of member (rock serve's registry entries,
-- serve/pool.lua) gives start, stop, alive, answers and look instead of image.
local uv = require "luv"
local errors = require "rock.errors"
local task = require "rock.task"
local log = require "rock.log"

local M = {}
local Pool = {}
Pool.__index = Pool

M.CHECK_EVERY = 10 -- seconds between looks at the idle members
M.MAX_BACKOFF = 10 -- seconds, at most, between tries of a failing start
M.DEFAULT_CLAIM_TIMEOUT = 180 -- seconds a claim waits when none is idle (ROCK's startup timeout)
M.CLAIM_CHECK = 2 -- seconds, at most, a claimed idle member has to answer before it is taken for dead

local OWN = { size = true, start = true, stop = true, alive = true, answers = true, look = true, start_sem = true,
  check_every = true, name = true }

local function permits()
  local n = math.tointeger(tonumber(os.getenv("ROCK_ENV_CONCURRENCY") or "")) or 4
  return task.semaphore(math.max(1, n))
end

--- opts: size (required, >= 0), and either rock.sandbox.start's options
--- (image, backend, memory, ...: every member is started with them) or a
--- host's hooks: start() -> member, stop(member), alive(member) -> bool
--- (what the host knows, no I/O), answers(member) -> bool (does it answer
--- now: asked at each claim; may wait), look(member) (renews its lease;
--- raises when it is gone). start_sem (a
--- rock.semaphore shared with other starts), check_every (seconds),
--- name (for logs). Begins filling at once; returns the pool.
function M.new(opts)
  if type(opts) ~= "table" then errors.raise("invalid_argument", "rock.pool: expects a table of options") end
  local size = opts.size
  if math.type(size) ~= "integer" or size < 0 or size > 100000 then
    errors.raise("invalid_argument", "rock.pool: size must be a whole number from 0 to 100000, got " .. tostring(size))
  end
  local self = setmetatable({ size = size, idle = {}, waiters = {}, starting = 0, claimed = 0, failures = 0, dropped = 0,
    started = 0, sleepers = {}, inflight = {}, name = opts.name or tostring(opts.image or "pool"), closed = false }, Pool)
  if opts.start then
    self.start_member, self.stop_member = opts.start, opts.stop or function(m) m:stop() end
    self.alive = opts.alive or function() return true end
    self.answers = opts.answers
    self.look = opts.look or function() end
  else
    local so = {}
    for k, v in pairs(opts) do if not OWN[k] then so[k] = v end end
    require("rock.sandbox").limits(so) -- bad options fail here, not in every background start
    self.start_member = function() return require("rock.sandbox").start(so) end
    self.stop_member = function(sb) sb:stop() end
    self.alive = function(sb) return sb.state == "running" end
    self.answers = function(sb) return sb:is_alive() end
    self.look = function(sb) if not sb:is_alive() then errors.raise("sandbox_not_alive", "gone") end end
  end
  self.sem = opts.start_sem or permits()
  local every = task.check_seconds(opts.check_every or M.CHECK_EVERY, "rock.pool: check_every")
  self.timer = uv.new_timer()
  self.timer:start(math.floor(every * 1000), math.floor(every * 1000), function()
    if not self.looking then task.spawn(function() self:check() end) end
  end)
  self.timer:unref() -- the looks never keep a recipe alive
  self:fill()
  return self
end

-- A member came up: to the first waiting claim, else idle.
function Pool:landed(m)
  local w = table.remove(self.waiters, 1)
  if w then
    self.claimed = self.claimed + 1
    w.done(m)
  else
    self.idle[#self.idle + 1] = m
  end
end

-- Begin starts until idle + starting reach size, plus one per waiting claim.
function Pool:fill()
  if self.closed then return end
  local want = self.size + #self.waiters
  while #self.idle + self.starting < want do
    self.starting = self.starting + 1
    local t
    t = task.spawn(function()
      local ok, m = pcall(function() return self.sem:with(self.start_member) end)
      if not ok then
        self.failures, self.last_error = self.failures + 1, m
        local wait = math.min(M.MAX_BACKOFF, 0.5 * 2 ^ math.min(self.failures - 1, 10))
        log.warn("pool", "%s: a start failed (%s); again in %g s", self.name, tostring(m), wait)
        self:backoff(wait) -- the slot stays counted: no other start takes it meanwhile
        self.starting = self.starting - 1
        self.inflight[t] = nil
        return self:fill()
      end
      self.starting = self.starting - 1
      self.inflight[t] = nil
      self.failures, self.started = 0, self.started + 1
      if self.closed then return pcall(self.stop_member, m) end
      self:landed(m)
      self:fill()
    end)
    if not t.done then self.inflight[t] = true end
  end
end

-- Sleep s seconds, or until close: a closed pool keeps nothing waiting.
function Pool:backoff(s)
  task.await(function(done)
    local timer = uv.new_timer()
    local function over()
      self.sleepers[over] = nil
      if not timer:is_closing() then timer:close() end
      done()
    end
    self.sleepers[over] = true
    timer:start(math.ceil(s * 1000), 0, over)
    return function() self.sleepers[over] = nil; if not timer:is_closing() then timer:close() end end
  end)
end

-- Does idle member m (out of the idle list) answer now, within
-- CLAIM_CHECK seconds? A deadline of the caller's that fell meanwhile, or
-- its cancel, is raised here (m back in the idle list, or stopped once closed), not
-- taken for a dead member.
function Pool:answering(m)
  if not self.answers then return true end
  local in_task = task.current() ~= nil
  local ok, yes -- outside a task (stock lua5.4's top level) the loop runs here, bounded by the call's own timeout
  if in_task then ok, yes = pcall(task.timeout, M.CLAIM_CHECK, self.answers, m)
  else ok, yes = pcall(self.answers, m) end
  if ok and yes then return true end
  if not in_task then return false end
  local fine, err
  if not ok and task.cancelled(yes) then fine, err = false, yes -- the caller's cancel, not a dead member
  else fine, err = pcall(task.sleep, 0) end -- the caller's deadline wins at this wait
  if not fine then
    if self.closed then task.spawn(function() pcall(self.stop_member, m) end)
    else table.insert(self.idle, 1, m) end
    error(err, 0)
  end
  return false
end

--- The next idle member that answers (inside a task: each is asked,
--- at most CLAIM_CHECK seconds), or nil (none idle now). The caller owns it.
function Pool:try_claim()
  if self.closed then errors.raise("invalid_argument", "rock.pool: this pool is closed") end
  while #self.idle > 0 do
    local m = table.remove(self.idle, 1)
    -- asked before its replacement begins: the start's first steps would
    -- otherwise run while this claim waits for the answer
    local live = self.alive(m) and self:answering(m)
    self:fill()
    if live then
      if self.closed then -- closed while it was asked: it goes with the others
        task.spawn(function() pcall(self.stop_member, m) end)
        errors.raise("invalid_argument", "rock.pool: this pool was closed while the claim waited")
      end
      self.claimed = self.claimed + 1
      return m
    end
    self.dropped = self.dropped + 1
    log.warn("pool", "%s: an idle sandbox does not answer at its claim; replacing it", self.name)
    task.spawn(function() pcall(self.stop_member, m) end) -- died idle: gone, replaced
  end
  self:fill()
  return nil
end

--- An idle member at once, else the next one to start, waiting up to
--- opts.timeout seconds (default 180; 0: raise at once). Raises timeout
--- (with the last start error, if any) or invalid_argument once closed.
function Pool:claim(opts)
  local m = self:try_claim()
  if m then return m end
  local timeout = task.check_seconds((opts or {}).timeout or M.DEFAULT_CLAIM_TIMEOUT, "pool:claim: timeout")
  local why = function()
    return self.last_error and (": the last start failed: " .. tostring(errors.is(self.last_error) and
      self.last_error.message or self.last_error)) or ""
  end
  if timeout == 0 then errors.raise("timeout", "rock.pool: " .. self.name .. ": no sandbox idle" .. why()) end
  local w = {}
  local got = task.await(function(done)
    local timer = uv.new_timer()
    w.done = function(v)
      if not timer:is_closing() then timer:close() end
      done(v)
    end
    timer:start(math.ceil(timeout * 1000), 0, function()
      for i, x in ipairs(self.waiters) do if x == w then table.remove(self.waiters, i) break end end
      w.done(false)
    end)
    self.waiters[#self.waiters + 1] = w
    self:fill()
    return function() -- cancelled (a rock.timeout around the claim): out of the line
      for i, x in ipairs(self.waiters) do if x == w then table.remove(self.waiters, i) break end end
      if not timer:is_closing() then timer:close() end
    end
  end)
  if got == false then
    errors.raise("timeout", string.format("rock.pool: %s: no sandbox within %g s%s", self.name, timeout, why()))
  end
  if got == nil then errors.raise("invalid_argument", "rock.pool: this pool was closed while the claim waited") end
  return got
end

--- Look at every idle member: renew its lease; drop (and replace) one that is gone.
function Pool:check()
  self.looking = true
  local list = {}
  for i, m in ipairs(self.idle) do list[i] = m end
  for _, m in ipairs(list) do
    if not self.closed and not (self.alive(m) and pcall(self.look, m)) then
      for i, x in ipairs(self.idle) do
        if x == m then
          table.remove(self.idle, i)
          self.dropped = self.dropped + 1
          log.warn("pool", "%s: an idle sandbox is gone; replacing it", self.name)
          pcall(self.stop_member, m)
          break
        end
      end
    end
  end
  self.looking = false
  self:fill()
end

--- {size, idle, starting, waiting, claimed, started, failures, dropped
--- (idle members found dead: by a look or at a claim), last_error}
function Pool:stats()
  local err = self.last_error
  return { size = self.size, idle = #self.idle, starting = self.starting, waiting = #self.waiters,
    claimed = self.claimed, started = self.started, failures = self.failures, dropped = self.dropped,
    last_error = err and tostring(errors.is(err) and err.message or err) or nil }
end

--- Stop the idle members and wait for the starts in flight, each stopped
--- as it lands (a start in its backoff ends at once); waiting claims fail. Claimed sandboxes are not touched.
--- Safe twice.
function Pool:close()
  if self.closed then return end
  self.closed = true
  if not self.timer:is_closing() then self.timer:close() end
  for _, w in ipairs(self.waiters) do w.done(nil) end
  self.waiters = {}
  for over in pairs(self.sleepers) do over() end
  local ts = {}
  for i, m in ipairs(self.idle) do ts[i] = task.spawn(function() pcall(self.stop_member, m) end) end
  self.idle = {}
  for t in pairs(self.inflight) do ts[#ts + 1] = t end -- each stops what it started once it lands
  task.wait(ts)
end

return setmetatable(M, { __call = function(_, opts) return M.new(opts) end })
