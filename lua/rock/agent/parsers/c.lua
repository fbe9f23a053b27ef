--- rock.agent.parsers.c: SWE-bench's log parsers for the C/C++ repos:
-- parse_log_redis (the Tcl runner's `[ok]: name (N ms)`: redis, valkey),
-- parse_log_jq (automake's `PASS: name`), parse_log_doctest (doctest's
-- `-s -r=xml` report: nlohmann/json), parse_log_micropython_test
-- (run-tests.py's `pass name`), parse_log_googletest (`[       OK ] A.b
-- (0 ms)`: fmt). The registry (init.lua) loads this family.
local tx = require "rock.agent.parsers._text"

local M = {}

local REDIS = { ok = tx.PASSED, err = tx.FAILED, skip = tx.SKIPPED, ignore = tx.SKIPPED }

-- name without a trailing `<ws>in<ws><file>` (redis prints where an
-- error happened after the failed test's name)
local function drop_in_file(name)
  local e = #name
  local t = e
  while t > 0 and not tx.WS_BYTE[name:byte(t)] do t = t - 1 end -- the last token
  if t == e then return name end
  local w = t
  while w > 0 and tx.WS_BYTE[name:byte(w)] do w = w - 1 end
  if w < 2 or name:sub(w - 1, w) ~= "in" then return name end
  local v = w - 2
  if v < 1 or not tx.WS_BYTE[name:byte(v)] then return name end
  while v > 1 and tx.WS_BYTE[name:byte(v - 1)] do v = v - 1 end
  return name:sub(1, v - 1)
end

--- `[ok]: name (12 ms)` -> PASSED, `[err]: name in tests/x.tcl` ->
--- FAILED (the file dropped), `[skip]:` and `[ignore]:` -> SKIPPED.
function M.parse_log_redis(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local s = tx.strip(line)
    local word, close = s:match("^%[(%l+)%]():")
    local status = REDIS[word]
    if status and tx.WS_BYTE[s:byte(close + 1)] and #s >= close + 2 then
      local from = close + 2
      local d = tx.duration_suffix(s, from)
      local name = s:sub(from, d and d - 1 or #s)
      if word == "err" then name = drop_in_file(name) end
      map[name] = status
    end
  end
  return map
end

--- `PASS: name` -> PASSED, `FAIL: name` -> FAILED (automake's harness).
function M.parse_log_jq(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local s = tx.strip(line)
    local word = s:match("^(%u%u%u%u):")
    if (word == "PASS" or word == "FAIL") and tx.WS_BYTE[s:byte(6)] and #s >= 7 then
      map[s:sub(7)] = word == "PASS" and tx.PASSED or tx.FAILED
    end
  end
  return map
end

local MICRO = { pass = tx.PASSED, FAIL = tx.FAILED, skip = tx.SKIPPED }

--- `pass basics/fun.py` -> PASSED, `FAIL ...` -> FAILED, `skip ...` ->
--- SKIPPED (micropython's run-tests.py).
function M.parse_log_micropython_test(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local s = tx.strip(line)
    local word, name = s:match("^(%a%a%a%a)" .. tx.WS .. "+(.+)$")
    if MICRO[word] then map[name] = MICRO[word] end
  end
  return map
end

--- `[       OK ] Suite.Test (0 ms)` -> PASSED, `[  FAILED  ] ... (1 ms)`
--- -> FAILED, anywhere in the line (ctest -V puts `N: ` before it). The
--- last bracket that fits wins; the name runs to the last " (".
function M.parse_log_googletest(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local s = tx.strip(line)
    if s:byte(-1) == 41 and s:find("[", 1, true) then -- ")"
      local k -- the last whitespace followed by "(" with ")" ending the line
      for _, i in ipairs(tx.find_all(s, "(")) do
        if i > 1 and i < #s and tx.WS_BYTE[s:byte(i - 1)] then k = i - 1 end
      end
      local brackets = k and tx.find_all(s, "[") or {}
      for bi = #brackets, 1, -1 do
        local _, e, word = s:find("^%[" .. tx.WS .. "*(%u+)" .. tx.WS .. "*%]", brackets[bi])
        if (word == "OK" or word == "FAILED") and tx.WS_BYTE[s:byte(e + 1)] and k >= e + 2 then
          map[s:sub(e + 2, k - 1)] = word == "OK" and tx.PASSED or tx.FAILED
          break
        end
      end
    end
  end
  return map
end

-- doctest's XML report: a small well-formedness-checking reader of
-- elements and attributes (entities decoded, as an XML parser does)

local ENT = { lt = "<", gt = ">", amp = "&", quot = '"', apos = "'" }

local function utf8_char(n)
  if n < 0 or n > 0x10FFFF or (n >= 0xD800 and n <= 0xDFFF) then return nil end
  return utf8.char(n)
end

-- attribute value text with entities decoded and \t \n \r made spaces
local function attr_text(v)
  local bad = false
  v = v:gsub("&(#?)(%w*)(;?)", function(hash, body, semi)
    local c
    if semi == "" then bad = true; return "" end
    if hash == "#" then
      local n = body:match("^x(%x+)$") and tonumber(body:sub(2), 16) or (body:match("^%d+$") and tonumber(body))
      c = n and utf8_char(n)
    else
      c = ENT[body]
    end
    if not c then bad = true; return "" end
    return c
  end)
  if bad then return nil end
  return (v:gsub("[\t\n\r]", " "))
end

-- the element tree of xml (a root element and nothing but space, comments
-- and processing instructions around it), or nil when it is not well formed
local function parse_xml(xml)
  local root
  local stack = {}
  local pos, n = 1, #xml
  while pos <= n do
    local lt = xml:find("<", pos, true)
    local text = xml:sub(pos, (lt or n + 1) - 1)
    if #stack == 0 and text:find("%S") then return nil end
    if not lt then break end
    if xml:sub(lt, lt + 3) == "<!--" then
      local e = xml:find("-->", lt + 4, true)
      if not e then return nil end
      pos = e + 3
    elseif xml:sub(lt, lt + 8) == "<![CDATA[" then
      if #stack == 0 then return nil end
      local e = xml:find("]]>", lt + 9, true)
      if not e then return nil end
      pos = e + 3
    elseif xml:sub(lt, lt + 1) == "<?" then
      local e = xml:find("?>", lt + 2, true)
      if not e then return nil end
      pos = e + 2
    elseif xml:sub(lt, lt + 1) == "</" then
      local _, e, name = xml:find("^</([%a_:][%w_:%.%-]*)%s*>", lt)
      local top = stack[#stack]
      if not e or not top or top.name ~= name then return nil end
      stack[#stack] = nil
      pos = e + 1
    else
      local _, e, name = xml:find("^<([%a_:][%w_:%.%-]*)", lt)
      if not e or (root and #stack == 0) then return nil end
      local el = { name = name, attrs = {}, kids = {} }
      local p = e + 1
      while true do
        local _, se = xml:find("^%s*", p)
        local spaced = se >= p
        p = se + 1
        if xml:sub(p, p) == ">" or xml:sub(p, p + 1) == "/>" then break end
        if not spaced then return nil end -- attributes are separated by whitespace
        local _, ae, an, q = xml:find("^([%a_:][%w_:%.%-]*)%s*=%s*(['\"])", p)
        if not ae then return nil end
        local close = xml:find(q, ae + 1, true)
        if not close then return nil end
        local raw = xml:sub(ae + 1, close - 1)
        if raw:find("<", 1, true) or el.attrs[an] then return nil end
        el.attrs[an] = attr_text(raw)
        if not el.attrs[an] then return nil end
        p = close + 1
      end
      local parent = stack[#stack]
      if parent then parent.kids[#parent.kids + 1] = el else root = el end
      if xml:sub(p, p) == ">" then
        stack[#stack + 1] = el
        pos = p + 1
      else
        pos = p + 2
      end
    end
  end
  if #stack > 0 or not root then return nil end
  return root
end

--- The XML between the first `<doctest` and the first `</doctest>` after
--- it: each SubCase of each TestCase is "TestCase > SubCase", PASSED when
--- every Expression under it has success="true", else FAILED (later
--- SubCases of the same name win). TestCases without a SubCase give
--- nothing. A log without the whole report, or with XML that is not well
--- formed or has a TestCase inside a TestCase (not doctest's report; it
--- would cost time quadratic in the log), gives no results.
function M.parse_log_doctest(log)
  local map = {}
  if type(log) ~= "string" then return map end
  local s = log:find("<doctest", 1, true)
  if not s then return map end
  local _, e = log:find("</doctest>", s, true)
  if not e then return map end
  local ok, root = pcall(parse_xml, log:sub(s, e))
  if not ok or not root then return map end
  -- pre-order walk: order[i] = element, tc_of[el] = its TestCase ancestor
  local order, tc_of, todo = {}, {}, { { root, nil } }
  while #todo > 0 do
    local el, tc = table.unpack(todo[#todo])
    todo[#todo] = nil
    order[#order + 1] = el
    tc_of[el] = tc
    if el.name == "TestCase" and el ~= root then
      if tc then return {} end
      tc = el
    end
    for i = #el.kids, 1, -1 do todo[#todo + 1] = { el.kids[i], tc } end
  end
  local fails = {} -- fails[el]: an Expression under el has success ~= "true"
  for i = #order, 1, -1 do
    local el = order[i]
    for _, k in ipairs(el.kids) do
      if fails[k] or (k.name == "Expression" and k.attrs.success ~= "true") then fails[el] = true end
    end
  end
  for _, el in ipairs(order) do
    local tc = tc_of[el]
    if el.name == "SubCase" and tc then
      map[(tc.attrs.name or "None") .. " > " .. (el.attrs.name or "None")] = fails[el] and tx.FAILED or tx.PASSED
    end
  end
  return map
end

return M
