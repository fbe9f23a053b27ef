--- rock.agent.grading: SWE-bench's grading, in our own code
-- (/work/shared/SWE-FACTS.md "SWE-bench grading"): the patch is applied
-- in the task's repo (git apply, git apply --3way, patch --fuzz), the eval
-- script runs the tests between SWE-bench's markers, the pytest log parser
-- reads the statuses and grade() decides resolved.
--   local result = grading.run(task, patch, { sandbox = { backend = "docker" } })
--   local result = grading.evaluate(sb, task, patch)   -- in a sandbox you hold
-- Tasks come from tasks.lua; recipes/swe_eval.lua grades prediction files.
local json = require "rock.json"
local errors = require "rock.errors"
local log = require "rock.log"
local task_mod = require "rock.task"
local tasks = require "rock.agent.tasks"
local uv = require "luv"

local M = {}

--- SWE-bench's log markers. The eval script prints the first two through
--- `: '...'` under `set -x`, so the log holds `+ : '>>>>> Start Test Output'`.
M.START_MARKER = ">>>>> Start Test Output"
M.END_MARKER = ">>>>> End Test Output"
M.APPLY_PASS = ">>>>> Applied Patch"
M.APPLY_FAIL = ">>>>> Patch Apply Failed"
M.TIMED_OUT = ">>>>> Tests Timed Out"

--- Extensions of files in a test patch that are not tests (not run).
M.NON_TEST_EXTS = { ".json", ".png", ".csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml",
  ".yaml", ".toml" }

--- The apply commands, tried in order; the first that succeeds wins.
M.APPLY_COMMANDS = {
  { "git", "apply", "--verbose" },
  { "git", "apply", "--verbose", "--3way" },
  { "patch", "--batch", "--forward", "--fuzz=5", "-p1", "-i" },
}

--- Seconds each reset, apply and diff step may take (the tests have
--- task.eval_timeout).
M.STEP_TIMEOUT = 300

