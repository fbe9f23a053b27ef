--- rock.serve.registry: the sandboxes a `rock serve` knows, by id, with what
-- ROCK's API says about them beyond a Sandbox object: who asked (the
-- X-User-Id, X-Experiment-Id, X-Namespace headers), the idle lease, the
-- pending start, the state after stop and delete (ROCK keeps a stopped
-- sandbox until it is deleted). Every data-plane call touches its entry
-- (the lease) and holds it while in flight (a sandbox running a call is
-- never idle); reap() stops those idle past their lease. A server restarted
-- on the same ROCK_HOME adopts the container sandboxes its predecessor
-- left running (adopt()): their records carry the entry's fields; what
-- its starts cut by a kill left, adopt() removes. An entry is the state
-- model of sandbox.lua (its fields, sandbox.transition, sandbox.status:
-- one builder), plus ROCK's fields of the request; its state becomes
-- "deleted" too, and it exists before its Sandbox does.
-- With an admission (admission.lua, set by init.lua) a start is asked
-- there first and waits in its queue until admitted; state changes free
-- its reservation.
local uv = require "luv"
local json = require "rock.json"
local errors = require "rock.errors"
local task = require "rock.task"
local log = require "rock.log"
local state = require "rock.state"
local sandbox = require "rock.sandbox"
local backends = require "rock.backends"

local M = {}
local Registry = {}
Registry.__index = Registry

