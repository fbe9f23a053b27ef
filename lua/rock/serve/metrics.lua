--- rock.serve.metrics: what `GET /metrics` says, in Prometheus' text format
-- (version 0.0.4): requests by route and status, command latency and
-- start durations as histograms, starts and their phase durations, leases
-- expired, and (read at scrape time) sandboxes by state.
local M = {}
local Metrics = {}
Metrics.__index = Metrics

local LATENCY_BUCKETS = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300 }
local START_BUCKETS = { 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300 }

function M.new()
  return setmetatable({ counters = {}, histograms = {}, help = {} }, Metrics)
end

-- "name{a="x",b="y"}" with label values escaped as the format wants
local function key(name, labels)
  if not labels or next(labels) == nil then return name end
  local names = {}
  for k in pairs(labels) do names[#names + 1] = k end
  table.sort(names)
  local parts = {}
  for _, k in ipairs(names) do
    local v = tostring(labels[k]):gsub("\\", "\\\\"):gsub("\n", "\\n"):gsub('"', '\\"')
    parts[#parts + 1] = string.format('%s="%s"', k, v)
  end
  return name .. "{" .. table.concat(parts, ",") .. "}"
end

function Metrics:inc(name, labels, n)
  local c = self.counters[name] or {}
  self.counters[name] = c
  local k = key(name, labels)
  c[k] = (c[k] or 0) + (n or 1)
end

--- Add value to histogram name's series for labels (series_key: a
--- caller's ready-made name for that series, to skip building it).
function Metrics:observe(name, value, labels, buckets, series_key)
  local h = self.histograms[name] or { buckets = buckets or LATENCY_BUCKETS, series = {} }
  self.histograms[name] = h
  local k = series_key or key("", labels)
  local s = h.series[k]
  if not s then
    s = { counts = {}, sum = 0, count = 0, labels = labels or {} }
    for i = 1, #h.buckets do s.counts[i] = 0 end
    h.series[k] = s
  end
  -- counts[i]: values in bucket i alone (cumulated by render): one add
  local b, counts = h.buckets, s.counts
  for i = 1, #b do -- buckets ascend: the first one value fits
    if value <= b[i] then
      counts[i] = counts[i] + 1
      break
    end
  end
  s.sum, s.count = s.sum + value, s.count + 1
end

--- One HTTP request: its route (the path, sandbox ids are never in it),
--- status and seconds. The label sets are made once per route and status
--- (this runs on every request).
function Metrics:request(route, status, seconds)
  local by_route = self.request_labels or {}
  self.request_labels = by_route
  local r = by_route[route]
  if not r then r = { labels = { route = route }, by_status = {} }; by_route[route] = r end
  local k = r.by_status[status]
  if not k then
    k = key("rock_http_requests_total", { route = route, status = tostring(status) })
    r.by_status[status] = k
  end
  local c = self.counters.rock_http_requests_total or {}
  self.counters.rock_http_requests_total = c
  c[k] = (c[k] or 0) + 1
  self:observe("rock_http_request_seconds", seconds, r.labels, nil, route)
end

function Metrics:command(seconds) self:observe("rock_command_seconds", seconds) end

--- A sandbox start ended: ok, its phases ({name = {started_at,
--- completed_at}}) and its total seconds.
function Metrics:start_done(ok, phases, seconds)
  self:inc("rock_sandbox_starts_total", { result = ok and "success" or "failed" })
  self:observe("rock_sandbox_start_seconds", seconds, nil, START_BUCKETS)
  for name, p in pairs(phases or {}) do
    if p.started_at and p.completed_at then
      self:observe("rock_sandbox_start_phase_seconds", p.completed_at - p.started_at, { phase = name }, START_BUCKETS)
    end
  end
end

local HELP = {
  rock_http_requests_total = { "counter", "HTTP requests by route and status" },
  rock_http_request_seconds = { "histogram", "HTTP request duration by route" },
  rock_command_seconds = { "histogram", "run_in_session and execute command latency" },
  rock_sandbox_starts_total = { "counter", "sandbox starts by result" },
  rock_sandbox_start_seconds = { "histogram", "sandbox start duration" },
  rock_sandbox_start_phase_seconds = { "histogram", "sandbox start phase duration (phase timestamps have 1 s resolution)" },
  rock_leases_expired_total = { "counter", "sandboxes stopped because their idle lease lapsed" },
  rock_pool_claims_total = { "counter", "starts answered by a warm sandbox of a --pool" },
  rock_sandboxes = { "gauge", "sandboxes by state" },
}

local function head(out, name)
  local h = HELP[name] or { "untyped", name }
  out[#out + 1] = "# HELP " .. name .. " " .. h[2]
  out[#out + 1] = "# TYPE " .. name .. " " .. h[1]
end

local function sorted(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return ks
end

--- The exposition text; by_state: {state = count} read at scrape time.
function Metrics:render(by_state)
  local out = {}
  head(out, "rock_sandboxes")
  for _, st in ipairs({ "pending", "running", "stopped" }) do
    out[#out + 1] = string.format('rock_sandboxes{state="%s"} %d', st, by_state[st] or 0)
  end
  if not self.counters.rock_leases_expired_total then self.counters.rock_leases_expired_total = { rock_leases_expired_total = 0 } end
  for _, name in ipairs(sorted(self.counters)) do
    head(out, name)
    local c = self.counters[name]
    for _, k in ipairs(sorted(c)) do out[#out + 1] = k .. " " .. string.format("%.17g", c[k]) end
  end
  for _, name in ipairs(sorted(self.histograms)) do
    head(out, name)
    local h = self.histograms[name]
    for _, k in ipairs(sorted(h.series)) do
      local s = h.series[k]
      local cum = 0
      for i, b in ipairs(h.buckets) do
        local l = { le = string.format("%g", b) }
        for lk, lv in pairs(s.labels) do l[lk] = lv end
        cum = cum + s.counts[i]
        out[#out + 1] = key(name .. "_bucket", l) .. " " .. cum
      end
      local l = { le = "+Inf" }
      for lk, lv in pairs(s.labels) do l[lk] = lv end
      out[#out + 1] = key(name .. "_bucket", l) .. " " .. s.count
      out[#out + 1] = key(name .. "_sum", s.labels) .. " " .. string.format("%.9g", s.sum)
      out[#out + 1] = key(name .. "_count", s.labels) .. " " .. s.count
    end
  end
  return table.concat(out, "\n") .. "\n"
end

--- A writer of gauges read at scrape time (a node's report, a front's):
--- g:gauge(name, help, {lines}), g:resources(name, {cpus, memory, gpus})
--- -> its three lines, M.label(s) -> s escaped for a label, g:text().
local Gauges = {}
Gauges.__index = Gauges
function M.gauges() return setmetatable({ out = {} }, Gauges) end
function Gauges:gauge(name, help, lines)
  local out = self.out
  out[#out + 1] = "# HELP " .. name .. " " .. help
  out[#out + 1] = "# TYPE " .. name .. " gauge"
  for _, l in ipairs(lines) do out[#out + 1] = l end
end
function Gauges.resources(_, name, t)
  return { string.format('%s{resource="cpus"} %.17g', name, t.cpus),
    string.format('%s{resource="memory_bytes"} %d', name, math.floor(t.memory)),
    string.format('%s{resource="gpus"} %.17g', name, t.gpus) }
end
function M.label(s) return (tostring(s):gsub("\\", "\\\\"):gsub("\n", "\\n"):gsub('"', '\\"')) end
function Gauges:text() return table.concat(self.out, "\n") .. "\n" end

return M
