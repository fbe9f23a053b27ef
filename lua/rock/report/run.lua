--- rock.report.run: a run directory as the report sees it. Reads
-- trajectories.jsonl line by line, keeping going past a bad line (a torn
-- last line of a crash is kept as a `torn` task, marked, never dropped
-- silently), summary.json and run.json when present, the instances file
-- (gold patches, and the tasks that have no trajectory yet: `pending`),
-- and where each task's eval log is (eval/<id>.log; a log the trajectory
-- names but that is gone is `log_missing`), and a DAgger run's rounds
-- (rounds/<r>/dataset.jsonl and summary.json). Each task gets a status:
-- resolved, unresolved, empty (empty patch), error (aborted or the eval
-- failed: not graded), ungraded (no eval), torn, pending. M.loader keeps
-- what it read: a live report's refresh reads only the lines added since
-- (and the rounds' files that changed), not the whole run again.
local json = require "rock.json"
local uv = require "luv"

local M = {}

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local d = f:read("a")
  f:close()
  return d
end
M.read = read

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

local function decode(s)
  local ok, v = pcall(json.decode, s)
  if ok and type(v) == "table" then return v end
end

--- The status of one trajectory (output.summarize's classes, plus
--- ungraded for a task that has no eval).
function M.status(t)
  local ev = type(t.eval) == "table" and t.eval or nil
  if (t.termination_reason or "aborted") == "aborted" or (ev and ev.status == "error") then return "error" end
  if ev and ev.status == "empty_patch" or (t.patch or "") == "" then return "empty" end
  if not ev or ev.status == "none" then return "ungraded" end
  if ev.resolved then return "resolved" end
  return "unresolved"
end

--- What the index needs of a trajectory: it without its messages, steps
--- and submission (nsteps: how many steps). A run's tasks keep this and
--- where their line is (M.full reads and decodes it again for the task's
--- own page), so a big run is never in memory whole.
function M.light(t)
  local l = {}
  for k, v in pairs(t) do
    if k ~= "messages" and k ~= "steps" and k ~= "submission" then l[k] = v end
  end
  l.nsteps = type(t.steps) == "table" and #t.steps or nil
  return l
end

--- The whole trajectory of a task of run (M.load's), read again from its
--- line (nil for a task without a trajectory, or a file changed under it).
function M.full(run, task)
  if not task.at then return nil end
  local f = io.open(run.path, "rb")
  if not f then return nil end
  f:seek("set", task.at)
  local line = f:read(task.len)
  f:close()
  return line and decode(line) or nil
end

--- A file's name for an instance id: the characters task ids may hold,
--- others as _ (a hostile id cannot leave the directory).
function M.file_name(id)
  return (tostring(id):gsub("[^%w_.%-]", "_"):gsub("^%.", "_"))
end

-- a file's identity and size (nil when it is not there): a cached
-- reading of it holds while this does not change
local function stamp(path)
  local st = uv.fs_stat(path)
  if not st then return nil end
  return string.format("%d:%d:%d.%09d", st.ino, st.size, st.mtime.sec, st.mtime.nsec)
end

--- The DAgger rounds of dir (recipes/dagger_eval.lua, docs/dagger.md):
--- one entry a round directory rounds/<r>/ {round, beta, episodes,
--- resolved, turns, agree, teacher, added, dropped, seconds, bad, running,
--- done}. A finished round's numbers are its summary.json's (the
--- recipe's own, `complete`: total, resolved, turns, agreed,
--- executed_by.teacher, records); a round still running has the agent's
--- summary.json at most (done: its tasks so far): its numbers are
--- counted from its dataset.jsonl when there is one (an episode a
--- distinct episode_id), else it is `running` with none. nil when dir has
--- no rounds. cache (a table kept between calls) keeps each round's entry
--- while its files do not change.
function M.rounds(dir, cache)
  local list = {}
  for r = 1, 100000 do
    local base = dir .. "/rounds/" .. r
    local key = tostring(stamp(base .. "/dataset.jsonl")) .. "|" .. tostring(stamp(base .. "/summary.json")) .. "|" ..
      tostring(exists(base .. "/trajectories.jsonl"))
    if key == "nil|nil|false" then break end
    local e = cache and cache[r] and cache[r].key == key and cache[r].entry or M.round(base, r)
    if cache then cache[r] = { key = key, entry = e } end
    list[#list + 1] = e
  end
  return #list > 0 and list or nil
end

--- One round's entry (M.rounds') from its directory base.
function M.round(base, r)
  local data = read(base .. "/dataset.jsonl")
  -- the recipe's summary once the round is complete; the agent's (no
  -- `complete`) while it runs: how many of its tasks are done
  local summary = decode(read(base .. "/summary.json") or "")
  local running_summary = summary and summary.complete ~= true and summary or nil
  if running_summary then summary = nil end
  local e = { round = r, turns = 0, agree = 0, teacher = 0, episodes = 0, resolved = 0, bad = 0, summary = summary }
  local seen = {}
  for line in (data or ""):gmatch("[^\n]+") do
    local d = decode(line)
    if d then
      e.turns = e.turns + 1
      if d.agree == true then e.agree = e.agree + 1 end
      if d.executed_by == "teacher" then e.teacher = e.teacher + 1 end
      if type(d.beta) == "number" and not e.beta then e.beta = d.beta end
      local ep = tostring(d.episode_id or d.task_id)
      if not seen[ep] then
        seen[ep] = true
        e.episodes = e.episodes + 1
        if d.resolved == true then e.resolved = e.resolved + 1 end
      end
    elseif line:find("%S") then
      e.bad = e.bad + 1
    end
  end
  if summary then -- the recipe's own numbers: every trajectory, those without a turn too
    local function n(x) return type(x) == "number" and x or nil end
    local by = type(summary.executed_by) == "table" and summary.executed_by or {}
    local rec = type(summary.records) == "table" and summary.records or {}
    e.beta = n(summary.beta) or e.beta
    e.episodes = n(summary.total) or e.episodes
    e.resolved = n(summary.resolved) or e.resolved
    e.turns = n(summary.turns) or e.turns
    e.agree = n(summary.agreed) or e.agree
    e.teacher = n(by.teacher) or e.teacher
    e.added, e.dropped, e.seconds = n(rec.added), n(rec.dropped), n(summary.seconds_wall)
  elseif not data then
    e.running = true
    e.done = running_summary and type(running_summary.total) == "number" and running_summary.total or nil
  end
  return e
end

-- The task of one line of trajectories.jsonl (n its number, at its
-- offset, nl: it ends with a newline): a trajectory, or torn.
local function task_of(line, n, at, nl)
  local t = decode(line)
  if t and type(t.instance_id) == "string" then
    return { id = t.instance_id, traj = M.light(t), at = at, len = #line, line = n, status = M.status(t) }
  end
  return { id = "(line " .. n .. ")", line = n, torn = true, status = "torn", bytes = #line,
           why = nl and "not a trajectory (malformed JSON)" or "torn: the last line has no newline (cut short)",
           head = line:sub(1, 300) }
end

-- task joins list (a task run again, --resume after an interrupt: the last one counts)
local function add(list, by_id, task)
  local prev = by_id[task.id]
  if prev and not task.torn then
    for i, x in ipairs(list) do if x == prev then table.remove(list, i) break end end
  end
  list[#list + 1] = task
  by_id[task.id] = task
end

local function instances_of(path)
  local txt = read(path)
  if not txt then error("report: cannot read " .. path, 0) end
  local list = txt:match("^%s*%[") and decode(txt) or nil
  if not list then
    list = {}
    for l in txt:gmatch("[^\n]+") do list[#list + 1] = decode(l) end
  end
  local out = {}
  for _, inst in ipairs(list) do
    if type(inst) == "table" and type(inst.instance_id) == "string" then
      out[#out + 1] = { id = inst.instance_id, gold = type(inst.patch) == "string" and inst.patch or nil }
    end
  end
  return out
end

local Loader = {}
Loader.__index = Loader

--- A loader of dir: l:load() is M.load(dir, opts), reading only what
--- trajectories.jsonl gained since its last load (its complete lines are
--- kept; an unfinished last line is read again next time), the rounds'
--- files that changed, and the instances file once. A file that shrank or
--- was replaced (a --resume rewrites it; a DAgger run's next round) is
--- read again whole. Raises as M.load does.
function M.loader(dir, opts)
  opts = opts or {}
  local l = setmetatable({ dir = dir, rounds_cache = {} }, Loader)
  if opts.instances then l.instances = instances_of(opts.instances) end
  return l
end

function Loader:load()
  local dir = self.dir
  local r = { dir = dir, tasks = {}, torn = 0, by_id = {} }
  r.summary = decode(read(dir .. "/summary.json") or "")
  r.info = decode(read(dir .. "/run.json") or "") or {}
  r.rounds = M.rounds(dir, self.rounds_cache)
  r.path = dir .. "/trajectories.jsonl"
  if not exists(r.path) and r.rounds then -- a DAgger run: its latest round's trajectories
    for i = #r.rounds, 1, -1 do
      local path = dir .. "/rounds/" .. i .. "/trajectories.jsonl"
      if exists(path) then r.tasks_round, r.path = i, path break end
    end
  end
  local f = io.open(r.path, "rb")
  if not f then r.missing_trajectories = true end
  -- what was read before holds while the file only grew
  local st, fst = self.state, f and uv.fs_stat(r.path)
  if not st or st.path ~= r.path or not fst or fst.ino ~= st.ino or fst.size < st.offset then
    st = { path = r.path, ino = fst and fst.ino, offset = 0, n = 0, tasks = {}, by_id = {}, torn = 0 }
    self.state = st
  end
  -- line by line from there (the file whole is never in memory), each
  -- task keeping where its line is (M.full reads it again)
  local tail
  if f then
    f:seek("set", st.offset)
    for raw in f:lines("L") do
      local nl = raw:sub(-1) == "\n"
      local line = nl and raw:sub(1, -2) or raw
      if not nl then -- not finished (or cut short): this load's only
        if line:find("%S") then tail = task_of(line, st.n + 1, st.offset, false) end
        break
      end
      st.n = st.n + 1
      if line:find("%S") then
        local task = task_of(line, st.n, st.offset, true)
        if task.torn then st.torn = st.torn + 1 end
        add(st.tasks, st.by_id, task)
      end
      st.offset = st.offset + #raw
    end
    f:close()
  end
  for i, t in ipairs(st.tasks) do r.tasks[i] = t end
  for id, t in pairs(st.by_id) do r.by_id[id] = t end
  r.torn = st.torn
  if tail then
    if tail.torn then r.torn = r.torn + 1 end
    add(r.tasks, r.by_id, tail)
  end
  for _, inst in ipairs(self.instances or {}) do
    local t = r.by_id[inst.id]
    if t then
      t.gold = inst.gold
    else
      t = { id = inst.id, status = "pending", gold = inst.gold }
      r.tasks[#r.tasks + 1] = t
      r.by_id[t.id] = t
    end
  end
  local used = {}
  for _, t in ipairs(r.tasks) do
    local name = M.file_name(t.id)
    while used[name] do name = name .. "_" end
    used[name], t.file = true, name
    local tr = t.traj
    if tr then
      local ev = type(tr.eval) == "table" and tr.eval or nil
      local own = (r.tasks_round and dir .. "/rounds/" .. r.tasks_round or dir) .. "/eval/" .. name .. ".log"
      t.log, t.log_missing = nil, nil
      if tr.instance_id == name and exists(own) then
        t.log = own
      elseif ev and type(ev.log_path) == "string" and exists(ev.log_path) then
        t.log = ev.log_path
      elseif ev and ev.status and ev.status ~= "none" then
        t.log_missing = ev.log_error or "the eval log is missing"
      end
    end
  end
  return r
end

--- Load dir: {dir, path (its trajectories.jsonl), tasks = {{id, status, traj (M.light), at, len (the line's offset and length), line, torn, log, log_missing, gold, file}}, summary, info, torn,
--- rounds (M.rounds), tasks_round (the round whose trajectories are the tasks when dir has no trajectories.jsonl)}.
--- opts.instances: a tasks file (JSONL or a JSON list) for gold patches and pending tasks.
function M.load(dir, opts)
  return M.loader(dir, opts):load()
end

return M
