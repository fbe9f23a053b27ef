--- rock.agent.policies.scripted: a policy that plays a fixed list of
-- actions (what replay and oracle are made of). Its turns are written as
-- tool calls, so its trajectories are in the same chat format as a
-- model's in tools mode.
local tools = require "rock.agent.tools"
local prompts = require "rock.agent.prompts"

local M = {}
local Scripted = {}
Scripted.__index = Scripted

--- A policy playing actions (a list of action tables) in order; when they
--- run out, act() returns {exhausted=true}.
function M.new(name, actions)
  return setmetatable({ name = name, model = name, actions = actions, next = 1 }, Scripted)
end

function Scripted:begin(ctx)
  local p = ctx.prompts or prompts
  return {
    { role = "system", content = p.system },
    { role = "user", content = prompts.render(p.instance_tools, ctx.vars) },
  }
end

function Scripted:act()
  local action = self.actions[self.next]
  if not action then return { exhausted = true } end
  local id = "call_" .. self.next
  self.next = self.next + 1
  return {
    action = action, tool_call_id = id,
    message = { role = "assistant", content = "", tool_calls = {
      { id = id, type = "function", ["function"] = { name = action.tool, arguments = tools.arguments(action) } } } },
  }
end

function Scripted:observe(turn, text)
  return { role = "tool", tool_call_id = turn.tool_call_id, content = text }
end

return M
