--- rock.agent.policies.oracle: applies the task's gold patch with
-- `git apply`, then submits, as SWE-bench's gold run does: it checks an
-- image and the harness, not a model.
local errors = require "rock.errors"
local scripted = require "rock.agent.policies.scripted"

local M = {}

--- A heredoc delimiter that is no line of text.
local function delimiter(text)
  local d, n = "ROCK_GOLD_PATCH", 0
  while text:find("\n" .. d .. "\n", 1, true) or text:sub(1, #d + 1) == d .. "\n" do
    n = n + 1
    d = "ROCK_GOLD_PATCH_" .. n
  end
  return d
end

function M.new()
  return {
    name = "oracle",
    episode = function(_, task)
      local patch = task.patch
      if type(patch) ~= "string" or patch == "" then
        errors.raise("invalid_argument", "oracle: task " .. task.instance_id .. " has no gold patch")
      end
      if patch:sub(-1) ~= "\n" then patch = patch .. "\n" end
      local d = delimiter(patch)
      return scripted.new("oracle", {
        { tool = "bash", command = "git apply -v - <<'" .. d .. "'\n" .. patch .. d },
        { tool = "submit" },
      })
    end,
  }
end

return M
