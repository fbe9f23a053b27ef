-- report_measure.lua: tests/bench/report.lua's measures of one generated
-- run: the whole site written, a live refresh (the first, reading the
-- whole run, then the next after one more trajectory, the loader kept as
-- a recipe's live report keeps it), sizes, peak memory, and the index in
-- headless Chromium. Returns function(n, dir, here).
local json = require "rock.json"
local report = require "rock.report"
local uv = require "luv"

return function(n, dir, here)
  local jsonl = io.open(dir .. "/trajectories.jsonl", "rb"):seek("end")

  local t0, c0 = uv.hrtime(), os.clock()
  local r = report.write(dir)
  local full, cpu = (uv.hrtime() - t0) / 1e9, os.clock() - c0
  -- live refreshes: the first reads the whole run; the next, one more trajectory
  local loader = require("rock.report.run").loader(dir)
  t0, c0 = uv.hrtime(), os.clock()
  report.write(dir, { loader = loader, only = { ["bench__repo-00001"] = true }, running = true })
  local live, live_cpu = (uv.hrtime() - t0) / 1e9, os.clock() - c0
  local tf = assert(io.open(dir .. "/trajectories.jsonl", "rb"))
  local first = tf:read("l")
  tf:close()
  tf = assert(io.open(dir .. "/trajectories.jsonl", "ab"))
  tf:write((first:gsub('"instance_id":"bench__repo%-00001"', '"instance_id":"bench__extra-1"')), "\n")
  tf:close()
  t0, c0 = uv.hrtime(), os.clock()
  report.write(dir, { loader = loader, only = { ["bench__extra-1"] = true }, running = true })
  local next_live, next_cpu = (uv.hrtime() - t0) / 1e9, os.clock() - c0
  local p = io.popen("du -sk " .. dir .. "/report")
  local site_kb = tonumber(p:read("a"):match("^(%d+)"))
  p:close()
  local hwm
  for l in io.lines("/proc/self/status") do hwm = hwm or tonumber(l:match("^VmHWM:%s*(%d+)")) end

  -- the index in headless Chromium: navigation to load event, then a sort by cost
  local browser = ""
  if os.execute("command -v chromium >/dev/null 2>&1 && command -v node >/dev/null 2>&1") then
    local script = dir .. "/steps.json"
    local s = assert(io.open(script, "wb"))
    s:write(json.encode({ steps = {
      { ["goto"] = "file://" .. dir .. "/report/index.html" },
      { eval = "(function(){var t=performance.getEntriesByType('navigation')[0];return t.loadEventEnd-t.startTime})()" },
      { eval = "(function(){var t=performance.now();document.querySelector('th[data-k=cost]').click();" ..
               "document.body.offsetHeight;return performance.now()-t})()" },
    } }))
    s:close()
    local bp = io.popen("node " .. here .. "../lua/browser.js " .. script .. " 2>/dev/null")
    local out = bp:read("a")
    bp:close()
    local ok, res = pcall(json.decode, out:match("[^\n]*$") ~= "" and out:match("[^\n]*$") or out:match("([^\n]*)\n$") or "")
    if ok and type(res) == "table" and res.results then
      browser = string.format(", chromium: index loaded in %.2fs, sorted by cost in %.2fs", res.results[2] / 1000, res.results[3] / 1000)
    else
      browser = ", chromium: " .. tostring(out):sub(1, 200)
    end
  end
  print(string.format("%5d trajectories (%.0f MB of jsonl): site written in %.2fs (%.2fs CPU), live refresh: first %.2fs (%.2fs CPU), "
    .. "next %.3fs (%.3fs CPU), index %.0f KB, site %.1f MB, peak RSS %.0f MB%s",
    n, jsonl / 1e6, full, cpu, live, live_cpu, next_live, next_cpu, r.index_bytes / 1024, site_kb / 1024, hwm / 1024, browser))
  if not os.getenv("KEEP") then os.execute("rm -rf " .. dir) end
end
