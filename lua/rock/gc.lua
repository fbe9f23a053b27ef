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
-- removes the container, the dir and, for local sandboxes, kills the
-- rocklet's process group. It runs from `rock gc` and at every host start
-- (gc.once).
local uv = require "luv"
local core = require "rock.core"
local log = require "rock.log"
local state = require "rock.state"
local engine = require "rock.engine"
local rocklet = require "rock.rocklet"
local container = require "rock.backends.container"

local M = {}

--- The engines that answer now: list of rock.engine clients.
local function engines()
  local out = {}
  for _, kind in ipairs({ "docker", "podman" }) do
    local e = engine.connect(kind)
    if uv.fs_stat(e.socket) and e:ping(2) then out[#out + 1] = e end
  end
  return out
end

--- Is pid the rocklet serving dir's socket? Its command line says so
--- ("serve --socket <dir>/rocklet.sock ..."). A record is data anyone who
--- can write the dir may have written (the local backend's commands run
--- on the host's files): a pid read from it proves nothing by itself, and
--- a pid of 0, 1 or -1 would have made the group kill below kill(-1).
local function is_rocklet_of(pid, dir)
  if math.type(pid) ~= "integer" or pid <= 1 then return false end
  local f = io.open("/proc/" .. pid .. "/cmdline", "rb")
  if not f then return false end
  local cmd = f:read(65536) or ""
  f:close()
  return cmd:find("\0--socket\0" .. dir .. "/rocklet.sock\0", 1, true) ~= nil
end

--- End a local sandbox's rocklet (only ours: same pid, same start time,
--- and its command line serves dir's socket). SIGTERM first: the rocklet
--- then kills every process it started, which a SIGKILL would orphan;
--- SIGKILL to its process group if it has not gone in 3 s.
local function kill_local(rec, dir)
  local function alive()
    return rec.pid and rec.pid_start and core.proc_start_time(rec.pid) == rec.pid_start
  end
  if not is_rocklet_of(rec.pid, dir) then return end
  if not alive() then return end
  uv.kill(rec.pid, "sigterm")
  for _ = 1, 60 do
    if not alive() then return end
    require("rock.task").sleep(0.05)
  end
  uv.kill(-rec.pid, "sigkill")
  uv.kill(rec.pid, "sigkill")
end

--- The sandbox a container labelled rock.sandbox is, as {id=, dir=,
--- record=}, or nil and why not. Its labels prove nothing: an image
--- committed from a sandbox passes them to every container started from
--- it (and a user's `docker run` of it is no sandbox). What proves it is
--- a record, in the sandbox dir its rock.dir label names, that names the
--- container (container.is_recorded: rock's name for the sandbox, and
--- the container's id or its create's nonce); in a dir with no readable
--- record (a start of an older rock cut before its record), the name and
--- the owner mark, the same owner as the label.
local function claim(c)
  local labels = c.Labels or {}
  local id, dir = labels["rock.sandbox"], labels["rock.dir"]
  if not state.valid_id(id) then return nil, "its rock.sandbox label is no sandbox id" end
  if type(dir) ~= "string" or not dir:match("/sandboxes/" .. id:gsub("%p", "%%%0") .. "$") then
    return nil, "its rock.dir label is no sandbox dir of " .. id
  end
  local rec = state.read_record(dir)
  if rec then
    if rec.id == id and container.is_recorded(c, rec) then return { id = id, dir = dir, record = rec } end
    return nil, "its sandbox's record names another container"
  end
  local mark = uv.fs_stat(dir) and state.marked_owner(dir)
  if mark and state.owner_label(mark) == labels["rock.owner"]
      and container.is_recorded(c, { id = id, nonce = labels["rock.nonce"] }) then
    return { id = id, dir = dir }
  end
  return nil, "no record of its sandbox names it"
end

--- Reap garbage. Returns {removed = {{id=, backend=, why=}, ...},
--- errors = {...}, left = {{id=, why=}, ...}} (left: what gc cannot prove
--- abandoned: dirs, and containers named as rock names its own whose
--- sandbox has no record left).
function M.run()
  local report = { removed = {}, errors = {}, left = {} }
  local running = {} -- sandbox id -> its container runs
  local unremoved = {} -- sandbox id -> its container could not be removed: its record stays
  local function removed(id, backend, why)
    report.removed[#report.removed + 1] = { id = id, backend = backend, why = why }
  end
  -- containers, by label, in every engine that answers
  local answering, gone = engines(), {}
  for _, e in ipairs(answering) do
    local ok, list = pcall(e.container_list, e, "rock.sandbox")
    if not ok then report.errors[#report.errors + 1] = tostring(list); list = {} end
    for _, c in ipairs(list) do
      local labels = c.Labels or {}
      local id = labels["rock.sandbox"] or "?"
      local owner = state.parse_owner(labels["rock.owner"])
      local why, sb, not_ours
      if not state.owner_alive(owner) then -- the owner first: never a live one's
        sb, not_ours = claim(c)
        local rec = sb and sb.record or {}
        if sb and (not rec.kept or c.State ~= "running") then
          why = rec.kept and ("kept, container " .. tostring(c.State)) or "owner dead"
        end
      end
      if why then
        local ok2, err = pcall(e.container_remove, e, c.Id, true)
        if ok2 then
          gone[id] = true
          pcall(state.remove_dir, sb.dir)
          removed(id, e.kind, why)
        else
          unremoved[id] = true
          report.errors[#report.errors + 1] = tostring(err)
        end
      elseif not_ours and container.is_named(c, id) then -- rock's, its proof gone
        report.left[#report.left + 1] = { id = id, why = "container " .. c.Id:sub(1, 12) .. ": " .. not_ours }
      elseif not not_ours then
        running[id] = running[id] or c.State == "running"
      end
    end
  end
  -- sandbox dirs of this state dir
  for _, s in ipairs(state.list()) do
    local rec = s.record
    local owner = state.parse_owner(rec and rec.owner) or state.marked_owner(s.dir)
    local why
    if not owner then
      report.left[#report.left + 1] = { id = s.id,
        why = "no readable record and no owner mark: cannot prove it abandoned" }
    elseif not state.owner_alive(owner) and not unremoved[s.id] then
      if not (rec and rec.kept and running[s.id]) then
        why = rec and "owner dead" or "owner dead (no readable record)"
      end
    end
    -- a container sandbox's record is the proof its container is rock's:
    -- it stays until the container is gone (container.release; the pass
    -- above removed those it found), and while a create its dead host
    -- sent may still land
    if why and rec and rec.engine_socket and not gone[s.id] then
      local ok, done = pcall(container.release, rec)
      if not ok or done == false then
        why = nil
        report.left[#report.left + 1] = { id = s.id, why = ok and "its container create may still land"
          or ("its engine does not answer (" .. tostring(done.message or done) .. "): its container cannot be removed") }
      end
    end
    if why then
      if rec and rec.backend == "local" then kill_local(rec, s.dir) end
      local ok, err = pcall(state.remove_dir, s.dir)
      if ok then removed(s.id, rec and rec.backend or "?", why)
      else report.errors[#report.errors + 1] = tostring(err) end
    end
  end
  return report
end

local once_task -- the one automatic pass of this process
--- gc once per process: _main.lua starts it beside the main task at host
--- start, and sandbox.start waits for it, so a sandbox never starts
--- before what dead hosts left is reaped. ROCK_NO_GC=1 skips it.
function M.once()
  if os.getenv("ROCK_NO_GC") == "1" then return end
  local task = require "rock.task"
  if not once_task then
    once_task = task.spawn(function()
      local ok, report = pcall(M.run)
      M.once_report = ok and report or nil
      if ok and #report.removed > 0 then
        log.warn("gc", "removed %d sandbox(es) left by dead hosts", #report.removed)
      end
    end)
  end
  if task.current() then task.wait(once_task) end
end

--- Live sandboxes: list of {id=, backend=, owner=, owner_alive=, age=,
--- lease_left=, state=}; lease_left asks the rocklet without renewing it.
function M.ps()
  local out, by_id = {}, {}
  for _, s in ipairs(state.list()) do
    local rec = s.record or {}
    local owner = state.parse_owner(rec.owner)
    local row = {
      id = s.id, backend = rec.backend or "?", owner = rec.owner,
      owner_alive = state.owner_alive(owner),
      age = rec.created and (os.time() - rec.created) or nil,
      image = rec.image, state = "?",
    }
    local ok, r = pcall(rocklet.call, rec.socket or (s.dir .. "/rocklet.sock"), "/lease", {}, 2,
      rec.rocklet_pid)
    if ok then
      row.state, row.lease_left = "running", r.lease_left
    else
      row.state = "unreachable"
    end
    out[#out + 1] = row
    by_id[s.id] = row
  end
  for _, e in ipairs(engines()) do
    local ok, list = pcall(e.container_list, e, "rock.sandbox")
    for _, c in ipairs(ok and list or {}) do
      local labels = c.Labels or {}
      local id = labels["rock.sandbox"]
      local row = by_id[id]
      if not container.is_named(c, id) then -- not one rock made: a container of an image committed from a sandbox
        row = nil
      elseif not row then -- another state dir's
        local owner = state.parse_owner(labels["rock.owner"])
        row = { id = id, backend = e.kind, owner = labels["rock.owner"],
                owner_alive = state.owner_alive(owner), image = c.Image,
                age = c.Created and (os.time() - c.Created) or nil }
        out[#out + 1] = row
      end
      if row then
        row.state = c.State
        row.container = c.Id:sub(1, 12)
      end
    end
  end
  table.sort(out, function(a, b) return (a.age or 0) < (b.age or 0) end)
  return out
end

return M
