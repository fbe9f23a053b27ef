--- rock.agent.output: what a run leaves in its --out DIR.
--   trajectories.jsonl  one trajectory per task, written and flushed as the
--                       task ends (a crash loses nothing already done)
--   preds.jsonl         {instance_id, model_name_or_path, model_patch}, as
--                       SWE-bench's harness reads predictions
--   summary.json        totals, ids by outcome, counts by reason; rewritten
--                       (to a temp file, then renamed) after every task
--   eval/<id>.log       each eval's log (written by the grading)
--   .lock               names the run's pid (the lock is a flock on the dir itself)
-- open() takes the lock first: a second run (--resume too) on a dir in use
-- is refused with conflict, never mixed with the first; a run that died
-- (kill -9 too) holds nothing. open(dir, {resume=true}) keeps what the
-- files hold: a line cut short by a crash, and a task a signal interrupted
-- (interrupted=true), are dropped; the finished tasks are listed in
-- writer.done so the run skips them. Every line is valid UTF-8 (bytes
-- that are not become U+FFFD), and a step's observation is written once:
-- in the message that carried it (M.stored).
local json = require "rock.json"
local errors = require "rock.errors"
local core = require "rock.core"

local M = {}
local Writer = {}
Writer.__index = Writer

--- mkdir -p dir (modes as the umask leaves them, as mkdir(1)); raises io_error.
function M.mkdir(dir)
  require("rock.state").mkdir_p(dir, tonumber("777", 8))
end
local mkdir = M.mkdir

-- f:write(...) then f:flush(), or io_error naming path (a full disk, a
-- quota: nothing may be lost silently)
local function put(f, path, ...)
  local ok, why = f:write(...)
  if ok then ok, why = f:flush() end
  if not ok then errors.raise("io_error", "cannot write " .. path .. ": " .. tostring(why)) end
end

local function open(path, mode)
  local f, why = io.open(path, mode)
  if not f then errors.raise("io_error", "cannot open " .. path .. ": " .. tostring(why)) end
  return f
end

