--- rock.report.redact: what a report must not show. A redactor replaces,
-- in any text, the exact secret values it was given (the run's flags and
-- environment whose names say key, token, secret or password) and
-- anything shaped like a key whatever its source: `sk-...` (16 characters
-- or more after the dash), `Bearer <token>` and the value after
-- `Authorization:` (or `"Authorization": "..."`, as JSON writes it), and
-- the value of an environment assignment whose name says secret
-- (`GITHUB_TOKEN=...`, as `env` in a sandbox prints it).
-- It counts what it replaced, so the report can say it was redacted: a
-- value already redacted (the mark, as run.json keeps a secret flag) is
-- neither a secret nor counted again.
local M = {}

M.MARK = "[REDACTED]"

-- names whose values are secrets (matched on the upper-cased name)
local SECRET_NAMES = { "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL" }

--- Is name (a flag or environment variable) one whose value is a secret?
function M.secret_name(name)
  local up = tostring(name):upper()
  for _, w in ipairs(SECRET_NAMES) do
    if up:find(w, 1, true) then return true end
  end
  return false
end

--- The secret values of a table of name -> value (flags or an env) with
--- at least 6 characters (a shorter one would blank ordinary words).
function M.secrets_of(t, into)
  into = into or {}
  for k, v in pairs(t or {}) do
    if type(v) == "string" and #v >= 6 and M.secret_name(k) then into[#into + 1] = v end
  end
  return into
end

--- The secret values in this process's environment (rock.core has no
--- environ walk: /proc/self/environ, else nothing).
function M.env_secrets(into)
  into = into or {}
  local f = io.open("/proc/self/environ", "rb")
  if not f then return into end
  local data = f:read("a") or ""
  f:close()
  for entry in data:gmatch("[^%z]+") do
    local k, v = entry:match("^([^=]+)=(.*)$")
    if k and #v >= 6 and M.secret_name(k) then into[#into + 1] = v end
  end
  return into
end

local function ci(word) -- a case-insensitive Lua pattern for word
  return (word:gsub("%a", function(c) return "[" .. c:upper() .. c:lower() .. "]" end))
end
local AUTH = ci("authorization") .. "([\"']?%s*[:=]%s*[\"']?)([^\r\n\"'<]+)"
local BEARER = ci("bearer") .. "(%s+)[%w%-%._~%+/=]+"

--- A redactor for the given secret values: r(s) -> s with every secret
--- replaced by M.MARK; r.count is the number of replacements so far.
function M.new(secrets)
  local list, seen = {}, {}
  for _, s in ipairs(secrets or {}) do
    if type(s) == "string" and #s >= 6 and not seen[s] and not s:find(M.MARK, 1, true) then
      seen[s] = true
      list[#list + 1] = s
    end
  end
  table.sort(list, function(a, b) return #a > #b end) -- a longer secret first: it may hold a shorter
  local r = { count = 0 }
  local function bump(n) r.count = r.count + n end
  setmetatable(r, { __call = function(_, s)
    if type(s) ~= "string" then return s end
    local n
    for _, sec in ipairs(list) do
      local i = s:find(sec, 1, true)
      if i then
        local parts, pos, c = {}, 1, 0
        while i do
          parts[#parts + 1] = s:sub(pos, i - 1)
          parts[#parts + 1] = M.MARK
          pos, c = i + #sec, c + 1
          i = s:find(sec, pos, true)
        end
        parts[#parts + 1] = s:sub(pos)
        s = table.concat(parts)
        bump(c)
      end
    end
    -- the patterns only where a plain search (fast: memchr) finds their
    -- start: most text has none, and a pattern scan of every byte costs
    if s:find("sk-", 1, true) then
      s = s:gsub("%f[%w]sk%-[%w%-_]+", function(k)
        if #k >= 19 then bump(1); return "sk-" .. M.MARK end
      end)
    end
    -- an environment assignment of a secret (`env` run by the agent): GITHUB_TOKEN=...
    if s:find("=", 1, true) then
      s, n = s:gsub("(%u[%u%d_]*)=([^%s\"'<]+)", function(name, v)
        if #v >= 6 and v:sub(1, #M.MARK) ~= M.MARK and M.secret_name(name) then bump(1); return name .. "=" .. M.MARK end
      end)
    end
    local low = s:lower()
    if low:find("authorization", 1, true) then
      s = s:gsub(AUTH, function(sep, v)
        if v:sub(1, #M.MARK) == M.MARK then return nil end -- already redacted: kept, not counted
        bump(1)
        return "Authorization" .. sep .. M.MARK
      end)
    end
    if low:find("bearer", 1, true) then
      s, n = s:gsub(BEARER, function(sp) return "Bearer" .. sp .. M.MARK end)
      bump(n)
    end
    return s
  end })
  return r
end

return M
