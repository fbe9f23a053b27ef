--- rock.json: lua-cjson, plus lists that stay lists when empty.
-- cjson 2.1.0 (Debian's) writes every empty table as {}; a list that may
-- be empty (a trajectory's steps, the resolved ids) is marked with
-- json.array(t) and written as [] when empty. Everything else is cjson's,
-- but for encode_exact (numbers that read back as the same double, which
-- cjson's 14 digits do not promise: for rewards and the like).
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

-- A number as JSON that reads back as the same value: integers in full,
-- a float as the shortest of 15, 16, 17 significant digits that reads
-- back as itself (Python's json writes the shortest too; cjson stops at 14).
local function exact_number(v)
  if math.type(v) == "integer" then return string.format("%d", v) end
  if v ~= v or v == math.huge or v == -math.huge then
    error("json.encode_exact: cannot write " .. tostring(v) .. " as JSON", 0)
  end
  local s = string.format("%.15g", v)
  if tonumber(s) ~= v then
    s = string.format("%.16g", v)
    if tonumber(s) ~= v then s = string.format("%.17g", v) end
  end
  return s
end

local function exact(v, out, depth)
  local t = type(v)
  if t == "number" then
    out[#out + 1] = exact_number(v)
  elseif t ~= "table" then
    out[#out + 1] = cjson.encode(v) -- strings, booleans, json.null; anything else raises as cjson does
  else
    if depth > 1000 then error("json.encode_exact: nested deeper than 1000 (a cycle?)", 0) end
    local count, max = 0, 0 -- max: the largest key while all are integers > 0, else -1
    for k in pairs(v) do
      count = count + 1
      if max >= 0 and math.type(k) == "integer" and k > 0 then
        if k > max then max = k end
      else
        max = -1
      end
    end
    if count > 0 and max > 10 and max > count * 2 then -- cjson's encode_sparse_array defaults
      error("json.encode_exact: cannot write an excessively sparse array", 0)
    end
    if (count == 0 and getmetatable(v) == M.array_mt) or max > 0 then -- a list (holes as null, as cjson)
      out[#out + 1] = "["
      for i = 1, max do
        if i > 1 then out[#out + 1] = "," end
        local x = v[i]
        if x == nil then out[#out + 1] = "null" else exact(x, out, depth + 1) end
      end
      out[#out + 1] = "]"
    else
      out[#out + 1] = "{"
      local first = true
      for k, x in pairs(v) do
        local kt = type(k)
        if kt ~= "string" and kt ~= "number" then
          error("json.encode_exact: a key of type " .. kt .. " cannot be written", 0)
        end
        out[#out + 1] = (first and "" or ",") .. cjson.encode(kt == "number" and exact_number(k) or k) .. ":"
        first = false
        exact(x, out, depth + 1)
      end
      out[#out + 1] = "}"
    end
  end
end

--- v as JSON (as encode writes it: marked empty lists as [], other empty
--- tables as {}), every number written so that it reads back as the same
--- value (1 - 2/9 as 0.7777777777777778, not cjson's 0.77777777777778).
--- A walk in Lua: for small answers (an environment's step), not bulk.
function M.encode_exact(v)
  local out = {}
  exact(v, out, 0)
  return table.concat(out)
end

return M
