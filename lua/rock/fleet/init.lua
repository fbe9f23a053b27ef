--- rock.fleet: many `rock serve` nodes as one pool of sandboxes.
--   local pool = rock.fleet.pool{ nodes = { "http://n1:8080", { url = "http://n2:8080", token = T } },
--                                 strategy = "spread" }
--   local sb = pool:start{ image = "python:3.11", cpus = 4, memory = "16g" }
--   -- (or rock.sandbox.start{ fleet = pool, ... }; sb is a remote sandbox)
--   pool:close()
-- Each node is a `rock serve` with a budget (docs/http-api.md, "Budget and
-- admission"); the pool reads each node's own report (GET .../node) on a
-- health check every `health_every` seconds, and placement.lua picks a
-- node from those reports plus what the pool has in flight. A node that
-- refuses (full: insufficient_resources) sends the start to the next; one
-- that does not answer is drained (its sandboxes' calls fail node_lost, no
-- start goes there) until a check finds it answering again. When no node
-- has room, starts wait in the pool's FIFO queue, woken by each refresh and
-- each stop, up to `wait_timeout` (default: the start's startup_timeout,
-- which sandbox.start fills in: 60 s), cancellable by a rock.timeout
-- around them. A start's sandbox_id is made
-- here and sent as the node's idempotency key: a start whose answer was
-- lost is never a second sandbox (sent there again, the node answers the
-- first one), and once the start is over (placed elsewhere, or given up)
-- what it may have left on a node that stopped answering is stopped when
-- that node answers again (stop_orphans; a pool closed before leaves it to
-- the node's lease).
local uv = require "luv"
local errors = require "rock.errors"
local task = require "rock.task"
local text = require "rock.text"
local log = require "rock.log"
local state = require "rock.state"
local placement = require "rock.fleet.placement"
local remote = require "rock.backends.remote"
local images = require "rock.images"

local M = { placement = placement }

M.HEALTH_EVERY = 1   -- seconds between health checks of every node
M.HEALTH_TIMEOUT = 2 -- seconds a node has to answer one
M.DEFAULT_CPUS = 2   -- ROCK's SandboxConfig defaults
M.DEFAULT_MEMORY = "8g"

local GB = 1 << 30

--- The node list of `--nodes` / ROCK_NODES: "URL,URL,...", or "@FILE"
--- (one URL per line, optionally a token after it; # starts a comment).
--- Returns { {url=, token=}, ... }.
function M.parse_nodes(spec)
  if type(spec) ~= "string" or spec == "" then
    errors.raise("invalid_argument", "nodes: expected URL,URL,... or @FILE")
  end
  local out = {}
  if spec:sub(1, 1) == "@" then
    local f, err = io.open(spec:sub(2))
    if not f then errors.raise("invalid_argument", "nodes: cannot read " .. spec:sub(2) .. ": " .. tostring(err)) end
    for line in f:lines() do
      line = text.trim((line:gsub("#.*$", "")))
      if line ~= "" then
        local url, token = line:match("^(%S+)%s*(%S*)$")
        if not url then
          f:close()
          errors.raise("invalid_argument", "nodes: a line of " .. spec:sub(2) .. " is not 'URL [TOKEN]'")
        end
        out[#out + 1] = { url = url, token = token ~= "" and token or nil }
      end
    end
    f:close()
  else
    for url in spec:gmatch("[^,]+") do
      url = text.trim(url)
      if url ~= "" then out[#out + 1] = { url = url } end
    end
  end
  if #out == 0 then errors.raise("invalid_argument", "nodes: no node given in " .. spec) end
  return out
end

local Pool = {}
Pool.__index = Pool

local function node_of(v, token)
  if type(v) == "string" then v = { url = v } end
  if type(v) ~= "table" or type(v.url) ~= "string" or not v.url:match("^https?://[^/]") then
    errors.raise("invalid_argument", "fleet.pool: a node is a URL (http://host:port) or {url=, token=}, got "
      .. tostring(type(v) == "table" and v.url or v))
  end
  return { url = text.rtrim(v.url, "/"), token = v.token or token, up = false, checked = false,
    orphans = {}, report = nil, failures = 0, refusals = 0 }
end

--- opts: nodes (list, or a string for parse_nodes), strategy, sample,
--- token (for nodes without their own; default ROCK_API_TOKEN),
--- health_every, health_timeout (seconds), wait_timeout (seconds a start
--- waits for room; default: the start's startup_timeout, 60 unless given),
--- max_starting (starts in flight per node from this pool, at most; a
--- node's own --max-starting bounds it too).
function M.pool(opts)
  if type(opts) ~= "table" then errors.raise("invalid_argument", "fleet.pool: expects a table of options") end
  local list = opts.nodes or os.getenv("ROCK_NODES")
  if type(list) == "string" then list = M.parse_nodes(list) end
  if type(list) ~= "table" or #list == 0 then
    errors.raise("invalid_argument", "fleet.pool: nodes is required (a list of URLs, --nodes or ROCK_NODES)")
  end
  local ms = opts.max_starting
  if ms ~= nil and (math.type(ms) ~= "integer" or ms < 1) then
    errors.raise("invalid_argument", "fleet.pool: max_starting must be a whole number from 1 up")
  end
  local self = setmetatable({
    set = placement.new{ strategy = opts.strategy, sample = opts.sample },
    nodes = {}, by_url = {}, queue = {},
    token = opts.token or os.getenv("ROCK_API_TOKEN"),
    health_every = task.check_seconds(opts.health_every or M.HEALTH_EVERY, "fleet.pool: health_every"),
    health_timeout = task.check_seconds(opts.health_timeout or M.HEALTH_TIMEOUT, "fleet.pool: health_timeout"),
    wait_timeout = task.check_seconds(opts.wait_timeout, "fleet.pool: wait_timeout", true),
    max_starting = opts.max_starting,
    sandboxes = {}, -- sandbox_id -> the Sandbox, while it runs
  }, Pool)
  for _, v in ipairs(list) do
    local n = node_of(v, self.token)
    if self.by_url[n.url] then errors.raise("invalid_argument", "fleet.pool: node " .. n.url .. " is listed twice") end
    self.by_url[n.url] = n
    self.nodes[#self.nodes + 1] = n
    self.set:update(n.url, nil)
  end
  -- health checks on an unref'd timer: they never keep a recipe alive
  self.timer = uv.new_timer()
  self.timer:start(math.floor(self.health_every * 1000), math.floor(self.health_every * 1000), function()
    if not self.round then task.spawn(function() self:refresh() end) end
  end)
  self.timer:unref()
  return self
end

-- One node's report, as placement.lua reads it: the node's budget and
-- reservations; everything it is starting or holding in its own queue
-- counts against its start slots, of which the pool may take fewer (cap).
local function placement_report(r, cap)
  local b, res = r.budget or {}, r.reserved or {}
  return {
    healthy = r.healthy == true,
    budget = { cpus = b.cpus or 0, memory = b.memory or 0, gpus = b.gpus or 0 },
    reserved = { cpus = res.cpus or 0, memory = res.memory or 0, gpus = res.gpus or 0 },
    starting = (r.starting or 0) + (r.waiting_to_start or 0) + (r.queued or 0),
    max_starting = cap and math.min(r.max_starting or cap, cap) or r.max_starting,
  }
end

-- Check one node: its report, or drained when it does not answer.
function Pool:check(n)
  local ok, report = pcall(remote.api, { base_url = n.url, token = n.token }, "node", "", self.health_timeout,
    { get = true })
  -- a refused token is no outage that passes: remembered, so starts fail at once (place)
  n.unauthorized = not ok and errors.is(report, "unauthorized") or nil
  if not ok then n.why, report = tostring(errors.is(report) and report.message or report), nil end
  local was_up = n.up
  n.checked = true
  if report then
    n.report, n.up, n.failures, n.why = report, report.healthy == true, 0, report.health
    n.name = type(report.node) == "string" and report.node or n.url
  else
    n.up, n.failures = false, n.failures + 1
  end
  self.set:update(n.url, n.up and placement_report(report, self.max_starting) or nil)
  if n.up and not was_up and next(n.orphans) then task.spawn(function() self:stop_orphans(n) end) end
  if was_up and not n.up then log.warn("fleet", "node %s drained: %s", n.url, tostring(n.why)) end
end

--- One health round: every node checked at once; then the queue is woken.
function Pool:refresh()
  if self.round then return task.wait(self.round) end -- a round is under way: its checks
  local ts = {}
  for i, n in ipairs(self.nodes) do ts[i] = task.spawn(function() self:check(n) end) end
  self.round = ts
  task.wait(ts)
  self.round = nil
  self.refreshed = uv.now()
  self:wake()
end

-- Stop and delete sandbox id on node n: true when it is gone there (or
-- was never there), false when the node does not answer.
local function stop_there(n, id)
  local node = { base_url = n.url, token = n.token }
  local ok, err = pcall(remote.api, node, "stop", { sandbox_id = id }, 60)
  if not ok then return errors.is(err, "sandbox_not_found") end
  return (pcall(remote.api, node, "delete", { sandbox_id = id }, 60))
end

-- Sandboxes that starts over now left on a node that stopped answering
-- mid-start (orphaned): stopped once it answers again, so a start placed
-- elsewhere is never a double. One at a time per node; orphans added
-- meanwhile are taken in the same run; one the node does not answer for
-- waits for its next rejoin.
function Pool:stop_orphans(n)
  if n.stopping then n.again = true return end
  n.stopping = true
  repeat
    n.again = nil
    local ids = {}
    for id in pairs(n.orphans) do ids[#ids + 1] = id end
    for _, id in ipairs(ids) do
      if stop_there(n, id) then
        n.orphans[id] = nil
        log.info("fleet", "node %s: stopped %s, which a start whose answer was lost left there", n.url, id)
      end
    end
  until not n.again
  n.stopping = nil
end

-- The start so is over, placed on node landed (nil: given up): what its
-- lost answers may have left on other nodes is theirs to stop when they
-- answer (stop_orphans); while it ran nothing was, so a retry on the same
-- node found its sandbox there, not a stopped one.
function Pool:orphaned(so, landed)
  for url in pairs(so.lost or {}) do
    if url ~= landed then
      local n = self.by_url[url]
      n.orphans[so.sandbox_id] = true
      if n.up then task.spawn(function() self:stop_orphans(n) end) end
    end
  end
end

-- Wake the queue's head: it tries again (FIFO: only the head may place).
function Pool:wake()
  local w = self.queue[1]
  if w and w.done then w.done(true) end
end

local function describe(req)
  return string.format("%g CPU / %g GB%s", req.cpus, req.memory / GB, req.gpus > 0 and (" / " .. req.gpus .. " GPU") or "")
end

function Pool:free_text()
  local parts = {}
  for _, n in ipairs(self.nodes) do
    local p = self.set:node(n.url)
    if n.up then
      parts[#parts + 1] = string.format("%s %g CPU / %g GB free", n.url, p.cap_cpu - p.rep_cpu - p.fly_cpu,
        (p.cap_mem - p.rep_mem - p.fly_mem) / GB)
    else
      parts[#parts + 1] = n.url .. " down (" .. tostring(n.why or "not checked") .. ")"
    end
  end
  return table.concat(parts, "; ")
end

-- Wait in the FIFO queue until woken (true) or past deadline (false).
function Pool:wait_turn(w, deadline)
  local left = deadline - uv.now()
  if left <= 0 then return false end
  return task.await(function(done)
    local timer = uv.new_timer()
    w.done = function(v)
      w.done = nil
      if not timer:is_closing() then timer:close() end
      done(v)
    end
    timer:start(math.ceil(left), 0, function() if w.done then w.done(false) end end)
    return function() w.done = nil; if not timer:is_closing() then timer:close() end end
  end)
end

-- Start sb on node p, which choose() picked for req and placed() counts
-- in flight (remote.start with the node's URL): true, or false when the
-- node refused (full: its report was stale) or did not answer; other
-- errors (a bad image, a bad argument) are the caller's. so.sandbox_id is
-- the same on every try: the idempotency key; so.lost names the nodes
-- whose answer was lost (the start may have landed there: orphaned()).
function Pool:start_on(p, sb, req, so, phase)
  local n = self.by_url[p.name]
  so.base_url, so.token = n.url, n.token
  local ok, err = pcall(remote.start, sb, so, phase)
  self.set:settled(p, req)
  if ok then
    self.set:reserve(p, req)
    sb.fleet, sb.node_url, sb.fleet_req = self, n.url, req
    self.sandboxes[sb.id] = sb
    return true
  end
  if errors.is(err, "insufficient_resources") then
    n.refusals = n.refusals + 1
    task.spawn(function() self:check(n) end) -- its report was stale: look again
  elseif errors.is(err, "node_lost") then
    so.lost = so.lost or {} -- it may have started there: see orphaned()
    so.lost[n.url] = true
    n.up = false
    self.set:update(n.url, nil)
  else
    error(err, 0)
  end
  return false
end

local function unqueue(queue, w)
  for i, x in ipairs(queue) do
    if x == w then table.remove(queue, i) return end
  end
end

--- The backend's start (fleet/backend.lua): wait in the FIFO queue for a
--- node with room, place there. opts as rock.sandbox.start's, with cpus
--- and memory as ROCK's (defaults 2 and "8g"); wait = false: refused at
--- once (insufficient_resources) when no node has room now.
function Pool:place(sb, opts, phase)
  if self.closed then errors.raise("invalid_argument", "fleet: this pool is closed") end
  local mem = images.parse_size(opts.memory or M.DEFAULT_MEMORY, "fleet: memory")
  local cpus = opts.cpus or M.DEFAULT_CPUS
  if type(cpus) ~= "number" or cpus <= 0 or cpus ~= cpus or cpus == math.huge then
    errors.raise("invalid_argument", "fleet: cpus must be a number above 0")
  end
  local req = { cpus = cpus, memory = mem, gpus = opts.num_gpus or 0 }
  local so = {}
  for k, v in pairs(opts) do so[k] = v end
  so.fleet, so.wait = nil, false -- a node refuses at once when full: the pool queues
  so.sandbox_id = so.sandbox_id or state.new_id()
  so.idempotency_key = so.sandbox_id
  if not self.refreshed then self:refresh() end
  -- a request no node could ever hold is refused at once
  local could, up, refused = false, 0, 0
  for _, n in ipairs(self.nodes) do
    if n.up then up = up + 1 end
    if n.unauthorized then refused = refused + 1 end
    if n.report and placement.could_fit(self.set:node(n.url), req) then could = true end
  end
  if refused == #self.nodes then -- waiting would not help: no node will take this pool's token
    errors.raise("unauthorized", "fleet: every node refuses the token: " .. self:free_text())
  end
  if up > 0 and not could then
    errors.raise("insufficient_resources", "fleet: no node can ever hold " .. describe(req) .. ": " .. self:free_text())
  end
  local ok, err = pcall(self.placing, self, sb, req, so, opts, phase)
  self:orphaned(so, ok and sb.node_url or nil)
  if not ok then error(err, 0) end
end

-- place's part that sends the start: at once (opts.wait == false), or
-- from the FIFO queue.
function Pool:placing(sb, req, so, opts, phase)
  if opts.wait == false then -- the caller asked not to queue: a node now, or refused
    local exclude
    while #self.queue == 0 do
      local p = self.set:choose(req, exclude)
      if not p then break end
      self.set:placed(p, req)
      if self:start_on(p, sb, req, so, phase) then return end
      exclude = exclude or {}
      exclude[p.name] = true
    end
    errors.raise("insufficient_resources", "fleet: no node has room now for " .. describe(req) ..
      (#self.queue > 0 and string.format(" (%d start(s) queued ahead)", #self.queue) or "") .. ": " .. self:free_text())
  end
  -- FIFO: only the head chooses; once it has a node (counted in flight) it
  -- leaves the line and wakes the next, so starts run at once while the
  -- order of choosing stays first come, first served. A node that refuses
  -- puts it back at the head, that node skipped until no other fits.
  -- sandbox.start fills in startup_timeout: its default is the wait's too
  local wait = self.wait_timeout or opts.startup_timeout or require("rock.sandbox").DEFAULT_STARTUP_TIMEOUT
  local deadline = uv.now() + wait * 1000
  local w = {}
  self.queue[#self.queue + 1] = w
  local ok, err = pcall(function()
    local exclude
    while true do
      local p = self.queue[1] == w and self.set:choose(req, exclude)
      if p then
        self.set:placed(p, req)
        unqueue(self.queue, w)
        self:wake()
        if self:start_on(p, sb, req, so, phase) then return end
        exclude = exclude or {}
        exclude[p.name] = true
        table.insert(self.queue, 1, w)
      else
        exclude = nil
        if not self:wait_turn(w, deadline) then
          errors.raise("timeout", string.format("fleet: no node had room for %s within %g s: %s", describe(req),
            wait, self:free_text()))
        end
      end
    end
  end)
  unqueue(self.queue, w)
  self:wake() -- the next in line may fit where this one did not
  if not ok then error(err, 0) end
end

--- A pool sandbox stopped: its share is given back at once, not at the
--- node's next report, and the queue's head looks again.
function Pool:released(sb)
  if self.sandboxes[sb.id] ~= sb then return end
  self.sandboxes[sb.id] = nil
  local p = self.set:node(sb.node_url)
  if p then self.set:release(p, sb.fleet_req) end
  self:wake()
end

--- Start a sandbox on the pool (rock.sandbox.start{fleet = pool, ...}).
function Pool:start(opts)
  local so = {}
  for k, v in pairs(opts or {}) do so[k] = v end
  so.fleet = self
  return require("rock.sandbox").start(so)
end

--- The pool's view: each node's url, name, up, why, its report, the
--- starts it refused (full when its report said it had room), and the
--- queue length.
function Pool:report()
  local nodes = {}
  for i, n in ipairs(self.nodes) do
    nodes[i] = { url = n.url, name = n.name, up = n.up, why = n.why, report = n.report, refusals = n.refusals }
  end
  local count = 0
  for _ in pairs(self.sandboxes) do count = count + 1 end
  return { nodes = nodes, queued = #self.queue, sandboxes = count }
end

--- Stop health checks (sandboxes are the caller's to stop).
function Pool:close()
  if self.closed then return end
  self.closed = true
  if self.timer and not self.timer:is_closing() then self.timer:close() end
  for _, w in ipairs(self.queue) do if w.done then w.done(false) end end
end

return M
