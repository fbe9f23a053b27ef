-- `rock serve` under a hostile review (issue 15), through the real
-- executable over real HTTP, on the local backend: each test is an attack
-- the server must withstand, and what must keep working meanwhile.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local S = dofile(here .. "serve_client.lua")
local json = rock.json
local uv = rock.uv
local PREFIX = "/apis/envs/sandbox/v1/"
local HOME = os.getenv("ROCK_HOME")

-- CPU milliseconds (user + system) process pid has used so far.
local function cpu_ms(pid)
  local f = assert(io.open("/proc/" .. pid .. "/stat"))
  local st = f:read("a")
  f:close()
  local fields = {}
  for x in st:gsub("^.-%) ", ""):gmatch("%S+") do fields[#fields + 1] = x end
  return (tonumber(fields[12]) + tonumber(fields[13])) * 1000 / 100 -- USER_HZ 100
end

local function rss_kib(pid)
  for line in io.lines("/proc/" .. pid .. "/status") do
    local kb = line:match("^VmRSS:%s+(%d+)")
    if kb then return tonumber(kb) end
  end
end

-- One request over rock.http (pcall'd): the response, or nil and the error.
local function call(url, r)
  local ok, res = pcall(rock.http.request, { url = url .. (r.path or "/"), method = r.method or "GET",
    headers = r.headers or {}, body = r.body, timeout = r.timeout or 30, unix_socket = r.unix_socket })
  if ok then return res end
  return nil, res
end

local function api_url(srv, name) return srv.url .. PREFIX .. name end

T.test("a 60,000-space bearer token, a 60 KB X-Key, 300 header fields, a 60 KB boundary: linear, the loop goes on", function()
  local srv = S.start{ backend = "local", args = { "--token", "s3cret" }, token = "s3cret" }
  local done = false
  local ok, err = pcall(function()
    local auth = { Authorization = "Bearer s3cret" }
    T.eq(call(srv.url, { headers = auth }).status, 200)
    -- another client, answered all along: its worst wait is measured
    local worst, probes = 0, 0
    local probe = rock.spawn(function()
      while not done do
        local t0 = uv.hrtime()
        local res = call(srv.url, { headers = auth, timeout = 60 })
        T.eq(res and res.status, 200, "the other client is answered")
        worst = math.max(worst, (uv.hrtime() - t0) / 1e6)
        probes = probes + 1
        rock.sleep(0.002)
      end
    end)
    local spaces = string.rep(" ", 60000)
    local attacks = {
      { headers = { Authorization = "Bearer Z" .. spaces .. "Z" }, want = 401 },
      { headers = { Authorization = "bearer" .. spaces }, want = 401 },
      { headers = { ["X-Key"] = string.rep("k", 60000) }, want = 401 },
      { headers = { Host = spaces:sub(1, 30000) .. "x", Origin = spaces:sub(1, 30000) .. "y" }, want = 401 },
      -- admitted: the multipart boundary is read from 60 KB of parameter
      { method = "POST", path = PREFIX .. "upload", body = "--x--\r\n", want = 200,
        headers = { Authorization = "Bearer s3cret", ["Content-Type"] = "multipart/form-data; boundary=x" .. spaces .. "y" } },
      { method = "POST", path = PREFIX .. "upload", body = "--x--\r\n", want = 200,
        headers = { Authorization = "Bearer s3cret", ["Content-Type"] = "multipart/form-data;" .. spaces:sub(1, 30000) .. "=" .. spaces:sub(1, 30000) } },
    }
    local rounds = 5
    local c0 = cpu_ms(srv.pid)
    for _ = 1, rounds do
      for i, a in ipairs(attacks) do
        a.timeout = 10 -- quadratic, each costs seconds to minutes: the test fails, it does not hang
        local res, e = call(srv.url, a)
        T.ok(res, "attack " .. i .. " answered: " .. tostring(e))
        T.eq(res.status, a.want, "attack " .. i)
      end
    end
    -- many header fields: refused as the headers come in
    local lines = { "GET / HTTP/1.1", "Host: 127.0.0.1:" .. srv.port, "Connection: close" }
    for _ = 1, 300 do lines[#lines + 1] = "x:b" end
    T.match(T.raw_tcp(srv.port, table.concat(lines, "\r\n") .. "\r\n\r\n"), "^HTTP/1%.1 431 ")
    local used = cpu_ms(srv.pid) - c0
    done = true
    local _, perrs = rock.wait({ probe })
    T.eq(perrs[1], nil, "the other client")
    local n = rounds * #attacks
    print(string.format("   %d requests of 60 KB: %.0f ms of server CPU; the other client: %d answers, worst wait %.1f ms",
      n, used, probes, worst))
    -- linear costs ~0.5 ms a request (ASan ~2 ms); quadratic costs 16 s a request
    T.ok(used < n * 50, string.format("server CPU %.0f ms for %d requests, under 50 ms each", used, n))
    T.ok(worst < 2000, string.format("the other client waited at most %.0f ms (under 2 s)", worst))
    T.ok(probes > 0, "the other client was answered meanwhile")
  end)
  done = true
  srv.stop()
  if not ok then error(err, 0) end
end)

T.done()
