--- rock.agent.parsers.ruby: SWE-bench's log parsers for Ruby test runners:
-- parse_log_minitest (`ruby -Itest test/x.rb -v`), parse_log_cucumber
-- (`--format progress`), parse_log_ruby_unit (test-unit's `-v`: fluentd,
-- faker), parse_log_rspec_transformed_json (rspec's JSON through jq:
-- `desc - status`: fastlane, fpm, rubocop), parse_log_jekyll (minitest
-- or cucumber by instance). The registry (init.lua) loads this family.
local tx = require "rock.agent.parsers._text"

local M = {}

--- `Class#test_name. = 0.00 s = .` (the name before the last ". " that
--- still has a "=" and then a result after it); the result is the last
--- ".", "F" or "E" of the line: "." PASSED, F and E FAILED.
function M.parse_log_minitest(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local s = tx.strip(line)
    local r = #s
    while r > 0 do
      local b = s:byte(r)
      if b == 46 or b == 70 or b == 69 then break end -- . F E
      r = r - 1
    end
    local q = r - 1
    while q > 0 and s:byte(q) ~= 61 do q = q - 1 end -- "="
    local p = q - 3
    while p >= 1 and s:sub(p + 1, p + 2) ~= ". " do p = p - 1 end
    if r > 0 and q > 0 and p >= 1 then
      map[s:sub(1, p)] = s:byte(r) == 46 and tx.PASSED or tx.FAILED
    end
  end
  return map
end

--- `Scenario name ......F`: the name before the last " " + dots that end
--- in another dot (PASSED) or an F (FAILED).
function M.parse_log_cucumber(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local s = tx.strip(line)
    local cut, status
    for _, p in ipairs(tx.find_all(s, " .")) do
      local _, e = s:find("^%.+", p + 1)
      local c = s:byte(e + 1)
      if c == 70 then cut, status = p, tx.FAILED
      elseif e - p >= 2 then cut, status = p, tx.PASSED end
    end
    if cut then map[s:sub(1, cut - 1)] = status end
  end
  return map
end

local UNIT = { [46] = tx.PASSED, [69] = tx.FAILED, [70] = tx.FAILED, [79] = tx.SKIPPED } -- . E F O

-- test-unit's `name:<ws>.` with the name starting at from: the name runs
-- to the last ":" followed by whitespace then ".", or E/F/O ending a word
local function unit_line(s, from)
  local cut, status
  for _, p in ipairs(tx.find_all(s, ":", from + 1)) do
    local m = s:find(tx.NWS, p + 1)
    if m and m > p + 1 then
      local b = s:byte(m)
      if b == 46 or (UNIT[b] and not tx.is_word_at(s, m + 1)) then cut, status = p, UNIT[b] end
    end
  end
  if cut then return s:sub(from, cut - 1), status end
end

--- test-unit's verbose lines `test_name:<tab>.: (0.001)`: "." PASSED,
--- E and F FAILED, O (omitted) SKIPPED; a leading "test: " is dropped.
function M.parse_log_ruby_unit(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local s = tx.strip(line)
    local name, status
    if tx.starts(s, "test: ") then name, status = unit_line(s, 7) end
    if not name then name, status = unit_line(s, 1) end
    if name then map[name] = status end
  end
  return map
end

--- `description - passed|failed` (the jq transform of rspec's JSON): the
--- name is everything before the last " - " that such a word follows.
function M.parse_log_rspec_transformed_json(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local s = tx.strip(line)
    local cut, status
    for _, p in ipairs(tx.find_all(s, " - ", 2)) do
      local w = s:sub(p + 3, p + 8)
      if w == "passed" then cut, status = p, tx.PASSED
      elseif w == "failed" then cut, status = p, tx.FAILED end
    end
    if cut then map[s:sub(1, cut - 1)] = status end
  end
  return map
end

local JEKYLL = { ["9141"] = "minitest", ["8047"] = "minitest", ["8167"] = "minitest",
                 ["8761"] = "cucumber", ["8771"] = "cucumber" }

--- jekyll's instances use minitest or cucumber, by the number after the
--- instance id's first "-"; any other instance gives no results (SWE-bench
--- raises there).
function M.parse_log_jekyll(log, task)
  local id = tx.task_field(task, "instance_id")
  local pr = id and tx.split(id, "-")[2]
  local which = pr and JEKYLL[pr]
  if which == "minitest" then return M.parse_log_minitest(log) end
  if which == "cucumber" then return M.parse_log_cucumber(log) end
  return {}
end

return M
