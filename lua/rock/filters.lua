--- rock.filters: which trajectories a training set keeps.
--   local kept, dropped = rock.filters.finish_only(trajectories)
--   rock.filters.finish_only_file("out/trajectories.jsonl", "out/finished.jsonl")
-- finish_only keeps the trajectories whose termination_reason is "finish"
-- (the agent submitted); the rest are counted by reason, never silently
-- lost: budget, loop, context_overflow and aborted runs are not clean
-- finishes (SWE-FACTS: an auto-submitted patch after a limit is not one).
local json = require "rock.json"
local errors = require "rock.errors"

local M = {}

--- Returns kept (a list) and dropped ({[reason] = count}).
function M.finish_only(trajectories)
  if type(trajectories) ~= "table" then errors.raise("invalid_argument", "finish_only: expects a list of trajectories") end
  local kept, dropped = json.array(), {}
  for _, t in ipairs(trajectories) do
    local reason = type(t) == "table" and t.termination_reason or "malformed"
    if reason == "finish" then kept[#kept + 1] = t
    else dropped[reason] = (dropped[reason] or 0) + 1 end
  end
  return kept, dropped
end

--- Filter a trajectories.jsonl into out_path (written whole, then renamed
--- into place). Returns the number kept and the dropped counts.
function M.finish_only_file(in_path, out_path)
  local output = require "rock.agent.output"
  local records, lines = output.read_jsonl(in_path)
  local line_of = {}
  for i, r in ipairs(records) do line_of[r] = lines[i] end
  local kept, dropped = M.finish_only(records)
  local keep = {}
  for i, t in ipairs(kept) do keep[i] = line_of[t] end -- as written: nothing re-encoded
  output.write_lines(out_path, keep)
  return #keep, dropped
end

return M
