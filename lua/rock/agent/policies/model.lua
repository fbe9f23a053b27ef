--- rock.agent.policies.model: a model behind an OpenAI-compatible endpoint
-- (rock.llm), in one of two modes:
--   tools  the model calls bash / str_replace_editor / submit as tools
--          (SWE-agent's way); its answer must hold exactly one tool call
--   text   the model answers with exactly one ```bash block and submits by
--          printing COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT (mini-swe-agent's)
-- An answer that breaks the rule is a format error: the model is told so
-- and the loop counts it (N in a row end the episode as `loop`).
local errors = require "rock.errors"
local tools = require "rock.agent.tools"
local prompts = require "rock.agent.prompts"

local M = {}
local Model = {}
Model.__index = Model

--- factory opts: llm (a rock.llm client; else one is made from llm_opts
--- and the ROCK_LLM_* variables), mode ("tools" | "text", default tools).
function M.new(opts)
  local mode = opts.mode or "tools"
  if mode ~= "tools" and mode ~= "text" then
    errors.raise("invalid_argument", "model policy: mode must be tools or text, got " .. tostring(mode))
  end
  local client = opts.llm or require("rock.llm").new(opts.llm_opts or {})
  return {
    name = "model", model = client.model,
    episode = function()
      return setmetatable({ name = "model", model = client.model, client = client, mode = mode, calls = 0 }, Model)
    end,
  }
end

function Model:begin(ctx)
  local p = ctx.prompts or prompts
  self.prompts = p
  local instance = self.mode == "tools" and p.instance_tools or p.instance_text
  return {
    { role = "system", content = p.system },
    { role = "user", content = prompts.render(instance, ctx.vars) },
  }
end

--- One model call; the turn holds the answer, its parsed action or a
--- format error, and what it cost.
function Model:act(ctx)
  local r = self.client:chat{ messages = ctx.messages, tools = self.mode == "tools" and tools.schemas or nil }
  local msg = r.message or { role = "assistant" }
  msg.role = "assistant"
  self.calls = self.calls + 1
  -- kept as the API must read it back: an assistant message needs content
  -- or tool calls, and each tool call an id its tool message answers
  local calls = type(msg.tool_calls) == "table" and msg.tool_calls or {}
  if msg.content == nil and #calls == 0 then msg.content = "" end
  for i, c in ipairs(calls) do
    if type(c.id) ~= "string" or c.id == "" then c.id = string.format("call_rock_%d_%d", self.calls, i) end
  end
  local turn = { message = msg, usage = r.usage, cost = r.cost or 0, seconds = r.seconds }
  if self.mode == "text" then
    local cmd, why = require("rock.llm").parse_bash_block(msg.content or "")
    if cmd then turn.action = { tool = "bash", command = cmd }
    else turn.format_error = why end
    return turn
  end
  if #calls ~= 1 then
    turn.format_error = prompts.render(self.prompts.tool_format_error, {
      reason = string.format("it made %d tool calls, exactly one is needed", #calls) })
    turn.tool_call_ids = {}
    for i, c in ipairs(calls) do turn.tool_call_ids[i] = c.id end
    return turn
  end
  turn.tool_call_id = calls[1].id
  local action, why = tools.from_tool_call(calls[1])
  if action then turn.action = action
  else turn.format_error = prompts.render(self.prompts.tool_format_error, { reason = why }) end
  return turn
end

--- The message carrying an observation back: a tool message answering the
--- call (tools mode), else a user message. Several calls in one answer are
--- each answered, as the API requires.
function Model:observe(turn, text)
  if self.mode == "text" then return { role = "user", content = text } end
  if turn.tool_call_ids and #turn.tool_call_ids > 0 then
    local msgs = {}
    for i, id in ipairs(turn.tool_call_ids) do msgs[i] = { role = "tool", tool_call_id = id, content = text } end
    return msgs
  end
  if turn.tool_call_id then return { role = "tool", tool_call_id = turn.tool_call_id, content = text } end
  return { role = "user", content = text }
end

return M
