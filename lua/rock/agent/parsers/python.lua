--- rock.agent.parsers.python: SWE-bench's Python log parsers (its
-- swebench/harness/log_parsers/python.py at 5.0.x), written for linear time:
-- every scan is a plain find or an anchored match, never a pattern that
-- backtracks over text the tests print.
--   parse_log_pytest        `pytest -rA` result lines: STATUS test [- message]
--   parse_log_pytest_options  the same; a parameter that is an absolute path
--                           keeps only its basename (test_x[/a/b/c.txt] ->
--                           test_x[/c.txt])
--   parse_log_pytest_v2     ANSI colour codes and control characters removed;
--                           STATUS test... lines and, for old pytest, test STATUS
--   parse_log_django        Django's runner at --verbosity 2: name ... ok|FAIL|
--                           ERROR|skipped, FAIL:/ERROR: headers, a result on the
--                           line after the name (docstrings, output between)
--   parse_log_sympy         sympy's bin/test: test_x ok|F|E, failure headers
--                           ____ path.py:test_x ____
--   parse_log_matplotlib    parse_log_pytest with MouseButton.LEFT/RIGHT as 1/3
--   parse_log_seaborn       FAILED lines, test PASSED lines
-- and SWE-bench's per-repo aliases (parse_log_astroid, parse_log_requests,
-- parse_log_astropy, ...). Where SWE-bench would record a word that is no
-- status (a line "PASSEDx a"), these drop the test instead (SWE-bench's
-- grading counts such a test neither passed nor failed; rock counts it
-- missing): a parser only returns SWE-bench's TestStatus values.
local M = {}

local STATUS = { PASSED = true, FAILED = true, SKIPPED = true, ERROR = true, XFAIL = true }
-- the order SWE-bench's TestStatus enum lists them (the first a line starts with wins)
local ORDER = { "FAILED", "PASSED", "SKIPPED", "ERROR", "XFAIL" }

local find, sub, byte = string.find, string.sub, string.byte

-- the lines of s, split on "\n" as Python's str.split("\n") does
local function each_line(s, fn)
  local pos, n = 1, #s
  while pos <= n + 1 do
    local nl = find(s, "\n", pos, true)
    if not nl then
      fn(sub(s, pos))
      return
    end
    fn(sub(s, pos, nl - 1))
    pos = nl + 1
  end
end

local WS = { [9] = true, [10] = true, [11] = true, [12] = true, [13] = true, [32] = true }