--- The most bytes of an eval log kept: a longer log keeps its first and
--- last LOG_MAX/2 (the markers, the apply output and pytest's summary).
M.LOG_MAX = 16 << 20

local STATUSES = { "PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL" }
local EXIT_VAR = "rock_test_exit_code"

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function list() return json.array() end

local function check_task(t, fname)
  if type(t) ~= "table" then errors.raise("invalid_argument", fname .. ": 'task' must be a table") end
  local nt, why = tasks.normalize(t)
  if not nt then errors.raise("invalid_argument", fname .. ": bad task: " .. why) end
  return nt
end

local function check_patch(patch, fname)
  if patch ~= nil and type(patch) ~= "string" then
    errors.raise("invalid_argument", fname .. ": 'patch' must be a string or nil")
  end
  return patch == nil or not patch:find("%S")
end

--- The test files a test patch touches: the b/ paths of its `diff --git`
--- lines, without the non-test extensions, in order, each once.
---@param test_patch string
---@return string[]
function M.test_files(test_patch)
  if type(test_patch) ~= "string" then
    errors.raise("invalid_argument", "test_files: 'test_patch' must be a string")
  end
  local out, seen = list(), {}
  for line in (test_patch .. "\n"):gmatch("([^\n]*)\n") do
    local path = line:match("^diff %-%-git a/.- b/(.-)%s*$")
    if path and path ~= "" and not seen[path] then
      local lower, skip = path:lower(), false
      for _, ext in ipairs(M.NON_TEST_EXTS) do
        if lower:sub(-#ext) == ext then skip = true break end
      end
      if not skip then
        seen[path] = true
        out[#out + 1] = path
      end
    end
  end
  return out
end

-- a heredoc delimiter that is no line of text
local function delimiter(text)
  local d = "EOF_114329324912"
  while ("\n" .. text .. "\n"):find("\n" .. d .. "\n", 1, true) do d = d .. "_" end
  return d
end

--- The eval script (bash): SWE-bench's, with the task's test command and
--- test files. Its exit status is the test command's, recorded in the log
--- as `+ rock_test_exit_code=N` between the markers.
---@param task rock.Task
---@return string
function M.eval_script(task)
  task = check_task(task, "eval_script")
  local files = M.test_files(task.test_patch)
  local quoted = {}
  for i, f in ipairs(files) do quoted[i] = q(f) end
  local fl = table.concat(quoted, " ")
  local patch = task.test_patch
  if patch ~= "" and patch:sub(-1) ~= "\n" then patch = patch .. "\n" end
  local d = delimiter(patch)
  local s = { "#!/bin/bash", "set -uxo pipefail" }
  for _, src in ipairs(task.startup_source) do s[#s + 1] = "source " .. q(src) end
  s[#s + 1] = "cd " .. q(task.repo_dir)
  if #files > 0 then s[#s + 1] = "git checkout " .. q(task.base_commit) .. " -- " .. fl end
  s[#s + 1] = "git apply -v - <<'" .. d .. "'\n" .. patch .. d
  s[#s + 1] = ": '" .. M.START_MARKER .. "'"
  s[#s + 1] = task.test_cmd .. (#files > 0 and (" " .. fl) or "")
  s[#s + 1] = EXIT_VAR .. "=$?"
  s[#s + 1] = ": '" .. M.END_MARKER .. "'"
  if #files > 0 then s[#s + 1] = "git checkout " .. q(task.base_commit) .. " -- " .. fl end
  s[#s + 1] = "exit $" .. EXIT_VAR
  return table.concat(s, "\n") .. "\n"
end

-- the text between the markers: after the first start marker, before the
-- last end marker. SWE-bench cuts at the first end marker (and at a second
-- start marker), so a test that prints a marker hides every result after
-- it; the script's own end marker is the last one in the log (only the
-- checkout of the test files follows it).
local function between_markers(text)
  local s = text:find(M.START_MARKER, 1, true)
  if not s then return nil end
  local from, e = s + #M.START_MARKER, nil
  repeat
    local at = text:find(M.END_MARKER, from, true)
    if at then e, from = at, at + 1 end
  until not at
  if not e then return nil end
  return text:sub(s + #M.START_MARKER, e - 1)
end

--- Parse `pytest -rA` output: only the text between the markers. Returns
--- {[test]=status} and whether both markers were found.
---@param text string the log (any bytes)
---@return table<string,string> statuses, boolean found
function M.parse_pytest(text)
  if type(text) ~= "string" then
    errors.raise("invalid_argument", "parse_pytest: 'log' must be a string")
  end
  local st = {}
  local body = between_markers(text)
  if not body then return st, false end
  for line in body:gmatch("[^\n]+") do
    for _, status in ipairs(STATUSES) do
      if line:sub(1, #status) == status then
        if not line:match("^SKIPPED %[%d+%]") then
          if status == "FAILED" then line = line:gsub(" %- ", " ") end
          local first, second = line:match("^(%S+)%s+(%S+)")
          if second then st[second] = first end
        end
        break
      end
    end
  end
  return st, true
end

local function passed(s) return s == "PASSED" or s == "XFAIL" end

---@class rock.GradeReport
---@field resolved boolean
---@field FAIL_TO_PASS {success: string[], failure: string[]}
---@field PASS_TO_PASS {success: string[], failure: string[]}
---@field reason string|nil why it is not resolved

--- Grade statuses against the task's lists, SWE-bench's rules.
--- info: {empty_patch=false, applied=true, markers=true, test_exit_code=}.
---@return rock.GradeReport
function M.grade(task, statuses, info)
  task = check_task(task, "grade")
  if type(statuses) ~= "table" then
    errors.raise("invalid_argument", "grade: 'statuses' must be a table {[test]=status}")
  end
  info = info or {}
  local r = { resolved = false, FAIL_TO_PASS = { success = list(), failure = list() },
              PASS_TO_PASS = { success = list(), failure = list() } }
  for _, t in ipairs(task.FAIL_TO_PASS) do
    local side = passed(statuses[t]) and r.FAIL_TO_PASS.success or r.FAIL_TO_PASS.failure
    side[#side + 1] = t
  end
  for _, t in ipairs(task.PASS_TO_PASS) do
    local ok = passed(statuses[t]) or statuses[t] == "SKIPPED"
    local side = ok and r.PASS_TO_PASS.success or r.PASS_TO_PASS.failure
    side[#side + 1] = t
  end
  local any_failed = false
  for _, s in pairs(statuses) do
    if s == "FAILED" or s == "ERROR" then any_failed = true break end
  end
  local code = info.test_exit_code
  local f2p, p2p = #r.FAIL_TO_PASS.failure, #r.PASS_TO_PASS.failure
  if info.empty_patch then
    r.reason = "empty patch"
  elseif info.applied == false then
    r.reason = "patch apply failed"
  elseif info.markers == false then
    r.reason = "test output markers missing from the log"
  elseif f2p > 0 or p2p > 0 then
    r.reason = string.format("%d of %d FAIL_TO_PASS and %d of %d PASS_TO_PASS tests failed",
      f2p, #task.FAIL_TO_PASS, p2p, #task.PASS_TO_PASS)
  elseif code and code ~= 0 and not any_failed then
    r.reason = string.format("the test command exited %d but no test FAILED or ERROR: " ..
      "the log is not trusted", code)
  else
    r.resolved = true
  end
  return r
end

-- a path of a patch's file header with a ".git" or ".." component
local function bad_path(path)
  path = path:gsub("\t.*", ""):gsub("%s+$", ""):gsub('^"', ""):gsub('"$', "")
  if path == "/dev/null" then return nil end
  for part in path:gmatch("[^/]+") do
    if part == ".." or part:lower() == ".git" then return path end
  end
  return nil
end

--- The first file a patch names (in its headers: `diff --git`, `---`,
--- `+++`, `***`, `Index:`, `rename`/`copy from`/`to`; hunk lines are
--- skipped) whose path has a `.git` or `..` component, or nil. git apply
--- refuses such paths itself; `patch`, the last apply attempt, writes
--- into .git/ (a hook, a config that runs commands), which the reset
--- before the next evaluation does not undo.
---@param patch string
---@return string|nil path
function M.unsafe_path(patch)
  if type(patch) ~= "string" then
    errors.raise("invalid_argument", "unsafe_path: 'patch' must be a string")
  end
  local old, new = 0, 0 -- lines left in the current unified hunk
  for line in (patch .. "\n"):gmatch("([^\n]*)\n") do
    line = line:gsub("\r$", "")
    local c = line:sub(1, 1)
    if (old > 0 or new > 0) and (c == " " or c == "" or c == "-" or c == "+" or c == "\\") then
      if c == "-" then old = old - 1
      elseif c == "+" then new = new - 1
      elseif c ~= "\\" then old, new = old - 1, new - 1 end
    else
      old, new = 0, 0
      local a, b = line:match("^@@ %-%d+,?(%d*) %+%d+,?(%d*) @@")
      local x, y = line:match("^diff %-%-git (.-) (b/.*)$")
      local path = line:match("^%-%-%- (.*)") or line:match("^%+%+%+ (.*)")
        or line:match("^%*%*%* (.*)") or line:match("^Index: (.*)")
        or line:match("^rename from (.*)") or line:match("^rename to (.*)")
        or line:match("^copy from (.*)") or line:match("^copy to (.*)")
      if a then
        old, new = tonumber(a) or 1, tonumber(b) or 1
      elseif x then
        local bad = bad_path(x) or bad_path(y)
        if bad then return bad end
      elseif path then
        local bad = bad_path(path)
        if bad then return bad end
      end
    end
  end
  return nil
end

-- run argv (or sh code) in the sandbox; never raises for the command's
-- own failure: returns ok, "stdout+stderr", exit_code, failure_reason
local function run(sb, command, cwd, timeout)
  local ok, r = pcall(sb.execute, sb, { command = command, cwd = cwd, timeout = timeout })
  if not ok then
    if errors.is(r, "spawn_failed") then return false, tostring(r.message) .. "\n", nil, "spawn_failed" end
    error(r, 0)
  end
  local out = (r.stdout or "") .. (r.stderr or "")
  return r.exit_code == 0 and r.failure_reason == "", out, r.exit_code, r.failure_reason
end

local GIT = "git -c safe.directory='*' "

local function reset(sb, t)
  local cmd = GIT .. "reset -q --hard " .. q(t.base_commit) .. " && " .. GIT .. "clean -q -fd"
  local ok, out, code = run(sb, cmd, t.repo_dir, M.STEP_TIMEOUT)
  if not ok then
    errors.raise("git_failed", string.format("resetting %s to %s failed (exit %s): %s",
      t.repo_dir, t.base_commit, tostring(code), out))
  end
end

--- The agent's patch: every change in repo_dir against base_commit, new
--- files and binary files included (`git add -A && git diff --cached
--- --binary <base_commit>`), read back as exact bytes. Raises git_failed.
---@param sb rock.Sandbox
---@param task rock.Task
---@return string patch
function M.diff(sb, task)
  task = check_task(task, "diff")
  local function diff(extra)
    local cmd = "f=$(mktemp \"${TMPDIR:-/tmp}/rock-diff.XXXXXX\") || exit 1; " .. (extra or "") .. "if " ..
      GIT .. "add -A && " .. GIT .. "diff --cached --binary --no-color --no-ext-diff --src-prefix=a/ --dst-prefix=b/ " ..
      q(task.base_commit) .. " >\"$f\"; then echo \"$f\"; else rc=$?; rm -f \"$f\"; exit $rc; fi"
    local ok, out, code = run(sb, cmd, task.repo_dir, M.STEP_TIMEOUT)
    local file = ok and out:match("^(/%S+)\n")
    if not file then
      errors.raise("git_failed", string.format("git diff in %s failed (exit %s): %s",
        task.repo_dir, tostring(code), out))
    end
    local r = sb:read_file{ path = file, binary = true }
    pcall(sb.execute, sb, { command = { "rm", "-f", file }, timeout = 30 })
    return r.content
  end
  local patch = diff()
  -- A text file that is not UTF-8 (latin-1) puts raw bytes in the patch,
  -- which no JSON string holds (preds.jsonl, trajectories): diff again
  -- with every file as binary, whose patch is ASCII and applies the same.
  if not utf8.len(patch) then
    patch = diff("a=$(mktemp \"${TMPDIR:-/tmp}/rock-attr.XXXXXX\") && echo '* binary' >\"$a\" && " ..
      "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.attributesFile GIT_CONFIG_VALUE_0=\"$a\"; " ..
      "trap 'rm -f \"$a\"' EXIT; ")
  end
  return patch
end

-- is err the error of a rock.timeout around the running task (which
-- must pass through us), or a cancel?
local function from_outside(err)
  if errors.is(err, "cancelled") then return true end
  local t = task_mod.current()
  for _, d in ipairs(t and t.deadlines or {}) do
    if d.err == err then return true end
  end
  return false
end

local function new_result(t)
  return { instance_id = t.instance_id, status = "error", resolved = false, applied = false,
           apply_output = "", tests = {}, log = "" }
end

local function empty_result(t)
  local res = new_result(t)
  res.status = "empty_patch"
  res.report = M.grade(t, {}, { empty_patch = true })
  res.log = string.format("rock eval: %s: empty patch, nothing to evaluate\n", t.instance_id)
  res.seconds = 0
  return res
end

local function tail(s, n)
  s = s:gsub("%s+$", "")
  return #s > n and ("..." .. s:sub(-n)) or s
end

-- the eval log: whole up to LOG_MAX bytes; a longer one (read_file stops
-- at 32 MiB) as its head and tail, LOG_MAX/2 each, cut at line ends, with
-- a line saying how much went between them
local function read_log(sb, logf)
  local ok, out = run(sb, { "sh", "-c", 'wc -c <"$1"', "rock-eval", logf }, nil, M.STEP_TIMEOUT)
  local size = ok and tonumber(out:match("^%s*(%d+)%s*$"))
  if not size then errors.raise("io_error", "cannot size the eval log: " .. out) end
  if size <= M.LOG_MAX then return sb:read_file{ path = logf, binary = true }.content end
  local half = M.LOG_MAX // 2
  ok, out = run(sb, { "sh", "-c", 'head -c "$2" <"$1" >"$1.head" && tail -c "$2" <"$1" >"$1.tail"',
    "rock-eval", logf, tostring(half) }, nil, M.STEP_TIMEOUT)
  if not ok then errors.raise("io_error", "cannot cut the eval log: " .. out) end
  local head = sb:read_file{ path = logf .. ".head", binary = true }.content
  local tail_ = sb:read_file{ path = logf .. ".tail", binary = true }.content
  head = head:match("^(.*\n)") or ""          -- whole lines only
  tail_ = tail_:match("^[^\n]*\n(.*)$") or ""
  return head .. string.format("=== rock: %d bytes of the eval log elided (it has %d; " ..
    "the first and last %d are kept) ===\n", size - #head - #tail_, size, half) .. tail_
end

-- the steps of evaluate; fills res, raises on a failure of the machinery
local function evaluate_in(sb, t, patch, timeout, res, logs)
  local ok, out = run(sb, "mktemp -d \"${TMPDIR:-/tmp}/rock-eval.XXXXXX\"", nil, M.STEP_TIMEOUT)
  local work = ok and out:match("^(/%S+)\n")
  if not work then errors.raise("io_error", "cannot make a work dir in the sandbox: " .. out) end
  res._work = work
  reset(sb, t)
  logs[#logs + 1] = string.format("=== rock: reset %s to %s (git reset --hard, git clean -fd)\n",
    t.repo_dir, t.base_commit)
  local pfile = work .. "/patch.diff"
  sb:write_file{ path = pfile, content = patch }
  local outputs = {}
  local unsafe = M.unsafe_path(patch)
  if unsafe then
    local why = string.format("=== rock: not applied: the patch names %s, a path inside .git " ..
      "or outside the repo\n", unsafe)
    outputs[1], logs[#logs + 1] = why, why
  end
  for i, argv in ipairs(unsafe and {} or M.APPLY_COMMANDS) do
    local cmd = table.move(argv, 1, #argv, 1, {})
    cmd[#cmd + 1] = pfile
    local aok, aout, code, why = run(sb, cmd, t.repo_dir, M.STEP_TIMEOUT)
    local head = string.format("=== rock: apply attempt %d: %s (%s)\n", i, table.concat(cmd, " "),
      why == "" and ("exit " .. tostring(code)) or tostring(why))
    outputs[#outputs + 1] = head .. aout
    logs[#logs + 1] = head .. aout
    if aok then
      res.applied, res.apply_method = true, table.concat(argv, " ")
      break
    end
    reset(sb, t) -- a failed attempt may leave conflicts or half the hunks
  end
  res.apply_output = table.concat(outputs)
  if not res.applied then
    logs[#logs + 1] = M.APPLY_FAIL .. "\n"
    res.status = "unresolved"
    res.report = M.grade(t, {}, { applied = false })
    res.report.reason = "patch apply failed: " .. tail(outputs[#outputs] or "", 2000)
    return
  end
  logs[#logs + 1] = M.APPLY_PASS .. " (" .. res.apply_method .. ")\n"
  local script, logf = work .. "/eval.sh", work .. "/eval.log"
  sb:write_file{ path = script, content = M.eval_script(t) }
  logs[#logs + 1] = string.format("=== rock: eval script (bash eval.sh, timeout %gs)\n", timeout)
  local _, _, code, why = run(sb, { "bash", "-c", 'bash "$1" >"$2" 2>&1', "rock-eval", script, logf },
    nil, timeout)
  local text = read_log(sb, logf)
  logs[#logs + 1] = text
  if text ~= "" and text:sub(-1) ~= "\n" then logs[#logs + 1] = "\n" end
  if why == "timeout" then
    logs[#logs + 1] = M.TIMED_OUT .. "\n"
    errors.raise("timeout", string.format("the eval script ran past its timeout (%gs)", timeout))
  end
  logs[#logs + 1] = string.format("=== rock: eval script exit %s\n", tostring(code))
  local statuses, found = M.parse_pytest(text)
  res.tests = statuses
  if not found then
    errors.raise("eval_incomplete", "the eval log has no test output markers (exit " ..
      tostring(code) .. "): " .. tail(text, 500))
  end
  local body = between_markers(text)
  local rc
  for n in body:gmatch("\n%+ " .. EXIT_VAR .. "=(%d+)") do rc = tonumber(n) end
  res.test_exit_code = rc
  res.report = M.grade(t, statuses, { applied = true, markers = true, test_exit_code = rc })
  res.resolved = res.report.resolved
  res.status = res.resolved and "resolved" or "unresolved"
end

---@class rock.EvalResult
---@field status "resolved"|"unresolved"|"empty_patch"|"error"
---@field resolved boolean
---@field applied boolean
---@field apply_method string|nil
---@field apply_output string
---@field tests table<string,string>
---@field report rock.GradeReport|nil
---@field test_exit_code integer|nil
---@field log string the whole eval log (bytes)
---@field error {code: string, message: string}|nil
---@field seconds number

--- Evaluate patch in a sandbox you hold: reset repo_dir to base_commit
--- (`git reset --hard`, `git clean -fd`: the agent's files go, ignored
--- build artifacts of the image stay), apply the patch, run the eval
--- script (opts.timeout, default task.eval_timeout), grade. Never raises
--- for a failure of the evaluation (result.status "error", result.error);
--- raises for misuse (invalid_argument) and for a rock.timeout around it.
---@param sb rock.Sandbox
---@param task rock.Task
---@param patch string|nil
---@param opts {timeout: number|nil}|nil
---@return rock.EvalResult
function M.evaluate(sb, task, patch, opts)
  if type(sb) ~= "table" or type(sb.execute) ~= "function" then
    errors.raise("invalid_argument", "evaluate: 'sb' must be a sandbox")
  end
  local t = check_task(task, "evaluate")
  if opts ~= nil and type(opts) ~= "table" then
    errors.raise("invalid_argument", "evaluate: 'opts' must be a table")
  end
  if check_patch(patch, "evaluate") then return empty_result(t) end
  opts = opts or {}
  local timeout = task_mod.check_seconds(opts.timeout, "evaluate: 'timeout'", true) or t.eval_timeout
  local t0 = uv.hrtime()
  local res = new_result(t)
  local logs = { string.format("rock eval: %s (image %s, base_commit %s)\n", t.instance_id,
    tostring(t.image), t.base_commit) }
  local ok, err = pcall(evaluate_in, sb, t, patch, timeout, res, logs)
  if res._work then
    task_mod.shield(pcall, sb.execute, sb, { command = { "rm", "-rf", res._work }, timeout = 60 })
    res._work = nil
  end
  res.log = table.concat(logs)
  res.seconds = (uv.hrtime() - t0) / 1e9
  if not ok then
    if from_outside(err) or not errors.is(err) and type(err) ~= "string" then error(err, 0) end
    res.status, res.resolved = "error", false
    res.error = { code = errors.is(err) and err.code or "internal",
                  message = errors.is(err) and tostring(err.message) or tostring(err) }
    res.log = res.log .. "=== rock: error: " .. res.error.code .. ": " .. res.error.message .. "\n"
  end
  return res
end

local function write_log(res, path)
  local f, why = io.open(path, "wb")
  if f then
    local ok, werr = f:write(res.log)
    f:close()
    if ok then
      res.log_path = path
      return
    end
    why = werr
  end
  res.log_error = "cannot write the log: " .. tostring(why)
  log.warn("grading", "%s: %s", res.instance_id, res.log_error)
end

--- Evaluate patch in a fresh sandbox from task.image (opts.sandbox:
--- extra rock.sandbox.start options, e.g. backend), stopped at the end
--- whatever happens. opts.timeout as evaluate's; opts.log_path: write
--- result.log there (result.log_path). An empty or nil patch gives
--- "empty_patch" without starting anything.
---@param task rock.Task
---@param patch string|nil
---@param opts {sandbox: table|nil, timeout: number|nil, log_path: string|nil}|nil
---@return rock.EvalResult
function M.run(task, patch, opts)
  local t = check_task(task, "run")
  if opts ~= nil and type(opts) ~= "table" then
    errors.raise("invalid_argument", "run: 'opts' must be a table")
  end
  opts = opts or {}
  if opts.sandbox ~= nil and type(opts.sandbox) ~= "table" then
    errors.raise("invalid_argument", "run: 'opts.sandbox' must be a table")
  end
  if opts.log_path ~= nil and type(opts.log_path) ~= "string" then
    errors.raise("invalid_argument", "run: 'opts.log_path' must be a string")
  end
  task_mod.check_seconds(opts.timeout, "run: 'timeout'", true)
  local res
  if check_patch(patch, "run") then
    res = empty_result(t)
  else
    local start = { image = t.image }
    for k, v in pairs(opts.sandbox or {}) do start[k] = v end
    local t0 = uv.hrtime()
    local sandbox = require "rock.sandbox"
    local ok, sb = pcall(sandbox.start, start)
    if not ok then
      if from_outside(sb) or not errors.is(sb) then error(sb, 0) end
      res = new_result(t)
      res.error = { code = sb.code, message = tostring(sb.message) }
      res.log = string.format("rock eval: %s: the sandbox did not start (image %s): %s: %s\n",
        t.instance_id, tostring(start.image), sb.code, tostring(sb.message))
      res.seconds = (uv.hrtime() - t0) / 1e9
    else
      local eok, r = pcall(M.evaluate, sb, t, patch, opts)
      sb:stop()
      if not eok then error(r, 0) end
      res = r
      res.seconds = (uv.hrtime() - t0) / 1e9
    end
  end
  if opts.log_path then write_log(res, opts.log_path) end
  return res
end

return M
