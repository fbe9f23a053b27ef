--- rock.backends.remote: a sandbox on another host's `rock serve`, driven
-- over ROCK's HTTP API (docs/http-api.md), so a recipe runs unchanged
-- against the local engine or a remote node:
--   rock.sandbox.start{ base_url = "http://127.0.0.1:8080", token = T, image = ... }
-- A plain backend (backends/init.lua): each operation goes over the wire
-- once, to the endpoint of its name, its arguments in ROCK's fields with
-- rock's own (encoding, max_output, ...) as extras ROCK ignores; a
-- command's bytes JSON cannot carry are base64'd once, here. Files move on
-- rock's byte route GET/PUT .../file (raw bodies, no JSON, no base64:
-- read_file, write_file, download to a host file or relayed to this
-- host's own `rock serve` client, upload from one or relayed from such a
-- client's body, streamed;
-- docs/http-api.md); execute and
-- run_in_session ask for their output as text bodies (Accept:
-- application/octet-stream, serve/routes.lua), so no JSON wraps it, and
-- take ROCK's JSON from a server that answers so. A Failed envelope is raised again
-- as the rock.error it came from (result.rock_code). A run_in_session
-- whose command failed comes back as its result (exit code,
-- failure_reason), as in-process. A node that stops answering (refused,
-- reset, cut off: c/http's keepalive and peer timeout, or no answer in the
-- call's time) is node_lost.
local uv = require "luv"
local json = require "rock.json"
local errors = require "rock.errors"
local http = require "rock.http"
local task = require "rock.task"
local text = require "rock.text"
local core = require "rock.core"
local transport = require "rock.backends.rocklet_transport"
local binary = transport.binary

local M = { caps = { upload_stream = true, download_stream = true, served_elsewhere = true } }

M.PREFIX = "/apis/envs/sandbox/v1/"
M.POLL = 0.1 -- seconds between get_status polls while a start is pending

local function unnull(v)
  if v == json.null then return nil end
  if type(v) == "table" then
    for k, x in pairs(v) do v[k] = unnull(x) end
    for k, x in pairs(v) do if math.type(x) == "float" and math.tointeger(x) then v[k] = math.tointeger(x) end end
  end
  return v
end

local function headers(sb, extra)
  local h = { ["Content-Type"] = "application/json" }
  if sb.token then h["Authorization"] = "Bearer " .. sb.token end
  for k, v in pairs(extra or {}) do h[k] = v end
  return h
end

-- A command's answer as text (rock serve's, to Accept:
-- application/octet-stream; serve/routes.lua): the output's text as the
-- body (stdout then stderr, split at X-Stdout-Length), the other fields
-- as URL-encoded JSON in X-Rock-Result. fields: {"output"} or {"stdout", "stderr"}.
local TEXT_TYPE = "text/plain; charset=utf-8"
local function text_result(sb, name, res, fields)
  local meta = (res.headers["x-rock-result"] or ""):gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)
  local ok, r = pcall(json.decode, meta)
  local cut = fields[2] and math.tointeger(tonumber(res.headers["x-stdout-length"] or ""))
  if not ok or type(r) ~= "table" or (fields[2] and not (cut and cut >= 0 and cut <= #res.body)) then
    errors.raise("http_error", string.format("%s answered %s with a text body and no fields", sb.base_url, name))
  end
  r = unnull(r)
  if fields[2] then
    r[fields[1]], r[fields[2]] = res.body:sub(1, cut), res.body:sub(cut + 1)
  else
    r[fields[1]] = res.body
  end
  return r
end

--- One API call: name, a body table (POST) or a query string (GET);
--- returns the envelope's result, or raises its error.
function M.api(sb, name, body, timeout, opts)
  opts = opts or {}
  local req = { url = sb.base_url .. M.PREFIX .. name, timeout = timeout, headers = headers(sb, opts.headers) }
  if opts.get then
    req.method = "GET"
    req.url = req.url .. "?" .. body
  else
    req.method, req.body = "POST", json.encode(body)
  end
  if opts.text then req.headers["Accept"] = "application/octet-stream" end
  local ok, res = pcall(http.request, req)
  if not ok then
    -- the node stopped answering (refused, reset, silent past the call's
    -- time): node_lost, at once; its sandboxes end there by their leases
    if errors.is(res, "connection_failed") or errors.is(res, "http_error") or errors.is(res, "timeout") then
      res.code = "node_lost"
      res.message = "node " .. sb.base_url .. " does not answer: " .. tostring(res.message)
    end
    error(res, 0)
  end
  if opts.text and res.status == 200 and res.headers["content-type"] == TEXT_TYPE then
    return text_result(sb, name, res, opts.text)
  end
  local dok, env = pcall(json.decode, res.body)
  if not dok or type(env) ~= "table" then
    errors.raise("http_error", string.format("%s answered %s with HTTP %d and no JSON", sb.base_url, name, res.status),
      { http_status = res.status })
  end
  env = unnull(env)
  if env.status == "Success" then return env.result end
  if env.status ~= "Failed" then
    errors.raise(res.status == 401 and "unauthorized" or "http_error", string.format("%s %s: HTTP %d %s",
      sb.base_url, name, res.status, tostring(env.detail or env.error or "")), { http_status = res.status })
  end
  local r = env.result
  if opts.result_on_failure and type(r) == "table" and r.output ~= nil then return r end
  local code = (type(r) == "table" and r.rock_code) or (env.message == "invalid parameter" and "invalid_argument")
    or (res.status == 401 and "unauthorized") or "internal"
  errors.raise(code, tostring(env.error or env.message), { op = name })
end

local function query(t)
  local parts = {}
  for k, v in pairs(t) do
    parts[#parts + 1] = k .. "=" .. tostring(v):gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", c:byte()) end)
  end
  return table.concat(parts, "&")
end

--- Start on the remote: start_async, then get_status until alive (the
--- phases mirrored into sb as they move), failed, or startup_timeout.
function M.start(sb, opts, phase)
  sb.base_url = text.rtrim(opts.base_url, "/")
  sb.token = opts.token or os.getenv("ROCK_API_TOKEN")
  if type(opts.image) ~= "string" or opts.image == "" then
    errors.raise("invalid_argument", "sandbox.start: 'image' is required for a remote sandbox")
  end
  sb.image = opts.image
  -- start_async runs to its end under a deadline too (task.shield, its
  -- answer is at once): one cut here still starts the sandbox on the
  -- server, under an id this side never learns and so never stops
  local r = task.shield(M.api, sb, "start_async", {
    image = opts.image, sandbox_id = opts.sandbox_id, memory = opts.memory, cpus = opts.cpus,
    auto_clear_time_minutes = opts.auto_clear_seconds and opts.auto_clear_seconds / 60 or nil,
    startup_timeout = opts.startup_timeout, pull = opts.pull, num_gpus = opts.num_gpus,
    wait = opts.wait, idempotency_key = opts.idempotency_key, -- rock's (docs/http-api.md)
  }, 60)
  sb.id = r.sandbox_id
  sb.where = M.where(sb.base_url, r)
  local deadline = uv.now() + (opts.startup_timeout or 60) * 1000 + 5000
  local ok, err = pcall(function()
    while true do
      local st = M.api(sb, "get_status", query{ sandbox_id = sb.id, include_all_states = "true" }, 30, { get = true })
      for name, p in pairs(st.status or {}) do
        if sb.phases[name] then phase(name, p.status, p.message) end
      end
      if st.is_alive then return end
      if st.state ~= "pending" then
        errors.raise("sandbox_start_failed", "remote start of " .. sb.id .. " failed: " ..
          tostring(st.failure_reason or st.state))
      end
      if uv.now() > deadline then
        errors.raise("timeout", "remote sandbox " .. sb.id .. " did not start in time")
      end
      task.sleep(M.POLL)
    end
  end)
  if not ok then
    task.shield(pcall, M.stop, sb)
    error(err, 0)
  end
end

-- An unknown id (deleted by another client, or a server that forgot it)
-- is already stopped: quiet, as stopping a dead sandbox is in-process.
-- So is a lost node (node_lost): nothing more can be done from here; the
-- sandbox ends there by its own lease.
function M.stop(sb)
  if not sb.id then return end
  local ok, err = pcall(M.api, sb, "stop", { sandbox_id = sb.id }, 60)
  if not ok then
    if errors.is(err, "sandbox_not_found") then return end
    if errors.is(err, "node_lost") then
      require("rock.log").warn("sandbox", "%s: %s; it ends there by its lease", sb.id, err.message)
      return
    end
    error(err, 0)
  end
  M.api(sb, "delete", { sandbox_id = sb.id }, 60)
end

function M.gone(sb)
  local ok, alive = pcall(M.is_alive, sb)
  if ok and not alive then return "the remote sandbox is not alive" end
  return nil
end

local function loopback(ip) return ip == nil or ip == "::1" or ip:match("^127%.") ~= nil end
local function literal(host) return host:match("^%d+%.%d+%.%d+%.%d+$") ~= nil or host:find(":", 1, true) ~= nil end

local resolved = {} -- host name -> the address it resolved to, once per process

-- The address a host name resolves to (getaddrinfo through luv, once per
-- name and process), or nil when it does not resolve (asked again next
-- time: a lookup may fail for a moment) or cannot wait here.
local function address_of(name)
  if resolved[name] then return resolved[name] end
  local ok, list = pcall(task.await, function(done)
    local req = uv.getaddrinfo(name, nil, { socktype = "stream" }, function(err, res) done(not err and res or nil) end)
    return function() if req then pcall(uv.cancel, req) end end
  end)
  if not ok then
    if errors.is(list, "not_in_task") then return nil end -- a callback of the loop: asked again next time
    error(list, 0) -- a deadline or a cancel holds here too
  end
  resolved[name] = type(list) == "table" and list[1] and list[1].addr or nil
  return resolved[name]
end

--- Where a sandbox of the node at base_url is reached, from its start's
--- answer r: the node's name and host_ip, unless that is its loopback
--- (a node bound to a wildcard says so) while base_url names another
--- address, or a name that resolves to one: then that address.
function M.where(base_url, r)
  local host = base_url:match("^%a+://%[([^%]]+)%]") or base_url:match("^%a+://([^:/]+)")
  local ip = r.host_ip
  if loopback(ip) and host then
    local addr = host
    if not literal(host) then addr = address_of(host) end
    if addr and (ip == nil or not loopback(addr)) then ip = addr end
  end
  return { host_name = r.host_name or host, host_ip = ip }
end

--- Its part of the status: the node's name and address (M.where).
function M.status(sb)
  return sb.where or M.where(sb.base_url or "", {})
end

function M.is_alive(sb)
  local r = M.api(sb, "is_alive", query{ sandbox_id = sb.id }, 10, { get = true })
  return r.is_alive == true
end

-- args with sandbox_id, and field base64'd (with encoding) when JSON
-- cannot carry its bytes
local function body(sb, args, field)
  local b = {}
  for k, v in pairs(args) do b[k] = v end
  b.sandbox_id = sb.id
  local v = field and b[field]
  if type(v) == "string" and binary(v) then b[field], b.encoding = core.base64_encode(v), "base64" end
  return b
end

-- A byte route of the node (GET/PUT .../file?sandbox_id=&path=): req
-- holds rock.http.request's fields beyond url (method, body_file,
-- output_file, relay, max_body, timeout; headers added to ours). Returns
-- the answer; a failure (an HTTP error status, the Failed envelope as
-- body) is raised as its rock.error (a 416 with its content_range), a
-- node that does not answer as node_lost.
local function bytes(sb, op, path, req)
  req.url = sb.base_url .. M.PREFIX .. "file?" .. query{ sandbox_id = sb.id, path = path }
  req.headers = headers(sb, req.headers)
  local ok, res = pcall(http.request, req)
  if not ok then
    if errors.is(res, "http_error") and res.too_large then error(res, 0) end
    if errors.is(res, "connection_failed") or errors.is(res, "http_error") or errors.is(res, "timeout") then
      res.code = "node_lost"
      res.message = "node " .. sb.base_url .. " does not answer: " .. tostring(res.message)
    end
    error(res, 0)
  end
  if res.status >= 200 and res.status < 300 then return res end
  local dok, e = pcall(json.decode, res.body)
  e = dok and type(e) == "table" and unnull(e) or {}
  local r = type(e.result) == "table" and e.result or {}
  local code = r.rock_code or (e.message == "invalid parameter" and "invalid_argument")
    or (res.status == 401 and "unauthorized") or (res.status == 404 and e.detail and "not_supported")
    or (res.status == 507 and "io_error") or "internal"
  local why = e.error or e.detail or e.message or ("HTTP " .. res.status)
  if code == "not_supported" then why = sb.base_url .. " has no " .. M.PREFIX .. "file route (an older rock serve)" end
  errors.raise(code, tostring(why), { op = op, http_status = res.status,
    content_range = res.status == 416 and res.headers and res.headers["content-range"] or nil })
end

--- read_file by GET .../file: the exact bytes as the body (no JSON, no
--- base64), cleaned here as the node's JSON read_file would (the same
--- scrub) unless args.binary; a file past 32 MiB is for download.
local function read_file(sb, args, timeout)
  local max = transport.MAX_READ
  local ok, res = pcall(bytes, sb, "read_file", args.path,
    { method = "GET", timeout = timeout, max_body = max, response_headers = false })
  if not ok then
    if errors.is(res) and res.too_large then
      errors.raise("invalid_argument", string.format("read_file %s: larger than %d MiB: download it " ..
        "(sb:download), or read it in parts with /execute (e.g. head -c, tail -c, split)",
        args.path, max >> 20), { op = "read_file", too_large = true })
    end
    error(res, 0)
  end
  return { content = args.binary and res.body or core.output_clean(res.body) }
end

--- download by GET .../file into args.file: written beside it as it
--- comes (never in memory), renamed over it once whole; a failure or a
--- cancel leaves no file.
local function download(sb, args, timeout)
  local part = string.format("%s.rock-part-%d-%x", args.file, uv.os_getpid(), uv.hrtime())
  local ok, res = pcall(bytes, sb, "download", args.path, { method = "GET", timeout = timeout, output_file = part })
  if ok then
    local moved, why = os.rename(part, args.file)
    if moved then
      return { success = true, size = math.tointeger(tonumber(res.headers["content-length"] or "")),
        message = "downloaded " .. args.path .. " to " .. args.file }
    end
    res = errors.new("io_error", "download: cannot write " .. args.file .. ": " .. tostring(why))
  end
  os.remove(part)
  error(res, 0)
end

--- download relayed (args.relay: a request of this host's `rock serve`,
--- a fleet front's or a Slurm node's): the node's GET (or HEAD) .../file
--- with the client's Range, its answer passed on as it comes
--- (rocklet_transport.lua's relay says how).
local function relay(sb, args, timeout)
  local ok, res = pcall(bytes, sb, "download", args.path, { method = args.head and "HEAD" or "GET",
    timeout = timeout, relay = args.relay, headers = args.range and { Range = args.range } or nil })
  if not ok then
    if args.head and errors.is(res, "internal") and res.http_status then -- a HEAD's error has no body
      res.code = res.http_status == 404 and "not_found" or res.http_status < 500 and "invalid_argument" or "internal"
    end
    error(res, 0)
  end
  return { success = true, status = res.status, size = math.tointeger(tonumber(res.headers["content-length"] or "")) }
end

--- upload by PUT .../file, the host file streamed as the body (file), a
--- client's body of this host's `rock serve` relayed as it comes
--- (body_from: upload's args.relay), or write_file's bytes as the body
--- (body); the node's answer is its
--- Success envelope (anything else is an error: a 2xx that is not one did
--- not come from a rock serve that wrote it).
local function put(sb, op, path, req, timeout)
  req.method, req.timeout, req.response_headers = "PUT", timeout, false
  local res = bytes(sb, op, path, req)
  local dok, e = pcall(json.decode, res.body)
  if not (dok and type(e) == "table" and e.status == "Success" and type(e.result) == "table") then
    errors.raise("http_error", string.format("%s answered PUT %sfile with HTTP %d and no Success envelope",
      sb.base_url, M.PREFIX, res.status), { op = op, http_status = res.status })
  end
  return unnull(e.result)
end

local function call(sb, name, args, timeout, file)
  if name == "upload" then
    return put(sb, "upload", args.path, args.relay and { body_from = args.relay } or { body_file = file }, timeout)
  end
  if name == "run_in_session" then
    local b = body(sb, args, "command")
    b.check = "ignore"
    return M.api(sb, name, b, timeout, { result_on_failure = true, text = { "output" } })
  elseif name == "write_file" then
    local content = args.content
    if args.encoding == "base64" then -- the op's own base64 (ROCK's field): decoded here, once
      content = core.base64_decode(content)
      if not content then errors.raise("invalid_argument", "write_file: content is not base64", { op = name }) end
    end
    return put(sb, name, args.path, { body = content }, timeout)
  elseif name == "read_file" then
    return read_file(sb, args, timeout)
  elseif name == "download" then
    if args.relay then return relay(sb, args, timeout) end
    return download(sb, args, timeout)
  elseif name == "execute" then
    return M.api(sb, name, body(sb, args), timeout, { text = { "stdout", "stderr" } })
  end
  return M.api(sb, name, body(sb, args), timeout)
end

--- The contract's op: one API call of the operation's name.
function M.op(sb, name, args, timeout, file)
  local ok, res = pcall(call, sb, name, args, timeout, file)
  if ok then return res end
  -- the server no longer knows the sandbox: gone, as in-process (a
  -- recipe's sandbox_not_alive handling holds against a remote node)
  if errors.is(res, "sandbox_not_found") then res.code = "sandbox_not_alive" end
  error(res, 0)
end

return M