M.DEFAULT_LEASE = 30 * 60  -- ROCK's auto_clear_time default: 30 idle minutes
M.START_WAIT = 85          -- /start answers within this (ROCK's bound)

local function iso(t)
  if not t then return json.null end
  return os.date("!%Y-%m-%dT%H:%M:%SZ", math.floor(t))
end

--- opts: backend, fleet (a front's rock.fleet pool: every start is placed
--- by it), metrics (serve/metrics.lua), lease (default seconds).
function M.new(opts)
  return setmetatable({ entries = {}, order = {}, by_key = {}, backend = opts.backend or "auto", fleet = opts.fleet,
    metrics = opts.metrics, lease = opts.lease or M.DEFAULT_LEASE, host_name = backends.this_host().host_name }, Registry)
end

function Registry:get(id)
  local e = self.entries[id]
  if e and e.pooled then return nil end -- a warm one (serve/pool.lua): nobody's until claimed
  return e
end

local function transition(e, to, event)
  if e.state == to then return end
  sandbox.transition(e, to, event)
  if e.on_state then e.on_state(e, to) end -- admission.lua: a reservation freed
end

--- Renew the entry's idle lease (every data-plane call and get_status).
function Registry:touch(e) e.last_used = uv.now() / 1000 end

--- A call on e is in flight: e is not idle until release(e), whose
--- time starts its idle lease again.
function Registry:hold(e) e.calls = (e.calls or 0) + 1 end

function Registry:release(e)
  e.calls = e.calls - 1
  self:touch(e)
end

-- The record fields that let a restarted server serve the sandbox again.
local function persist(e)
  if not e.sb or not e.sb.dir then return end
  local rec = state.read_record(e.sb.dir)
  if not rec then return end
  rec.serve = { user_id = e.user_id, experiment_id = e.experiment_id, namespace = e.namespace,
    lease = e.lease, cpus = e.cpus, memory = e.memory, disk = e.disk, create_time = e.create_time,
    start_time = e.start_time, metadata = e.metadata, pooled = e.pooled }
  pcall(state.write_record, e.sb.dir, rec)
end

--- Start a sandbox from a SandboxStartRequest (checked by the route);
--- returns its entry at once, the start running in a task of its own.
--- A start that fails or times out removes what it made (sandbox.start);
--- one whose /start caller gave up is stopped when it lands (stop()).
--- With warm pools (self.pools, serve/pool.lua) a matching request is
--- answered by a warm entry, claimed; pooled: this start is a pool's own.
function Registry:start(req, who, pooled)
  local key = req.idempotency_key
  local again = key and self.by_key[key]
  if again and again.state ~= "deleted" then return again end -- the same start, sent again
  local warm = not pooled and self.pools and self.pools:claim(req)
  again = key and self.by_key[key] -- the claim waited (a warm one asked): the same start may have come meanwhile
  if again and again.state ~= "deleted" then
    if warm then task.spawn(function() pcall(self.delete, self, warm) end) end
    return again
  end
  if warm then -- the caller's from now on
    warm.pooled, warm.request = nil, req
    warm.user_id, warm.experiment_id, warm.namespace = who.user_id, who.experiment_id, who.namespace
    warm.create_time, warm.lease = os.time(), req.lease or self.lease
    if key then self.by_key[key] = warm end
    self:touch(warm)
    persist(warm)
    if self.metrics then self.metrics:inc("rock_pool_claims_total") end
    return warm
  end
  local id = req.sandbox_id or state.new_id()
  if self.entries[id] and self.entries[id].state ~= "deleted" then
    errors.raise("conflict", "Sandbox " .. id .. " already exists")
  end
  local e = { id = id, image = req.image, state = "pending", state_history = json.array(),
    phases = {}, cpus = req.cpus, memory = req.memory, disk = req.disk, num_gpus = req.num_gpus,
    accelerator_type = req.accelerator_type, user_id = who.user_id, experiment_id = who.experiment_id,
    namespace = who.namespace, metadata = {}, lease = req.lease or self.lease,
    create_time = os.time(), start_time = os.time(), request = req, pooled = pooled or nil }
  if self.admission then self.admission:ask(e, req) end -- may refuse: nothing kept then
  self:touch(e)
  self.entries[id] = e
  self.order[#self.order + 1] = id
  if key then self.by_key[key] = e end
  local t0 = uv.hrtime()
  e.start_task = task.spawn(function()
    local adm, ok, sb = self.admission, true, req.startup_timeout
    if adm then ok, sb = pcall(adm.wait, adm, e) end -- queued until admitted (admission.lua)
    if ok then
      local so = {
        backend = self.backend, image = req.image, sandbox_id = id, memory = req.memory, cpus = req.cpus,
        auto_clear_seconds = e.lease, startup_timeout = sb, pull = req.pull,
        env = req.env, on_create = function(s) e.pending_sb = s end,
      }
      if self.fleet then -- a front: the pool places it (and refuses at once when asked so)
        so.fleet, so.num_gpus, so.wait = self.fleet, req.num_gpus, req.wait
      end
      ok, sb = pcall(sandbox.start, so)
    end
    if adm then adm:started(e) end
    e.start_task = nil
    local m = self.metrics
    if not ok then
      e.start_error = sb
      e.phases = (errors.is(sb) and sb.phases) or (e.pending_sb and e.pending_sb.phases) or e.phases
      e.pending_sb = nil
      e.stop_time = os.time()
      transition(e, "stopped", "start_failed")
      if m then m:start_done(false, e.phases, (uv.hrtime() - t0) / 1e9) end
      log.warn("serve", "start of %s failed: %s", id, tostring(sb))
      return
    end
    e.sb, e.pending_sb = sb, nil
    if e.state ~= "pending" then -- stopped or deleted meanwhile: it must not outlive that
      sb:stop()
      return
    end
    e.phases = sb.phases
    transition(e, "running", "started")
    self:touch(e)
    persist(e)
    if m then m:start_done(true, e.phases, (uv.hrtime() - t0) / 1e9) end
  end)
  return e
end

--- Wait up to s seconds for a pending start; true when it is over.
function Registry:wait_started(e, s)
  local deadline = uv.now() + s * 1000
  while e.state == "pending" and e.start_task and uv.now() < deadline do task.sleep(0.05) end
  return e.state ~= "pending"
end

--- Stop: the sandbox's processes and container go; the entry stays as
--- "stopped" until deleted. A pending start is stopped when it lands.
--- An entry already "stopped" because its rocklet died still has a
--- Sandbox to release (its container, its dir): Sandbox:stop() is safe
--- twice, so it is called either way.
function Registry:stop(e, event)
  if e.state ~= "stopped" and e.state ~= "deleted" then
    e.stop_time = os.time()
    transition(e, "stopped", event or "stop")
  end
  if e.sb then e.sb:stop() end
end

function Registry:delete(e)
  self:stop(e, "delete")
  e.delete_time = os.time()
  transition(e, "deleted", "delete")
  self.entries[e.id] = nil
  local key = e.request and e.request.idempotency_key
  if key and self.by_key[key] == e then self.by_key[key] = nil end
  for i, id in ipairs(self.order) do
    if id == e.id then table.remove(self.order, i); break end
  end
end

--- The live Sandbox of entry e for a data-plane call, or raises
--- sandbox_not_alive (pending, stopped, or its rocklet is gone). With
--- held (a list: the request's), e is held (hold) and added to it: the
--- caller releases what it holds once the call is over.
function Registry:live(e, held)
  if e.state ~= "running" or not e.sb then
    errors.raise("sandbox_not_alive", "sandbox " .. e.id .. " is " .. e.state)
  end
  if e.sb.state ~= "running" then -- its rocklet died: the Sandbox knows
    transition(e, "stopped", "died")
    e.stop_time = os.time()
    errors.raise("sandbox_not_alive", "sandbox " .. e.id .. " is stopped" ..
      (e.sb.stop_reason and (": " .. e.sb.stop_reason) or ""))
  end
  self:touch(e)
  if held then
    self:hold(e)
    held[#held + 1] = e
  end
  return e.sb
end

--- ROCK's SandboxStatus of entry e; alive: whether the rocklet answers
--- (asked by the caller: that call also renews the rocklet's lease).
function Registry:status(e, alive)
  local sb = e.sb or e.pending_sb
  if sb then e.phases = sb.phases end
  if e.state == "running" and sb and sb.state ~= "running" then
    transition(e, "stopped", "died")
    e.stop_time = e.stop_time or os.time()
  end
  return sandbox.status(e, alive, { extra = {
    delete_time = iso(e.delete_time), archive_time = json.null,
    auto_stop_time = e.state == "running" and iso(os.time() + math.max(0, e.lease -
      ((e.calls or 0) > 0 and 0 or uv.now() / 1000 - e.last_used))) or json.null, -- busy: a whole lease after now
    user_id = e.user_id or json.null,
    experiment_id = e.experiment_id or json.null, namespace = e.namespace or json.null,
    metadata = e.metadata, num_gpus = e.num_gpus or 0, accelerator_type = e.accelerator_type or json.null,
    failure_reason = e.start_error and tostring(e.start_error.message or e.start_error) or json.null,
    backend = sb and sb.backend or self.backend,
  } }, sb)
end

--- Where entry e's clients reach it: {host_name=, host_ip=} (its
--- backend's, this node's before its Sandbox exists).
function Registry:where(e)
  local sb = e.sb or e.pending_sb
  return sb and sb:_where() or backends.this_host()
end

--- How many entries are in each state: {pending=, running=, stopped=}
--- (warm ones of a pool included: they hold their share of the node).
function Registry:counts()
  local by = { pending = 0, running = 0, stopped = 0 }
  for _, e in pairs(self.entries) do by[e.state] = (by[e.state] or 0) + 1 end
  return by
end

--- Entries, oldest first, that pass filters {state=, image=, user_id=,
--- experiment_id=, namespace=} (absent = any).
function Registry:list(filters)
  local out = {}
  for _, id in ipairs(self.order) do
    local e = self.entries[id]
    local ok = e ~= nil and not e.pooled
    for k, v in pairs(filters or {}) do
      if ok and v ~= nil and v ~= "" and tostring(e[k]) ~= v then ok = false end
    end
    if ok then out[#out + 1] = e end
  end
  return out
end

--- Stop the running sandboxes whose idle lease lapsed: no call in flight
--- and none for lease seconds. Returns how many.
function Registry:reap()
  local now, n = uv.now() / 1000, 0
  for _, id in ipairs({ table.unpack(self.order) }) do
    local e = self.entries[id]
    if e and not e.pooled and e.state == "running" and (e.calls or 0) == 0 and now - e.last_used >= e.lease then
      log.info("serve", "sandbox %s idle for %ds: its lease lapsed, stopping it", id, math.floor(now - e.last_used))
      n = n + 1 -- counted before the stop, which waits: the entry says stopped at once
      if self.metrics then self.metrics:inc("rock_leases_expired_total") end
      pcall(self.stop, self, e, "lease_expired")
    end
  end
  return n
end

--- The server stops: what adopt() still waits to release goes now.
function Registry:close() self.closed = true end

--- Serve again the sandboxes a previous server on this ROCK_HOME left
--- running (records owned by this service, containers still up, their
--- rocklets answering), and remove what else it left, in whatever state
--- a kill cut its starts (docs/operations.md): a dir with only its owner
--- mark, a record whose container was not made, a container created and
--- never started, one whose rocklet does not answer (sandbox.release).
--- A record whose create may still land (sandbox.release says how long)
--- is removed once that time is over, or when the server stops. Local
--- ones died with that server (their rocklets follow their owner): their
--- dirs are removed. Returns the number adopted.
function Registry:adopt()
  local me = state.owner_label(state.me())
  local n = 0
  local function release(rec, dir, id, final)
    if self.entries[id] then return end
    local ok, done, wait = pcall(sandbox.release, rec, dir, final)
    if not ok then log.warn("serve", "cannot remove what sandbox %s left: %s", id, tostring(done)) end
    if ok and done == false then
      log.info("serve", "sandbox %s: its container create may still land: removing it in %d s", id, wait)
      task.spawn(function() -- a server stopping meanwhile releases it at once
        local deadline = uv.now() + wait * 1000
        while not self.closed and uv.now() < deadline do task.sleep(0.2) end
        release(rec, dir, id, true)
      end)
    end
  end
  for _, s in ipairs(state.list()) do
    local rec = s.record
    local owner = rec and rec.owner
    if not owner then
      local mark = state.marked_owner(s.dir)
      owner = mark and state.owner_label(mark)
    end
    if owner == me and not self.entries[s.id] and rec and rec.serve and rec.serve.pooled then
      -- a warm one of the previous server's pools: nobody's, so it goes
      log.info("serve", "sandbox %s was warm in the previous server's pool: removing it", s.id)
      local ok, sb = pcall(sandbox.attach, rec, s.dir)
      if ok and sb then pcall(sb.stop, sb) else release(rec, s.dir, s.id) end
    elseif owner == me and not self.entries[s.id] then
      local ok, sb = false, "no readable record"
      if rec then ok, sb = pcall(sandbox.attach, rec, s.dir) end
      if ok and sb then
        local sv = rec.serve or {}
        local e = { id = s.id, image = rec.image, state = "running", state_history = json.array(),
          phases = sb.phases, sb = sb, cpus = sv.cpus, memory = sv.memory, disk = sv.disk,
          user_id = sv.user_id, experiment_id = sv.experiment_id, namespace = sv.namespace,
          metadata = sv.metadata or {}, lease = sv.lease or rec.auto_clear_seconds or self.lease,
          create_time = sv.create_time or rec.created, start_time = sv.start_time or rec.created }
        transition(e, "running", "adopted")
        self:touch(e)
        self.entries[s.id] = e
        self.order[#self.order + 1] = s.id
        n = n + 1
      else
        log.info("serve", "sandbox %s of the previous server is gone (%s): removing what is left",
          s.id, tostring(sb))
        release(rec, s.dir, s.id)
      end
    end
  end
  return n
end

return M
