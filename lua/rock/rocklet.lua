--- rock.rocklet: the host's client for a rocklet's HTTP API (see
-- docs/rocklet-api.md). One POST per call over the sandbox's unix socket,
-- JSON both ways; an error answer {code, message} is raised as a rock error
-- with the same code. sandbox.lua builds the user API on this.
local http = require "rock.http"
local cjson = require "cjson.safe"
local errors = require "rock.errors"

local M = {}

--- POST body (a table) to path on the rocklet at socket; returns the
--- decoded answer. timeout (seconds) bounds the whole exchange.
function M.call(socket, path, body, timeout)
  local ok, res = pcall(http.request, {
    url = "http://rocklet" .. path,
    unix_socket = socket,
    method = "POST",
    headers = { ["Content-Type"] = "application/json" },
    body = cjson.encode(body or {}),
    timeout = timeout,
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
  for k, v in pairs(data) do -- JSON null reads as absent
    if v == cjson.null then data[k] = nil end
  end
  if res.status ~= 200 then
    errors.raise(data.code or "internal", data.message or ("HTTP " .. res.status),
      { op = path:sub(2), http_status = res.status })
  end
  return data
end

return M
