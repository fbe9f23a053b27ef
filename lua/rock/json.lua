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
local EMPTY_PAT = EMPTY_JSON:gsub("%p", "%%%0")

-- v (a table) with every empty marked list replaced by EMPTY (copies
-- only the tables on the way to one); found is true when there was one.
-- memo[t] is t's prepared value (t itself while it is being walked: a
-- cycle, which cjson refuses), so a table met twice is fixed both times.
local function prepare(v, memo)
  if getmetatable(v) == M.array_mt and next(v) == nil then return EMPTY, true end
  local m = memo[v]
  if m ~= nil then return m, m ~= v end
  memo[v] = v
  local copy
  for k, x in pairs(v) do
    if type(x) == "table" then
      local y, found = prepare(x, memo)
      if found then
        if not copy then
          copy = {}
          for k2, x2 in pairs(v) do copy[k2] = x2 end
        end
        copy[k] = y
      end
    end
  end
  if not copy then return v, false end
  memo[v] = copy
  return copy, true
end

-- cjson writes every empty table, a marked one too, as "{}": output
-- without "{}" has no empty list to fix, and most answers (a command's
-- result) are like that, so the walk above runs only for the others.
function M.encode(v)
  local s = cjson.encode(v)
  if type(v) ~= "table" or not s:find("{}", 1, true) then return s end
  local p, found = prepare(v, {})
  if not found then return s end
  s = cjson.encode(p)
  return (s:gsub(EMPTY_PAT, "[]"))
end

return M
