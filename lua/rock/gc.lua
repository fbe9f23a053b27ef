--- rock.gc: reap what dead hosts left, and list what is alive.
-- Only a dead owner makes a sandbox garbage (the owner's pid is gone, or
-- now belongs to another process: the start time differs). A sandbox
-- whose owner is alive is never touched, whatever state its container or
-- dir is in (a container between create and start, a dir whose record is
-- being written): its owner stops it. A sandbox kept for debugging
-- (sb:keep(), teardown's keep_on_failure) is spared after its owner died
-- until its lease ends its container. A dir is removed only when proven
-- abandoned: its record, or the owner mark made with it (state.lua), names
-- a dead owner; a dir with neither is left and reported. A container is
-- removed only when proven rock's: its name and its sandbox's record
-- (claim), not its labels, which images committed from it pass on. gc
-- knows no backend: each one's release (a record's process, container)
-- and reap (a sweep of what no record lists: an engine's containers) do
-- their part (backends/init.lua), gc the owners and the dirs. It runs
-- from `rock gc` and at every host start (gc.once).
local log = require "rock.log"
local state = require "rock.state"
local backends = require "rock.backends"

local M = {}

--- Reap garbage. Returns {removed = {{id=, backend=, why=}, ...},
--- errors = {...}, left = {{id=, why=}, ...}} (left: what gc cannot prove
--- abandoned: dirs, and containers named as rock names its own whose
--- sandbox has no record left).
function M.run()
  local report = { removed = {}, errors = {}, left = {} }
  -- what a backend's reap(ctx) reports with, and what it tells the pass
  -- over the records after it: gone[id] (it removed that sandbox's part
  -- and dir), running[id] (its container runs), unremoved[id] (its part
  -- could not be removed: the record stays)
  local ctx = { gone = {}, running = {}, unremoved = {} }
  function ctx.removed(id, backend, why)
    report.removed[#report.removed + 1] = { id = id, backend = backend, why = why }
  end
  function ctx.error(msg) report.errors[#report.errors + 1] = msg end
  function ctx.left(id, why) report.left[#report.left + 1] = { id = id, why = why } end
  for _, name in ipairs(backends.names()) do
    local impl = backends.get(name)
    if impl.reap then
      local ok, err = pcall(impl.reap, ctx)
      if not ok then ctx.error(tostring(err)) end
    end
  end
  -- sandbox dirs of this state dir
  for _, s in ipairs(state.list()) do
    local rec = s.record
    local owner = state.parse_owner(rec and rec.owner) or state.marked_owner(s.dir)
    local why
    if not owner then
      ctx.left(s.id, "no readable record and no owner mark: cannot prove it abandoned")
    elseif not state.owner_alive(owner) and not ctx.unremoved[s.id] then
      if not (rec and rec.kept and ctx.running[s.id]) then
        why = rec and "owner dead" or "owner dead (no readable record)"
      end
    end
    -- the record is the proof that what its backend made is rock's: it
    -- stays until that is gone (release; the sweep above removed what it
    -- found), and while a create its dead host sent may still land
    local impl = rec and backends.get(rec.backend)
    if why and impl and impl.release and not ctx.gone[s.id] then
      local ok, done, _, later = pcall(impl.release, rec, s.dir)
      if not ok or done == false then
        why = nil
        ctx.left(s.id, ok and (later or "what its backend made may still appear")
          or ("its engine does not answer (" .. tostring(done.message or done) .. "): its container cannot be removed"))
      end
    end
    if why then
      local ok, err = pcall(state.remove_dir, s.dir)
      if ok then ctx.removed(s.id, rec and rec.backend or "?", why)
      else ctx.error(tostring(err)) end
    end
  end
  return report
end

local once_task -- the one automatic pass of this process
--- Seconds the automatic pass may take ($ROCK_GC_ONCE_TIMEOUT): an engine
--- that stopped answering (dockerd 20.10 can deadlock under container
--- churn, its /_ping still answering) must not hold every host's start
--- and exit; what the cut pass did not reach, the next one does.
M.ONCE_TIMEOUT = tonumber(os.getenv("ROCK_GC_ONCE_TIMEOUT") or "") or 20
--- gc once per process: _main.lua starts it beside the main task at host
--- start, and sandbox.start waits for it, so a sandbox never starts
--- before what dead hosts left is reaped (or M.ONCE_TIMEOUT passed).
--- ROCK_NO_GC=1 skips it.
function M.once()
  if os.getenv("ROCK_NO_GC") == "1" then return end
  local task = require "rock.task"
  if not once_task then
    once_task = task.spawn(function()
      local ok, report = pcall(task.timeout, M.ONCE_TIMEOUT, M.run)
      M.once_report = ok and report or nil
      if not ok then
        log.warn("gc", "the automatic pass did not finish: %s (the next host's or `rock gc` goes on)",
          tostring(report))
      elseif #report.removed > 0 then
        log.warn("gc", "removed %d sandbox(es) left by dead hosts", #report.removed)
      end
    end)
  end
  if task.current() then task.wait(once_task) end
end

-- A record's sandbox in the one state model (sandbox.lua): what its
-- record says of it, running while it answers.
local function model_of(id, rec)
  return { id = id, backend = rec.backend or "?", image = rec.image, limits = rec.limits,
    state = "running", phases = {}, state_history = {},
    create_time = rec.created, start_time = rec.created }
end

--- Live sandboxes: list of {id=, backend=, owner=, owner_alive=, age=,
--- lease_left=, image=, state=}, each from its record's sandbox through
--- the one status builder (sandbox.status: what sb:get_status and rock
--- serve's get_status answer), state "unreachable" when it does not
--- answer; lease_left asks the sandbox without renewing its lease (its
--- backend's lease()), and each backend's list() adds what it sees
--- beyond this state dir's records (an engine's container state).
function M.ps()
  local sandbox = require "rock.sandbox"
  local rows = { by_id = {} }
  function rows.add(row) rows[#rows + 1] = row end
  for _, s in ipairs(state.list()) do
    local rec = s.record or {}
    local impl = rec.backend and backends.get(rec.backend)
    local ok, r = false, nil
    if impl and impl.lease then ok, r = pcall(impl.lease, rec, s.dir) end
    local st = sandbox.status(model_of(s.id, rec), ok)
    local row = {
      id = st.sandbox_id, backend = st.backend, image = st.image,
      state = st.is_alive and st.state or "unreachable", lease_left = ok and r.lease_left or nil,
      age = st.create_time and (os.time() - st.create_time) or nil,
      owner = rec.owner, owner_alive = state.owner_alive(state.parse_owner(rec.owner)),
    }
    rows.add(row)
    rows.by_id[s.id] = row
  end
  for _, name in ipairs(backends.names()) do
    local impl = backends.get(name)
    if impl.list then pcall(impl.list, rows) end
  end
  local out = {}
  for i, row in ipairs(rows) do out[i] = row end
  table.sort(out, function(a, b) return (a.age or 0) < (b.age or 0) end)
  return out
end

return M
