--- rock.backends.rocklet_transport: the one place that maps the contract's
-- data-plane operations (backends/init.lua: op names and arguments) to a
-- rocklet's URLs and fields (docs/rocklet-api.md), over the unix socket
-- of a sandbox on this host: sb.socket, served by sb.rocklet_pid (checked:
-- SO_PEERCRED). The local and container backends use it; remote does not
-- (it sends the operation to `rock serve`). Bytes that JSON cannot carry
-- (not UTF-8, or a NUL) travel base64-encoded, once, here.
local core = require "rock.core"
local errors = require "rock.errors"
local rocklet = require "rock.rocklet"

local M = {}

--- Does s need base64 on the wire (JSON strings carry UTF-8 without NUL)?
function M.binary(s)
  return utf8.len(s) == nil or s:find("\0", 1, true) ~= nil
end

-- the path of each operation whose body is its args as they are
local PLAIN = {}
for _, name in ipairs({ "create_session", "interrupt", "close_session", "execute", "editor",
  "jobs/start", "jobs/wait", "jobs", "jobs/kill", "env/start", "env/call", "env/stop" }) do PLAIN[name] = "/" .. name end

local function with_bytes(args, field)
  local v = args[field]
  if type(v) ~= "string" or not M.binary(v) then return args end
  local b = {}
  for k, x in pairs(args) do b[k] = x end
  b[field], b.encoding = core.base64_encode(v), "base64"
  return b
end

local function read_file(sb, args, timeout)
  local bin = args.binary
  local r = rocklet.call(sb.socket, "/read_file", { path = args.path, encoding = bin and "base64" or nil },
    timeout, sb.rocklet_pid)
  if bin then
    if r.encoding ~= "base64" then
      errors.raise("internal", "read_file: the rocklet did not answer in base64", { op = "read_file" })
    end
    local bytes = core.base64_decode(r.content or "")
    if not bytes then
      errors.raise("internal", "read_file: the rocklet's base64 does not decode", { op = "read_file" })
    end
    r.content, r.encoding = bytes, nil
  end
  return r
end

local function upload(sb, args, timeout, file)
  local q = args.path:gsub("[^%w%-%._~/]", function(c) return string.format("%%%02X", c:byte()) end)
  return rocklet.call(sb.socket, "/upload?path=" .. q, nil, timeout, sb.rocklet_pid, file)
end

--- The contract's op(sb, name, args, timeout, file) for a rocklet on
--- this host.
function M.op(sb, name, args, timeout, file)
  local path = PLAIN[name]
  if path then return rocklet.call(sb.socket, path, args, timeout, sb.rocklet_pid) end
  if name == "run_in_session" then
    return rocklet.call(sb.socket, "/run_in_session", with_bytes(args, "command"), timeout, sb.rocklet_pid)
  elseif name == "write_file" then
    return rocklet.call(sb.socket, "/write_file", with_bytes(args, "content"), timeout, sb.rocklet_pid)
  elseif name == "read_file" then
    return read_file(sb, args, timeout)
  elseif name == "upload" then
    return upload(sb, args, timeout, file)
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
