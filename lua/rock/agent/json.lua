--- rock.agent.json: lua-cjson with one addition: lists that stay lists
-- when empty. Debian's cjson 2.1.0 has no array_mt and encodes {} as an
-- object; SWE-bench's reports want `[]`.
--   local list = ajson.array()        -- encodes as [] while empty
--   local text = ajson.encode(value)  -- cjson.encode, arrays kept
-- decode is cjson's.
local cjson = require "cjson"

local M = { decode = cjson.decode, null = cjson.null }

--- The metatable that marks a table as a list.
M.array_mt = { __name = "rock.agent.json.array" }

--- A new list (or t marked as one).
function M.array(t) return setmetatable(t or {}, M.array_mt) end

local SENTINEL = "\1rock-empty-array\1"

local function mark(v, depth)
  if type(v) ~= "table" or depth > 100 then return v end
  if getmetatable(v) == M.array_mt and next(v) == nil then return SENTINEL end
  local out = {}
  for k, x in pairs(v) do out[k] = mark(x, depth + 1) end
  return out
end

--- cjson.encode(v), with empty lists made by array() written as [].
function M.encode(v)
  local text = cjson.encode(mark(v, 0))
  return (text:gsub('"\\u0001rock%-empty%-array\\u0001"', "[]"))
end

return M
