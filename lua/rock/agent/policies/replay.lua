--- rock.agent.policies.replay: actions read from a JSONL file, one line per
-- instance: {"instance_id": ..., "actions": [{"tool": "bash", "command":
-- ...}, {"tool": "str_replace_editor", "command": "str_replace", "path":
-- ..., "old_str": ..., "new_str": ...}, ..., {"tool": "submit"}]}.
local cjson = require "cjson"
local errors = require "rock.errors"
local scripted = require "rock.agent.policies.scripted"

local M = {}

local TOOLS = { bash = true, str_replace_editor = true, submit = true }

-- Is t a JSON list (keys 1..n, nothing else)? An object decodes to a table
-- too, which ipairs would read as no actions at all.
local function is_list(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n == #t
end

--- Read a replay file: instance_id -> list of actions. A malformed line
--- (not a JSON object, no instance_id, `actions` not a list, an action
--- without a known tool, a bash action without a command) raises
--- invalid_argument naming the file and line.
function M.load(path)
  local f, why = io.open(path, "r")
  if not f then errors.raise("invalid_argument", "replay: cannot open " .. tostring(path) .. ": " .. tostring(why)) end
  local by_id, n = {}, 0
  for line in f:lines() do
    n = n + 1
    if line:find("%S") then
      local ok, rec = pcall(cjson.decode, line)
      local bad
      if not ok or type(rec) ~= "table" then bad = "not a JSON object"
      elseif type(rec.instance_id) ~= "string" then bad = "no instance_id"
      elseif type(rec.actions) ~= "table" or not is_list(rec.actions) then
        local v = rec.actions
        bad = "'actions' must be a list of actions, not " .. (v == nil and "missing" or v == cjson.null and "null"
          or type(v) == "table" and "an object" or "a " .. type(v))
      else
        for i, a in ipairs(rec.actions) do
          if type(a) ~= "table" or not TOOLS[a.tool] then
            bad = string.format("action %d has no known tool (bash, str_replace_editor, submit)", i)
          elseif a.tool == "bash" and type(a.command) ~= "string" then
            bad = string.format("action %d (bash) has no string 'command'", i)
          end
          if bad then break end
        end
      end
      if bad then
        f:close()
        errors.raise("invalid_argument", string.format("replay %s line %d: %s", path, n, bad))
      end
      by_id[rec.instance_id] = rec.actions
    end
  end
  f:close()
  return by_id
end

--- A factory: factory:episode(task) gives the policy of one task.
function M.new(opts)
  local path = opts.replay
  if type(path) ~= "string" then errors.raise("invalid_argument", "replay policy: a replay file is required (--replay FILE)") end
  local by_id = M.load(path)
  return {
    name = "replay",
    episode = function(_, task)
      local actions = by_id[task.instance_id]
      if not actions then
        errors.raise("invalid_argument", "replay: no actions for " .. task.instance_id .. " in " .. path)
      end
      return scripted.new("replay", actions)
    end,
  }
end

return M
