--- rock.errors: the error values rock raises.
-- An error is a table {code=, message=, op=?, ...} whose code is a stable
-- snake_case string (the same codes as c/core/err.h); tostring gives
-- "code: message". Recipes pcall and branch on err.code. Lua's own codes
-- beside err.h's include node_lost (a remote `rock serve` stopped
-- answering: backends/remote.lua) and insufficient_resources (a node's
-- budget cannot hold a start: serve/admission.lua); docs/lua-api.md.
-- The metatable is rock.core's ("rock.error", made in C by
-- luaopen_rock_core, so errors raised before this module loads carry it
-- too); this module only uses it. Read next: c/core/lua_core.c.
local M = {}

require "rock.core"
local mt = assert(debug.getregistry()["rock.error"], "rock.core made no rock.error metatable")
M.mt = mt

--- Make an error value.
---@param code string stable code, e.g. "timeout"
---@param message string
---@param extra table|nil more fields (op, http_status, ...)
function M.new(code, message, extra)
  local e = { code = code, message = message }
  for k, v in pairs(extra or {}) do e[k] = v end
  return setmetatable(e, mt)
end

--- Give a plain {code, message} table (from C or JSON) the error metatable.
function M.wrap(t, extra)
  for k, v in pairs(extra or {}) do
    if t[k] == nil then t[k] = v end
  end
  return setmetatable(t, mt)
end

--- Raise an error value (never returns).
function M.raise(code, message, extra)
  error(M.new(code, message, extra), 0)
end

--- Is v an error value of rock's (optionally with this code)?
function M.is(v, code)
  return type(v) == "table" and getmetatable(v) == mt and (code == nil or v.code == code)
end

return M
