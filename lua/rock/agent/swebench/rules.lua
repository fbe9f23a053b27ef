--- rock.agent.swebench.rules: SWE-bench 5.0.x's grading rules
-- (swebench/harness/grading.py), in our own code.
--   local sm, ok, why = rules.log_statuses(task, log, { region =, exit_code = })
--   local report = rules.grade(task, sm, { applied = true, found = ok, reason = why })
-- log_statuses reads an eval log: no result when it holds a failure marker
-- (Patch Apply Failed, Reset Failed, Tests Errored, Tests Timed Out) or lacks
-- a marker; the task's parser reads the text between the markers (rock's
-- exact region when given, else after the first start marker up to the
-- first end marker), the whole log when that gives nothing; no result
-- when nothing parsed and nothing shows a suite ran; no result when the
-- test command exited non-zero while no test FAILED or ERRORed.
-- grade applies the lists: truncated parametrized ids matched by prefix,
-- SKIPPED failing FAIL_TO_PASS and kept for PASS_TO_PASS, fail_only rows,
-- RESOLVED_FULL / _PARTIAL / _NO.
local swe = require "rock.agent.swebench"
local parsers = require "rock.agent.parsers"
local json = require "rock.json"

local M = {}

M.FULL, M.PARTIAL, M.NO = "RESOLVED_FULL", "RESOLVED_PARTIAL", "RESOLVED_NO"

local find, sub, byte = string.find, string.sub, string.byte

local function is_digit(c) return c and c >= 48 and c <= 57 end
local function is_ws(c) return c == 32 or (c and c >= 9 and c <= 13) end

-- the digits at i (end exclusive), and whether one of them is 1-9
local function digits(s, i)
  local j, nonzero = i, false
  while is_digit(byte(s, j)) do
    if byte(s, j) ~= 48 then nonzero = true end
    j = j + 1
  end
  return j, nonzero
end

-- [1-9]\d* right at i (the run must start with 1-9); returns its end
local function positive_at(s, i)
  local c = byte(s, i)
  if not (c and c >= 49 and c <= 57) then return nil end
  return (digits(s, i))
end

-- the digit run that ends right before i holds a 1-9 (`[1-9]\d*` ending at i)
local function positive_before(s, i)
  local j = i - 1
  while j >= 1 and is_digit(byte(s, j)) do
    if byte(s, j) ~= 48 then return true end
    j = j - 1
  end
  return false
end

local function each(s, lit, fn)
  local from = 1
  while true do
    local i = find(s, lit, from, true)
    if not i then return false end
    if fn(i) then return true end
    from = i + 1
  end
end

local function skip_ws(s, i)
  local j = i
  while is_ws(byte(s, j)) do j = j + 1 end
  return j
end

local function is_word(c) return c and (c == 95 or (c >= 48 and c <= 57) or (c >= 65 and c <= 90)
  or (c >= 97 and c <= 122) or c >= 128) end

-- "Test Suites:\s+(?:\d+ \w+, )*[1-9]\d* total" from i (after the colon)
local function suites_at(s, i)
  local j = skip_ws(s, i)
  if j == i then return false end
  while true do
    local e = positive_at(s, j)
    if e and sub(s, e, e + 5) == " total" then return true end
    -- one "\d+ \w+, " group
    local d = digits(s, j)
    if d == j or byte(s, d) ~= 32 then return false end
    local w = d + 1
    while is_word(byte(s, w)) do w = w + 1 end
    if w == d + 1 or sub(s, w, w + 1) ~= ", " then return false end
    j = w + 2
  end
end

