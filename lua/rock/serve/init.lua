--- rock.serve: ROCK's sandbox HTTP API on the host's loop, so ROCK's SDK,
-- its scripts and rock's own remote backend drive this host's sandboxes.
--   local srv = rock.serve.start{ port = 8080, backend = "docker" }
--   ... srv.url ... srv:stop()
-- `rock serve` (cli.lua) runs it until SIGINT/SIGTERM. The pieces:
-- envelope.lua (ROCK's answers and input checks), routes.lua (one function
-- per endpoint), registry.lua (the sandboxes, leases, adoption after a
-- restart), metrics.lua (GET /metrics), admission.lua (the node's budget,
-- the start queue, GET .../node), gem.lua (GEM's environments under
-- /apis/v1/envs/gem/). docs/http-api.md, docs/environments.md.
-- Who may call, checked once a request's headers are in, before its body
-- is read (admit): with a token, who has it; without one (loopback or a
-- unix socket), this host's own clients and no web page: a request naming
-- another Host (DNS rebinding) or carrying a foreign Origin is refused,
-- and a POST body must be application/json (multipart for /upload), which
-- a page cannot send without a CORS preflight this server never grants.
local uv = require "luv"
local json = require "rock.json"
local errors = require "rock.errors"
local task = require "rock.task"
local log = require "rock.log"
local state = require "rock.state"
local core = require "rock.core"
local http_server = require "rock.http_server"
local text = require "rock.text"
local env = require "rock.serve.envelope"
local routes = require "rock.serve.routes"
local GEM = require "rock.serve.gem"
local backends = require "rock.backends"

local M = {}

M.PREFIX = "/apis/envs/sandbox/v1/"
M.REAP_EVERY = 5 -- seconds between lease checks

local Server = {}
Server.__index = Server

-- Whether s (what a client sent) is the token, in time that depends only
-- on the token's length: neither on where they differ nor on how long s is.
local function same(s, token)
  if type(s) ~= "string" then return false end
  local diff = #s ~ #token
  for i = 1, #token do diff = diff | ((s:byte(i) or 0) ~ token:byte(i)) end
  return diff == 0
end

-- The credentials of Authorization: Bearer T, or nil; linear in the
-- header's length (the scheme is case-insensitive, blanks around T go).
local function bearer(v)
  if not v or #v < 7 or v:sub(1, 6):lower() ~= "bearer" then return nil end
  local _, e = v:find("^%s+", 7)
  return e and text.trim(v:sub(e + 1)) or nil
end

