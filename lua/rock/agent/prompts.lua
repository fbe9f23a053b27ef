--- rock.agent.prompts: the texts the agent loop sends to the model, as a
-- plain table of strings with {{name}} placeholders, and render() to fill
-- them. Edit the texts here; the loop (rock.agent) and rock.llm's text mode
-- (llm.parse_bash_block) read them. Read next: lua/rock/llm.lua.
local errors = require "rock.errors"

local M = {}

--- Text mode (mini-swe-agent's): the answer to a model reply that holds
--- zero or several ```bash blocks (or an empty one). {{count}}: how many
--- blocks were found.
M.format_error = [[Format error: your reply must contain EXACTLY ONE bash code block, and it contained {{count}}.
Every reply needs exactly one command, fenced like this (the opening fence is three backticks followed by the word bash, alone on its line):

THOUGHT: one or two sentences on why you run this command.

```bash
your_command --here
```

Rules:
- Exactly one ```bash block per reply, holding a command that is not empty. Other fences (```python, ```diff, plain ```) do not count as commands.
- To run several commands, chain them in that one block with && or ;, or write a script with a here-document and run it in the same block.
- When you are done, submit with this block and nothing else in it:

```bash
echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT
```

Your previous reply was not run. Reply again following these rules.]]

--- Fill a template's {{name}} placeholders (spaces inside the braces are
--- allowed) from vars; values go through tostring. A placeholder with no
--- value in vars raises invalid_argument naming it, so a typo is loud.
---@param template string
---@param vars table|nil
---@return string
function M.render(template, vars)
  if type(template) ~= "string" then
    errors.raise("invalid_argument", "prompts.render: template must be a string")
  end
  if vars ~= nil and type(vars) ~= "table" then
    errors.raise("invalid_argument", "prompts.render: vars must be a table")
  end
  vars = vars or {}
  return (template:gsub("{{%s*([%w_]+)%s*}}", function(name)
    local v = vars[name]
    if v == nil then
      errors.raise("invalid_argument", "prompts.render: no value for {{" .. name .. "}}")
    end
    return tostring(v)
  end))
end

return M