-- s without leading and trailing whitespace (Python's str.strip)
local function strip(s)
  local i, j = 1, #s
  while i <= j and WS[byte(s, i)] do i = i + 1 end
  while j >= i and WS[byte(s, j)] do j = j - 1 end
  return sub(s, i, j)
end

local function words(s)
  local w = {}
  for x in s:gmatch("%S+") do w[#w + 1] = x end
  return w
end

local function starts(s, p) return sub(s, 1, #p) == p end
local function ends(s, p) return #s >= #p and sub(s, -#p) == p end

-- the status a line starts with (SWE-bench's `line.startswith(x.value)`)
local function leading_status(line)
  for _, st in ipairs(ORDER) do
    if starts(line, st) then return st end
  end
  return nil
end

-- pytest's `SKIPPED [N] path:line: reason` summary: [N] is no test
local function skip_summary(status, name)
  return status == "SKIPPED" and name:match("^%[%d+%]$") ~= nil
end

-- the first two words of a line that starts with a word
local function two_words(line)
  return line:match("^(%S+)%s+(%S+)")
end

-- the position of the last occurrence of p in s (plain), or nil
local function last_find(s, p)
  local at, from = nil, 1
  while true do
    local i = find(s, p, from, true)
    if not i then return at end
    at, from = i, i + 1
  end
end

local function pytest_lines(log, name_of, prepare)
  local map = {}
  each_line(log, function(line)
    if prepare then line = prepare(line) end
    local st = leading_status(line)
    if not st then return end
    if st == "FAILED" then line = line:gsub(" %- ", " ") end
    local a, b = two_words(line)
    if not b or skip_summary(a, b) then return end
    map[name_of and name_of(b) or b] = STATUS[a] and a or nil
  end)
  return map
end

function M.parse_log_pytest(log)
  return pytest_lines(log)
end

-- test_x[/abs/path/file] -> test_x[/file]: the text up to the first "[",
-- the option up to the last "]" (what follows it is dropped, as SWE-bench's
-- `(.*?)\[(.*)\]` does)
local function option_name(name)
  local i = find(name, "[", 1, true)
  local j = i and last_find(name, "]")
  if not (i and j and j > i) then return name end
  local main, option = sub(name, 1, i - 1), sub(name, i + 1, j - 1)
  if starts(option, "/") and not starts(option, "//") and not find(option, "*", 1, true) then
    option = "/" .. (option:match("([^/]*)$") or "")
  end
  return main .. "[" .. option .. "]"
end

function M.parse_log_pytest_options(log)
  return pytest_lines(log, option_name)
end

local function mouse_buttons(line)
  return (line:gsub("MouseButton%.LEFT", "1"):gsub("MouseButton%.RIGHT", "3"))
end

function M.parse_log_matplotlib(log)
  return pytest_lines(log, nil, mouse_buttons)
end

function M.parse_log_pytest_v2(log)
  local map = {}
  each_line(log, function(line)
    line = line:gsub("%[%d+m", ""):gsub("[\1-\31]", "")
    local st = leading_status(line)
    if st then
      if st == "FAILED" then
        local cut = find(line, " - ", 1, true)
        if cut then line = sub(line, 1, cut - 1) end
      end
      local w = words(line)
      if #w >= 2 and not skip_summary(w[1], w[2]) then
        map[table.concat(w, " ", 2)] = STATUS[w[1]] and w[1] or nil
      end
      return
    end
    for _, s in ipairs(ORDER) do
      if ends(line, s) then
        local w = words(line)
        if #w >= 2 then map[table.concat(w, " ", 1, #w - 1)] = STATUS[w[#w]] and w[#w] or nil end
        return
      end
    end
  end)
  return map
end

function M.parse_log_seaborn(log)
  local map = {}
  each_line(log, function(line)
    local w = words(line)
    if #w < 2 then return end
    if starts(line, "FAILED") then
      map[w[2]] = "FAILED"
    elseif find(line, " PASSED ", 1, true) then
      if w[2] == "PASSED" then map[w[1]] = "PASSED" end
    elseif starts(line, "PASSED") then
      map[w[2]] = "PASSED"
    end
  end)
  return map
end

-- sympy's failure headers, `(_*) (.*)\.py:(.*) (_*)` per line: from the
-- first space, the last ".py:" that has a space after it, up to the last
-- space: "____ sympy/x/test_a.py:test_b ____" -> sympy/x/test_a.py:test_b
local function sympy_header(line)
  local s0 = find(line, " ", 1, true)
  if not s0 then return nil end
  local r = last_find(line, " ")
  local q, from = nil, s0 + 1
  while true do
    local i = find(line, ".py:", from, true)
    if not i or i + 4 > r then break end
    q, from = i, i + 1
  end
  if not q then return nil end
  return sub(line, s0 + 1, q - 1) .. ".py:" .. sub(line, q + 4, r - 1)
end

function M.parse_log_sympy(log)
  local map = {}
  each_line(log, function(line)
    local t = sympy_header(line)
    if t then map[t] = "FAILED" end
  end)
  each_line(log, function(line)
    line = strip(line)
    if not starts(line, "test_") then return end
    local name = line:match("^%S+")
    if ends(line, " E") then map[name] = "ERROR" end
    if ends(line, " F") then map[name] = "FAILED" end
    if ends(line, " ok") then map[name] = "PASSED" end
  end)
  return map
end

local DJANGO_PASS = { " ... ok", " ... OK", " ...  OK" }
local SITES = "Applying sites.0002_alter_domain_unique...test_no_migrations"

-- the three results Django's runner prints after a long line of output:
-- `^(.*?)\s\.\.\.\s<lit><tail>` over the whole log, each match passing
-- group 1. tail(text, after) -> the end of the match or nil.
local function is_ws(c) return c == 32 or (c and c >= 9 and c <= 13) end

local function django_multiline(log, lit, tail, map)
  local n = #log
  local nl_from, last_nl = 1, 0 -- newlines before a point, found once
  local pending = find(log, "\n", 1, true)
  local allowed = 1 -- matches do not overlap (finditer)
  local from = 1
  while true do
    local a = find(log, lit, from, true)
    if not a then return end
    from = a + 1
    local p = a - 4 -- the "..." before lit
    if p >= 2 and is_ws(byte(log, a - 1)) and sub(log, p, p + 2) == "..." and is_ws(byte(log, p - 1)) then
      -- the line that group 1 lies on ends at p - 1 (the \s may be "\n")
      while pending and pending < p - 1 do
        last_nl = pending
        pending = find(log, "\n", pending + 1, true)
      end
      local L = last_nl + 1
      if L >= allowed then
        local e = tail(log, a + #lit, n)
        if e == false then return end -- no later match is possible
        if e then
          map[sub(log, L, p - 2)] = "PASSED"
          allowed = e + 1
        end
      end
    end
  end
end

-- "ok" at a line end right at i
local function ok_line(log, i, n)
  return sub(log, i, i + 1) == "ok" and (i + 2 > n or byte(log, i + 2) == 10)
end

local function testing_tail()
  local term = " silenced).\nok"
  local from, at -- at: the first terminator at or after from (false: there is none)
  return function(log, i, n)
    if not (from and i >= from and (at == false or i <= at)) then
      from, at = i, false
      local j = i
      while true do
        local t = find(log, term, j, true)
        if not t then break end
        if ok_line(log, t + #term - 2, n) then at = t break end
        j = t + 1
      end
    end
    if not at then return false end
    return at + #term - 1
  end
end

local function server_error_tail(log, i, n)
  local e = find(log, "\n", i, true)
  if not e or e - 1 < i or byte(log, e - 1) ~= 47 then return nil end -- the line ends with "/"
  if ok_line(log, e + 1, n) then return e + 2 end
  return nil
end

local function system_check_tail(log, i, n)
  if byte(log, i) == 10 and ok_line(log, i + 1, n) then return i + 2 end
  return nil
end

function M.parse_log_django(log)
  local map, prev = {}, nil
  each_line(log, function(raw)
    local line = strip(raw)
    if find(line, "--version is equivalent to version", 1, true) then
      map["--version is equivalent to version"] = "PASSED"
    end
    local i = find(line, " ... ", 1, true)
    if i then prev = sub(line, 1, i - 1) end
    for _, suffix in ipairs(DJANGO_PASS) do
      if ends(line, suffix) then
        if starts(line, SITES) then
          local j = find(line, "...", 1, true)
          line = strip(sub(line, j + 3))
        end
        local k = last_find(line, suffix)
        map[k and sub(line, 1, k - 1) or line] = "PASSED"
        break
      end
    end
    local s = find(line, " ... skipped", 1, true)
    if s then map[sub(line, 1, s - 1)] = "SKIPPED" end
    if ends(line, " ... FAIL") then map[sub(line, 1, find(line, " ... FAIL", 1, true) - 1)] = "FAILED" end
    if starts(line, "FAIL:") then
      local _, name = two_words(line)
      if name then map[name] = "FAILED" end
    end
    if ends(line, " ... ERROR") then map[sub(line, 1, find(line, " ... ERROR", 1, true) - 1)] = "ERROR" end
    if starts(line, "ERROR:") then
      local _, name = two_words(line)
      if name then map[name] = "ERROR" end
    end
    if starts(line, "ok") and prev ~= nil then map[prev] = "PASSED" end
  end)
  django_multiline(log, "Testing against Django installed in ", testing_tail(), map)
  django_multiline(log, "Internal Server Error: /", server_error_tail, map)
  django_multiline(log, "System check identified no issues (0 silenced)", system_check_tail, map)
  return map
end

-- SWE-bench's per-repository names for the same parsers
for _, n in ipairs({ "astroid", "flask", "marshmallow", "pvlib", "pyvista", "sqlfluff", "xarray" }) do
  M["parse_log_" .. n] = M.parse_log_pytest
end
for _, n in ipairs({ "pydicom", "requests", "pylint" }) do M["parse_log_" .. n] = M.parse_log_pytest_options end
for _, n in ipairs({ "astropy", "scikit", "sphinx" }) do M["parse_log_" .. n] = M.parse_log_pytest_v2 end

return M
