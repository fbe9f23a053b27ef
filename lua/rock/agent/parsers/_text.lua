--- rock.agent.parsers._text: the string helpers the SWE-bench Multilingual
-- log parsers share (go.lua, rust.lua, java.lua, php.lua, ruby.lua, c.lua,
-- js.lua, js_multimodal.lua). Everything here runs in time linear in its
-- input: no pattern with two open-ended items that can trade characters.
-- "Whitespace" is Python's ASCII whitespace (\t \n \v \f \r, \28-\31,
-- space): what SWE-bench's str.strip() and \s match in ASCII text.
local M = {}

M.PASSED, M.FAILED, M.SKIPPED, M.ERROR, M.XFAIL = "PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL"

--- A Lua pattern class of one whitespace character, and its complement.
M.WS = "[\t-\r\28-\31 ]"
M.NWS = "[^\t-\r\28-\31 ]"

local WS_BYTE = {}
for _, b in ipairs{ 9, 10, 11, 12, 13, 28, 29, 30, 31, 32 } do WS_BYTE[b] = true end
M.WS_BYTE = WS_BYTE

--- Is byte b (a number) whitespace? A word character ([A-Za-z0-9_])?
function M.is_ws(b) return WS_BYTE[b] == true end
function M.is_word(b)
  return b ~= nil and ((b >= 48 and b <= 57) or (b >= 65 and b <= 90) or (b >= 97 and b <= 122) or b == 95)
end
--- Is the character at i of s a word character as Python's Unicode \w
--- sees it? ASCII [A-Za-z0-9_], and of the rest the letters of Latin-1,
--- Latin Extended, Greek, Cyrillic, kana, CJK and Hangul (enough for
--- test names; other symbols, such as the runners' marks, are not).
function M.is_word_at(s, i)
  local b = s:byte(i)
  if b == nil then return false end
  if b < 0x80 then return M.is_word(b) end
  local ok, c = pcall(utf8.codepoint, s, i)
  if not ok then return false end
  return c == 0xAA or c == 0xB5 or c == 0xBA or (c >= 0xC0 and c <= 0x24F and c ~= 0xD7 and c ~= 0xF7)
    or (c >= 0x370 and c <= 0x52F and c ~= 0x375 and c ~= 0x37E and c ~= 0x384 and c ~= 0x385 and c ~= 0x387)
    or (c >= 0x3041 and c <= 0x30FF) or (c >= 0x4E00 and c <= 0x9FFF) or (c >= 0xAC00 and c <= 0xD7A3)
end

function M.is_digit(b) return b ~= nil and b >= 48 and b <= 57 end

--- The lines of s split on "\n" as Python's str.split("\n") does (a
--- trailing "\n" gives a last empty line); an iterator.
function M.lines(s)
  local pos, n, done = 1, #s, false
  return function()
    if done then return nil end
    local nl = s:find("\n", pos, true)
    if not nl then
      done = true
      return s:sub(pos, n)
    end
    local line = s:sub(pos, nl - 1)
    pos = nl + 1
    return line
  end
end

--- s without leading / trailing whitespace (str.lstrip, rstrip, strip).
function M.lstrip(s)
  local i = s:find(M.NWS)
  if not i then return "" end
  return i == 1 and s or s:sub(i)
end

function M.rstrip(s)
  local j = #s
  while j > 0 and WS_BYTE[s:byte(j)] do j = j - 1 end
  return j == #s and s or s:sub(1, j)
end

function M.strip(s) return M.rstrip(M.lstrip(s)) end

--- The number of leading whitespace characters of s.
function M.indent(s)
  local i = s:find(M.NWS)
  return i and i - 1 or #s
end

--- Does s start / end with the plain text p?
function M.starts(s, p) return s:sub(1, #p) == p end
function M.ends(s, p) return #s >= #p and s:sub(-#p) == p end

--- s with every run of whitespace made one space (re.sub(r"\s+", " ", s)).
function M.squeeze(s) return (s:gsub(M.WS .. "+", " ")) end

--- Python's str.split(sep) for a plain, non-empty sep: a list of pieces.
function M.split(s, sep)
  local out, pos = {}, 1
  while true do
    local i, j = s:find(sep, pos, true)
    if not i then break end
    out[#out + 1] = s:sub(pos, i - 1)
    pos = j + 1
  end
  out[#out + 1] = s:sub(pos)
  return out
end

--- The text after the last plain sep in s (all of s without one), and
--- before the last plain sep (str.split(sep)[-1], str.rsplit(sep, 1)[0]).
function M.after_last(s, sep)
  local last, pos = nil, 1
  while true do
    local i, j = s:find(sep, pos, true)
    if not i then break end
    last, pos = j, j + 1
  end
  return last and s:sub(last + 1) or s
end

function M.before_last(s, sep)
  local last, pos = nil, 1
  while true do
    local i = s:find(sep, pos, true)
    if not i then break end
    last, pos = i, i + 1
  end
  return last and s:sub(1, last - 1) or s
end

--- s without ANSI escapes: ESC followed by one of @-Z \ ] ^ _, or a CSI
--- sequence (ESC [ params intermediates final), as SWE-bench's
--- ansi_escape removes them.
function M.ansi_escape(s)
  if not s:find("\27", 1, true) then return s end
  local out, pos = {}, 1
  while true do
    local e = s:find("\27", pos, true)
    if not e then break end
    local b = s:byte(e + 1)
    local stop
    if b and ((b >= 0x40 and b <= 0x5A) or (b >= 0x5C and b <= 0x5F)) then
      stop = e + 1
    elseif b == 0x5B then
      local _, k = s:find("^[0-?]*[ -/]*", e + 2)
      local f = s:byte(k + 1)
      if f and f >= 0x40 and f <= 0x7E then stop = k + 1 end
    end
    if stop then
      out[#out + 1] = s:sub(pos, e - 1)
      pos = stop + 1
    else
      out[#out + 1] = s:sub(pos, e)
      pos = e + 1
    end
  end
  out[#out + 1] = s:sub(pos)
  return table.concat(out)
end

--- Where a trailing duration `<ws>(<digits><ws>*[m]s)` starts in s (the
--- position of its whitespace), or nil; from > that position is needed
--- for it to count (the name before it must be non-empty).
function M.duration_suffix(s, from)
  if s:byte(-1) ~= 41 then return nil end -- ")"
  local open = #s - 1
  while open > 0 and s:byte(open) ~= 40 do open = open - 1 end -- "("
  if open < 2 or not WS_BYTE[s:byte(open - 1)] or open - 1 <= from then return nil end
  if not s:find("^%d+" .. M.WS .. "*m?s%)$", open + 1) then return nil end
  return open - 1
end

--- task[key] as a string (SWE-bench's test_spec.instance_id, .version),
--- or nil when task is not a table or has no such field.
function M.task_field(task, key)
  local v = type(task) == "table" and task[key]
  if type(v) == "string" or type(v) == "number" then return tostring(v) end
end

--- The positions of every plain occurrence of p in s, in order.
function M.find_all(s, p, from)
  local out, pos = {}, from or 1
  while true do
    local i = s:find(p, pos, true)
    if not i then return out end
    out[#out + 1] = i
    pos = i + 1
  end
end

return M
