--- rock.agent.progress: how a run shows where it is. On a terminal, one
-- status line redrawn in place (done/running/queued/failed, resolved so
-- far, ETA); otherwise one plain line per finished task, for logs, and
-- one per task whose sandbox waits in a cluster's queue (--backend slurm).
-- queued (shown once one was): tasks whose sandbox start waits in
-- Slurm's queue (the start's "queued" phase); running: the other tasks
-- under way.
local uv = require "luv"

local M = {}
local Progress = {}
Progress.__index = Progress

local function is_tty(f)
  local ok, t = pcall(uv.guess_handle, f == io.stderr and 2 or 1)
  return ok and t == "tty"
end

--- total: tasks to run; opts.out (default io.stderr), opts.tty (default:
--- whether out is a terminal).
function M.new(total, opts)
  opts = opts or {}
  local out = opts.out or io.stderr
  local tty = opts.tty
  if tty == nil then tty = os.getenv("TERM") ~= "dumb" and is_tty(out) end
  return setmetatable({ total = total, done = 0, running = 0, queued = 0, failed = 0, resolved = 0,
    waiting = {}, out = out, tty = tty, t0 = uv.hrtime() }, Progress)
end

local function clock(s)
  s = math.floor(s + 0.5)
  if s >= 3600 then return string.format("%dh%02dm", s // 3600, s % 3600 // 60) end
  if s >= 60 then return string.format("%dm%02ds", s // 60, s % 60) end
  return string.format("%ds", s)
end

function Progress:line()
  local elapsed = (uv.hrtime() - self.t0) / 1e9
  local eta = self.done > 0 and clock(elapsed / self.done * (self.total - self.done)) or "?"
  local width, filled = 24, self.total > 0 and math.floor(24 * self.done / self.total) or 24
  return string.format("[%s%s] %d/%d done · %d running%s · %d failed · %d resolved · %s elapsed · ETA %s",
    string.rep("#", filled), string.rep(".", width - filled), self.done, self.total, self.running - self.queued,
    self.saw_queue and string.format(" · %d queued", self.queued) or "", self.failed, self.resolved,
    clock(elapsed), eta)
end

function Progress:draw()
  if self.tty then self.out:write("\r\27[2K", self:line()); self.out:flush() end
end

function Progress:started()
  self.running = self.running + 1
  self:draw()
end

--- A start phase of task t's sandbox sb changed (sandbox.start's
--- on_phase): "queued" running is a wait in the cluster's queue.
function Progress:phase(t, sb, name, status, message)
  if name ~= "queued" then return end
  local now = status == "running" or nil
  if self.waiting[sb] == now then return end
  self.waiting[sb] = now
  self.queued = self.queued + (now and 1 or -1)
  self.saw_queue = true -- from here on the line counts them
  if self.tty then
    self:draw()
  elseif now then
    self.out:write(string.format("[%d/%d] %s: queued (%s)\n", self.done, self.total, t.instance_id,
      tostring(message)))
    self.out:flush()
  end
end

--- A task ended: traj is its trajectory.
function Progress:finished(traj)
  self.running = self.running - 1
  self.done = self.done + 1
  local ev = traj.eval or {}
  if traj.termination_reason == "aborted" or ev.status == "error" then self.failed = self.failed + 1 end
  if ev.resolved then self.resolved = self.resolved + 1 end
  local what = string.format("%s: %s (%s), %s, %d steps, %.1fs", traj.instance_id,
    tostring(traj.termination_reason), tostring(traj.exit_status),
    ev.resolved and "resolved" or (ev.status or "not graded"), #(traj.steps or {}),
    (traj.timings or {}).total or 0)
  if self.tty then
    self.out:write("\r\27[2K", what, "\n")
    self:draw()
  else
    self.out:write(string.format("[%d/%d] %s\n", self.done, self.total, what))
    self.out:flush()
  end
end

function Progress:close()
  if self.tty then self.out:write("\r\27[2K"); self.out:flush() end
end

return M
