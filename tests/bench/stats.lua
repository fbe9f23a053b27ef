-- stats.lua: the benches' summaries: local B = dofile(here .. "stats.lua")
--   B.stats(xs) -> {mean, p50, p95}   B.line(name, st, extra, width)
local B = {}

function B.stats(xs)
  local s = {}
  for i, v in ipairs(xs) do s[i] = v end
  table.sort(s)
  local sum = 0
  for _, v in ipairs(s) do sum = sum + v end
  return { mean = sum / #s, p50 = s[(#s + 1) // 2], p95 = s[math.max(1, math.ceil(#s * 0.95))] }
end

function B.line(name, st, extra, width)
  print(string.format("%-" .. (width or 46) .. "s p50 %8.1f  p95 %8.1f  mean %8.1f%s", name, st.p50, st.p95,
    st.mean, extra or ""))
end

return B
