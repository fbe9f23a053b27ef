--- rock.agent.parsers.js: SWE-bench Multilingual's log parsers for the
-- JavaScript runners: parse_log_jest (`--verbose`: babel, docusaurus),
-- parse_log_jest_json (`--json` through jq: `[PASSED] a > b`),
-- parse_log_vitest (`--reporter=verbose`: vuejs/core), parse_log_karma
-- (karma-mocha-reporter: preact), parse_log_tap (TAP: three.js, axios),
-- parse_log_immutable_js (jest or jest_json by instance). The Multimodal
-- repos' parsers are in js_multimodal.lua; helpers in _text.lua.
local tx = require "rock.agent.parsers._text"

local M = {}

local CHECK, CROSS, CIRCLE = "\226\156\147", "\226\156\149", "\226\151\139" -- ✓ ✕ ○
local TIMES, DOWN = "\195\151", "\226\134\147"                          -- × ↓

-- a stripped line `<mark><ws><name>`: the mark (one of marks) and where
-- the name starts, or nil
local function marked(s, marks)
  for _, m in ipairs(marks) do
    if s:sub(1, #m) == m and tx.WS_BYTE[s:byte(#m + 1)] and #s >= #m + 2 then return m, #m + 2 end
  end
end

local JEST = { [CHECK] = tx.PASSED, [CROSS] = tx.FAILED, [CIRCLE] = tx.SKIPPED }
local JEST_MARKS = { CHECK, CROSS, CIRCLE }

--- `✓ name (5 ms)` -> PASSED, `✕ name` -> FAILED, `○ name` -> SKIPPED;
--- the duration and the indentation are not part of the name.
function M.parse_log_jest(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local s = tx.strip(line)
    local m, from = marked(s, JEST_MARKS)
    if m then
      local d = tx.duration_suffix(s, from)
      map[tx.strip(s:sub(from, d and d - 1 or #s))] = JEST[m]
    end
  end
  return map
end

--- `[PASSED] Suite > test` and `[FAILED] ...` (jest's JSON through the
--- jq transform of SWE-bench's immutable-js spec).
function M.parse_log_jest_json(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local s = tx.strip(line)
    local word = s:match("^%[(%u+)%]")
    if (word == "PASSED" or word == "FAILED") and tx.WS_BYTE[s:byte(#word + 3)] and #s >= #word + 4 then
      map[s:sub(#word + 4)] = word
    end
  end
  return map
end

local VITEST = { [CHECK] = tx.PASSED, [TIMES] = tx.FAILED, [DOWN] = tx.SKIPPED }
local VITEST_MARKS = { CHECK, TIMES, DOWN }

-- where a trailing `<ws><digits><ws>*[m][s]` or `<ws>[skipped]` starts
-- in s, if the name before it (from from) is not empty
local function vitest_suffix(s, from)
  local k
  if tx.ends(s, " [skipped]") or (tx.ends(s, "[skipped]") and tx.WS_BYTE[s:byte(-10)]) then
    k = #s - 9
  else
    local e = #s
    if s:byte(e) == 115 then e = e - 1 end -- s
    if s:byte(e) == 109 then e = e - 1 end -- m
    while e > 0 and tx.WS_BYTE[s:byte(e)] do e = e - 1 end
    local d = e
    while d > 0 and tx.is_digit(s:byte(d)) do d = d - 1 end
    if d == e or not tx.WS_BYTE[s:byte(d)] then return nil end
    k = d
  end
  if k > from then return k end
end

--- `✓ file > suite > name 3ms` -> PASSED, `× ...` -> FAILED, `↓ ...
--- [skipped]` -> SKIPPED, without the duration or `[skipped]`.
function M.parse_log_vitest(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local s = tx.strip(line)
    local m, from = marked(s, VITEST_MARKS)
    if m then
      local k = vitest_suffix(s, from)
      map[s:sub(from, k and k - 1 or #s)] = VITEST[m]
    end
  end
  return map
end

local KARMA = { ["\226\156\148"] = tx.PASSED, ["\226\156\150"] = tx.FAILED } -- ✔ ✖

--- karma-mocha-reporter's tree after "Starting browser", up to a line
--- starting "SUMMARY:": an indented line without a mark opens a suite
--- when it is indented deeper than the last one and closes one level
--- when less; `✔ name` / `✖ name` is "suite > ... > name".
function M.parse_log_karma(log)
  local map = {}
  if type(log) ~= "string" then return map end
  local indent, suite, started = -1, {}, false
  for line in tx.lines(log) do
    if tx.starts(line, "SUMMARY:") then return map end
    if line:find("Starting browser", 1, true) then
      started = true
    elseif started then
      local w = tx.indent(line)
      local c = line:sub(w + 1, w + 3)
      local status, name, lead
      if KARMA[c] and tx.WS_BYTE[line:byte(w + 4)] then
        status, name, lead = KARMA[c], line:sub(w + 5), w
      elseif w >= 1 then
        name, lead = line:sub(w + 1), w - 1
      end
      if name and lead > 0 and not status then
        if lead > indent then
          indent = lead
          suite[#suite + 1] = name
        elseif lead < indent then
          indent = lead
          suite[#suite] = nil
          goto continue
        end
      end
      if status then
        suite[#suite + 1] = name
        map[table.concat(suite, " > ")] = status
        suite[#suite] = nil
      end
    end
    ::continue::
  end
  return map
end

--- TAP: `ok 1 name` -> PASSED, `not ok 2 name` -> FAILED (the name is all
--- after the number, "- name" in most producers' output).
function M.parse_log_tap(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local s = tx.strip(line)
    local word, name = s:match("^(ok) %d+ (.+)$")
    if not word then word, name = s:match("^(not ok) %d+ (.+)$") end
    if word then map[name] = word == "ok" and tx.PASSED or tx.FAILED end
  end
  return map
end

--- immutable-js: jest's verbose output for instance 2006, its JSON through
--- jq for 2005 (the instance id's last "-" part); others give no results.
function M.parse_log_immutable_js(log, task)
  local id = tx.task_field(task, "instance_id")
  local parts = id and tx.split(id, "-")
  local pr = parts and parts[#parts]
  if pr == "2006" then return M.parse_log_jest(log) end
  if pr == "2005" then return M.parse_log_jest_json(log) end
  return {}
end

return M
