--- rock.json: lua-cjson, plus lists that stay lists when empty.
-- cjson 2.1.0 (Debian's) writes every empty table as {}; a list that may
-- be empty (a trajectory's steps, the resolved ids) is marked with
-- json.array(t) and written as [] when empty. Everything else is cjson's.
local cjson = require "cjson"

local M = setmetatable({}, { __index = cjson })

M.array_mt = { __name = "rock.json.array" }

--- Mark t (default a new table) as a list; returns it.
function M.array(t)
  return setmetatable(t or {}, M.array_mt)
end

local EMPTY = "\1rock.json.empty-array\1" -- cjson writes it as "\u0001rock...\u0001"
local EMPTY_JSON = cjson.encode(EMPTY)

-- v with every empty marked list replaced by EMPTY (copies only the
-- tables on the way to one); found is true when there was one.
local function prepare(v, seen)
  if type(v) ~= "table" then return v, false end
  if getmetatable(v) == M.array_mt and next(v) == nil then return EMPTY, true end
  if seen[v] then return v, false end
  seen[v] = true
  local copy
  for k, x in pairs(v) do
    local y, found = prepare(x, seen)
    if found then
      if not copy then
        copy = {}
        for k2, x2 in pairs(v) do copy[k2] = x2 end
      end
      copy[k] = y
    end
  end
  if copy then return copy, true end
  return v, false
end

function M.encode(v)
  local p, found = prepare(v, {})
  local s = cjson.encode(p)
  if not found then return s end
  return (s:gsub(EMPTY_JSON:gsub("%p", "%%%0"), "[]"))
end

return M
