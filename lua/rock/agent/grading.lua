--- rock.agent.grading: a patch graded as SWE-bench grades it, in our own
-- code, in a sandbox of the task's image.
--   local result = grading.run(task, patch, { sandbox = { backend = "docker" } })
--   local result = grading.evaluate(sb, task, patch)   -- in a sandbox you hold
-- The steps: reset repo_dir to base_commit; refuse a patch that names a
-- path in .git or out of the repo (swebench/patch.lua); apply it by the
-- first of SWE-bench 5.0.x's four commands that works; run the eval script
-- (swebench/eval_script.lua: SWE-bench 4.1.0's for a classic row, the
-- row's own for a 5.x row, with rock's safety additions); read the log and
-- grade it by SWE-bench 5.0.x's rules (swebench/rules.lua) with the task's
-- parser (rock.agent.parsers). Tasks come from tasks.lua;
-- recipes/swe_eval.lua grades prediction files.
local json = require "rock.json"
local errors = require "rock.errors"
local log = require "rock.log"
local task_mod = require "rock.task"
local tasks = require "rock.agent.tasks"
local swe = require "rock.agent.swebench"
local es = require "rock.agent.swebench.eval_script"
local rules = require "rock.agent.swebench.rules"
local spatch = require "rock.agent.swebench.patch"
local parsers = require "rock.agent.parsers"
local uv = require "luv"

local M = {}

--- SWE-bench's log markers. The eval script prints the first two through
--- `: '...'` under `set -x`, so the log holds `+ : '>>>>> Start Test Output'`.
M.START_MARKER = swe.START_MARKER
M.END_MARKER = swe.END_MARKER
M.APPLY_PASS = swe.APPLY_PASS
M.APPLY_FAIL = swe.APPLY_FAIL
M.TIMED_OUT = swe.TESTS_TIMEOUT

--- Extensions of files in a test patch that are not tests (not run).
M.NON_TEST_EXTS = swe.NON_TEST_EXTS

