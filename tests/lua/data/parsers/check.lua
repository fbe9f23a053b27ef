-- check.lua: eq_map(got, want, what) for the parser tests: raises with
-- both maps (sorted) when a parser's map is not exactly want.
local M = {}

function M.show(map)
  local keys = {}
  for k in pairs(map) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do keys[i] = string.format("%q=%s", k, tostring(map[k])) end
  return "{" .. table.concat(keys, ", ") .. "}"
end

function M.eq_map(got, want, what, level)
  local ok = true
  for k, v in pairs(want) do if got[k] ~= v then ok = false end end
  for k in pairs(got) do if want[k] == nil then ok = false end end
  if not ok then error(string.format("%s:\n got  %s\n want %s", what, M.show(got), M.show(want)), level or 2) end
end

return M