--- The records of a JSONL file, up to a malformed line (a write cut short
--- by a crash). Returns the records and their lines as written.
function M.read_jsonl(path)
  local f = io.open(path, "rb")
  if not f then return {}, {} end
  local data = f:read("a")
  f:close()
  local records, lines = {}, {}
  local pos = 1
  while pos <= #data do
    local nl = data:find("\n", pos, true)
    if not nl then break end -- no newline: cut short
    local line = data:sub(pos, nl - 1)
    local ok, rec = pcall(json.decode, line)
    if ok and type(rec) == "table" then
      records[#records + 1] = rec
      lines[#lines + 1] = line
    elseif line:find("%S") then
      break -- a torn line: what follows cannot be trusted either
    end
    pos = nl + 1
  end
  return records, lines
end

--- A prediction as SWE-bench reads it.
function M.prediction(traj)
  return { instance_id = traj.instance_id, model_name_or_path = traj.model or traj.policy,
           model_patch = traj.patch or "" }
end

-- Write path whole (a temp file, then renamed into place): one line per
-- item, each a string as is or a value to encode, made valid UTF-8.
function M.write_lines(path, items)
  local tmp = path .. ".tmp"
  local f = open(tmp, "wb")
  local ok, why = pcall(function()
    for _, v in ipairs(items) do put(f, path, core.utf8_clean(type(v) == "string" and v or json.encode(v)), "\n") end
  end)
  local closed, cwhy = f:close()
  if ok and not closed then ok, why = false, errors.new("io_error", "cannot write " .. path .. ": " .. tostring(cwhy)) end
  if not ok then
    os.remove(tmp) -- the old file stays as it was
    error(why, 0)
  end
  ok, why = os.rename(tmp, path)
  if not ok then errors.raise("io_error", "cannot write " .. path .. ": " .. tostring(why)) end
end

--- The lock file of an --out dir.
M.LOCK = ".lock"

--- Lock dir for this run (held until writer:close() or the process ends);
--- raises conflict when another run holds it, naming its pid. The flock is
--- on the directory itself (a lock file could be deleted while held, and
--- a second run lock a new one); .lock only names the holder's pid.
function M.lock(dir)
  local ok, l = pcall(core.lock_file, dir)
  if ok then
    local f = io.open(dir .. "/" .. M.LOCK, "wb")
    if f then -- best effort: it only names the holder in a refusal
      f:write(core.getpid(), "\n")
      f:close()
    end
    return l
  end
  if errors.is(l, "conflict") then
    local f = io.open(dir .. "/" .. M.LOCK, "rb")
    local pid = f and tonumber((f:read(32) or ""):match("^(%d+)"))
    if f then f:close() end
    errors.raise("conflict", string.format("%s is in use by another run%s: wait for it to end, or use another --out",
      dir, pid and string.format(" (pid %d)", pid) or ""), { holder_pid = pid })
  end
  error(l, 0)
end

local function open_files(w, resume)
  local dir, tpath = w.dir, w.dir .. "/trajectories.jsonl"
  if resume then
    local recs, lines = M.read_jsonl(tpath)
    local keep, preds = {}, {}
    for i, r in ipairs(recs) do
      if type(r.instance_id) == "string" and not w.done[r.instance_id] and r.interrupted ~= true then
        w.records[#w.records + 1] = r
        w.done[r.instance_id] = true
        keep[#keep + 1], preds[#preds + 1] = lines[i], M.prediction(r)
      end
    end
    -- only whole records are kept: both files are rewritten from them
    M.write_lines(tpath, keep)
    M.write_lines(dir .. "/preds.jsonl", preds)
  else
    M.write_lines(tpath, {})
    M.write_lines(dir .. "/preds.jsonl", {})
  end
  w.traj_f = open(tpath, "ab")
  w.preds_f = open(dir .. "/preds.jsonl", "ab")
end

--- The writer of a run in dir (made if missing), holding its lock: raises
--- conflict when another run holds it, io_error when the files cannot be
--- made. opts.resume keeps the finished tasks (see the top).
function M.open(dir, opts)
  opts = opts or {}
  mkdir(dir)
  local w = setmetatable({ dir = dir, records = {}, done = {} }, Writer)
  w.lock = M.lock(dir) -- before any file is touched
  local ok, err = pcall(open_files, w, opts.resume)
  if not ok then
    w:close()
    error(err, 0)
  end
  return w
end

--- The trajectory as trajectories.jsonl holds it, each observation once:
--- a step whose observation is the content of a message (every one the
--- policy got back) has observation_message, the index of that message
--- in messages counted from 0 (as Python and jq count), instead of a copy.
--- traj itself is not changed.
function M.stored(traj)
  local steps, msgs = traj.steps, traj.messages
  if type(steps) ~= "table" or type(msgs) ~= "table" then return traj end
  local out, j = json.array(), 1
  for i, st in ipairs(steps) do
    local obs, k = type(st) == "table" and st.observation, j
    if type(obs) == "string" then -- the messages follow the steps' order
      while msgs[k] and msgs[k].content ~= obs do k = k + 1 end
    end
    if type(obs) == "string" and msgs[k] then
      local copy = {}
      for key, v in pairs(st) do copy[key] = v end
      copy.observation, copy.observation_message = nil, k - 1
      out[i], j = copy, k + 1
    else
      out[i] = st
    end
  end
  local t = {}
  for key, v in pairs(traj) do t[key] = v end
  t.steps = out
  return t
end

--- The observation of step i (from 1) of a trajectory, in memory or read
--- back from trajectories.jsonl (observation_message).
function M.observation(traj, i)
  local st = traj.steps[i]
  if st.observation ~= nil or st.observation_message == nil then return st.observation end
  local m = traj.messages[st.observation_message + 1]
  return m and m.content
end

--- The line of a trajectory in trajectories.jsonl (M.stored, valid UTF-8).
--- Raises the encoder's error for a value JSON cannot carry (NaN).
function M.encode(traj)
  return core.utf8_clean(json.encode(M.stored(traj)))
end

--- Append one finished trajectory; flushed before it returns. Raises
--- io_error when it cannot be written (the trajectory line may then be
--- torn: --resume drops it and runs the task again), or, with nothing
--- written, the encoder's error for a value JSON cannot carry.
function Writer:write(traj)
  local line = M.encode(traj)
  local pred = core.utf8_clean(json.encode(M.prediction(traj)))
  put(self.traj_f, self.dir .. "/trajectories.jsonl", line, "\n")
  put(self.preds_f, self.dir .. "/preds.jsonl", pred, "\n")
  self.records[#self.records + 1] = traj
  self.done[traj.instance_id] = true
  self:write_summary()
end

--- Totals over trajectories (summary.json's content).
function M.summarize(records, extra)
  local s = { total = #records, resolved = 0, resolved_ids = {}, unresolved_ids = {}, error_ids = {},
    empty_patch_ids = {}, by_reason = {}, by_exit_status = {}, steps = 0, tokens = 0, cost = 0,
    seconds = { setup = 0, agent = 0, eval = 0, total = 0 } }
  for _, t in ipairs(records) do
    local id = t.instance_id
    local reason = t.termination_reason or "aborted"
    s.by_reason[reason] = (s.by_reason[reason] or 0) + 1
    if t.exit_status then s.by_exit_status[t.exit_status] = (s.by_exit_status[t.exit_status] or 0) + 1 end
    local ev = type(t.eval) == "table" and t.eval or nil
    if reason == "aborted" or (ev and ev.status == "error") then
      s.error_ids[#s.error_ids + 1] = id
    elseif ev and ev.status == "empty_patch" or (t.patch or "") == "" then
      s.empty_patch_ids[#s.empty_patch_ids + 1] = id
    elseif ev and ev.resolved then
      s.resolved = s.resolved + 1
      s.resolved_ids[#s.resolved_ids + 1] = id
    else
      s.unresolved_ids[#s.unresolved_ids + 1] = id
    end
    s.steps = s.steps + #(t.steps or {})
    local ms = t.model_stats or {}
    s.tokens = s.tokens + (ms.tokens_sent or 0) + (ms.tokens_received or 0)
    s.cost = s.cost + (ms.instance_cost or 0)
    for k in pairs(s.seconds) do s.seconds[k] = s.seconds[k] + ((t.timings or {})[k] or 0) end
  end
  for _, k in ipairs({ "resolved_ids", "unresolved_ids", "error_ids", "empty_patch_ids" }) do
    table.sort(s[k])
    json.array(s[k])
  end
  for k, v in pairs(extra or {}) do s[k] = v end
  return s
end

function Writer:summary(extra)
  return M.summarize(self.records, extra)
end

function Writer:write_summary(extra)
  local s = self:summary(extra or self.extra)
  M.write_lines(self.dir .. "/summary.json", { s })
  return s
end

--- The summary as a table for a terminal.
function M.summary_table(s)
  local function pct(n) return s.total > 0 and string.format("%.1f%%", 100 * n / s.total) or "-" end
  local rows = {
    { "tasks", tostring(s.total), "" },
    { "resolved", tostring(#s.resolved_ids), pct(#s.resolved_ids) },
    { "unresolved", tostring(#s.unresolved_ids), pct(#s.unresolved_ids) },
    { "empty patch", tostring(#s.empty_patch_ids), pct(#s.empty_patch_ids) },
    { "error (not graded)", tostring(#s.error_ids), pct(#s.error_ids) },
  }
  local reasons = {}
  for r in pairs(s.by_reason) do reasons[#reasons + 1] = r end
  table.sort(reasons)
  for _, r in ipairs(reasons) do rows[#rows + 1] = { "ended: " .. r, tostring(s.by_reason[r]), pct(s.by_reason[r]) } end
  rows[#rows + 1] = { "steps", tostring(s.steps), "" }
  rows[#rows + 1] = { "tokens", tostring(s.tokens), "" }
  rows[#rows + 1] = { "cost", string.format("$%.4f", s.cost), "" }
  rows[#rows + 1] = { "time (setup/agent/eval)", string.format("%.1fs / %.1fs / %.1fs",
    s.seconds.setup, s.seconds.agent, s.seconds.eval), "" }
  local out = {}
  for _, r in ipairs(rows) do out[#out + 1] = string.format("%-26s %12s %8s", r[1], r[2], r[3]) end
  return table.concat(out, "\n")
end

--- Close the files and release the dir's lock; safe twice.
function Writer:close()
  if self.traj_f then self.traj_f:close(); self.traj_f = nil end
  if self.preds_f then self.preds_f:close(); self.preds_f = nil end
  if self.lock then self.lock:release(); self.lock = nil end
end

return M
