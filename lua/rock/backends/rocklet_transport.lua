--- rock.backends.rocklet_transport: the one place that maps the contract's
-- data-plane operations (backends/init.lua: op names and arguments) to a
-- rocklet's URLs and fields (docs/rocklet-api.md), over the unix socket
-- of a sandbox on this host: sb.socket, served by sb.rocklet_pid (checked:
-- SO_PEERCRED). The local and container backends use it; remote does not
-- (it sends the operation to `rock serve`). Files move on the byte routes
-- (GET/PUT /file: raw bodies, no JSON, no base64): read_file, write_file
-- (the bytes as the body), download (streamed to a host file, or relayed
-- to a `rock serve` client: args.relay) and upload (streamed from one, or
-- relayed from a `rock serve` client's body: args.relay);
-- execute and run_in_session take their output as text bodies (Accept:
-- text/plain: no JSON around it). A command's bytes that JSON cannot
-- carry (not UTF-8, or a NUL) travel base64-encoded, once, here.
local core = require "rock.core"
local errors = require "rock.errors"
local rocklet = require "rock.rocklet"
local uv = require "luv"

local M = {}

--- Does s need base64 on the wire (JSON strings carry UTF-8 without NUL)?
function M.binary(s)
  return utf8.len(s) == nil or s:find("\0", 1, true) ~= nil
end

-- the path of each operation whose body is its args as they are
local PLAIN = {}
for _, name in ipairs({ "create_session", "interrupt", "close_session", "editor",
  "jobs/start", "jobs/wait", "jobs", "jobs/kill", "env/start", "env/call", "env/stop" }) do PLAIN[name] = "/" .. name end

local function with_bytes(args, field)
  local v = args[field]
  if type(v) ~= "string" or not M.binary(v) then return args end
  local b = {}
  for k, x in pairs(args) do b[k] = x end
  b[field], b.encoding = core.base64_encode(v), "base64"
  return b
end

local function quote(path)
  return (path:gsub("[^%w%-%._~/]", function(c) return string.format("%%%02X", c:byte()) end))
end

--- The most bytes read_file returns (the rocklet's /read_file bound): a
--- larger file is for download.
M.MAX_READ = 32 << 20

-- an error of /file, in the words of the op that asked
local function as_op(e, op)
  if errors.is(e) then
    e.op = op
    if type(e.message) == "string" then e.message = e.message:gsub("^file ", op .. " ", 1):gsub("^upload ", op .. " ", 1) end
  end
  return e
end

--- read_file by GET /file: the exact bytes in one raw body (no JSON, no
--- base64), cleaned as /read_file cleans them (core.output_clean) unless
--- args.binary.
local function read_file(sb, args, timeout)
  local ok, res = pcall(rocklet.request, sb.socket, "/file?path=" .. quote(args.path),
    { method = "GET", timeout = timeout, max_body = M.MAX_READ, response_headers = false }, sb.rocklet_pid)
  if not ok then
    if errors.is(res) and res.too_large then
      errors.raise("invalid_argument", string.format("read_file %s: larger than %d MiB: download it " ..
        "(sb:download), or read it in parts with /execute (e.g. head -c, tail -c, split)",
        args.path, M.MAX_READ >> 20), { op = "read_file", too_large = true })
    end
    error(as_op(res, "read_file"), 0)
  end
  return { content = args.binary and res.body or core.output_clean(res.body) }
end

--- download by GET /file into args.file: written to a temp file beside it
--- as the bytes come (never in memory), renamed over it once whole; an
--- error or a cancel leaves no file (c/http/client.c removes it).
local function download(sb, args, timeout)
  local part = string.format("%s.rock-part-%d-%x", args.file, uv.os_getpid(), uv.hrtime())
  local ok, res = pcall(rocklet.request, sb.socket, "/file?path=" .. quote(args.path),
    { method = "GET", timeout = timeout, output_file = part, response_headers = true }, sb.rocklet_pid)
  if ok then
    local moved, why = os.rename(part, args.file)
    if not moved then
      os.remove(part)
      errors.raise("io_error", "download: cannot write " .. args.file .. ": " .. tostring(why), { op = "download" })
    end
    local size = math.tointeger(tonumber(res.headers["content-length"] or ""))
    return { success = true, size = size, message = "downloaded " .. args.path .. " to " .. args.file }
  end
  os.remove(part)
  error(as_op(res, "download"), 0)
end

--- The rocklet's 416 says the file's size in its message (c/rocklet/
--- bytes.c): the Content-Range a relayed 416 answers with.
function M.unsatisfiable(e)
  local size = errors.is(e) and e.http_status == 416 and tostring(e.message):match("the file has (%d+) bytes")
  if size then e.content_range = "bytes */" .. size end
  return e
end

--- download relayed (args.relay, a request handle of `rock serve`'s
--- server; backends/init.lua): GET (or HEAD: args.head) /file with the
--- client's Range (args.range), the answer's status, type, range and
--- bytes passed on to that request's client as they come (c/http/
--- lua_serve.c), the rocklet read no faster than the client reads. An
--- error answer (not found, 416) is raised as its rock.error, the request
--- left to answer; a client gone mid-way ends it (cancelled).
local function relay(sb, args, timeout)
  local ok, res = pcall(rocklet.request, sb.socket, "/file?path=" .. quote(args.path),
    { method = args.head and "HEAD" or "GET", timeout = timeout, relay = args.relay,
      headers = args.range and { Range = args.range } or nil }, sb.rocklet_pid)
  if not ok then
    if args.head and errors.is(res, "internal") and res.http_status then -- a HEAD's error has no body
      res.code = res.http_status == 404 and "not_found" or res.http_status < 500 and "invalid_argument" or "internal"
      res.message = "file " .. args.path .. ": HTTP " .. res.http_status
    end
    error(as_op(M.unsatisfiable(res), "download"), 0)
  end
  return { success = true, status = res.status, size = math.tointeger(tonumber(res.headers["content-length"] or "")) }
end

--- upload by PUT /file, the host file streamed as the body (file), a
--- `rock serve` client's body relayed as it comes (body_from: upload's
--- args.relay), or write_file's bytes as the body (body): the rocklet
--- writes each to a temp file beside the target and renames it into
--- place once whole (parents made), as /write_file does, with no JSON and
--- no base64 around the bytes; a body cut short leaves no file.
local function put(sb, op, path, req, timeout)
  req.method, req.timeout, req.response_headers = "PUT", timeout, false
  local ok, res = pcall(rocklet.request, sb.socket, "/file?path=" .. quote(path), req, sb.rocklet_pid)
  if not ok then error(as_op(res, op), 0) end
  local data = require("cjson.safe").decode(res.body)
  if type(data) ~= "table" then
    errors.raise("internal", "rocklet answered PUT /file with no JSON object", { op = op })
  end
  return data
