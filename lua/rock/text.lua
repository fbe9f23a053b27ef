--- rock.text: trims that stay linear on any input. Lua's usual idioms
-- backtrack: s:match("^%s*(.-)%s*$") and s:gsub("%s+$", "") rescan a
-- run of spaces from each position, so 20,000 spaces inside a line take
-- seconds and 400 KB take minutes; even "^%s*(.*%S)" is quadratic on a
-- string of nothing but spaces. These scan each byte a bounded number of
-- times. A set is a pattern class body ("%s", "/", "%s;"), default "%s".
local M = {}

--- s without the characters of set at its end.
---@param s string
---@param set string|nil
---@return string
function M.rtrim(s, set)
  return s:match("^(.*[^" .. (set or "%s") .. "])") or ""
end

--- s without the characters of set at its start.
---@param s string
---@param set string|nil
---@return string
function M.ltrim(s, set)
  local i = s:find("[^" .. (set or "%s") .. "]")
  return i and s:sub(i) or ""
end

--- s without the characters of set at either end.
---@param s string
---@param set string|nil
---@return string
function M.trim(s, set)
  local class = "[^" .. (set or "%s") .. "]"
  local i = s:find(class)
  if not i then return "" end
  return s:match("^.*" .. class, i)
end

--- What follows the last sep (one plain character) in s; s when it has none.
---@param s string
---@param sep string
---@return string
function M.after_last(s, sep)
  return s:match("^.*" .. sep:gsub("%p", "%%%0") .. "(.*)$") or s
end

return M
