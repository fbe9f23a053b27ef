--- rock.agent.parsers.java: SWE-bench's log parsers for Java builds:
-- parse_log_maven (one `mvn(d) test -Dtest=Class#method` per test under
-- `set -x`: gson, druid, javaparser), parse_log_ant (lombok's
-- `[junit] [PASS] name`), parse_log_gradle_custom (`Class > method
-- PASSED` from a testLogging block: lucene, rxjava). Helpers: _text.lua.
local tx = require "rock.agent.parsers._text"

local M = {}

local DTEST = "-Dtest="

-- the name after the last "-Dtest=" that is followed by a non-space
local function dtest_name(s)
  local last
  for _, i in ipairs(tx.find_all(s, DTEST)) do
    local b = s:byte(i + #DTEST)
    if b and not tx.WS_BYTE[b] then last = i end
  end
  return last and s:match("^" .. tx.NWS .. "+", last + #DTEST)
end

--- Each `-Dtest=NAME` line (the traced test command) waits for the next
--- `BUILD SUCCESS` / `BUILD FAILURE` line, first come first served; a
--- result with no command waiting is kept for a command seen later.
function M.parse_log_maven(log)
  local map = {}
  if type(log) ~= "string" then return map end
  local pending, ph, pt = {}, 1, 0      -- queue of test names
  local results, rh, rt = {}, 1, 0      -- results with no test yet
  local function record(name, word)
    map[name] = word == "SUCCESS" and tx.PASSED or tx.FAILED
  end
  for line in tx.lines(log) do
    local s = tx.strip(line)
    local name = s:find(DTEST, 1, true) and dtest_name(s)
    if name then pt = pt + 1; pending[pt] = name end
    local word = (tx.ends(s, "BUILD SUCCESS") and "SUCCESS") or (tx.ends(s, "BUILD FAILURE") and "FAILURE")
    if word then
      if ph <= pt then
        record(pending[ph], word); pending[ph] = nil; ph = ph + 1
      else
        rt = rt + 1; results[rt] = word
      end
    end
  end
  while ph <= pt and rh <= rt do
    record(pending[ph], results[rh]); ph, rh = ph + 1, rh + 1
  end
  return map
end

local ANT = "^%[junit%]" .. tx.WS .. "+%[(%u+)%]" .. tx.WS .. "+(.*)$"
local ANT_STATUS = { PASS = tx.PASSED, FAIL = tx.FAILED, ERR = tx.FAILED }

--- `[junit] [PASS] name` -> PASSED; `[FAIL]` and `[ERR]` -> FAILED.
function M.parse_log_ant(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local word, name = tx.strip(line):match(ANT)
    if ANT_STATUS[word] then map[name] = ANT_STATUS[word] end
  end
  return map
end

local GRADLE_NAME = "^[^>]" .. tx.NWS .. "*" .. tx.WS .. "+>" .. tx.WS .. "+" .. tx.NWS .. "+$"

--- `Class > method PASSED|FAILED` (the name is everything before the
--- last whitespace character before the word); a `Class > method` line
--- alone waits for a later line that is only `PASSED` or `FAILED`.
function M.parse_log_gradle_custom(log)
  local map = {}
  if type(log) ~= "string" then return map end
  local pending
  for line in tx.lines(log) do
    local s = tx.strip(line)
    local word = (tx.ends(s, "PASSED") and "PASSED") or (tx.ends(s, "FAILED") and "FAILED")
    local name = word and s:sub(1, -8)
    if word and tx.WS_BYTE[s:byte(-7)] and s:byte(1) ~= 62 and (utf8.len(name) or #name) >= 2 then -- ">"
      map[name] = word
      pending = nil
    elseif s:find(GRADLE_NAME) then
      pending = s
    elseif pending and (s == "PASSED" or s == "FAILED") then
      map[pending] = s
      pending = nil
    end
  end
  return map
end

return M
