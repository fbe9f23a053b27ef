-- serve_client.lua: the tests' side of `rock serve`: start the real
-- executable on a free loopback port, call its API over real HTTP.
--   local S = dofile(here .. "serve_client.lua")
--   local srv = S.start{ backend = "local", args = {...}, env = "..." }
--   local env = srv.post("start_async", { image = "x" })   -- the envelope
--   local env = srv.get("get_status", { sandbox_id = id })
--   srv.raw{ method=, path=, body=, headers= }             -- rock.http response
--   srv.kill("TERM"|"KILL"); srv.wait()                     -- safe twice
local rock = require "rock"
local json = rock.json
local S = {}

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  p:close()
  return out
end

local function exe()
  return (sh("readlink /proc/" .. rock.core.getpid() .. "/exe"):gsub("%s+$", ""))
end

local function enc(v)
  return (tostring(v):gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", c:byte()) end))
end

--- Start `rock serve` with opts.args (a list of extra flags), opts.backend,
--- opts.env (a "K=v K2=v2" prefix), opts.host (default 127.0.0.1),
--- opts.home (ROCK_HOME; default the test's). Waits until it answers.
--- The server's budget (admission.lua) is far above what any test starts
--- (this machine's own would hold one 2-CPU sandbox at a time), unless
--- opts.args sets one: test_serve_admission.lua tests the budget.
function S.start(opts)
  opts = opts or {}
  local log = os.tmpname()
  local host = opts.host or "127.0.0.1"
  local args = { "serve", "--host", host, "--port", "0", "--backend", opts.backend or "local" }
  local budget = false
  for _, a in ipairs(opts.args or {}) do
    args[#args + 1] = a
    if a:find("^%-%-budget") then budget = true end
  end
  if not budget then
    for _, a in ipairs({ "--budget-cpu", "4096", "--budget-memory-gb", "65536" }) do args[#args + 1] = a end
  end
  local quoted = {}
  for i, a in ipairs(args) do quoted[i] = "'" .. a:gsub("'", "'\\''") .. "'" end
  local pid = tonumber((sh(string.format("{ %s%s %s >%s 2>&1 & echo $!; }",
    opts.home and ("ROCK_HOME=" .. opts.home .. " ") or "", (opts.env or "") .. " " .. exe(),
    table.concat(quoted, " "), log)):match("%d+")))
  local srv = { pid = pid, log_path = log, host = host, token = opts.token }
  function srv.log()
    local f = io.open(log)
    local s = f and f:read("a") or ""
    if f then f:close() end
    return s
  end
  local port
  for _ = 1, 300 do
    port = srv.log():match("listening on http://[%d%.]+:(%d+)")
    if port or sh("kill -0 " .. pid .. " && echo alive"):find("alive") == nil then break end
    rock.sleep(0.05)
  end
  if not port then
    local l = srv.log()
    sh("kill -9 " .. pid)
    os.remove(log)
    error("rock serve did not start: " .. l, 2)
  end
  srv.port = tonumber(port)
  srv.url = string.format("http://%s:%d", host, srv.port)
  local function headers(extra)
    local h = { ["Content-Type"] = "application/json" }
    if srv.token then h["Authorization"] = "Bearer " .. srv.token end
    for k, v in pairs(extra or {}) do h[k] = v end
    return h
  end
  function srv.raw(r)
    return rock.http.request{ url = srv.url .. r.path, method = r.method or "GET", body = r.body,
      headers = r.headers or headers(), timeout = r.timeout or 120 }
  end
  local prefix = "/apis/envs/sandbox/v1/"
  function srv.post(name, body, extra_headers)
    local res = srv.raw{ method = "POST", path = prefix .. name,
      body = type(body) == "string" and body or json.encode(body or {}), headers = headers(extra_headers) }
    local ok, v = pcall(json.decode, res.body)
    return ok and v or { http_status = res.status, raw = res.body }, res
  end
  function srv.get(name, q, extra_headers)
    local parts = {}
    for k, v in pairs(q or {}) do parts[#parts + 1] = k .. "=" .. enc(v) end
    local res = srv.raw{ method = "GET", path = prefix .. name .. (#parts > 0 and ("?" .. table.concat(parts, "&")) or ""),
      headers = headers(extra_headers) }
    local ok, v = pcall(json.decode, res.body)
    return ok and v or { http_status = res.status, raw = res.body }, res
  end
  local done = false
  function srv.kill(sig)
    if done then return end
    sh("kill -" .. (sig or "TERM") .. " " .. pid)
  end
  function srv.wait(seconds)
    if done then return true end
    for _ = 1, (seconds or 60) * 20 do
      if sh("kill -0 " .. pid .. " 2>/dev/null && echo alive"):find("alive") == nil then
        done = true
        os.remove(log)
        return true
      end
      rock.sleep(0.05)
    end
    return false
  end
  function srv.stop()
    srv.kill("TERM")
    if not srv.wait(60) then srv.kill("KILL"); srv.wait(10) end
  end
  return srv
end

--- start_async, then get_status every 0.1 s until alive (the SDK's way,
--- faster); returns the sandbox id and the last status.
function S.start_sandbox(srv, body, headers)
  local env = srv.post("start_async", body, headers)
  assert(env.status == "Success", "start_async: " .. json.encode(env))
  local id = env.result.sandbox_id
  local st
  for _ = 1, 1200 do
    st = srv.get("get_status", { sandbox_id = id })
    if st.status == "Success" and st.result.is_alive then return id, st.result end
    if st.status ~= "Success" then break end
    rock.sleep(0.1)
  end
  local all = srv.get("get_status", { sandbox_id = id, include_all_states = "true" })
  error("sandbox " .. id .. " did not come up: " .. json.encode(all), 2)
end

return S
