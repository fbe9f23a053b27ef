--- rock.http: HTTP requests from a task, on libcurl driven by the loop.
-- Keep-alive connections are reused; unix_socket= targets a unix socket.
-- rock.http.serve{...} is the server (http_server.lua).
-- Read next: c/http/client.c (the mechanism), rocklet.lua (a user).
local core = require "rock.core"
local task = require "rock.task"
local errors = require "rock.errors"

local M = {}

---@class rock.HttpRequest
---@field url string            required
---@field method string|nil     default GET, or POST when body is set
---@field headers table|nil     {["Name"]="value"} or {"Name: value"}
---@field body string|nil
---@field body_file string|nil  a file sent as the body (streamed, never in memory)
---@field timeout number|nil    seconds for the whole exchange; default none
---@field unix_socket string|nil
---@field peer_pid integer|nil  with unix_socket: the process that must serve it
---                             (checked per new connection; else connection_failed
---                             with err.peer_pid, the process found)
---@field response_headers boolean|nil  false: res.headers is not built
---@field max_body integer|nil  bytes of a body kept at most; past it http_error with err.too_large
---@field output_file string|nil a 2xx body is written to this file as it arrives (never in
---                             memory; res.body is ""); removed unless the whole body came
---@field relay table|nil       a rock.http.serve request (or its req._handle), unanswered: a
---                             2xx answer goes on to its client as it comes (res.body "")
---@field body_from table|nil   a rock.http.serve request (or its req._handle) whose body
---                             streams (req:stream_body()): that body is sent as its client
---                             sends it; a client gone mid-way is "cancelled", a malformed
---                             body "bad_request"

local HANDLES = { "relay", "body_from" }

--- Make a request; returns {status=, headers= (lowercased names), body=}.
--- Any HTTP status is a response; no response raises an error with code
--- "timeout", "connection_failed" or "http_error" (err.errno names a failed
--- connect's cause: EAGAIN = the server's backlog is full). A bad option
--- type raises a plain string (misuse). Waits: inside a task.
---@param req rock.HttpRequest
function M.request(req)
  if type(req) ~= "table" or type(req.url) ~= "string" then
    errors.raise("invalid_argument", "rock.http.request: url is required")
  end
  for _, k in ipairs(HANDLES) do -- a server's request stands for its handle
    local v = req[k]
    if type(v) == "table" and v._handle then
      local r = {}
      for name, x in pairs(req) do r[name] = x end
      r[k] = v._handle
      req = r
    end
  end
  local res, err = task.await(function(done)
    local id = core.http_request(req, done)
    return function() core.http_cancel(id) end
  end)
  if not res then error(errors.wrap(err, { url = req.url }), 0) end
  return res
end

--- Start an HTTP server on the loop, a task per request: see
--- http_server.lua (rock.HttpServeOpts) and docs/lua-api.md.
---@param opts rock.HttpServeOpts
function M.serve(opts) return require("rock.http_server").serve(opts) end

return M
