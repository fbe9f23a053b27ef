--- rock.agent.parsers.js_multimodal: SWE-bench's log parsers for the
-- JavaScript repos of SWE-bench Multimodal, each named as SWE-bench names
-- it (parse_log_calypso, _chart_js, _marked, _p5js, _react_pdf, _bpmn_js,
-- _carbon, _eslint, _grommet, _highlightjs, _lighthouse, _next,
-- _openlayers, _prismjs, _quarto_cli). The Multilingual runners (jest,
-- vitest, karma, TAP) are in js.lua; helpers in _text.lua. Where
-- SWE-bench's parser raises on a log (a line its pattern half matches,
-- JSON that does not parse), these skip that part instead.
local tx = require "rock.agent.parsers._text"
local cjson = require "cjson"

local M = {}

local PASSED, FAILED = tx.PASSED, tx.FAILED
local WS = tx.WS_BYTE

-- The line structure of s: at(pos) gives the position of the "\n" that
-- ends pos's line (nil on the last line) and that line's last character;
-- asked about growing positions it reads each line once.
local function line_cursor(s)
  local from, nl, last = 1, nil, 0
  local c = {}
  function c.at(pos)
    if pos < from or pos > last + 1 then
      from = pos
      nl = s:find("\n", pos, true)
      last = nl and nl - 1 or #s
    end
    return nl, last
  end
  return c
end

-- where the line that pos is in ends with `tail`: the tail's first
-- position, if it is there, is at or after pos and is followed by "\n"
-- (or, with at_end, ends the text)
local function tail_before_nl(s, cur, pos, tail, at_end)
  local nl, last = cur.at(pos)
  if not nl and not at_end then return nil end
  local e = last - #tail + 1
  if e >= pos and s:sub(e, last) == tail then return e end
end

