--- rock.agent.dagger.records: what a DAgger round leaves, made from its
-- trajectories (rounds/<r>/trajectories.jsonl, written by rock.agent.run):
--   rounds/<r>/dataset.jsonl  one line per turn of every trajectory:
--     {task_id, episode_id, round, beta, turn, messages_ref,
--      student_action, teacher_action, executed_by, agree,
--      termination_reason, resolved}
--     messages_ref = {path = "rounds/<r>/trajectories.jsonl", episode_id,
--     messages = n}: the turn's state is the first n messages of that
--     trajectory (kept there once, not repeated per turn)
--   dataset.jsonl             the union over the rounds so far of the turns
--                             of the trajectories finish-only keeps
--   rounds/<r>/summary.json   the round's summary (M.summary)
-- Every file is rewritten whole from the trajectories (a temp file, then
-- renamed): a resumed run never repeats a line.
local json = require "rock.json"
local filters = require "rock.filters"

local M = {}

local function resolved(t) return type(t.eval) == "table" and t.eval.resolved == true end

--- The dataset lines (tables) of one trajectory of round r.
function M.turns(traj, r)
  local d = type(traj.dagger) == "table" and traj.dagger or {}
  local path = string.format("rounds/%d/trajectories.jsonl", r)
  local out = {}
  for i, rec in ipairs(type(d.turns) == "table" and d.turns or {}) do
    out[i] = { task_id = traj.instance_id, episode_id = traj.episode_id, round = r, beta = d.beta,
      turn = rec.turn, messages_ref = { path = path, episode_id = traj.episode_id, messages = rec.messages },
      student_action = rec.student_action, teacher_action = rec.teacher_action,
      executed_by = rec.executed_by, agree = rec.agree == true,
      termination_reason = traj.termination_reason or "aborted", resolved = resolved(traj) }
  end
  return out
end

local function sorted(trajs)
  local list = {}
  for i, t in ipairs(trajs) do list[i] = t end
  table.sort(list, function(a, b) return tostring(a.instance_id) < tostring(b.instance_id) end)
  return list
end

--- Round r's records from its trajectories: returns all (the round's
--- dataset lines), kept (the lines of the trajectories finish-only keeps),
--- and the counts {turns, by = {teacher=, student=}, agree, added, dropped,
--- dropped_trajectories = {[reason] = n}}. Lines are in task order.
function M.round(trajs, r)
  local all, kept = {}, {}
  local keep_set = {}
  local k, dropped_by = filters.finish_only(trajs)
  for _, t in ipairs(k) do keep_set[t] = true end
  local c = { turns = 0, by = { teacher = 0, student = 0 }, agree = 0, added = 0, dropped = 0,
              dropped_trajectories = dropped_by }
  for _, t in ipairs(sorted(trajs)) do
    for _, line in ipairs(M.turns(t, r)) do
      all[#all + 1] = line
      c.turns = c.turns + 1
      c.by[line.executed_by] = (c.by[line.executed_by] or 0) + 1
      if line.agree then c.agree = c.agree + 1 end
      if keep_set[t] then kept[#kept + 1] = line; c.added = c.added + 1
      else c.dropped = c.dropped + 1 end
    end
  end
  return all, kept, c
end

--- Round r's summary: the agent's totals (agent_summary: summary.json as
--- rock.agent.run writes it) and the round's own: beta, resolved_rate,
--- executed_by, agreed (turns whose student action equals the label),
--- teacher_agreement (turns where the student's action
--- equals the teacher's label / turns), intervention_rate (turns the
--- teacher executed / turns), records {added, dropped,
--- dropped_trajectories}, policies {student, teacher = {calls, tokens,
--- cost}}, seconds (wall time of the round's runs), complete.
function M.summary(r, beta, trajs, counts, agent_summary, seconds)
  local s = {}
  for key, v in pairs(agent_summary or {}) do s[key] = v end
  local pol = { student = { calls = 0, tokens = 0, cost = 0 }, teacher = { calls = 0, tokens = 0, cost = 0 } }
  local n_resolved = 0
  for _, t in ipairs(trajs) do
    if resolved(t) then n_resolved = n_resolved + 1 end
    local d = type(t.dagger) == "table" and t.dagger or {}
    for _, who in ipairs({ "student", "teacher" }) do
      local st = type(d[who]) == "table" and d[who] or {}
      for _, f in ipairs({ "calls", "tokens", "cost" }) do pol[who][f] = pol[who][f] + (tonumber(st[f]) or 0) end
    end
  end
  s.round, s.beta, s.total = r, beta, #trajs
  s.resolved = n_resolved
  s.resolved_rate = #trajs > 0 and n_resolved / #trajs or 0
  s.turns = counts.turns
  s.executed_by = counts.by
  s.agreed = counts.agree
  s.teacher_agreement = counts.turns > 0 and counts.agree / counts.turns or 0
  s.intervention_rate = counts.turns > 0 and counts.by.teacher / counts.turns or 0
  s.records = { added = counts.added, dropped = counts.dropped, dropped_trajectories = counts.dropped_trajectories }
  s.policies = pol
  s.seconds_wall = seconds
  s.complete = true
  return s
end

--- The round's summary as a table for a terminal (a number that is not
--- whole, as a model's usage may give, shown as it is: never an error).
function M.table(s)
  local function pct(x) return string.format("%.1f%%", 100 * x) end
  local function n(x)
    local i = math.tointeger(x)
    return i and string.format("%d", i) or string.format("%.6g", tonumber(x) or 0)
  end
  local reasons = {}
  for k, c in pairs(s.by_reason or {}) do reasons[#reasons + 1] = k .. " " .. n(c) end
  table.sort(reasons)
  local drops = {}
  for k, c in pairs(s.records.dropped_trajectories or {}) do drops[#drops + 1] = k .. " " .. n(c) end
  table.sort(drops)
  local rows = {
    { string.format("round %s (beta %.4g)", n(s.round), s.beta), string.format("%s tasks", n(s.total)) },
    { "resolved", string.format("%s (%s)", n(s.resolved), pct(s.resolved_rate)) },
    { "ended", #reasons > 0 and table.concat(reasons, ", ") or "-" },
    { "turns", string.format("%s: teacher %s, student %s", n(s.turns), n(s.executed_by.teacher or 0), n(s.executed_by.student or 0)) },
    { "teacher agreement", pct(s.teacher_agreement) },
    { "intervention rate", pct(s.intervention_rate) },
    { "records", string.format("%s added, %s dropped (%s)", n(s.records.added), n(s.records.dropped),
      #drops > 0 and table.concat(drops, ", ") or "none") },
    { "student", string.format("%s calls, %s tokens, $%.4f", n(s.policies.student.calls), n(s.policies.student.tokens), s.policies.student.cost) },
    { "teacher", string.format("%s calls, %s tokens, $%.4f", n(s.policies.teacher.calls), n(s.policies.teacher.tokens), s.policies.teacher.cost) },
    { "wall time", string.format("%.1fs", s.seconds_wall or 0) },
  }
  local out = {}
  for _, row in ipairs(rows) do out[#out + 1] = string.format("%-22s %s", row[1], row[2]) end
  return table.concat(out, "\n")
end

return M
