--- rock.report.svg: the index's plots as inline SVG (no library, no
-- fetch): stacked bars of counts by a label, histograms of a number, and
-- grouped bars of rates (0..1) by a label (DAgger's rounds).
local esc = require("rock.report.html").esc

local M = {}

local W, H, PAD = 320, 160, 24

local function fmt(x)
  if x == math.floor(x) and math.abs(x) < 1e15 then return string.format("%d", x) end
  if math.abs(x) >= 100 then return string.format("%.0f", x) end
  return string.format("%.3g", x)
end

--- Stacked bars: bars = {{label=, parts={{n=, color=, name=}, ...}}, ...}.
function M.bars(title, bars)
  local max = 1
  for _, b in ipairs(bars) do
    local s = 0
    for _, p in ipairs(b.parts) do s = s + p.n end
    if s > max then max = s end
  end
  local out = { string.format('<figure><svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="%s">',
    W, H, esc(title)) }
  local n = math.max(1, #bars)
  local bw = (W - 2 * PAD) / n
  for i, b in ipairs(bars) do
    local x, y = PAD + (i - 1) * bw, H - PAD
    local total = 0
    for _, p in ipairs(b.parts) do
      local h = (H - 2 * PAD) * p.n / max
      y = y - h
      total = total + p.n
      out[#out + 1] = string.format('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s %d</title></rect>',
        x + 2, y, bw - 4, h, p.color, esc(b.label), esc(p.name), p.n)
    end
    out[#out + 1] = string.format('<text x="%.1f" y="%.1f" font-size="10" text-anchor="middle">%d</text>', x + bw / 2, y - 2, total)
    out[#out + 1] = string.format('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>', x + bw / 2, H - 8,
      esc(#b.label > 14 and b.label:sub(1, 13) .. "…" or b.label))
  end
  out[#out + 1] = "</svg><figcaption>" .. esc(title) .. "</figcaption></figure>"
  return table.concat(out)
end

--- Grouped bars of rates in 0..1: groups = {{label=, values={r1, r2, ...}}},
--- series = {{name=, color=}, ...} (a value nil is no bar).
function M.rates(title, groups, series)
  local out = { string.format('<figure><svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="%s">',
    W, H, esc(title)) }
  local n, k = math.max(1, #groups), math.max(1, #series)
  local gw = (W - 2 * PAD) / n
  local bw = (gw - 6) / k
  out[#out + 1] = string.format('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#9ca3af"/><text x="2" y="%d" font-size="10">100%%</text>',
    PAD, PAD, W - PAD, PAD, PAD + 3)
  for i, g in ipairs(groups) do
    local x0 = PAD + (i - 1) * gw + 3
    for j, sr in ipairs(series) do
      local v = g.values[j]
      if type(v) == "number" and v == v then
        v = math.max(0, math.min(1, v))
        local h = (H - 2 * PAD) * v
        out[#out + 1] = string.format('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %.1f%%</title></rect>',
          x0 + (j - 1) * bw, H - PAD - h, bw - 1, h, sr.color, esc(g.label), esc(sr.name), 100 * v)
      end
    end
    out[#out + 1] = string.format('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>', x0 + gw / 2 - 3, H - 8, esc(g.label))
  end
  local legend = {}
  for _, sr in ipairs(series) do
    legend[#legend + 1] = string.format('<span style="color:%s">&#9632;</span> %s', sr.color, esc(sr.name))
  end
  out[#out + 1] = "</svg><figcaption>" .. esc(title) .. ": " .. table.concat(legend, " ") .. "</figcaption></figure>"
  return table.concat(out)
end

--- A histogram of values (numbers) in up to 12 bins.
function M.histogram(title, values, color)
  local lo, hi = math.huge, -math.huge
  for _, v in ipairs(values) do
    if v < lo then lo = v end
    if v > hi then hi = v end
  end
  local out = { string.format('<figure><svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="%s">',
    W, H, esc(title)) }
  if #values == 0 then
    out[#out + 1] = string.format('<text x="%d" y="%d" font-size="12" text-anchor="middle">no data</text>', W / 2, H / 2)
  else
    local nb = math.min(12, math.max(1, #values))
    if hi == lo then nb = 1 end
    local width = (hi - lo) / nb
    local counts, max = {}, 1
    for i = 1, nb do counts[i] = 0 end
    for _, v in ipairs(values) do
      local b = width > 0 and math.min(nb, math.floor((v - lo) / width) + 1) or 1
      counts[b] = counts[b] + 1
      if counts[b] > max then max = counts[b] end
    end
    local bw = (W - 2 * PAD) / nb
    for i = 1, nb do
      local h = (H - 2 * PAD) * counts[i] / max
      local from = lo + (i - 1) * width
      out[#out + 1] = string.format('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s to %s: %d</title></rect>',
        PAD + (i - 1) * bw + 1, H - PAD - h, bw - 2, h, color or "#2563eb", fmt(from), fmt(from + width), counts[i])
    end
    out[#out + 1] = string.format('<text x="%d" y="%d" font-size="10">%s</text>', PAD, H - 8, esc(fmt(lo)))
    out[#out + 1] = string.format('<text x="%d" y="%d" font-size="10" text-anchor="end">%s</text>', W - PAD, H - 8, esc(fmt(hi)))
    out[#out + 1] = string.format('<text x="4" y="14" font-size="10">max %d</text>', max)
  end
  out[#out + 1] = "</svg><figcaption>" .. esc(title) .. " (" .. #values .. ")</figcaption></figure>"
  return table.concat(out)
end

return M