-- the suite stack of the mocha-style parsers: an indented line that is
-- not a test pops the suites indented as deep or deeper, then is pushed
local function push_suite(suite, line)
  local indent = tx.indent(line)
  if indent == 0 then return false end
  while #suite > 0 and suite[#suite][2] >= indent do suite[#suite] = nil end
  suite[#suite + 1] = { tx.strip(line), indent }
  return true
end

local function suite_names(suite, extra)
  local names = {}
  for i, x in ipairs(suite) do names[i] = x[1] end
  if extra then names[#names + 1] = extra end
  return names
end

local function sw(s, prefix) return s:sub(1, #prefix) == prefix end

local CHECK, CROSS, HEAVY_CHECK, BALLOT_X = "\226\156\147", "\226\156\149", "\226\156\148", "\226\156\151" -- ✓ ✕ ✔ ✗
local BULLET = "\226\151\143" -- ●

-- `(<digits>ms)` ending s after position from: where its "(" is
local function ms_suffix(s, from)
  if s:byte(-1) ~= 41 then return nil end
  local open = #s - 1
  while open > from and s:byte(open) ~= 40 do open = open - 1 end
  if open > from and s:find("^%(%d+ms%)$", open) then return open end
end

--- wp-calypso's jest output, after each ` ./node_modules/.bin/jest `:
--- `✓ name (5ms)` / `✕ name` under indented describe lines, each
--- "suite - ... - name"; a `Test Suites` or `  ● ` line ends a run.
function M.parse_log_calypso(log)
  local map = {}
  if type(log) ~= "string" then return map end
  local suite = {}
  local runs = tx.split(log, " ./node_modules/.bin/jest ")
  for r = 2, #runs do
    for line in tx.lines(runs[r]) do
      if sw(line, "Test Suites") or sw(line, "  " .. BULLET .. " ") then break end
      local st = tx.strip(line)
      local mark = (sw(st, CHECK) and CHECK) or (sw(st, CROSS) and CROSS)
      if mark then
        -- `^\s+<mark>\s(.*)`, without a trailing (Nms) when there is one
        local w = tx.indent(line)
        if w > 0 and line:sub(w + 1, w + 3) == mark and WS[line:byte(w + 4)] then
          local from = w + 5
          local name
          if line:find("%(%d+ms%)") then
            local open = ms_suffix(line, from - 1)
            if open then name = line:sub(from, open - 1) end
          else
            name = line:sub(from)
          end
          if name then
            local prefix = table.concat(suite_names(suite), " - ")
            map[tx.strip(prefix .. " - " .. name)] = mark == CHECK and PASSED or FAILED
          end
        end
      else
        push_suite(suite, line)
      end
    end
  end
  return map
end

-- the first position q >= x with s[q] == ")" and a space (not \r \n)
-- after it; x only grows between calls
local function paren_cursor(s)
  local found, asked = nil, 0
  return function(x)
    if found and found >= x and asked <= x then return found end
    asked = x
    local q = x
    while true do
      q = s:find(")", q, true)
      if not q then found = math.huge return nil end
      local b = s:byte(q + 1)
      if b and WS[b] and b ~= 10 and b ~= 13 then found = q return q end
      q = q + 1
    end
  end
end

--- Chart.js (karma in Chrome): `Chrome 1.2 (Linux x86_64) name FAILED`
--- lines, ANSI stripped; only failures are recorded.
function M.parse_log_chart_js(log)
  local map = {}
  if type(log) ~= "string" then return map end
  local s = tx.ansi_escape(log)
  local cur, next_paren = line_cursor(s), paren_cursor(s)
  local pos = 1
  while true do
    local c = s:find("Chrome", pos, true)
    if not c then break end
    local matched
    local p = c + 6
    if WS[s:byte(p)] then
      local _, d = s:find("^[%d%.]+", p + 1)
      local b = d and s:byte(d + 1)
      if d and b and WS[b] and b ~= 10 and b ~= 13 and s:byte(d + 2) == 40 then
        local e = tail_before_nl(s, cur, d + 2, "FAILED", true)
        local q = e and next_paren(d + 4)
        if q and q <= e - 2 then
          map[s:sub(q + 2, e - 1)] = FAILED
          matched = e + 6
        end
      end
    end
    pos = matched or c + 1
  end
  return map
end

--- marked: mocha's failure list `1) name` (only failures are recorded).
function M.parse_log_marked(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local _, e = line:find("^%d+%)")
    if e and WS[line:byte(e + 1)] then map[tx.strip(line:sub(e + 2))] = FAILED end
  end
  return map
end

-- p5.js: the log without JSON blocks (lines from one ending "{" or "["
-- to its closing line, and one-line {...} / [...])
local function remove_json_blocks(log)
  local kept = {}
  local in_obj, in_list = false, false
  for line in tx.lines(log) do
    local st = tx.rstrip(line)
    local keep = false
    if tx.ends(st, "{") then in_obj = true
    elseif tx.ends(st, "[") then in_list = true
    elseif st == "}" and in_obj then in_obj = false
    elseif st == "]" and in_list then in_list = false
    elseif in_obj or in_list then -- inside a block
    elseif sw(st, "{") and tx.ends(st, "}") then -- one-line object
    elseif sw(st, "[") and tx.ends(st, "]") then -- one-line list
    else keep = true end
    if keep then kept[#kept + 1] = line end
  end
  return table.concat(kept, "\n")
end

-- p5.js: the log without <tag>...</tag> blocks, as SWE-bench's repeated
-- leftmost `<(\w+)>[\s\S]*?</\1>` replacement leaves it: a block's
-- unmatched inner <tag>s stay open and close at the next </tag>
local function remove_xml_blocks(s)
  local closes = {} -- name -> positions of "</name>" in s, in order
  for i, name in s:gmatch("()</([%w_]+)>") do
    local l = closes[name]
    if not l then l = { n = 0, at = 1 }; closes[name] = l end
    l.n = l.n + 1
    l[l.n] = i
  end
  local function next_close(name, pos) -- first "</name>" at or after pos
    local l = closes[name]
    if not l then return nil end
    while l.at <= l.n and l[l.at] < pos do l.at = l.at + 1 end
    return l[l.at]
  end
  local out, pos = {}, 1
  while true do
    local lt, gt, name = s:find("<([%w_]+)>", pos)
    if not lt then break end
    local close = next_close(name, gt + 1)
    if not close then
      out[#out + 1] = s:sub(pos, gt)
      pos = gt + 1
    else
      out[#out + 1] = s:sub(pos, lt - 1)
      local open_tag, close_tag = "<" .. name .. ">", "</" .. name .. ">"
      local depth, from = 1, gt + 1
      while depth > 0 do
        local c = next_close(name, from)
        if not c then break end
        local _, k = s:sub(from, c - 1):gsub(open_tag:gsub("%p", "%%%0"), "")
        depth = depth - 1 + k
        from = c + #close_tag
      end
      if depth > 0 then out[#out + 1] = open_tag:rep(depth) end
      pos = from
    end
  end
  out[#out + 1] = s:sub(pos)
  return table.concat(out)
end

--- p5.js (mocha in a browser): failures `  1) suite\n     test:` whose
--- lines are each indented deeper, named "suite:test", after JSON and XML
--- blocks are taken out; only failures are recorded.
function M.parse_log_p5js(log)
  local map = {}
  if type(log) ~= "string" then return map end
  local s = remove_xml_blocks(remove_json_blocks(tx.ansi_escape(log)))
  local n = #s
  local ws_end_from, ws_end = 0, 0 -- cache: the end of the space run at ws_end_from
  local colon_from, colon = 0, nil  -- cache: the first ":" at or after colon_from
  local pos = 1                     -- where the next match may start
  local ls = 1                      -- a line start
  while ls <= n + 1 do
    if ls >= pos then
      local w
      if ls <= ws_end and ls > ws_end_from then w = ws_end
      else
        local _, e = s:find("^[\t-\r\28-\31 ]*", ls)
        ws_end_from, ws_end, w = ls, e, e
      end
      local _, d = s:find("^%d+%)", w + 1)
      if d then
        if not (colon and colon >= d + 1 and colon_from <= d + 1) then
          colon_from, colon = d + 1, s:find(":", d + 1, true)
        end
        if colon and colon - d - 1 <= 1000 then
          local body = s:sub(d + 1, colon - 1)
          local parts, last, ok = {}, 0, true
          for l in tx.lines(body) do
            local ind = tx.indent(l)
            if ind <= last then ok = false break end
            last = ind
            parts[#parts + 1] = tx.strip(l)
          end
          if ok then map[table.concat(parts, ":")] = FAILED end
          pos = colon + 1
        end
      end
    end
    local nl = s:find("\n", ls, true)
    if not nl then break end
    ls = nl + 1
  end
  return map
end

local CARBON = { PASS = PASSED, FAIL = FAILED }

-- the last `<ws>(<digits/dots><tail>` in line whose whitespace is at or
-- after from; tail_ws: the tail starts with one whitespace character
local function last_timing(line, from, tail, tail_ws)
  local best
  for _, i in ipairs(tx.find_all(line, "(", from + 1)) do
    if WS[line:byte(i - 1)] then
      local _, d = line:find("^[%d%.]+", i + 1)
      if d then
        local t = d + 1
        if tail_ws then
          if WS[line:byte(t)] then t = t + 1 else t = nil end
        end
        if t and line:sub(t, t + #tail - 1) == tail then best = i - 1 end
      end
    end
  end
  return best
end

--- carbon, react-pdf, scratch-gui, prettier, lighthouse's jest: jest's
--- `PASS path (1.2 s)` / `FAIL path` file lines, the timing dropped.
function M.parse_log_carbon(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local status = CARBON[line:sub(1, 4)]
    if status and WS[line:byte(5)] then
      local k = last_timing(line, 6, "ms)") or last_timing(line, 6, "s)", true) or last_timing(line, 6, "s)")
      map[line:sub(6, k and k - 1 or #line)] = status
    end
  end
  return map
end
M.parse_log_react_pdf = M.parse_log_carbon

-- the `(...)FAILED\n` tail of bpmn-js's and openlayers' patterns: where
-- the group from g ends (the FAILED that ends g's line, or with sp a
-- whitespace character before it, which may be the line's "\n" when the
-- next line is FAILED), and where the match ends
local function failed_tail(s, cur, g, sp)
  if sp then
    local nl, last = cur.at(g)
    if nl and s:sub(nl + 1, nl + 7) == "FAILED\n" then return last, nl + 8 end
  end
  local e = tail_before_nl(s, cur, g, "FAILED")
  if not e then return nil end
  if sp then
    if e - 1 < g or not WS[s:byte(e - 1)] then return nil end
    return e - 2, e + 6
  end
  return e - 1, e + 6
end

-- a matcher for one fixed head: a list of steps applied from a position
-- ("lit" text, "ws" one whitespace character, "num" [%d.]+, "nws" a run of
-- non-space that ends in ")", ">" the end); returns the position after it
local function head(s, pos, steps)
  for _, st in ipairs(steps) do
    if st == "ws" then
      if not WS[s:byte(pos)] then return nil end
      pos = pos + 1
    elseif st == "num" then
      local _, d = s:find("^[%d%.]+", pos)
      if not d then return nil end
      pos = d + 1
    elseif st == "nws)" then
      local _, d = s:find("^[^\t-\r\28-\31 ]+", pos)
      if not d or d - pos < 1 or s:byte(d) ~= 41 then return nil end
      pos = d + 1
    else
      if s:sub(pos, pos + #st - 1) ~= st then return nil end
      pos = pos + #st
    end
  end
  return pos
end

-- findall of `<steps>(.*)[\s]FAILED\n` over s: each group, in order
local function find_failed(s, anchor, steps, sp, out)
  local cur = line_cursor(s)
  local pos = 1
  while true do
    local c = s:find(anchor, pos, true)
    if not c then return out end
    local g = head(s, c, steps)
    local stop, after
    if g then stop, after = failed_tail(s, cur, g, sp) end
    if stop then
      out[#out + 1] = s:sub(g, stop)
      pos = after
    else
      pos = c + 1
    end
  end
end

--- bpmn-js (karma in PhantomJS or Chrome): `... (Linux ...) name FAILED`
--- lines; only failures are recorded.
function M.parse_log_bpmn_js(log)
  local map = {}
  if type(log) ~= "string" then return map end
  local found = {}
  find_failed(log, "2KPhantomJS", { "2KPhantomJS", "ws", "num", "ws", "(Linux", "ws", "num", ")", "ws" }, false, found)
  find_failed(log, "2KPhantomJS", { "2KPhantomJS", "ws", "num", "ws", "(Linux", "ws", "x86_64)", "ws" }, false, found)
  -- `Chrome\sHeadless\s(.*)\s\(Linux\sx86_64\)\s(.*)FAILED\n`: the last
  -- "(Linux x86_64)" of the line whose rest ends in FAILED
  local cur, markers = line_cursor(log), {}
  for i in log:gmatch("()%(Linux") do
    if i > 1 and WS[log:byte(i - 1)] and head(log, i, { "(Linux", "ws", "x86_64)", "ws" }) then
      local g = i + 15
      local stop, after = failed_tail(log, cur, g, false)
      if stop then markers[#markers + 1] = { i - 1, g, stop, after } end
    end
  end
  local pos, mi = 1, 0
  while true do
    local c = log:find("Chrome", pos, true)
    if not c then break end
    local g = head(log, c, { "Chrome", "ws", "Headless", "ws" })
    local hit
    if g then
      local nl = log:find("\n", g, true) or #log + 1
      while mi < #markers and markers[mi + 1][1] <= nl do mi = mi + 1 end
      local m = markers[mi]
      if m and m[1] >= g then hit = m end
    end
    if hit then
      found[#found + 1] = log:sub(hit[2], hit[3])
      pos = hit[4]
    else
      pos = c + 1
    end
  end
  find_failed(log, "HeadlessChrome", { "HeadlessChrome", "ws", "num", "ws", "(Linux", "ws", "num", ")", "ws" }, false, found)
  for _, name in ipairs(found) do map[name] = FAILED end
  return map
end

--- eslint (mocha's `--reporter min`): `  1) suite test` then the error;
--- the name is the text from the number to the line with "Error" (spaces
--- squeezed). Only failures are recorded.
function M.parse_log_eslint(log)
  local map = {}
  if type(log) ~= "string" then return map end
  local s, n = log, #log
  -- the last "Error" of each line, looked up as positions grow
  local line_last, line_end = nil, 0
  local function last_error_in_line(m)
    if m > line_end then
      local nl = s:find("\n", m, true)
      line_end = nl and nl - 1 or n
      line_last = nil
      local ls = m
      while ls > 1 and s:byte(ls - 1) ~= 10 do ls = ls - 1 end
      local p = ls
      while true do
        local i = s:find("Error", p, true)
        if not i or i + 4 > line_end then break end
        line_last, p = i, i + 1
      end
    end
    return line_last
  end
  local pos = 1
  while true do
    -- `\s{2}\d+\)`: two whitespace characters, digits, ")"
    local i, e = s:find("[\t-\r\28-\31 ][\t-\r\28-\31 ]%d+%)", pos)
    if not i then break end
    local a = e + 1
    -- the first whitespace run at or after a whose next non-space
    -- character's line has an "Error" at or after it
    local j, hit = a, nil
    while j <= n do
      local ws_at = s:find("[\t-\r\28-\31 ]", j)
      if not ws_at then break end
      local m = s:find("[^\t-\r\28-\31 ]", ws_at)
      if not m then break end
      local last = last_error_in_line(m)
      if last and last >= m then hit = { ws_at, last } break end
      j = m
    end
    if not hit then break end
    map[tx.strip(tx.squeeze(s:sub(a, hit[1] - 1)))] = FAILED
    pos = hit[2] + 5
  end
  return map
end

-- lines matching `^KEY\s(.*)`, where the whitespace may be the line's
-- "\n" (the group is then the next line, which is then used up)
local function prefixed(log, key, fn)
  local skip = false
  local lines = {}
  for line in tx.lines(log) do lines[#lines + 1] = line end
  for i, line in ipairs(lines) do
    if skip then skip = false
    elseif line:sub(1, #key) == key then
      if #line > #key and WS[line:byte(#key + 1)] then fn(line:sub(#key + 2))
      elseif #line == #key and i < #lines then fn(lines[i + 1]); skip = true end
    end
  end
end

--- grommet (jest): `FAIL path` / `PASS path (1.2 s)` at line starts,
--- the timing dropped; a PASS line wins over a FAIL line of the same file.
function M.parse_log_grommet(log)
  local map = {}
  if type(log) ~= "string" then return map end
  local function name_of(g)
    local t = tx.strip(g)
    if t:byte(-1) == 41 then
      local open = #t - 1
      while open > 0 and t:byte(open) ~= 40 do open = open - 1 end
      if open >= 2 and WS[t:byte(open - 1)] and t:find("^%([%d%.]+" .. tx.WS .. "?m?s%)$", open) then
        return t:sub(1, open - 2)
      end
    end
    return t
  end
  prefixed(log, "FAIL", function(g) map[name_of(g)] = FAILED end)
  prefixed(log, "PASS", function(g) map[name_of(g)] = PASSED end)
  return map
end

-- text before the first `\n[ \t]*\d+ passing` (mocha's summary)
local function before_passing(log)
  for _, p in ipairs(tx.find_all(log, " passing")) do
    local d = p - 1
    while d > 0 and tx.is_digit(log:byte(d)) do d = d - 1 end
    if d < p - 1 then
      local w = d
      while w > 0 and (log:byte(w) == 32 or log:byte(w) == 9) do w = w - 1 end
      if w > 0 and log:byte(w) == 10 then return log:sub(1, w - 1) end
    end
  end
  return log
end

local function drop_ms(name)
  if name:find("%(%d+ms%)") then return tx.strip((name:gsub("%(%d+ms%)", ""))) end
  return tx.strip(name)
end

--- highlight.js (mocha's spec reporter): `✓ name` / `✔ name` PASSED and
--- `1) name` FAILED, "suite.name" under the last line indented by two
--- spaces; the summary after "N passing" is not read.
function M.parse_log_highlightjs(log)
  local map = {}
  if type(log) ~= "string" then return map end
  local suite = {}
  for line in tx.lines(before_passing(log)) do
    local st = tx.strip(line)
    local mark = (sw(st, CHECK) and CHECK) or (sw(st, HEAVY_CHECK) and HEAVY_CHECK)
    if mark then
      local i = line:find(mark, 1, true)
      suite[#suite + 1] = drop_ms(line:sub(i + #mark))
      map[table.concat(suite, ".")] = PASSED
      suite[#suite] = nil
    elseif st:find("^%d+%)") then
      local i = line:find(")", 1, true)
      suite[#suite + 1] = drop_ms(line:sub(i + 1))
      map[table.concat(suite, ".")] = FAILED
      suite[#suite] = nil
    elseif sw(line, "  ") then
      suite = { st }
    end
  end
  return map
end

-- lighthouse before 3: mocha's JSON reporter's fullTitle lines
local function full_titles(part, status, map)
  local cur = line_cursor(part)
  for q in part:gmatch('()"fullTitle":') do
    local p = q + 12
    if WS[part:byte(p)] and part:byte(p + 1) == 34 then
      local g = p + 2
      local nl, last = cur.at(g)
      if nl and last >= g + 1 and part:sub(last - 1, last) == '",' then
        map[part:sub(g, last - 2)] = status
      end
    end
  end
end

-- lighthouse 9.5 to 10.2: mocha's spec reporter after each "running N
-- test files", up to "N passing"
local function lighthouse_mocha(log, map)
  local runs, pos = {}, 1
  local starts = {}
  for i in log:gmatch("()running") do
    local e = head(log, i, { "running", "ws" })
    local d = e and select(2, log:find("^%d+", e))
    local f = d and head(log, d + 1, { "ws", "test", "ws", "files" })
    if f and i >= pos then starts[#starts + 1] = { i, f } pos = f end
  end
  for k, st in ipairs(starts) do
    runs[#runs + 1] = log:sub(st[2], (starts[k + 1] and starts[k + 1][1] or #log + 1) - 1)
  end
  for _, run in ipairs(runs) do
    -- cut at the first `\d+\spassing`
    for _, p in ipairs(tx.find_all(run, "passing")) do
      if p > 2 and WS[run:byte(p - 1)] and tx.is_digit(run:byte(p - 2)) then
        local d = p - 2
        while d > 1 and tx.is_digit(run:byte(d - 1)) do d = d - 1 end
        run = run:sub(1, d - 1)
        break
      end
    end
    run = tx.strip(run)
    local suite = {}
    for line in tx.lines(run) do
      local st = tx.strip(line)
      local status, name
      if sw(st, HEAVY_CHECK) and WS[st:byte(4)] then
        status = PASSED
        -- `✔\s(.*)\s\(\d+m+s\)`: the last (Nms) / (Nmms) ... that fits
        local best
        for _, i in ipairs(tx.find_all(st, "(", 6)) do
          if WS[st:byte(i - 1)] and st:find("^%(%d+m+s%)", i) then best = i - 1 end
        end
        name = st:sub(5, best and best - 1 or #st)
      else
        local _, e = st:find("^%d+%)")
        if e and WS[st:byte(e + 1)] then
          status = FAILED
          local best
          for _, i in ipairs(tx.find_all(st, "(", e + 3)) do
            if WS[st:byte(i - 1)] and st:find("^%(%d+m+s%)", i) then best = i - 1 end
          end
          name = st:sub(e + 2, best and best - 1 or #st)
        end
      end
      if status then
        map[table.concat(suite_names(suite, name), " - ")] = status
      else
        push_suite(suite, line)
      end
    end
  end
end

--- lighthouse: by the task's version, mocha's spec reporter (9.5, 10.0,
--- 10.2), jest's file lines (3 and later: parse_log_carbon) or mocha's
--- JSON reporter (before 3).
function M.parse_log_lighthouse(log, task)
  local map = {}
  if type(log) ~= "string" then return map end
  local version = tx.task_field(task, "version") or ""
  if version == "9.5" or version == "10.0" or version == "10.2" then
    lighthouse_mocha(log, map)
    return map
  end
  local v = tonumber(version)
  if not v then return map end
  if v >= 3 then return M.parse_log_carbon(log) end
  local segs = tx.split(log, "./node_modules/.bin/mocha --reporter json")
  for i = 2, #segs do
    full_titles(tx.before_last(tx.after_last(segs[i], '"passes": ['), "]"), PASSED, map)
    full_titles(tx.before_last(tx.after_last(segs[i], '"failures": ['), "],"), FAILED, map)
  end
  return map
end

-- next v1: karma's mocha reporter per ` xvfb-run ` run
local function next_v1(log, map)
  local s = tx.ansi_escape(log)
  -- drop `AssertionError:\s+#...\n\n` blocks
  local out, pos = {}, 1
  while true do
    local i, e = s:find("AssertionError:[\t-\r\28-\31 ]+#", pos)
    if not i then break end
    local stop = s:find("\n\n", e + 1, true)
    if not stop then break end
    out[#out + 1] = s:sub(pos, i - 1)
    pos = stop + 2
  end
  out[#out + 1] = s:sub(pos)
  s = table.concat(out)
  local suite = {}
  local runs = tx.split(s, " xvfb-run ")
  for r = 2, #runs do
    for line in tx.lines(tx.after_last(runs[r], "Starting browser Chrome")) do
      if sw(line, "TOTAL") then break end
      local st = tx.strip(line)
      if sw(st, "ERROR") or sw(st, "LOG") or sw(st, "WARN") or sw(st, "Check") or sw(st, "in") then
        -- skipped
      else
        local x = line:find(BALLOT_X, 1, true)
        local c = not x and line:find(CHECK, 1, true)
        local at = x or c
        if at then
          local rest = line:sub(at + 3)
          local test = rest:sub((rest:find(tx.NWS) or #rest + 1))
          map[table.concat(suite_names(suite, test), " - ")] = x and FAILED or PASSED
        else
          push_suite(suite, line)
        end
      end
    end
  end
end

-- next v2 (1.27): `Running: name)\n\n\n  Suite\n` heads, then `    1) x`
-- failures and `    ✓ x (` passes in the text up to the next head
local function next_v2(log, map)
  local heads = {}
  local pos = 1
  while true do
    local i = log:find("Running:", pos, true)
    if not i then break end
    local nl = log:find("\n", i, true)
    local h
    if nl and nl - 1 >= i + 8 and log:byte(nl - 1) == 41 and log:sub(nl, nl + 2) == "\n\n\n"
      and WS[log:byte(nl + 3)] and WS[log:byte(nl + 4)] then
      local g2 = nl + 5
      local nl2 = log:find("\n", g2, true)
      if nl2 then h = { i, nl2, log:sub(g2, nl2 - 1) } end
    end
    if h then heads[#heads + 1] = h pos = h[2] + 1 else pos = i + 1 end
  end
  for k, h in ipairs(heads) do
    local text = log:sub(h[2] + 1, (heads[k + 1] and heads[k + 1][1] or #log + 1) - 1)
    local suite = h[3]
    local fails, passes = {}, {}
    -- `^\s{4}\d+\)\s(.*)` and `^\s{4}✓\s(.*)\(` at line starts
    local ls = 1
    while ls <= #text do
      local e = ls + 3
      local four = true
      for j = ls, e do if not WS[text:byte(j)] then four = false break end end
      if four then
        local _, d = text:find("^%d+%)", e + 1)
        if d and WS[text:byte(d + 1)] then
          local nl = text:find("\n", d + 2, true)
          fails[#fails + 1] = text:sub(d + 2, (nl or #text + 1) - 1)
        elseif text:sub(e + 1, e + 3) == CHECK and WS[text:byte(e + 4)] then
          local g = e + 5
          local nl = text:find("\n", g, true) or #text + 1
          local open = tx.before_last(text:sub(g, nl - 1), "(")
          if #open < nl - g then passes[#passes + 1] = open end
        end
      end
      local nl = text:find("\n", ls, true)
      if not nl then break end
      ls = nl + 1
    end
    for _, f in ipairs(fails) do map[suite .. ": " .. tx.strip(f)] = FAILED end
    for _, p in ipairs(passes) do map[suite .. ": " .. tx.strip(p)] = PASSED end
  end
end

--- alibaba-fusion/next: karma's reporter (v1) or, for version 1.27, the
--- `Running:` blocks of its e2e runner (v2).
function M.parse_log_next(log, task)
  local map = {}
  if type(log) ~= "string" then return map end
  if tx.task_field(task, "version") == "1.27" then next_v2(log, map) else next_v1(log, map) end
  return map
end

--- OpenLayers: Chrome's `... (Linux x86_64) name FAILED` lines, mocha's
--- `  1) name ... Error:` and rendering's `case name: mismatch`; only
--- failures are recorded (spaces squeezed).
function M.parse_log_openlayers(log)
  local map = {}
  if type(log) ~= "string" then return map end
  local found = {}
  find_failed(log, "Chrome", { "Chrome", "ws", "Headless", "ws", "num", "ws", "(Linux", "ws", "nws)", "ws" }, true, found)
  find_failed(log, "Chrome", { "Chrome", "ws", "num", "ws", "(Linux", "ws", "nws)", "ws" }, false, found)
  -- `^\s{2}\d+\)([\s\S]*?)Error:`
  local pos, ls = 1, 1
  local err_at, err_from = nil, 0
  while ls <= #log do
    if ls >= pos and WS[log:byte(ls)] and WS[log:byte(ls + 1)] then
      local _, d = log:find("^%d+%)", ls + 2)
      if d then
        if not (err_at and err_at > d and err_from <= d + 1) then
          err_from, err_at = d + 1, log:find("Error:", d + 1, true)
        end
        if not err_at then break end
        found[#found + 1] = log:sub(d + 1, err_at - 1)
        pos = err_at + 6
      end
    end
    local nl = log:find("\n", ls, true)
    if not nl then break end
    ls = nl + 1
  end
  -- `^case\s(.*):\smismatch`
  ls = 1
  while ls <= #log do
    local nl = log:find("\n", ls, true)
    if log:sub(ls, ls + 3) == "case" and WS[log:byte(ls + 4)] then
      local g = ls + 5
      local le = log:find("\n", g, true) or #log + 1
      local best
      for _, q in ipairs(tx.find_all(log:sub(g, le), ":")) do
        local at = g + q - 1
        if WS[log:byte(at + 1)] and log:sub(at + 2, at + 9) == "mismatch" then best = at end
      end
      if best then found[#found + 1] = log:sub(g, best - 1) end
    end
    if not nl then break end
    ls = nl + 1
  end
  for _, f in ipairs(found) do map[tx.strip(tx.squeeze(f))] = FAILED end
  return map
end

--- PrismJS (mocha's JSON reporter after each run of its test command):
--- failures then passes by fullTitle; a run whose JSON does not parse is
--- skipped.
function M.parse_log_prismjs(log)
  local map = {}
  if type(log) ~= "string" then return map end
  local segs = tx.split(log, "./node_modules/.bin/mocha tests/run.js --reporter json")
  for i = 2, #segs do
    local seg = segs[i]
    local a = seg:find("{", 1, true)
    local body = a and seg:sub(a + 1) or seg
    local ok, res = pcall(cjson.decode, "{" .. tx.before_last(body, "}") .. "}")
    if ok and type(res) == "table" then
      for _, key in ipairs{ "failures", "passes" } do
        local list = res[key]
        if type(list) == "table" then
          for _, t in ipairs(list) do
            if type(t) == "table" and type(t.fullTitle) == "string" then
              map[t.fullTitle] = key == "passes" and PASSED or FAILED
            end
          end
        end
      end
    end
  end
  return map
end

--- quarto-cli (deno test): `[smoke] name ... ok` / `... FAILED` lines,
--- with /tmp paths renumbered in order of appearance; a [smoke]/[unit]
--- line with no result is FAILED; reading stops at "ERRORS" or
--- "failures:".
function M.parse_log_quarto_cli(log)
  local map = {}
  if type(log) ~= "string" then return map end
  local tmp_ids, count = {}, 0
  local function renumber(line, pat)
    local i, e = line:find(pat)
    if not i then return line end
    local key = line:sub(i, e)
    if not tmp_ids[key] then tmp_ids[key] = count; count = count + 1 end
    local id = tostring(tmp_ids[key])
    return (line:gsub(pat, function() return "/tmp/" .. id end))
  end
  for line in tx.lines(log) do
    if line:find("ERRORS", 1, true) or line:find("failures:", 1, true) then break end
    if line:find("[smoke]", 1, true) or line:find("[unit]", 1, true) then
      line = renumber(line, "/tmp/[%w_]+%.qmd")
      line = renumber(line, "/tmp/[%w_]+/")
      local name = tx.strip(tx.split(line, "...")[1])
      local reject = sw(line, "test result:")
        or (line:find("passed", 1, true) and line:find("failed", 1, true) and line:find("steps", 1, true))
        or line:find("34mINFO", 1, true)
      if not reject then
        if line:find("32mok", 1, true) then map[name] = PASSED
        elseif line:find("31mFAILED", 1, true) then map[name] = FAILED
        elseif not map[name] then map[name] = FAILED end
      end
    end
  end
  return map
end

return M
