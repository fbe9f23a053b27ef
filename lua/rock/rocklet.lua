--- rock.rocklet: the host's client for a rocklet's HTTP API (see
-- docs/rocklet-api.md). One POST per call over the sandbox's unix socket,
-- JSON both ways (call), or a byte route's raw request (request: GET/PUT
-- /file); an error answer {code, message} is raised as a rock error
-- with the same code. sandbox.lua builds the user API on this.
-- The sandbox can rewrite its socket path (the run dir is writable inside
-- it): with peer_pid, a connection whose server is another process fails
-- (issue 7, item 13). A full listen backlog (EAGAIN) is a busy rocklet, not
-- a dead one: the call waits its turn (item 11).
local http = require "rock.http"
local cjson = require "cjson.safe"
local errors = require "rock.errors"
local task = require "rock.task"
local uv = require "luv"

local M = {}

local JSON = { "Content-Type: application/json" }
-- A call with no timeout of its own waits this long for a busy rocklet's
-- backlog to make room before it gives up.
M.busy_wait = 30

local function as_error(e, path)
  if not errors.is(e) then -- misuse (a bad argument) raises a string
    e = errors.new("invalid_argument", tostring(e))
  end
  e.op = path:sub(2)
  return e
end

--- The rocklet's backlog is full (connect got EAGAIN): try again with a
--- growing delay while the deadline allows and the socket is still there.
--- Returns ok, res|err as pcall does.
local function busy(err)
  return errors.is(err) and err.code == "connection_failed" and err.errno == "EAGAIN"
end

local function retry_busy(req, err, timeout)
  if not busy(err) then return false, err end
  local deadline = uv.now() + (timeout or M.busy_wait) * 1000
  local delay = 0.001
  while busy(err) do
    if uv.now() + delay * 1000 >= deadline or not uv.fs_stat(req.unix_socket) then break end
    task.sleep(delay)
    delay = math.min(delay * 2, 0.05)
    if timeout then req.timeout = math.max(deadline - uv.now(), 1) / 1000 end
    local ok, res = pcall(http.request, req)
    if ok then return true, res end
    err = res
  end
  return false, err
end

-- the failure of a request to the rocklet, as a rock error of the call
local function failure(res, path, socket, peer_pid)
  local e = as_error(res, path)
  if e.code == "http_error" and (e.errno == "ECONNREFUSED" or e.errno == "ENOENT") then
    e.code = "sandbox_not_alive" -- it went away during the call
    e.message = "the sandbox's rocklet went away during the call: " .. tostring(e.message)
  elseif e.code == "connection_failed" then
    e.code = "sandbox_not_alive"
    if e.peer_pid then
      e.message = string.format("socket %s is not the sandbox's rocklet (peer pid %d, expected %d)",
        socket, e.peer_pid, peer_pid)
    else
      e.message = "cannot reach the sandbox's rocklet: " .. tostring(e.message)
    end
  end
  return e
end

-- the op's name of a path ("/file?path=..." -> "file")
local function op_of(path) return path:match("^([^?]*)") end

--- One request to the rocklet at socket, its answer as it came
--- ({status, headers, body}): req holds rock.http.request's fields
--- beyond url and unix_socket (method, headers, body, body_file,
--- output_file, max_body, timeout). A non-2xx answer is raised as the
--- rock error its JSON body names. For the byte routes (GET/PUT /file,
--- raw answers); call() is the JSON routes'.
function M.request(socket, path, req, peer_pid)
  req.url, req.unix_socket, req.peer_pid = "http://rocklet" .. path, socket, peer_pid
  local ok, res = pcall(http.request, req)
  if not ok then ok, res = retry_busy(req, res, req.timeout) end
  if not ok then error(failure(res, op_of(path), socket, peer_pid), 0) end
  if res.status < 200 or res.status > 299 then
    local data = cjson.decode(res.body)
    if type(data) ~= "table" then data = {} end
    errors.raise(type(data.code) == "string" and data.code or "internal",
      type(data.message) == "string" and data.message or ("HTTP " .. res.status),
      { op = op_of(path):sub(2), http_status = res.status })
  end
  return res
end

--- POST body (a table) to path on the rocklet at socket; returns the
--- decoded answer. timeout (seconds) bounds the whole exchange. peer_pid
--- (optional) is the pid that must serve the socket (the local rocklet's,
--- or a container's init pid as the host sees it); nil = no check.
---@param socket string
---@param path string "/run_in_session", ...
---@param body table|nil
---@param timeout number|nil seconds
---@param peer_pid integer|nil
---@return table answer
function M.call(socket, path, body, timeout, peer_pid, body_file)
  local req = {
    url = "http://rocklet" .. path,
    unix_socket = socket,
    peer_pid = peer_pid,
    method = "POST",
    headers = JSON,
    body = not body_file and cjson.encode(body or {}) or nil,
    body_file = body_file,
    timeout = timeout,
    response_headers = false, -- not read: skip building them
  }
  local ok, res = pcall(http.request, req)
  if not ok then ok, res = retry_busy(req, res, timeout) end
  if not ok then error(failure(res, op_of(path), socket, peer_pid), 0) end
  local data = cjson.decode(res.body)
  if type(data) ~= "table" then
    errors.raise("internal", "rocklet answered " .. path .. " with no JSON object",
      { op = op_of(path):sub(2), http_status = res.status })
  end
  for k, v in pairs(data) do -- JSON null reads as absent; 3.0 as 3
    if v == cjson.null then data[k] = nil
    elseif math.type(v) == "float" then data[k] = math.tointeger(v) or v end
  end
  if res.status ~= 200 then
    errors.raise(data.code or "internal", data.message or ("HTTP " .. res.status),
      { op = op_of(path):sub(2), http_status = res.status })
  end
  return data
end

--- Wait until the rocklet at socket answers /is_alive: poll with a
--- growing delay (2 ms to 50 ms). failed() is asked between tries and
--- returns why the start failed (the process or container is gone), or
--- nil. Raises sandbox_start_failed, or timeout after timeout seconds.
--- peer_pid as in M.call; a socket served by another process is never
--- taken for the rocklet.
---@param socket string
---@param timeout number seconds
---@param failed fun(): string|nil
---@param peer_pid integer|nil
function M.wait_ready(socket, timeout, failed, peer_pid)
  local deadline = uv.now() + timeout * 1000
  local delay = 0.002
  while true do
    local ok, err = pcall(M.call, socket, "/is_alive", {}, 2, peer_pid)
    if ok then return end
    if task.cancelled(err) then error(err, 0) end -- not a rocklet still starting
    local why = failed()
    if why then errors.raise("sandbox_start_failed", why) end
    if uv.now() > deadline then
      errors.raise("timeout", "rocklet not ready after " .. timeout .. "s")
    end
    task.sleep(delay)
    delay = math.min(delay * 2, 0.05)
  end
end

return M
