--- rock.agent.prompts: every text the agent loop shows a model, in one
-- editable table. Placeholders are {{name}}; render() fills them and
-- leaves unknown ones as they are. The observation texts follow
-- mini-swe-agent's SWE-bench templates (the return code, the elided long
-- output, the timeout notice), so models trained on them read ours alike.
-- Edit a copy and pass it as opts.prompts to rock.agent.run to change
-- them for one run.
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

M.format_error = [[Please always provide EXACTLY ONE action in triple backticks, found {{actions}} actions.

Please format your action in triple backticks as shown in <response_example>.

<response_example>
Here are some thoughts about why you want to perform the action.

```bash
<action>
```
</response_example>

If you have completed your assignment, please consult the first message about how to
submit your solution (you will not be able to continue working on this task after that).]]

M.tool_format_error = [[Your last answer did not call a tool correctly: {{reason}}.
Call exactly one of the tools (bash, str_replace_editor, submit) with valid JSON arguments.]]

M.observation = [[<returncode>{{returncode}}</returncode>
<output>
{{output}}</output>]]

M.observation_long = [[<returncode>{{returncode}}</returncode>
<warning>
The output of your last command was too long.
Please try a different command that does not produce as much output.
If you're looking at a file you can try use head, tail or sed to view a smaller number of lines selectively.
If you're using grep or find and it produced too much output, you can use a more selective search pattern.
The full output is kept in the sandbox at {{output_file}}.
</warning>
<output_head>
{{head}}
</output_head>
<elided_chars>
{{elided}} characters elided
</elided_chars>
<output_tail>
{{tail}}
</output_tail>]]

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

--- Fill {{name}} placeholders from vars (values through tostring).
function M.render(template, vars)
  return (template:gsub("{{([%w_]+)}}", function(k)
    local v = vars[k]
    if v == nil then return nil end
    return tostring(v)
  end))
end

return M