--- Whether the log shows a test suite ran (SWE-bench's SUITE_RAN: a
--- runner's summary with a count of at least 1).
---@param s string
---@return boolean
function M.suite_ran(s)
  if each(s, "Executed ", function(i)
    local e = positive_at(s, i + 9)
    if not e or sub(s, e, e + 3) ~= " of " then return false end
    return digits(s, e + 4) > e + 4
  end) then return true end
  if each(s, "TOTAL: ", function(i)
    local e = positive_at(s, i + 7)
    return e and (sub(s, e, e + 7) == " SUCCESS" or sub(s, e, e + 6) == " FAILED")
  end) then return true end
  if each(s, " passing", function(i) return positive_before(s, i) end) then return true end
  if each(s, "Tests:", function(i)
    local j = skip_ws(s, i + 6)
    return j > i + 6 and positive_at(s, j) ~= nil
  end) then return true end
  if each(s, "Test Suites:", function(i) return suites_at(s, i + 12) end) then return true end
  if each(s, "# tests ", function(i)
    return (i == 1 or byte(s, i - 1) == 10) and positive_at(s, i + 8) ~= nil
  end) then return true end
  if each(s, " spec", function(i)
    if not positive_before(s, i) then return false end
    local j = i + 5
    if byte(s, j) == 115 then j = j + 1 end -- "s"
    if sub(s, j, j + 1) ~= ", " then return false end
    local d = digits(s, j + 2)
    return d > j + 2 and sub(s, d, d + 7) == " failure"
  end) then return true end
  return each(s, "': ok", function(i) return i + 5 > #s or byte(s, i + 5) == 10 end)
end

--- The exit code the log records (`>>>>> Test Exit Code: N`, the first),
--- or nil.
function M.recorded_exit_code(s)
  local from = 1
  while true do
    local i = find(s, swe.EXIT_CODE_MARKER, from, true)
    if not i then return nil end
    from = i + 1
    local j = i + #swe.EXIT_CODE_MARKER
    if byte(s, j) == 58 then -- ":"
      j = skip_ws(s, j + 1)
      local k = byte(s, j) == 45 and j + 1 or j -- "-"
      local d = digits(s, k)
      if d > k then return tonumber(sub(s, j, d - 1)) end
    end
  end
end

--- SWE-bench's slice: after the first start marker, up to the next start
--- or end marker; nil when a marker is missing.
function M.slice(s)
  local a = find(s, swe.START_MARKER, 1, true)
  if not a or not find(s, swe.END_MARKER, 1, true) then return nil end
  local from = a + #swe.START_MARKER
  local b = find(s, swe.START_MARKER, from, true)
  local rest = b and sub(s, from, b - 1) or sub(s, from)
  local e = find(rest, swe.END_MARKER, 1, true)
  return e and sub(rest, 1, e - 1) or rest
end

--- The parser of a task: its log_parser, else its repo's, else pytest's.
--- Returns the function and its name, or nil and the name it lacks.
function M.parser_of(task)
  local name = task.log_parser or swe.parser_for(task.repo) or "parse_log_pytest"
  return parsers.get(name), name
end

local function run_parser(fn, text, task)
  local ok, sm = pcall(fn, text, task)
  if not ok or type(sm) ~= "table" then return {} end
  return sm
end

--- The statuses an eval log gives, SWE-bench 5.0.x's get_logs_eval.
--- opts.region = {from, to}: the test command's own output (byte offsets,
--- 1-based, inclusive) instead of the text between the first markers;
--- opts.exit_code: the test command's exit code (else the one the log
--- records). Returns statuses, found, and the reason when not found.
---@param task table
---@param log string
---@param opts {region: integer[]|nil, exit_code: integer|nil}|nil
---@return table<string,string>, boolean, string|nil
function M.log_statuses(task, log, opts)
  opts = opts or {}
  local fn, name = M.parser_of(task)
  if not fn then return {}, false, "no log parser called " .. tostring(name) end
  for _, code in ipairs(swe.BAD_CODES) do
    if find(log, code, 1, true) then return {}, false, "the log says " .. code end
  end
  if not (find(log, swe.START_MARKER, 1, true) and find(log, swe.END_MARKER, 1, true)) then
    return {}, false, "test output markers missing from the log"
  end
  local sliced
  if opts.region then
    sliced = sub(log, opts.region[1], opts.region[2])
  else
    sliced = M.slice(log) or ""
  end
  local sm = run_parser(fn, sliced, task)
  if next(sm) == nil then sm = run_parser(fn, log, task) end
  if next(sm) == nil and not M.suite_ran(log) then
    return {}, false, "no test results in the log and no sign a test suite ran"
  end
  local code = opts.exit_code
  if code == nil then code = M.recorded_exit_code(log) end
  if code ~= nil and code ~= 0 and next(sm) ~= nil then
    local any = false
    for _, st in pairs(sm) do
      if st == "FAILED" or st == "ERROR" then any = true break end
    end
    if not any then
      return {}, false, string.format("the test command exited %d but no test FAILED or ERROR: " ..
        "the log is not trusted", code)
    end
  end
  return sm, true, nil
end

local PASSING = { PASSED = true, XFAIL = true }

local function count(s, c)
  local n, from = 0, 1
  while true do
    local i = find(s, c, from, true)
    if not i then return n end
    n, from = n + 1, i + 1
  end
end