-- A header's value as a refusal quotes it: its start, escaped.
local function quote(v)
  return core.log_escape(#v > 100 and v:sub(1, 100) .. "..." or v)
end

-- The one address served without a token: this host's own loopback
-- (127.0.0.2 and the rest of 127/8 need one, as any other address).
local function loopback(host)
  return host == "127.0.0.1" or host == "localhost" or host == "::1"
end

-- Header tables are shared by every answer (rock.http.serve only reads them).
local JSON_HEADERS = { ["content-type"] = "application/json" }
local HEADERS = { [false] = JSON_HEADERS }

local function respond(status, body, ctype)
  local h = HEADERS[ctype or false]
  if not h then h = { ["content-type"] = ctype }; HEADERS[ctype] = h end
  return { status = status, headers = h, body = type(body) == "string" and body or json.encode(body) }
end

-- The answers that never change, encoded once.
local HELLO = json.encode({ message = "hello, ROCK!" })
local NOT_FOUND = json.encode({ detail = "Not Found" })
local NOT_ALLOWED = json.encode({ detail = "Method Not Allowed" })

function Server:authorized(req)
  if not self.token then return true end
  local h = req.headers
  return same(bearer(h["authorization"]), self.token) or same(h["x-key"], self.token)
end

local function refusal(status, message, why)
  return respond(status, { status = "Failed", message = message, error = why, result = json.null })
end

local UPLOAD, FILE = M.PREFIX .. "upload", M.PREFIX .. "file"
--- The largest body of a route that streams it (/upload to a temp file,
--- PUT .../file on to the sandbox): the disk bounds it, not memory. The
--- JSON routes keep the server's 32 MiB.
M.MAX_FILE_BODY = 1 << 40

--- Who may call (rock.http.serve's on_headers: the body is not read yet,
--- and is never read for a refused request). nil: go on; else the answer:
--- 401 without the token; without a token, 403 for a Host that does not
--- name this server or an Origin (a web page's request), 415 for a POST
--- whose body is not application/json (multipart/form-data for /upload).
function Server:admit(req)
  req.t0 = uv.hrtime()
  local h = req.headers
  local route, res
  if self.token then
    if not self:authorized(req) then
      route, res = "unauthorized", refusal(401, "unauthorized",
        "a valid token is required (Authorization: Bearer or X-Key)")
    end
  else
    local host, origin = h.host, h.origin
    if host and self.hosts and not (self.hosts[host] or self.hosts[host:lower()]) then
      route, res = "forbidden", refusal(403, "forbidden", "Host " .. quote(host) ..
        " is not this server's address (" .. self.hosts_text .. "): refused (DNS rebinding?)")
    elseif origin and not self.origins[origin:lower()] then
      route, res = "forbidden", refusal(403, "forbidden", "Origin " .. quote(origin) ..
        ": a cross-origin request (a web page's) is refused; without a token only this host's own clients are served")
    elseif req.method == "POST" then
      local want = req.path == UPLOAD and "multipart/form-data" or "application/json"
      local ctype = h["content-type"]
      if ctype ~= want and (not ctype or http_server.media_type(ctype) ~= want) then
        route, res = "unsupported_media_type", refusal(415, "unsupported media type",
          "the body must be " .. want .. " (Content-Type: " .. (ctype and quote(ctype) or "none") .. ")")
      end
    end
  end
  if not res then
    if req.path == UPLOAD then req:allow_body(M.MAX_FILE_BODY) end
    if req.path == FILE and req.method == "PUT" then -- relayed as it comes (routes.file)
      req:allow_body(M.MAX_FILE_BODY)
      req:stream_body()
    end
    return nil
  end
  req.route = route
  return res
end

-- The args of an API call: the JSON object of a POST, the query of a GET.
local function args_of(req, raw)
  if req.method == "GET" or raw then return req.query or {} end
  local body = req.body
  if req.body_file then
    local f = io.open(req.body_file, "rb")
    body = f and f:read("a") or ""
    if f then f:close() end
  end
  if not body or body == "" then env.invalid("body", "Field required") end
  local ok, v = pcall(json.decode, body)
  if not ok then env.invalid("body", "JSON decode error: " .. tostring(v):gsub("^.-: ", "")) end
  if type(v) ~= "table" or (next(v) ~= nil and v[1] ~= nil) then env.invalid("body", "Input should be a valid dictionary") end
  return v
end

--- One API call: route name, the envelope, and the sandbox it named.
function Server:api(name, req)
  local r = routes.ROUTES[name]
  if not r then return nil end
  if req.method ~= r[1] and not r[req.method] and not (r[1] == "GET" and req.method == "HEAD") then
    return respond(405, NOT_ALLOWED)
  end
  local ok, args = pcall(args_of, req, r.raw)
  local res
  if ok then ok, res = pcall(r[2], self, args, req) else args, res = nil, args end
  local held = req._held -- the sandboxes the call held (routes.lua live): idle again from now
  if held then
    req._held = nil
    for i = 1, #held do self.registry:release(held[i]) end
  end
  local sandbox = type(args) == "table" and type(args.sandbox_id) == "string" and args.sandbox_id or nil
  if ok and (r.bytes or (r.text and type(res) == "table" and res.headers)) then
    return res, sandbox, res.outcome or "Success" -- the route's own answer (its bytes, its text)
  end
  if ok and env.is_encoded(res) then return respond(200, res.body), sandbox, "Success" end
  local out
  if ok then
    out = (type(res) == "table" and (res.status == "Success" or res.status == "Failed") and res.result ~= nil)
      and res or env.success(res)
  elseif env.is_invalid(res) then
    out = env.invalid_envelope(res)
  else
    if not errors.is(res) then
      log.error("serve", "%s: %s", name, tostring(res))
      res = errors.new("internal", tostring(res))
    end
    out = env.failed(routes.TEXT[name] or (name .. " failed"), res)
  end
  if r.bytes then -- a byte route's failure: an HTTP error status, the envelope as its body
    local code = type(out.result) == "table" and out.result.rock_code
    local st = out.message == "invalid parameter" and 400 or (code == "sandbox_not_found" or code == "not_found")
      and 404 or (code and env.CLIENT[code]) and 400 or 500
    return respond(st, out), sandbox, out.status
  end
  return respond(200, out), sandbox, out.status
end

-- What a request did, for after(): set on req by handle (req is the
-- request's own table, as OpenResty's ngx.ctx).
function Server:handle(req)
  req.t0 = uv.hrtime()
  local res, route, sandbox, outcome -- admitted already (admit)
  if req.path == "/" and (req.method == "GET" or req.method == "HEAD") then
    route, res = "/", respond(200, HELLO)
  elseif req.path == "/metrics" and req.method == "GET" then
    route, res = "/metrics", respond(200, self.metrics:render(self.registry:counts()) .. self.admission:metrics(self),
      "text/plain; version=0.0.4")
  elseif req.path:sub(1, #GEM.PREFIX) == GEM.PREFIX then -- GEM's environments (serve/gem.lua)
    local name = req.path:sub(#GEM.PREFIX + 1)
    local status, body = GEM.handle(self, name, req, args_of)
    route, res = GEM.ROUTES[name] and ("gem/" .. name) or "not_found", respond(status, body)
  elseif req.path:sub(1, #M.PREFIX) == M.PREFIX then
    route = req.path:sub(#M.PREFIX + 1)
    res, sandbox, outcome = self:api(route, req)
    if not res then route, res = "not_found", respond(404, NOT_FOUND) end
  else
    route, res = "not_found", respond(404, NOT_FOUND)
  end
  req.route, req.sandbox_id, req.outcome = route, sandbox, outcome
  return res
end

-- A field of a request's log line: one word, control bytes and the like
-- escaped (a sandbox_id must not forge lines), at most 256 bytes of it.
local escape = core.log_escape
local function word(s)
  if #s > 256 then return escape(s:sub(1, 256)) .. "..." end
  return escape(s)
end

-- Once the answer is written (rock.http.serve's after): the request's
-- metrics and log line, which the client then does not wait for.
function Server:after(req, res)
  local secs = (uv.hrtime() - req.t0) / 1e9
  local status = res and res.status or 500
  self.metrics:request(req.route or "internal", req.outcome or status, secs)
  if self.log_requests and log.enabled("info") then -- buffered: a write(2) a line costs more than a request
    local tenths = math.floor(secs * 10000 + 0.5) -- "%.1f" ms, without string.format's cost
    log.buffered("info", "serve", escape(req.method) .. " " .. word(req.path) .. " " ..
      (req.sandbox_id and word(req.sandbox_id) or "-") .. " " .. status .. " " ..
      (req.outcome and escape(req.outcome) or "") .. " " .. tenths // 10 .. "." .. tenths % 10 .. "ms")
  end
end

-- The Host header values that name a server bound to host:port ("::1",
-- else 127.0.0.1), lowercased, and the text saying them.
local function own_hosts(host, port)
  local names, said = {}, {}
  for _, h in ipairs({ host == "::1" and "[::1]" or "127.0.0.1", "localhost" }) do
    names[h .. ":" .. port] = true
    if port == 80 then names[h] = true end
    said[#said + 1] = h .. ":" .. port
  end
  return names, table.concat(said, " or ")
end

-- The address clients reach a server bound to host by: host itself when
-- it is one address, else (a wildcard, a name, a unix socket) loopback.
local function node_ip(host, unix_socket)
  if unix_socket or host == "0.0.0.0" or host == "::" or host == "localhost" then return "127.0.0.1" end
  if host:match("^%d+%.%d+%.%d+%.%d+$") or host:find(":", 1, true) then return host end
  return "127.0.0.1"
end

--- Start serving. opts: host (default "127.0.0.1"), port (default 8080; 0
--- = any), unix_socket (instead of host/port), backend ("auto"), token
--- (default $ROCK_API_TOKEN; required to bind anything but loopback),
--- lease (default idle seconds, ROCK's 30 minutes), log_requests (default
--- true), budget ({cpus=, memory_gb=, gpus=, max_starting=}: admission.lua;
--- absent fields: the machine's own, ROCK_ENV_CONCURRENCY or 4 starts);
--- nodes (a list or "URL,..."/"@FILE": rock.fleet.parse_nodes) makes it a
--- front: every sandbox is placed onto those `rock serve` nodes by a pool
--- (strategy: "spread" | "pack"), whose nodes without a token of their
--- own are called with this server's; backend and budget are then the
--- nodes' (fleet/front.lua answers GET .../node and /metrics); pool
--- ("IMAGE=N,..." or serve/pool.lua's parsed list): warm sandboxes that
--- answer matching starts at once.
--- Takes ownership of $ROCK_HOME's sandboxes as its service
--- (state.serve_as) and adopts those a previous server left running.
function M.start(opts)
  opts = opts or {}
  local token = opts.token or os.getenv("ROCK_API_TOKEN")
  if token == "" then token = nil end
  local host = opts.host or "127.0.0.1"
  if not opts.unix_socket and not loopback(host) and not token then
    errors.raise("invalid_argument", "binding " .. host .. " (not loopback) needs a token: --token T or ROCK_API_TOKEN")
  end
  local srv = setmetatable({ token = token, log_requests = opts.log_requests ~= false,
    metrics = require("rock.serve.metrics").new(), origins = {} }, Server)
  local pool
  if opts.nodes then -- a front: its sandboxes are placed onto the nodes (rock.fleet)
    pool = require("rock.fleet").pool{ nodes = opts.nodes, strategy = opts.strategy, token = token }
    srv.pool, srv.admission = pool, require("rock.fleet.front").new(pool)
  else
    srv.admission = require("rock.serve.admission").new(opts.budget)
  end
  state.serve_as()
  -- the node's name and the address its clients reach it by (get_status's host_ip)
  backends.set_host(uv.os_gethostname(), node_ip(host, opts.unix_socket))
  local registry = require("rock.serve.registry")
  srv.registry = registry.new{ backend = pool and "fleet" or opts.backend or "auto", fleet = pool,
    metrics = srv.metrics, lease = opts.lease }
  srv.registry.admission = not pool and srv.admission or nil -- a front's pool queues, not the front
  if pool then pool:refresh() end -- the nodes' first reports before the first start
  if srv.registry.backend ~= "auto" and not backends.can(srv.registry.backend, "own_files") then
    local user = (uv.os_get_passwd() or {}).username or "?"
    log.warn("serve", "backend %s: sandboxes run on this host as user %s (uid %d), unconfined: " ..
      "whoever may call this server runs commands as that user", srv.registry.backend, user, uv.getuid())
  end
  local adopted = srv.registry:adopt()
  if adopted > 0 then log.info("serve", "serving again %d sandbox(es) of the previous server", adopted) end
  for _, e in pairs(srv.registry.entries) do srv.admission:adopt(e) end -- they hold their reservations
  if opts.pool then -- warm sandboxes (serve/pool.lua): their starts look like any other
    local sp = require "rock.serve.pool"
    srv.pools = sp.new(srv.registry, type(opts.pool) == "string" and sp.parse(opts.pool) or opts.pool,
      math.min(10, math.max(0.2, srv.registry.lease / 3)))
    srv.registry.pools = srv.pools
  end
  srv.http = require("rock.http").serve{
    host = not opts.unix_socket and host or nil, port = not opts.unix_socket and (opts.port or 8080) or nil,
    unix_socket = opts.unix_socket, handler = function(req) return srv:handle(req) end,
    after = function(req, res) srv:after(req, res) end,
    on_headers = function(req) return srv:admit(req) end,
  }
  srv.url, srv.port = srv.http.url, srv.http.port
  if not opts.unix_socket then -- on a unix socket any Host goes (no browser reaches it)
    srv.hosts, srv.hosts_text = own_hosts(host, srv.port)
    for name in pairs(srv.hosts) do srv.origins["http://" .. name] = true end
  end
  -- leases are checked at least 4 times a lease (a short one is not overstayed by 5 s)
  local every = math.min(M.REAP_EVERY, math.max(0.5, srv.registry.lease / 4))
  srv.reaper = uv.new_timer()
  srv.reaper:start(math.floor(every * 1000), math.floor(every * 1000), function()
    if not srv.reaping then
      srv.reaping = true
      task.spawn(function()
        pcall(srv.registry.reap, srv.registry)
        srv.reaping = false
      end)
    end
  end)
  log.info("serve", "serving ROCK's sandbox API on %s (backend %s%s)", srv.url or opts.unix_socket,
    srv.registry.backend, token and ", token required" or "")
  return srv
end

--- Stop serving: requests in flight finish; then every sandbox is stopped
--- unless keep_sandboxes (a restart on the same ROCK_HOME adopts them).
function Server:stop(opts)
  opts = opts or {}
  if self.stopped then return end
  self.stopped = true
  if self.reaper and not self.reaper:is_closing() then self.reaper:close() end
  self.registry:close()
  self.http:stop{ timeout = opts.timeout or 30 }
  log.flush()
  if self.pools then self.pools:close() end -- warm ones are nobody's: they go, whatever keep_sandboxes says
  if not opts.keep_sandboxes then
    for _, e in pairs(self.registry.entries) do pcall(self.registry.stop, self.registry, e, "server_stop") end
  end
  if self.pool then self.pool:close() end
end

M.Server = Server
return M
