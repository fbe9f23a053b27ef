--- rock.serve.envelope: ROCK's response envelope and its input checks.
-- Every endpoint under /apis/envs/sandbox/v1 answers HTTP 200 with
--   {"status": "Success" | "Failed", "message", "error", "result"}
-- A handled failure is Failed with the route's text in `message`, the
-- reason in `error` and result {code = 4000 | 5000 | 6000, exit_code,
-- failure_reason} (4000 bad request, 5000 internal, 6000 command error);
-- rock adds result.rock_code, the rock.error code, which ROCK's SDK
-- ignores and rock's remote backend raises again. Bad input is Failed
-- "invalid parameter" with the field named in `error` and result null,
-- as ROCK's (pydantic's) validation answers. ../shared/ROCK-API.md.
local json = require "rock.json"
local errors = require "rock.errors"
local core = require "rock.core"

local M = {}

M.BAD_REQUEST, M.INTERNAL, M.COMMAND = 4000, 5000, 6000

function M.success(result, message)
  return { status = "Success", message = message or json.null, error = json.null,
           result = result == nil and json.null or result }
end

--- A Success envelope, already JSON, whose result is {[field] = s} and
--- the small fields of rest: s (read_file's content: megabytes) is
--- quoted, or base64'd when base64, straight into the answer, in C, once
--- (core.json_wrap); no table, no encoder's walk. The dispatcher sends
--- it as it is (M.is_encoded).
local Encoded = {}
function M.success_encoded(field, s, rest, base64)
  local parts = { '{"status":"Success","message":null,"error":null,"result":{' }
  for k, v in pairs(rest or {}) do parts[#parts + 1] = json.encode(k) .. ":" .. json.encode(v) .. "," end
  parts[#parts + 1] = json.encode(field) .. ":"
  return setmetatable({ body = core.json_wrap(table.concat(parts), s, "}}", base64 and "base64" or nil) }, Encoded)
end
function M.is_encoded(v) return getmetatable(v) == Encoded end

--- A Success envelope of result, already JSON, its numbers exact
--- (json.encode_exact: a process environment's reward reads back as the
--- double it wrote, where cjson keeps 14 digits).
function M.success_exact(result)
  return setmetatable({ body = json.encode_exact(M.success(result)) }, Encoded)
end

-- rock.error codes that are the caller's mistake (4000); command errors
-- (6000) are set by the routes that run commands.
local CLIENT = { invalid_argument = true, bad_request = true, not_found = true, session_not_found = true,
  session_exists = true, session_busy = true, conflict = true, image_not_found = true,
  sandbox_not_found = true, sandbox_not_alive = true, insufficient_resources = true }
M.CLIENT = CLIENT

--- A Failed envelope for err (a rock.error or a string) under the route's text.
function M.failed(message, err, code, extra)
  local reason = errors.is(err) and err.message or tostring(err)
  local rcode = errors.is(err) and err.code or "internal"
  code = code or (CLIENT[rcode] and M.BAD_REQUEST or M.INTERNAL)
  local result = { code = code, exit_code = json.null, failure_reason = reason, rock_code = rcode }
  for k, v in pairs(extra or {}) do result[k] = v end
  return { status = "Failed", message = message, error = reason, result = result }
end

--- The answer to bad input: raised by the checks below, turned into the
--- envelope by the dispatcher.
local Invalid = {}
Invalid.__index = Invalid

function M.invalid(where, why)
  error(setmetatable({ where = where, why = why }, Invalid), 0)
end

function M.is_invalid(e) return getmetatable(e) == Invalid end

function M.invalid_envelope(e)
  return { status = "Failed", message = "invalid parameter", error = e.where .. ": " .. e.why,
           result = json.null }
end

local WANT = {
  string = "Input should be a valid string", number = "Input should be a valid number",
  integer = "Input should be a valid integer", boolean = "Input should be a valid boolean",
  list = "Input should be a valid list", object = "Input should be a valid dictionary",
}

local function is_kind(v, kind)
  if kind == "string" then return type(v) == "string" end
  -- finite: 1e400 decodes to inf, which no answer can carry back (JSON has none)
  if kind == "number" then return type(v) == "number" and v == v and v - v == 0 end
  if kind == "integer" then return math.type(v) == "integer" or (type(v) == "number" and v == math.floor(v) and v == v and math.abs(v) < 2^53) end
  if kind == "boolean" then return type(v) == "boolean" end
  if kind == "list" then return type(v) == "table" and (next(v) == nil or v[1] ~= nil) end
  if kind == "object" then return type(v) == "table" end
  return true
end

--- A field of t (a decoded body or the query), checked: kind (above),
--- required (missing, JSON null or, for strings, blank), where ("body" or
--- "query"). Returns the value, nil when absent and optional.
local BOOLS = { ["true"] = true, ["false"] = false, ["True"] = true, ["False"] = false, ["1"] = true, ["0"] = false }

function M.field(t, name, kind, required, where)
  local v = t[name]
  if v == json.null then v = nil end
  if v == nil then
    if required then M.invalid((where or "body") .. "." .. name, "Field required") end
    return nil
  end
  if kind == "string" then -- the common case first
    if type(v) ~= "string" then M.invalid((where or "body") .. "." .. name, WANT.string) end
    if required and not v:find("%S") then M.invalid((where or "body") .. "." .. name, "Field must not be blank") end
    return v
  end
  if kind == "integer" and type(v) == "string" and v:match("^%-?%d+$") then v = math.tointeger(tonumber(v)) end
  if kind == "number" and type(v) == "string" and tonumber(v) then v = tonumber(v) end
  if kind == "boolean" and type(v) == "string" then
    local b = BOOLS[v]
    if b ~= nil then v = b end
  end
  if not is_kind(v, kind) then M.invalid((where or "body") .. "." .. name, WANT[kind] or "Input is not valid") end
  if kind == "integer" then v = math.tointeger(v) end
  return v
end

return M
