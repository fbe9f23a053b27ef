--- rock.agent.tools: the agent's tools and what they answer.
--   bash                run_in_session in the task's session, a timeout per
--                       command; a timed-out command is interrupted by the
--                       rocklet and the session goes on
--   str_replace_editor  the rocklet's native editor (/editor, SWE-agent's
--                       texts), so it works in any image; an answer past
--                       EDITOR_LIMIT keeps its head and tail
--   submit              ends the episode; so does a bash command whose first
--                       output line is COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT
--                       and which exits 0 (mini-swe-agent's way)
-- An action is a table {tool=, ...}: {tool="bash", command=},
-- {tool="str_replace_editor", command=, path=, ...}, {tool="submit"}.
-- Errors of the sandbox itself (it died, the rocklet is gone) are raised:
-- the episode ends them as `aborted`, never as the model's failure.
local cjson = require "cjson"
local errors = require "rock.errors"
local prompts = require "rock.agent.prompts"
local rtrim = require("rock.text").rtrim

local M = {}

M.SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
--- Observations longer than this (bytes) keep head and tail (mini-swe-agent:
--- 10000 characters, 5000 each side).
M.OBSERVATION_LIMIT = 10000
--- The editor's longer than this (bytes) keep head and tail too: SWE-agent's
--- cap on an observation (100000 characters). It is larger than bash's so
--- the editor's own clipped view (16000 characters, numbered) comes whole;
--- an error quoting a huge old_str (17 MB once) does not.
M.EDITOR_LIMIT = 100000

--- The tools as OpenAI function schemas (tools mode).
M.schemas = {
  { type = "function", ["function"] = {
    name = "bash",
    description = "Run a bash command in the repository's shell session. The session keeps its "
      .. "working directory and environment between calls. Commands must not be interactive.",
    parameters = { type = "object", required = { "command" }, properties = {
      command = { type = "string", description = "The bash command to run." } } } } },
  { type = "function", ["function"] = {
    name = "str_replace_editor",
    description = "Custom editing tool for viewing, creating and editing files.\n"
      .. "* State is persistent across command calls and discussions with the user\n"
      .. "* If `path` is a file, `view` displays the result of applying `cat -n`. If `path` is a "
      .. "directory, `view` lists non-hidden files and directories up to 2 levels deep\n"
      .. "* The `create` command cannot be used if the specified `path` already exists as a file\n"
      .. "* If a `command` generates a long output, it will be truncated and marked with `<response clipped>`\n"
      .. "* The `undo_edit` command will revert the last edit made to the file at `path`\n"
      .. "Notes for using the `str_replace` command:\n"
      .. "* The `old_str` parameter should match EXACTLY one or more consecutive lines from the "
      .. "original file. Be mindful of whitespaces!\n"
      .. "* If the `old_str` parameter is not unique in the file, the replacement will not be "
      .. "performed. Make sure to include enough context in `old_str` to make it unique\n"
      .. "* The `new_str` parameter should contain the edited lines that should replace the `old_str`",
    parameters = { type = "object", required = { "command", "path" }, properties = {
      command = { type = "string", enum = { "view", "create", "str_replace", "insert", "undo_edit" },
        description = "The command to run." },
      path = { type = "string", description = "Absolute path to file or directory, e.g. `/testbed/file.py` or `/testbed`." },
      file_text = { type = "string", description = "Required for `create`: the content of the file to be created." },
      old_str = { type = "string", description = "Required for `str_replace`: the string in `path` to replace." },
      new_str = { type = "string", description = "For `str_replace`: the new string (default empty). Required for `insert`: the string to insert." },
      insert_line = { type = "integer", description = "Required for `insert`: `new_str` is inserted AFTER this line of `path`." },
      view_range = { type = "array", items = { type = "integer" },
        description = "Optional for `view` of a file: the lines to show, e.g. [11, 12]; [start, -1] shows from start to the end." },
    } } } },
  { type = "function", ["function"] = {
    name = "submit",
    description = "Submit your changes: the episode ends and the repository's diff is your answer.",
    parameters = { type = "object", properties = {} } } },
}

local EDITOR_FIELDS = { "command", "path", "file_text", "old_str", "new_str", "insert_line", "view_range" }

--- An action from an OpenAI tool call; nil and why when it is not one.
function M.from_tool_call(call)
  local fn = type(call) == "table" and call["function"]
  if type(fn) ~= "table" or type(fn.name) ~= "string" then return nil, "the tool call has no function name" end
  local args = {}
  if type(fn.arguments) == "string" and fn.arguments:find("%S") then
    local ok, v = pcall(require("rock.llm").json_decode, fn.arguments)
    if not ok or type(v) ~= "table" then return nil, "the arguments of " .. fn.name .. " are not a JSON object" end
    args = v
  elseif type(fn.arguments) == "table" then
    args = fn.arguments
  end
  if fn.name == "bash" then
    if type(args.command) ~= "string" then return nil, "bash needs a string `command`" end
    return { tool = "bash", command = args.command }
  elseif fn.name == "str_replace_editor" then
    local a = { tool = "str_replace_editor" }
    for _, k in ipairs(EDITOR_FIELDS) do
      if args[k] ~= nil and args[k] ~= cjson.null then a[k] = args[k] end
    end
    return a
  elseif fn.name == "submit" then
    return { tool = "submit" }
  end
  return nil, "there is no tool named " .. fn.name
end

--- The arguments of an action as a tool call would carry them (JSON).
function M.arguments(action)
  local args = {}
  for k, v in pairs(action) do if k ~= "tool" then args[k] = v end end
  if next(args) == nil then return "{}" end
  return cjson.encode(args)
end

--- A string equal for equal actions (the loop detector compares these).
function M.key(action)
  local keys = {}
  for k in pairs(action) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do
    local v = action[k]
    parts[#parts + 1] = k .. "=" .. (type(v) == "table" and cjson.encode(v) or tostring(v))
  end
  return table.concat(parts, "\0")
end

-- The rocklet cuts output past max_output into head, a note and tail:
-- "\n[... N bytes dropped; full output: PATH ...]\n" (c/rocklet/capture.c).
local function split_capped(out)
  local head, n, tail = out:match("^(.-)\n%[%.%.%. (%d+) bytes dropped[^\n]*%]\n(.*)$")
  return head, tonumber(n), tail
end

--- The observation of a bash result (mini-swe-agent's templates).
local function bash_observation(env, action, r)
  local p = env.prompts or prompts
  if r.failure_reason == "timeout" then
    return prompts.render(p.timeout, { command = action.command, output = r.output })
  end
  local out = r.output or ""
  if r.truncated then
    local head, dropped, tail = split_capped(out)
    if head then
      return prompts.render(p.observation_long, { returncode = r.exit_code, head = head, tail = tail,
        elided = dropped, output_file = r.output_file or "(not kept)" })
    end
  end
  return prompts.render(p.observation, { returncode = r.exit_code, output = out })
end

--- Is a bash result mini-swe-agent's submission? Returns the submission.
local function submission(r)
  if r.exit_code ~= 0 or r.failure_reason ~= "" then return nil end
  local first, rest = (r.output or ""):match("^%s*([^\n]*)\n?(.*)$")
  if first and rtrim(first) == M.SUBMIT_MARKER then return rest end
  return nil
end

-- text cut at byte i (1..#text+1) moved back to the start of a UTF-8
-- character, so neither side holds half of one
local function char_start(text, i)
  while i > 1 and i <= #text do
    local b = text:byte(i)
    if b < 0x80 or b >= 0xC0 then break end
    i = i - 1
  end
  return i
end

--- An editor observation within limit bytes: past it, its head and tail
--- (limit/2 bytes each, whole characters) and the count of characters
--- between them (prompts.editor_long).
local function editor_observation(env, text)
  local limit = env.editor_limit or M.EDITOR_LIMIT
  if #text <= limit then return text end
  local head_end = char_start(text, limit // 2 + 1) - 1
  local tail_start = char_start(text, #text - (limit - limit // 2) + 1)
  return prompts.render((env.prompts or prompts).editor_long, {
    head = text:sub(1, head_end), tail = text:sub(tail_start),
    elided = utf8.len(text, head_end + 1, tail_start - 1) or (tail_start - 1 - head_end) })
end

--- Run one action. env: {sb=, session=, repo_dir=, timeout=(s per command),
--- limit=(bash observation bytes), editor_limit=(editor observation bytes),
--- prompts=, startup=(create_session options)}.
--- Returns {observation=, exit_code=, failure_reason=, submitted=bool,
--- submission=, output_file=}.
function M.run(env, action)
  local sb = env.sb
  if action.tool == "submit" then
    return { observation = (env.prompts or prompts).submitted, exit_code = 0, failure_reason = "", submitted = true }
  elseif action.tool == "bash" then
    local r = sb:run_in_session{ session = env.session, command = action.command,
      timeout = env.timeout, max_output = env.limit or M.OBSERVATION_LIMIT }
    local res = { exit_code = r.exit_code, failure_reason = r.failure_reason or "", output_file = r.output_file }
    if r.failure_reason == "timeout" then res.exit_code = -1 end
    if r.failure_reason == "session_ended" then
      -- `exit` in a command: start the session again, and say so
      sb:create_session(env.startup)
      res.observation = prompts.render((env.prompts or prompts).session_ended,
        { repo_dir = env.repo_dir, output = r.output })
      return res
    end
    local sub = submission(r)
    if sub then res.submitted, res.submission = true, sub end
    res.observation = bash_observation(env, action, r)
    return res
  elseif action.tool == "str_replace_editor" then
    local req = { cwd = env.repo_dir }
    for _, k in ipairs(EDITOR_FIELDS) do req[k] = action[k] end
    local ok, r = pcall(sb.editor, sb, req)
    if not ok then -- arguments of the wrong type are the model's mistake
      if errors.is(r, "invalid_argument") or errors.is(r, "bad_request") then
        return { observation = r.message, exit_code = 1, failure_reason = "editor_error" }
      end
      error(r, 0)
    end
    return { observation = editor_observation(env, r.output or ""), exit_code = r.exit_code or (r.error and 1 or 0),
      failure_reason = r.error and "editor_error" or "" }
  end
  return { observation = "Unknown tool " .. tostring(action.tool), exit_code = 1, failure_reason = "unknown_tool" }
end

return M