end

local function write_file(sb, args, timeout)
  local content = args.content
  if args.encoding == "base64" then -- the op's own base64 (ROCK's field): decoded here, once
    content = core.base64_decode(content)
    if not content then
      errors.raise("invalid_argument", "write_file " .. tostring(args.path) .. ": content is not base64",
        { op = "write_file" })
    end
  end
  if type(args.path) ~= "string" or args.path == "" then
    errors.raise("invalid_argument", "write_file: field 'path' is empty", { op = "write_file" })
  end
  return put(sb, "write_file", args.path, { body = content }, timeout)
end

-- A command's answer as text (the rocklet's Accept: text/plain; docs/
-- rocklet-api.md, Bytes): the cleaned output the JSON answer would carry,
-- byte for byte, as the body, the other fields in headers: no JSON
-- escaped around megabytes, none decoded. stdout and stderr are split at
-- X-Stdout-Length (/execute); a session's output is the body.
local TEXT = { ["Content-Type"] = "application/json", Accept = "text/plain" }
local TEXT_TYPE = "text/plain; charset=utf-8"
local function unquote(s)
  return (s:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end
local function text_call(sb, path, args, timeout)
  local res = rocklet.request(sb.socket, path, { method = "POST", headers = TEXT,
    body = require("cjson").encode(args), timeout = timeout }, sb.rocklet_pid)
  local h = res.headers
  if h["content-type"] ~= TEXT_TYPE then
    errors.raise("internal", "rocklet answered " .. path .. " with no text", { op = path:sub(2) })
  end
  local code = math.tointeger(tonumber(h["x-exit-code"] or ""))
  if path == "/execute" then
    local cut = math.tointeger(tonumber(h["x-stdout-length"] or "")) or #res.body
    return { stdout = res.body:sub(1, cut), stderr = res.body:sub(cut + 1), exit_code = code,
      failure_reason = h["x-failure-reason"] or "" }
  end
  return { output = res.body, exit_code = code, failure_reason = h["x-failure-reason"] or "",
    truncated = h["x-truncated"] == "1", dropped_bytes = math.tointeger(tonumber(h["x-dropped-bytes"] or "")),
    output_bytes = math.tointeger(tonumber(h["x-output-bytes"] or "")),
    output_file = h["x-output-file"] and unquote(h["x-output-file"]) or nil, session_type = "bash" }
end

--- The contract's op(sb, name, args, timeout, file) for a rocklet on
--- this host.
function M.op(sb, name, args, timeout, file)
  local path = PLAIN[name]
  if path then return rocklet.call(sb.socket, path, args, timeout, sb.rocklet_pid) end
  if name == "run_in_session" then
    return text_call(sb, "/run_in_session", with_bytes(args, "command"), timeout)
  elseif name == "execute" then
    return text_call(sb, "/execute", args, timeout)
  elseif name == "write_file" then
    return write_file(sb, args, timeout)
  elseif name == "read_file" then
    return read_file(sb, args, timeout)
  elseif name == "upload" then
    return put(sb, "upload", args.path, args.relay and { body_from = args.relay } or { body_file = file }, timeout)
  elseif name == "download" then
    if args.relay then return relay(sb, args, timeout) end
    return download(sb, args, timeout)
  end
  errors.raise("invalid_argument", "no operation '" .. tostring(name) .. "' (backends/init.lua lists them)")
end

--- The contract's is_alive(sb): the rocklet answers /is_alive (which
--- renews its idle lease).
function M.is_alive(sb)
  return (pcall(rocklet.call, sb.socket, "/is_alive", {}, 5, sb.rocklet_pid))
end

--- A live sandbox's lease from its record, without renewing it
--- ({lease_left=}); raises when its rocklet does not answer.
function M.lease(rec, dir)
  return rocklet.call(rec.socket or (dir .. "/rocklet.sock"), "/lease", {}, 2, rec.rocklet_pid)
end

--- Stop the rocklet (/close: it ends every process it started, then
--- itself), within timeout seconds.
function M.close(sb, timeout)
  return rocklet.call(sb.socket, "/close", {}, timeout, sb.rocklet_pid)
end

return M
