--- rock.serve.admission: a node's budget and who gets it. `rock serve`
-- has a budget (CPUs, memory, GPUs: the machine's own by default) and a
-- bound on starts in flight (max_starting: ROCK_ENV_CONCURRENCY, else 4).
-- A start reserves its request (cpus, memory, num_gpus; ROCK's defaults
-- 2 CPUs and "8g") before anything is made:
--   ask(e, req)   when the start is asked (its entry not yet kept): a
--                 request bigger than the whole budget, or one that
--                 cannot be reserved now while the caller said wait:
--                 false, raises insufficient_resources naming the
--                 shortfall ("needs 16 GB, 8 free of 320"); else the
--                 start joins the FIFO queue (reserved at once if it
--                 fits and nobody is ahead).
--   wait(e)       in the start's task: until it is reserved and holds a
--                 start slot, at most its startup_timeout counted from
--                 the request (then timeout); a start stopped meanwhile
--                 leaves the queue (cancelled). Returns what is left of
--                 its startup_timeout for the start itself.
--   started(e)    the start is over (either way): its slot passes on.
-- The reservation is freed when the entry leaves pending/running
-- (stopped, deleted, a failed start, a lapsed lease, a rocklet found dead: the
-- registry's state changes call e.on_state), once, never below zero, and
-- the queue's head is admitted when it fits. Strict FIFO: a head that
-- does not fit holds back the smaller starts behind it (none starves).
-- report() is the node's answer for a placer (GET .../node), metrics()
-- its /metrics gauges. docs/http-api.md "Budget and admission".
local uv = require "luv"
local json = require "rock.json"
local errors = require "rock.errors"
local task = require "rock.task"

local M = {}
local Admission = {}
Admission.__index = Admission

M.DEFAULT_CPUS = 2            -- ROCK's SandboxConfig defaults
M.DEFAULT_MEMORY = 8 * 2 ^ 30 -- "8g"
M.DEFAULT_STARTUP_TIMEOUT = require("rock.sandbox").DEFAULT_STARTUP_TIMEOUT
M.HEALTH_EVERY = 1            -- seconds a health check is reused

local GB = 2 ^ 30

-- "16", "0.5", "320": a quantity as the refusals and reports say it
local function num(v)
  local r = math.floor(v * 10 + 0.5) / 10
  return math.tointeger(r) and string.format("%d", r) or string.format("%.1f", r)
end

-- v checked: a number above 0 (or 0 when zero_ok), at most max (default
-- 2^40: bounds no machine reaches, so sums stay exact and printable)
local function positive(v, what, zero_ok, max)
  if v == nil then return nil end
  max = max or 2 ^ 40
  if type(v) ~= "number" or not (v >= 0 and v <= max) or (v == 0 and not zero_ok) then
    errors.raise("invalid_argument", string.format("%s must be a number above 0%s, up to %g, got %s", what,
      zero_ok and " (or 0)" or "", max, tostring(v)))
  end
  return v
end

--- The default max_starting: ROCK_ENV_CONCURRENCY (a whole number >= 1), else 4.
function M.default_max_starting()
  local n = math.tointeger(tonumber(os.getenv("ROCK_ENV_CONCURRENCY") or ""))
  return (n and n >= 1) and n or 4
end

--- opts: cpus, memory_gb (or memory, bytes), gpus, max_starting; absent:
--- the machine's CPUs and memory, 0 GPUs, default_max_starting().
function M.new(opts)
  opts = opts or {}
  local mem = positive(opts.memory, "the memory budget", false, 2 ^ 60)
  if opts.memory_gb ~= nil then mem = positive(opts.memory_gb, "--budget-memory-gb", false, 2 ^ 30) * GB end
  local ms = opts.max_starting
  if ms ~= nil and not (math.tointeger(ms) and ms >= 1) then
    errors.raise("invalid_argument", "--max-starting must be a whole number from 1 up, got " .. tostring(ms))
  end
  local a = setmetatable({
    budget = {
      cpus = positive(opts.cpus, "--budget-cpu") or (uv.available_parallelism and uv.available_parallelism())
        or #uv.cpu_info(),
      memory = math.floor(mem or uv.get_total_memory()),
      gpus = positive(opts.gpus, "--budget-gpu", true) or 0,
    },
    max_starting = math.tointeger(ms) or M.default_max_starting(),
    reserved = { cpus = 0, memory = 0, gpus = 0 },
    queue = {},    -- tickets waiting for their reservation, oldest first
    ready = {},    -- reserved, waiting for a start slot, oldest first
    starting = 0,  -- start slots held
  }, Admission)
  return a
end

--- What a start request reserves: {cpus, memory (bytes), gpus}.
function M.need(req)
  local mem = req.memory
  mem = mem ~= nil and require("rock.images").parse_size(mem, "memory") or M.DEFAULT_MEMORY
  return { cpus = req.cpus or M.DEFAULT_CPUS, memory = mem, gpus = req.num_gpus or 0 }
end

local DIMS = {
  { "memory", function(v) return num(v / GB) .. " GB" end, function(v) return num(v / GB) end },
  { "cpus", function(v) return num(v) .. (v == 1 and " CPU" or " CPUs") end, num },
  { "gpus", function(v) return num(v) .. (v == 1 and " GPU" or " GPUs") end, num },
}

--- What need lacks against the free budget, as text ("needs 16 GB, 8 free
--- of 320"), nil when it fits; whole: against the whole budget instead.
function Admission:shortfall(need, whole)
  local out = {}
  for _, d in ipairs(DIMS) do
    local k = d[1]
    local free = self.budget[k] - (whole and 0 or self.reserved[k])
    if need[k] > free + 1e-9 then
      out[#out + 1] = string.format("needs %s, %s free of %s", d[2](need[k]), d[3](math.max(0, free)),
        d[3](self.budget[k]))
    end
  end
  return #out > 0 and table.concat(out, "; ") or nil
end

function Admission:fits(need) return self:shortfall(need) == nil end

local function phase(e, status, message)
  local p = e.phases.admission or { started_at = os.time() }
  p.status, p.message = status, message
  if status ~= "waiting" then p.completed_at = os.time() end
  e.phases.admission = p
end

-- Admit what can be: queue heads that fit get their reservation, the
-- reserved get free start slots, both in order; the woken run next.
function Admission:pump()
  local q, r = self.queue, self.reserved
  while q[1] and self:fits(q[1].need) do
    local t = table.remove(q, 1)
    for k, v in pairs(t.need) do r[k] = r[k] + v end
    t.where = "ready"
    self.ready[#self.ready + 1] = t
  end
  while self.ready[1] and self.starting < self.max_starting do
    local t = table.remove(self.ready, 1)
    self.starting = self.starting + 1
    t.where = "starting"
    if t.wake then t.wake() end
  end
  for i, t in ipairs(q) do -- what a status says while queued
    if t.queued_phase then
      phase(t.e, "waiting", "queued: " .. (self:shortfall(t.need) or "behind an earlier start") ..
        (i > 1 and string.format(" (%d ahead)", i - 1) or ""))
    end
  end
  for _, t in ipairs(self.ready) do
    if t.queued_phase then
      phase(t.e, "waiting", string.format("reserved: waiting for a start slot (%d of %d starting)",
        self.starting, self.max_starting))
    end
  end
end

local function drop(list, t)
  for i = 1, #list do
    if list[i] == t then table.remove(list, i); return end
  end
end

-- Give back t's reservation (once) and leave the queue; pump. A start
-- in flight keeps its slot until started().
function Admission:free(t)
  local w = t.where
  if w == "queue" then
    drop(self.queue, t)
    t.where = "gone"
  elseif w == "ready" or w == "starting" or w == "held" then
    if w == "ready" then drop(self.ready, t) end
    local r = self.reserved
    for k, v in pairs(t.need) do r[k] = math.max(0, r[k] - v) end
    t.where = w == "starting" and "gone_starting" or "gone"
  else
    return
  end
  self:pump()
end

-- The entry's state changed (registry.lua): out of pending/running, its
-- reservation goes; a queued start wakes to leave.
local function on_state(self)
  return function(e, to)
    local t = e.admission
    if not t or (to ~= "stopped" and to ~= "deleted") then return end
    local waiting = t.where == "queue" or t.where == "ready"
    self:free(t)
    if waiting then
      t.cancelled = true
      if t.wake then t.wake() end
    end
  end
end

--- A start is asked for entry e with request req (req.wait == false:
--- refuse rather than queue). Raises insufficient_resources, or queues.
function Admission:ask(e, req)
  local need = M.need(req)
  local whole = self:shortfall(need, true)
  if whole then
    errors.raise("insufficient_resources", "this node can never hold it: " .. whole)
  end
  if req.wait == false and (#self.queue > 0 or not self:fits(need)) then
    errors.raise("insufficient_resources", "no capacity now: " ..
      (self:shortfall(need) or string.format("%d start(s) queued ahead", #self.queue)))
  end
  local t = { e = e, need = need, t0 = uv.now(), where = "queue", startup_timeout = req.startup_timeout }
  self.queue[#self.queue + 1] = t
  e.admission, e.on_state = t, on_state(self)
  self:pump()
  if t.where ~= "starting" then -- it waits: its status says why from now on
    t.queued_phase = true
    self:pump()
  end
end

--- In the start's task: until e's start is admitted (reserved, a start
--- slot held). Raises timeout (past its startup_timeout, counted from the
--- request) or cancelled (stopped meanwhile), reserving nothing then.
--- Returns the startup_timeout left for the start (as asked, nil for the
--- default, when it was admitted at once).
function Admission:wait(e)
  local t = e.admission
  local limit = t.startup_timeout or M.DEFAULT_STARTUP_TIMEOUT
  if t.cancelled then errors.raise("cancelled", "sandbox " .. e.id .. " was stopped while queued") end
  if t.where ~= "starting" then
    local left = limit - (uv.now() - t.t0) / 1000
    local ok, err = pcall(task.timeout, math.max(0, left), task.await, function(done)
      t.wake = done
      return function() t.wake = nil end
    end)
    t.wake = nil
    if not ok and t.where == "starting" then ok = true end -- admitted as its deadline fell
    if t.cancelled then errors.raise("cancelled", "sandbox " .. e.id .. " was stopped while queued") end
    if not ok then
      local why = t.where == "queue" and (self:shortfall(t.need) or "behind an earlier start")
        or "no start slot free"
      local was = t.where
      self:free(t)
      if errors.is(err, "timeout") then
        phase(e, "timeout", "not admitted within " .. num(limit) .. " s: " .. why)
        errors.raise("timeout", string.format("sandbox %s was not admitted within its startup_timeout (%s s): %s",
          e.id, num(limit), was == "queue" and why or "no start slot free"))
      end
      error(err, 0)
    end
    if t.queued_phase then
      phase(e, "success", string.format("admitted after %s s", num((uv.now() - t.t0) / 1000)))
    end
  end
  if not t.queued_phase then return t.startup_timeout end -- admitted at once: as asked
  return math.max(0.01, limit - (uv.now() - t.t0) / 1000)
end

--- e's start is over (it runs, or it failed): its start slot passes on.
function Admission:started(e)
  local t = e.admission
  if not t then return end
  if t.where == "starting" or t.where == "gone_starting" then
    self.starting = self.starting - 1
    t.where = t.where == "starting" and "held" or "gone"
    self:pump()
  end
end

--- An entry adopted from a previous server (running): it holds its
--- reservation, whatever the budget says.
function Admission:adopt(e)
  local need = M.need(e)
  local t = { e = e, need = need, t0 = uv.now(), where = "held" }
  for k, v in pairs(need) do self.reserved[k] = self.reserved[k] + v end
  e.admission, e.on_state = t, on_state(self)
end

-- Whether the node can start sandboxes: its backend's health() says so
-- (the contract, backends/init.lua: an engine's ping, runc's binary and
-- kernel; one without health() can); "auto" is the engine that answers.
-- Checked at most once a HEALTH_EVERY (a placer polls often).
function Admission:health(backend)
  local now = uv.now()
  if self.health_at and now - self.health_at < M.HEALTH_EVERY * 1000 then return self.healthy, self.health_why end
  local ok, why = true, "ok"
  local name = backend
  if name == "auto" then name = require("rock.engine").detect() end
  local impl = name and require("rock.backends").get(name)
  if not name then
    ok, why = false, "no container engine answers (docker, podman)"
  elseif not impl then
    ok, why = false, "no backend named " .. tostring(name)
  elseif impl.health then
    local done, h, hwhy = pcall(impl.health)
    if not done then ok, why = false, tostring(errors.is(h) and h.message or h)
    elseif not h then ok, why = false, tostring(hwhy or (name .. " is not healthy")) end
  end
  self.health_at, self.healthy, self.health_why = uv.now(), ok, why
  return ok, why
end

local function counts(registry) return registry:counts() end

local function amounts(t)
  return { cpus = t.cpus, memory = t.memory, memory_gb = t.memory / GB, gpus = t.gpus }
end

--- The node's report (GET .../node): one answer a placer reads.
function Admission:report(srv)
  local reg = srv.registry
  local healthy, why = self:health(reg.backend)
  local by = counts(reg)
  local b, r = self.budget, self.reserved
  local free = { cpus = math.max(0, b.cpus - r.cpus), memory = math.max(0, b.memory - r.memory),
    gpus = math.max(0, b.gpus - r.gpus) }
  local queue = json.array()
  for i, t in ipairs(self.queue) do
    queue[i] = { sandbox_id = t.e.id, cpus = t.need.cpus, memory = t.need.memory, gpus = t.need.gpus,
      waited = (uv.now() - t.t0) / 1000 }
  end
  return { -- the shape rock.fleet.placement reads (budget, reserved, starting, max_starting, healthy)
    node = reg.host_name, version = require("rock.core").version(), backend = reg.backend,
    healthy = healthy, health = why,
    budget = amounts(b), reserved = amounts(r), free = amounts(free),
    max_starting = self.max_starting, starting = self.starting, waiting_to_start = #self.ready,
    queued = #self.queue, running = by.running, pending = by.pending, stopped = by.stopped,
    queue = queue, pools = srv.pools and srv.pools:report() or nil,
  }
end

--- The /metrics gauges (Prometheus text, after serve/metrics.lua's).
function Admission:metrics(srv)
  local reg = srv.registry
  local healthy = self:health(reg.backend)
  local b, r = self.budget, self.reserved
  local by = counts(reg)
  local metrics = require "rock.serve.metrics"
  local g = metrics.gauges()
  local function gauge(...) return g:gauge(...) end
  local function res(...) return g:resources(...) end
  gauge("rock_node_budget", "the node's budget by resource", res("rock_node_budget", b))
  gauge("rock_node_reserved", "what the node's pending and running sandboxes reserve", res("rock_node_reserved", r))
  gauge("rock_node_max_starting", "starts allowed in flight at once",
    { "rock_node_max_starting " .. self.max_starting })
  gauge("rock_node_starting", "starts in flight", { "rock_node_starting " .. self.starting })
  gauge("rock_node_waiting_to_start", "starts reserved, waiting for a start slot",
    { "rock_node_waiting_to_start " .. #self.ready })
  gauge("rock_node_queued", "starts queued for capacity", { "rock_node_queued " .. #self.queue })
  gauge("rock_node_running", "sandboxes running", { "rock_node_running " .. by.running })
  gauge("rock_node_healthy", "1 when the node can start sandboxes (its engine answers)",
    { "rock_node_healthy " .. (healthy and 1 or 0) })
  gauge("rock_node_info", "the node's name and rock's version",
    { string.format('rock_node_info{node="%s",version="%s"} 1', metrics.label(reg.host_name),
      require("rock.core").version()) })
  return g:text()
end

return M