-- git as the grading runs it: any owner's repo, no hooks, no fsmonitor
local GIT = { "git", "-c", "safe.directory=*", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false" }
local GIT_SH = "git -c safe.directory='*' -c core.hooksPath=/dev/null -c core.fsmonitor=false "

local function git_argv(...)
  local argv = table.move(GIT, 1, #GIT, 1, {})
  for _, a in ipairs({ ... }) do argv[#argv + 1] = a end
  return argv
end

--- The apply commands (SWE-bench 5.0.x's GIT_APPLY_CMDS), tried in order
--- on a reset tree; the first that succeeds wins. Every git runs with
--- hooks and fsmonitor off; `patch` is skipped for a patch with a symlink.
M.APPLY_COMMANDS = {
  git_argv("apply", "--verbose"),
  git_argv("apply", "--verbose", "--3way"),
  git_argv("apply", "--verbose", "--reject"),
  { "patch", "--batch", "--forward", "--fuzz=5", "-p1", "-i" },
}
-- how each is named in results (apply_method) and logs
local APPLY_NAMES = { "git apply --verbose", "git apply --verbose --3way", "git apply --verbose --reject",
  "patch --batch --forward --fuzz=5 -p1 -i" }

--- The eval sandbox's limits when neither the task nor the caller sets
--- them (rock.sandbox.start options; the container backends apply them).
M.EVAL_LIMITS = { memory = "8g", pids_limit = 4096, disk = "10g" }

--- Seconds each reset, apply and diff step may take (the tests have
--- task.eval_timeout).
M.STEP_TIMEOUT = 300

--- The most bytes of an eval log kept: a longer log keeps its first and
--- last LOG_MAX/2 (the markers, the apply output and the summary).
M.LOG_MAX = 16 << 20

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

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

--- The test command's arguments: the test patch's b/ paths without the
--- non-test extensions (django: dotted labels), SWE-bench's directives.
---@param test_patch string
---@return string[]
function M.test_files(test_patch)
  if type(test_patch) ~= "string" then
    errors.raise("invalid_argument", "test_files: 'test_patch' must be a string")
  end
  return json.array(es.directives({ test_patch = test_patch }))
end

--- The eval script rock runs for the task (SWE-bench's, with rock's
--- additions: rock.agent.swebench.eval_script). opts.conda: activate
--- /opt/miniconda3's testbed env for a task SWE-bench has no spec for.
---@param task rock.Task
---@param opts {conda: boolean|nil}|nil
---@return string
function M.eval_script(task, opts)
  task = check_task(task, "eval_script")
  return (es.rock(task, opts))
end

--- The eval script SWE-bench runs for the task, byte for byte (4.1.0's
--- for a classic row, the row's own for a 5.x row, each with 5.0.x's
--- exit-code lines).
function M.swebench_script(task, opts)
  task = check_task(task, "swebench_script")
  return es.swebench(task, opts)
end

--- Parse a `pytest -rA` log the way SWE-bench reads one (between its
--- markers, else the whole log). Returns statuses and whether both
--- markers were found.
---@param text string
---@return table<string,string>, boolean
function M.parse_pytest(text)
  if type(text) ~= "string" then
    errors.raise("invalid_argument", "parse_pytest: 'log' must be a string")
  end
  local body = rules.slice(text)
  if not body then return {}, false end
  local parse = parsers.get("parse_log_pytest")
  local st = parse(body)
  if next(st) == nil then st = parse(text) end
  return st, true
end

--- Grade statuses against the task's lists, SWE-bench 5.0.x's rules
--- (rock.agent.swebench.rules.grade). info: {empty_patch=, applied=,
--- found=, reason=, markers=, test_exit_code=}: markers=false or found=false
--- is no result; a non-zero test_exit_code with no FAILED or ERROR status
--- is not trusted.
---@return rock.GradeReport
function M.grade(task, statuses, info)
  task = check_task(task, "grade")
  if type(statuses) ~= "table" then
    errors.raise("invalid_argument", "grade: 'statuses' must be a table {[test]=status}")
  end
  info = info or {}
  local i = { empty_patch = info.empty_patch, applied = info.applied, found = info.found,
              reason = info.reason }
  if info.markers == false then i.found, i.reason = false, "test output markers missing from the log" end
  local code = info.test_exit_code
  if i.found ~= false and code and code ~= 0 and next(statuses) ~= nil then
    local any = false
    for _, s in pairs(statuses) do
      if s == "FAILED" or s == "ERROR" then any = true break end
    end
    if not any then
      i.found, i.reason = false, string.format("the test command exited %d but no test FAILED " ..
        "or ERROR: the log is not trusted", code)
    end
  end
  return rules.grade(task, statuses, i)
end

--- The first file a patch's headers name (git's quoted names decoded)
--- with a `.git` or `..` component, or nil (rock.agent.swebench.patch).
M.unsafe_path = spatch.unsafe_path

-- run argv (or sh code) in the sandbox; never raises for the command's
-- own failure: returns ok, "stdout+stderr", exit_code, failure_reason, r
local function run(sb, command, cwd, timeout)
  local ok, r = pcall(sb.execute, sb, { command = command, cwd = cwd, timeout = timeout })
  if not ok then
    if errors.is(r, "spawn_failed") then return false, tostring(r.message) .. "\n", nil, "spawn_failed" end
    error(r, 0)
  end
  local out = (r.stdout or "") .. (r.stderr or "")
  return r.exit_code == 0 and r.failure_reason == "", out, r.exit_code, r.failure_reason, r
end

local function reset(sb, t)
  local cmd = GIT_SH .. "reset -q --hard " .. q(t.base_commit) .. " && " .. GIT_SH .. "clean -q -fd"
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
  local g = GIT_SH
  local function diff(extra)
    local cmd = "f=$(mktemp \"${TMPDIR:-/tmp}/rock-diff.XXXXXX\") || exit 1; " .. (extra or "") .. "if " ..
      g .. "add -A && " .. g .. "diff --cached --binary --no-color --no-ext-diff --src-prefix=a/ --dst-prefix=b/ " ..
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
           apply_output = "", tests = {}, log = "", test_output = "" }
end

local function empty_result(t)
  local res = new_result(t)
  res.status = "empty_patch"
  res.report = M.grade(t, {}, { empty_patch = true })
  res.log = string.format("rock eval: %s: empty patch, nothing to evaluate\n", t.instance_id)
  res.seconds = 0
  return res
end

-- the last n bytes of s without trailing blanks (linear)
local function tail(s, n)
  local e = #s
  while e > 0 and s:byte(e) and (s:byte(e) == 32 or (s:byte(e) >= 9 and s:byte(e) <= 13)) do e = e - 1 end
  if e > n then return "..." .. s:sub(e - n + 1, e) end
  return s:sub(1, e)
end

-- the eval log's bytes [1, size] as kept: whole up to LOG_MAX, else its
-- head and tail (LOG_MAX/2 each, cut at line ends) around a line saying
-- how much went. Returns the text and a map from the file's offsets to
-- the text's (nil for an offset in the part left out).
local function read_log(sb, logf, size)
  local whole
  if size <= 32 << 20 then
    local ok, r = pcall(sb.read_file, sb, { path = logf, binary = true })
    if ok then whole = r.content:sub(1, size) end
  end
  if whole and #whole <= M.LOG_MAX then
    return whole, function(off) return off end
  end
  local half = M.LOG_MAX // 2
  local head, tail_
  if whole then
    head, tail_ = whole:sub(1, half), whole:sub(-half)
  else
    local ok, out = run(sb, { "sh", "-c", 'head -c "$2" <"$1" >"$1.head" && tail -c "$2" <"$1" >"$1.tail"',
      "rock-eval", logf, tostring(half) }, nil, M.STEP_TIMEOUT)
    if not ok then errors.raise("io_error", "cannot cut the eval log: " .. out) end
    head = sb:read_file{ path = logf .. ".head", binary = true }.content
    tail_ = sb:read_file{ path = logf .. ".tail", binary = true }.content
  end
  head = head:match("^(.*\n)") or ""          -- whole lines only
  local cut = tail_:find("\n", 1, true)
  tail_ = cut and tail_:sub(cut + 1) or ""
  local note = string.format("=== rock: %d bytes of the eval log elided (it has %d; " ..
    "the first and last %d are kept) ===\n", size - #head - #tail_, size, half)
  local tail_from = size - #tail_ + 1 -- the file offset of the tail's first byte
  return head .. note .. tail_, function(off)
    if off <= #head then return off end
    if off >= tail_from then return #head + #note + (off - tail_from + 1) end
    return nil
  end
end

-- the text of the log between two file offsets (1-based, inclusive) as
-- kept by read_log
local function region_of(map, from, to, text)
  local a, b = map(from), map(to)
  if a and b then return { a, b } end
  if not a and not b then return nil end
  -- the region lies across the elided part: what is left of it
  if not a then
    local i = text:find("=== rock: ", 1, true)
    return { i or 1, b }
  end
  return { a, #text }
end

-- the report line the script writes last (rock-eval-report rc= start= end= size=)
local function report_of(stdout)
  local rep
  for line in (stdout or ""):gmatch("[^\n]+") do
    local rc, s, e, size = line:match("^rock%-eval%-report rc=(%-?%d*) start=(%d*) end=(%d*) size=(%d*)$")
    if rc then
      rep = { rc = tonumber(rc), start = tonumber(s), ["end"] = tonumber(e), size = tonumber(size) }
    end
  end
  return rep
end

local function has_conda(sb)
  local ok = run(sb, { "test", "-f", swe.CONDA_ACTIVATE }, nil, M.STEP_TIMEOUT)
  return ok
end

-- apply the patch by SWE-bench 5.0.x's commands; fills res
local function apply(sb, t, pfile, patch, res, logs)
  local outputs = {}
  local unsafe = spatch.unsafe_path(patch)
  if unsafe then
    local why = string.format("=== rock: not applied: the patch names %s, a path inside .git " ..
      "or outside the repo\n", unsafe)
    outputs[1], logs[#logs + 1] = why, why
    res.apply_output = why
    return false
  end
  local symlink = spatch.has_symlink(patch)
  local last_failed
  for i, argv in ipairs(M.APPLY_COMMANDS) do
    if i == #M.APPLY_COMMANDS and symlink then
      local why = "=== rock: patch --fuzz not tried: the patch makes or changes a symlink " ..
        "(GNU patch would follow it)\n"
      outputs[#outputs + 1], logs[#logs + 1] = why, why
    else
      if last_failed then reset(sb, t) end -- a failed attempt may leave conflicts or half the hunks
      local cmd = table.move(argv, 1, #argv, 1, {})
      cmd[#cmd + 1] = pfile
      local aok, aout, code, why = run(sb, cmd, t.repo_dir, M.STEP_TIMEOUT)
      local head = string.format("=== rock: apply attempt %d: %s %s (%s)\n", i, APPLY_NAMES[i], pfile,
        why == "" and ("exit " .. tostring(code)) or tostring(why))
      outputs[#outputs + 1] = head .. aout
      logs[#logs + 1] = head .. aout
      if aok then
        res.applied, res.apply_method = true, APPLY_NAMES[i]
        break
      end
      last_failed = true
    end
  end
  if not res.applied and last_failed then
    -- the attempts can leave the patch applied while each exited non-zero (5.0.x)
    local rok = run(sb, git_argv("apply", "--check", "--reverse", pfile), t.repo_dir, M.STEP_TIMEOUT)
    if rok then
      res.applied, res.apply_method = true, "verified already applied"
      logs[#logs + 1] = "=== rock: git apply --check --reverse: the patch is in the tree\n"
    else
      reset(sb, t)
    end
  end
  res.apply_output = table.concat(outputs)
  return res.applied, outputs
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
  local applied, outputs = apply(sb, t, pfile, patch, res, logs)
  if not applied then
    logs[#logs + 1] = M.APPLY_FAIL .. "\n"
    res.status = "unresolved"
    res.report = M.grade(t, {}, { applied = false })
    res.report.reason = "patch apply failed: " .. tail((outputs and outputs[#outputs]) or res.apply_output, 2000)
    return
  end
  logs[#logs + 1] = M.APPLY_PASS .. " (" .. res.apply_method .. ")\n"
  local opts = {}
  if not t.eval_script and not swe.spec(t.repo, t.version) then opts.conda = has_conda(sb) end
  local script, marked = es.rock(t, opts)
  res.eval_script = script
  local logf = work .. "/eval.log"
  local gitcfg = ""
  if not require("rock.backends").can(sb.backend, "own_files") then
    -- the script's `git config --global` must not reach this host's user
    gitcfg = work .. "/gitconfig"
    sb:write_file{ path = gitcfg, content = "[include]\n\tpath = ~/.gitconfig\n" }
  end
  local argv
  if #script <= es.ARGV_MAX then
    argv = { "bash", "-c", script, "rock-eval", logf, gitcfg }
  else
    local sfile = work .. "/eval.sh"
    sb:write_file{ path = sfile, content = script }
    argv = { "bash", "-c", 'source "$3"', "rock-eval", logf, gitcfg, sfile }
    logs[#logs + 1] = "=== rock: the eval script is over " .. es.ARGV_MAX ..
      " bytes: run with source (its trace lines start with \"++ \")\n"
  end
  logs[#logs + 1] = string.format("=== rock: eval script (timeout %gs)\n", timeout)
  local _, _, code, why, r = run(sb, argv, nil, timeout)
  local rep = report_of(r and r.stdout)
  local size = rep and rep.size
  if not size then
    -- no report: the script did not end by itself (killed, a timeout)
    local sok, sout = run(sb, { "sh", "-c", 'wc -c <"$1"', "rock-eval", logf }, nil, M.STEP_TIMEOUT)
    size = sok and tonumber(sout:match("^%s*(%d+)%s*$")) or 0
  end
  local text, map = read_log(sb, logf, size)
  res.test_output = text
  logs[#logs + 1] = text
  if text ~= "" and text:sub(-1) ~= "\n" then logs[#logs + 1] = "\n" end
  if why == "timeout" then
    logs[#logs + 1] = M.TIMED_OUT .. "\n"
    errors.raise("timeout", string.format("the eval script ran past its timeout (%gs)", timeout))
  end
  logs[#logs + 1] = string.format("=== rock: eval script exit %s%s\n", tostring(code),
    rep and string.format(" (test command exit %s)", tostring(rep.rc)) or " (no report: it did not end by itself)")
  local info = { exit_code = rep and rep.rc }
  local trusted = rep and rep.rc and rep.start and rep["end"] and rep.start <= rep["end"] and code == rep.rc
  if trusted then
    info.region = region_of(map, rep.start + 1, rep["end"], text)
  end
  res.test_exit_code = rep and rep.rc
  local statuses, found, reason
  if not marked then
    -- a script rock could not mark: SWE-bench's own reading of the log
    statuses, found, reason = rules.log_statuses(t, text, { exit_code = info.exit_code })
  elseif not trusted then
    statuses, found, reason = {}, false, "the eval script did not finish its test command and " ..
      "report (exit " .. tostring(code) .. ")"
  else
    statuses, found, reason = rules.log_statuses(t, text, info)
  end
  res.tests = statuses
  res.found = found
  res.report = rules.grade(t, statuses, { applied = true, found = found, reason = reason })
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
---@field test_output string the eval script's own output (SWE-bench's test_output.txt)
---@field eval_script string|nil the script run
---@field error {code: string, message: string}|nil
---@field seconds number

--- Evaluate patch in a sandbox you hold: reset repo_dir to base_commit
--- (`git reset --hard`, `git clean -fd`: the agent's files go, ignored
--- build artifacts of the image stay), apply the patch, run the eval
--- script (opts.timeout, default task.eval_timeout), grade. The script
--- kills every other process of the sandbox when it starts and after the
--- tests. Never raises for a failure of the evaluation (result.status
--- "error", result.error); raises for misuse (invalid_argument) and for
--- a rock.timeout around it.
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

--- The eval sandbox's start options for a task: image, then
--- M.EVAL_LIMITS, opts.limits (a caller's, e.g. swe_eval's flags), the
--- task's own memory / pids_limit / disk, then opts.sandbox (any
--- rock.sandbox.start option, e.g. backend) over all.
function M.sandbox_options(t, opts)
  local start = { image = t.image }
  for _, src in ipairs({ M.EVAL_LIMITS, opts.limits or {},
                         { memory = t.memory, pids_limit = t.pids_limit, disk = t.disk }, opts.sandbox or {} }) do
    for k, v in pairs(src) do start[k] = v end
  end
  return start
end

--- Evaluate patch in a fresh sandbox from task.image (see
--- sandbox_options), stopped at the end whatever happens. opts.timeout as
--- evaluate's; opts.log_path: write result.log there (result.log_path).
--- An empty or nil patch gives "empty_patch" without starting anything.
---@param task rock.Task
---@param patch string|nil
---@param opts {sandbox: table|nil, limits: table|nil, timeout: number|nil, log_path: string|nil}|nil
---@return rock.EvalResult
function M.run(task, patch, opts)
  local t = check_task(task, "run")
  if opts ~= nil and type(opts) ~= "table" then
    errors.raise("invalid_argument", "run: 'opts' must be a table")
  end
  opts = opts or {}
  for _, f in ipairs({ "sandbox", "limits" }) do
    if opts[f] ~= nil and type(opts[f]) ~= "table" then
      errors.raise("invalid_argument", "run: 'opts." .. f .. "' must be a table")
    end
  end
  if opts.log_path ~= nil and type(opts.log_path) ~= "string" then
    errors.raise("invalid_argument", "run: 'opts.log_path' must be a string")
  end
  task_mod.check_seconds(opts.timeout, "run: 'timeout'", true)
  local res
  if check_patch(patch, "run") then
    res = empty_result(t)
  else
    local start = M.sandbox_options(t, opts)
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

--- SWE-bench's per-instance report.json for a result: {[instance_id] =
--- {patch_is_None, patch_exists, patch_successfully_applied, resolved,
--- tests_status}} (patch_successfully_applied: the log gave results, as
--- SWE-bench means it). model_patch: the prediction's patch (nil: none).
---@return table
function M.swebench_report(res, model_patch)
  local r = { patch_is_None = model_patch == nil, patch_exists = model_patch ~= nil,
              patch_successfully_applied = false, resolved = false }
  if model_patch ~= nil and res.report and res.found then
    r.patch_successfully_applied = true
    r.resolved = res.resolved == true
    local rep = res.report
    r.tests_status = { FAIL_TO_PASS = rep.FAIL_TO_PASS, PASS_TO_PASS = rep.PASS_TO_PASS,
                       FAIL_TO_FAIL = rep.FAIL_TO_FAIL, PASS_TO_FAIL = rep.PASS_TO_FAIL }
  end
  return { [res.instance_id] = r }
end

return M
