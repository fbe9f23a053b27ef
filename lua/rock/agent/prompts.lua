--- rock.agent.prompts: every text the agent loop shows a model, in one
-- editable table. Placeholders are {{name}}; render() fills them (a value
-- missing is an error, so a typo is loud). The observation texts follow
-- mini-swe-agent's SWE-bench templates (the return code, the elided long
-- output, the timeout notice), so models trained on them read ours alike.
-- Edit a copy and pass it as opts.prompts to rock.agent.run to change
-- them for one run.
local errors = require "rock.errors"

local M = {}

M.system = [[You are a helpful assistant that can interact with a computer shell to solve programming tasks.]]

-- tools mode: the model calls the bash, str_replace_editor and submit tools
M.instance_tools = [[<uploaded_files>
{{repo_dir}}
</uploaded_files>
I've uploaded a code repository in the directory {{repo_dir}}. Consider the following issue description:

<issue_description>
{{problem_statement}}
</issue_description>

Can you help me implement the necessary changes to the repository so that the requirements specified in the issue are met?
I've already taken care of all changes to any of the test files described in the issue. This means you DON'T have to modify the testing logic or any of the tests in any way!
Your task is to make the minimal changes to non-test files in the {{repo_dir}} directory to ensure the issue is resolved.
Follow these steps:
1. Find and read the code relevant to the issue.
2. Write a script that reproduces the error and run it with the bash tool.
3. Edit the source code with the str_replace_editor tool to resolve the issue.
4. Rerun your script and confirm that the error is fixed.
5. Think about edge cases and make sure your fix handles them.
When you are done, call the submit tool.]]

-- text mode: one fenced bash block per answer, as mini-swe-agent parses it
M.instance_text = [[<pr_description>
Consider the following issue description for the repository in {{repo_dir}}:
{{problem_statement}}
</pr_description>

<instructions>
Make changes to non-test files in {{repo_dir}} so that the issue is resolved, in a way that is general and consistent with the codebase.

Every response must contain a short explanation of your reasoning and EXACTLY ONE bash code block with ONE command (or commands joined with && or ||):

```bash
your_command_here
```

Each command runs in a new step in the same shell session; cd and environment changes persist. The shell is not interactive: do not run editors or pagers.
When you are done, submit your work by running exactly:

```bash
echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT
```

You cannot continue working on the task after submitting.
</instructions>]]

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

M.tool_format_error = [[Your last answer did not call a tool correctly: {{reason}}.
Call exactly one of the tools (bash, str_replace_editor, submit) with valid JSON arguments.]]

M.observation = [[<returncode>{{returncode}}</returncode>
<output>
{{output}}</output>]]

-- what a long answer keeps: its head, the count elided, its tail
local HEAD_TAIL = [[<output_head>
{{head}}
</output_head>
<elided_chars>
{{elided}} characters elided
</elided_chars>
<output_tail>
{{tail}}
</output_tail>]]

M.observation_long = [[<returncode>{{returncode}}</returncode>
<warning>
The output of your last command was too long.
Please try a different command that does not produce as much output.
If you're looking at a file you can try use head, tail or sed to view a smaller number of lines selectively.
If you're using grep or find and it produced too much output, you can use a more selective search pattern.
The full output is kept in the sandbox at {{output_file}}.
</warning>
]] .. HEAD_TAIL

--- An editor answer past tools.EDITOR_LIMIT (an error quoting a huge
--- old_str): its head and tail, as observation_long keeps a command's.
M.editor_long = [[<warning>
The editor's answer was too long; only its start and end are shown.
To see a part of a file, use `view` with a `view_range`, or grep -n.
</warning>
]] .. HEAD_TAIL

M.timeout = [[The last command <command>{{command}}</command> timed out and has been killed.
The output of the command was:
<output>
{{output}}
</output>
Please try another command and make sure to avoid those requiring interactive input.]]

M.session_ended = [[The shell session ended (the command exited it); a new session was started in {{repo_dir}}.
<output>
{{output}}
</output>]]

M.submitted = [[Submitted.]]

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
