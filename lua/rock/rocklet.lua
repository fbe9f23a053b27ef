--- rock.rocklet: the host's client for a rocklet's HTTP API (see
-- docs/rocklet-api.md). One POST per call over the sandbox's unix socket,
-- JSON both ways; an error answer {code, message} is raised as a rock error
-- with the same code. sandbox.lua builds the user API on this.
local http = require "rock.http"
local cjson = require "cjson.safe"
local errors = require "rock.errors"
local task = require "rock.task"
local uv = require "luv"

local M = {}

local JSON = { "Content-Type: application/json" }

--- POST body (a table) to path on the rocklet at socket; returns the
--- decoded answer. timeout (seconds) bounds the whole exchange.
function M.call(socket, path, body, timeout)
  local ok, res = pcall(http.request, {
    url = "http://rocklet" .. path,
    unix_socket = socket,
    method = "POST",
    headers = JSON,
    body = cjson.encode(body or {}),
    timeout = timeout,
    response_headers = false, -- not read: skip building them
  })
  if not ok then
    local e = res
    if errors.is(e) and e.code == "connection_failed" then
      e.code = "sandbox_not_alive"
      e.message = "cannot reach the sandbox's rocklet: " .. tostring(e.message)
    end
    e.op = path:sub(2)
    error(e, 0)
  end
  local data = cjson.decode(res.body)
  if type(data) ~= "table" then
    errors.raise("internal", "rocklet answered " .. path .. " with no JSON object",
      { op = path:sub(2), http_status = res.status })
  end
  for k, v in pairs(data) do -- JSON null reads as absent; 3.0 as 3
    if v == cjson.null then data[k] = nil
    elseif math.type(v) == "float" then data[k] = math.tointeger(v) or v end
  end
  if res.status ~= 200 then
    errors.raise(data.code or "internal", data.message or ("HTTP " .. res.status),
      { op = path:sub(2), http_status = res.status })
  end
  return data
end

--- Wait until the rocklet at socket answers /is_alive: poll with a
--- growing delay (2 ms to 50 ms). failed() is asked between tries and
--- returns why the start failed (the process or container is gone), or
--- nil. Raises sandbox_start_failed, or timeout after timeout seconds.
function M.wait_ready(socket, timeout, failed)
  local deadline = uv.now() + timeout * 1000
  local delay = 0.002
  while true do
    if pcall(M.call, socket, "/is_alive", {}, 2) then return end
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