-- the key of sm for case: itself, or for an id cut inside its parameters
-- (more "[" than "]"), the keys it prefixes when they all agree on pass
-- or fail (SWE-bench takes the first such key it recorded; rock, whose
-- maps have no order, the smallest)
local function resolve(case, sm)
  if sm[case] ~= nil then return case end
  if count(case, "[") <= count(case, "]") then return nil end
  local matches, pass = {}, nil
  for k, st in pairs(sm) do
    if sub(k, 1, #case) == case then
      matches[#matches + 1] = k
      local p = PASSING[st] == true
      if pass == nil then pass = p elseif pass ~= p then return nil end
    end
  end
  if #matches == 0 then return nil end
  table.sort(matches)
  return matches[1]
end

local function passed(case, sm)
  local k = resolve(case, sm)
  return k ~= nil and PASSING[sm[k]] == true
end

local function maintained(case, sm)
  local k = resolve(case, sm)
  return k ~= nil and (PASSING[sm[k]] == true or sm[k] == "SKIPPED")
end

local function failed(case, sm)
  local k = resolve(case, sm)
  return k == nil or sm[k] == "FAILED" or sm[k] == "ERROR" or sm[k] == "SKIPPED"
end

local function list() return json.array() end

---@class rock.GradeReport
---@field resolved boolean             status == RESOLVED_FULL
---@field status string                RESOLVED_FULL | RESOLVED_PARTIAL | RESOLVED_NO
---@field FAIL_TO_PASS {success: string[], failure: string[]}
---@field PASS_TO_PASS {success: string[], failure: string[]}
---@field FAIL_TO_FAIL {success: string[], failure: string[]}
---@field PASS_TO_FAIL {success: string[], failure: string[]}
---@field reason string|nil            why it is not resolved

--- The eval type of a task: its eval_type, else fail_only for SWE-bench's
--- FAIL_ONLY_REPOS, else pass_and_fail.
function M.eval_type(task)
  if task.eval_type then return task.eval_type end
  return swe.FAIL_ONLY_REPOS[task.repo] and "fail_only" or "pass_and_fail"
end

--- Grade statuses against the task's lists (get_eval_tests_report and
--- get_resolution_status). info: {empty_patch=, applied=, found=, reason=}
--- (found false: the log gave no result, reason says why).
---@return rock.GradeReport
function M.grade(task, sm, info)
  info = info or {}
  local r = { resolved = false, status = M.NO,
              FAIL_TO_PASS = { success = list(), failure = list() },
              PASS_TO_PASS = { success = list(), failure = list() },
              FAIL_TO_FAIL = { success = list(), failure = list() },
              PASS_TO_FAIL = { success = list(), failure = list() } }
  local function add(side, ok, t)
    local l = ok and side.success or side.failure
    l[#l + 1] = t
  end
  if info.empty_patch then
    r.reason = "empty patch"
    return r
  elseif info.applied == false then
    r.reason = info.reason or "patch apply failed"
    return r
  elseif info.found == false then
    r.reason = info.reason or "the log gave no test results"
    return r
  end
  local fail_only = M.eval_type(task) == "fail_only"
  for _, t in ipairs(task.FAIL_TO_PASS) do
    if fail_only then add(r.FAIL_TO_PASS, sm[t] ~= "FAILED", t)
    elseif passed(t, sm) then add(r.FAIL_TO_PASS, true, t)
    elseif failed(t, sm) then add(r.FAIL_TO_PASS, false, t) end
  end
  for _, t in ipairs(task.PASS_TO_PASS) do
    if fail_only then add(r.PASS_TO_PASS, sm[t] ~= "FAILED", t)
    elseif maintained(t, sm) then add(r.PASS_TO_PASS, true, t)
    elseif failed(t, sm) then add(r.PASS_TO_PASS, false, t) end
  end
  local function ratio(side)
    local n = #side.success + #side.failure
    return n == 0 and 1 or #side.success / n
  end
  local f2p, p2p = ratio(r.FAIL_TO_PASS), ratio(r.PASS_TO_PASS)
  if f2p == 1 and p2p == 1 then
    r.status, r.resolved = M.FULL, true
  elseif f2p > 0 and f2p < 1 and p2p == 1 then
    r.status = M.PARTIAL
  end
  if not r.resolved then
    r.reason = string.format("%d of %d FAIL_TO_PASS and %d of %d PASS_TO_PASS tests failed",
      #r.FAIL_TO_PASS.failure, #task.FAIL_TO_PASS, #r.PASS_TO_PASS.failure, #task.PASS_TO_PASS)
  end
  return r
end

return M
