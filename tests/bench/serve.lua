-- serve.lua: the cost of the HTTP hop (tests/bench/serve).
--   rock serve.lua N ROUNDS TCP_FLOOR_EXE -> a report on stdout
-- `rock serve` runs as its own process on a loopback port with rock's
-- defaults, as a user's server does; the client is this process's
-- rock.http (keep-alive; plain HTTP/1.1, c/http/plain.c), as ROCK's SDK
-- would be another process. In-process is the same run_in_session on a
-- sandbox of this process, without the hop. Both poll before blocking only
-- while a rocklet call is under way (lua/rock/task.lua). The floor part
-- times GET / (a constant answer) the same way, and runs tcp_floor.c.
local rock = require "rock"
local json = rock.json
local hr = rock.uv.hrtime
local n, rounds = tonumber(arg[1]) or 2000, tonumber(arg[2]) or 3
local tcp_floor = assert(arg[3], "serve.lua N ROUNDS TCP_FLOOR_EXE")

local function pct(xs, p)
  local s = {}
  for i, v in ipairs(xs) do s[i] = v end
  table.sort(s)
  return s[math.max(1, math.ceil(#s * p))]
end

local exe = io.popen("readlink /proc/" .. rock.core.getpid() .. "/exe"):read("l")
local home = os.getenv("ROCK_HOME") .. "-serve"
local log = home .. ".log"
local server = io.popen(string.format("ROCK_HOME=%s %s serve --port 0 --backend local " ..
  "--budget-cpu 64 --budget-memory-gb 1024 >%s 2>&1 & echo $!", home, exe, log)):read("l") -- two 2-CPU sandboxes on any host
local url
for _ = 1, 200 do
  local f = io.open(log)
  url = f and f:read("a"):match("listening on (http://[%d%.:]+)")
  if f then f:close() end
  if url then break end
  rock.sleep(0.05)
end
assert(url, "rock serve did not start")
local B = url .. "/apis/envs/sandbox/v1/"
local H = { ["Content-Type"] = "application/json" }
local function post(name, body)
  local res = rock.http.request{ url = B .. name, method = "POST", body = json.encode(body), headers = H, timeout = 60 }
  local env = json.decode(res.body)
  assert(env.status == "Success", res.body)
  return env.result
end

local id = post("start_async", { image = "local" }).sandbox_id
while not (rock.http.request{ url = B .. "get_status?sandbox_id=" .. id, headers = H }.body):find('"is_alive":true') do
  rock.sleep(0.05)
end
post("create_session", { sandbox_id = id, session = "b" })
local sb = rock.sandbox.start{ backend = "local" }
sb:create_session{ session = "direct" }
local body = { sandbox_id = id, session = "b", command = "true", check = "ignore" }

print(string.format("run_in_session(\"true\"): %d calls per round, %d rounds (local backend)", n, rounds))
local med_direct, med_http = {}, {}
for r = 1, rounds do
  local d, h = {}, {}
  for i = 1, n do
    local t0 = hr()
    sb:run_in_session{ session = "direct", command = "true" }
    d[i] = (hr() - t0) / 1e3
    t0 = hr()
    post("run_in_session", body)
    h[i] = (hr() - t0) / 1e3
  end
  med_direct[r], med_http[r] = pct(d, 0.5), pct(h, 0.5)
  print(string.format("  round %d: in-process p50 %7.1f us p95 %7.1f   through rock serve p50 %7.1f us p95 %7.1f   hop p50 %6.1f us",
    r, pct(d, 0.5), pct(d, 0.95), pct(h, 0.5), pct(h, 0.95), pct(h, 0.5) - pct(d, 0.5)))
end
table.sort(med_direct); table.sort(med_http)
local mid = (rounds + 1) // 2
print(string.format("  median: the HTTP hop adds %.1f us per call at p50 (target < 100 us)", med_http[mid] - med_direct[mid]))

-- The hop's floor: the same interleaving with a constant answer (GET /:
-- no body to decode, no sandbox, ROCK's hello encoded once), and the
-- kernel's own TCP round trip between two C processes.
print("what a hop costs at the least here:")
local med_const, med_tcp = {}, {}
for r = 1, rounds do
  local c = {}
  for i = 1, n do
    sb:run_in_session{ session = "direct", command = "true" }
    local t0 = hr()
    local res = rock.http.request{ url = url .. "/", headers = H }
    c[i] = (hr() - t0) / 1e3
    assert(res.status == 200)
  end
  med_const[r] = pct(c, 0.5)
  med_tcp[r] = tonumber(io.popen(tcp_floor .. " " .. n):read("l"))
  print(string.format("  round %d: GET / through rock serve p50 %7.1f us   two C processes on loopback TCP p50 %6.1f us",
    r, med_const[r], med_tcp[r]))
end
table.sort(med_const); table.sort(med_tcp)
print(string.format("  median: a constant answer through rock serve %.1f us, the C floor %.1f us", med_const[mid], med_tcp[mid]))

print("requests per second (is_alive through rock serve; each client its own keep-alive connection):")
for _, c in ipairs({ 1, 8, 32 }) do
  local per = math.max(50, n // c)
  local t0 = hr()
  local tasks = {}
  for k = 1, c do
    tasks[k] = rock.spawn(function()
      for _ = 1, per do
        local res = rock.http.request{ url = B .. "is_alive?sandbox_id=" .. id, headers = H, timeout = 60 }
        assert(res.status == 200)
      end
    end)
  end
  local _, errs = rock.wait(tasks)
  assert(next(errs) == nil, "a client failed")
  local secs = (hr() - t0) / 1e9
  print(string.format("  %2d clients: %6d requests in %5.2f s: %8.0f req/s", c, c * per, secs, c * per / secs))
end
-- A big upload must not stall the other clients: a 30 MB file through
-- base_url (multipart, parsed by rock serve), while another process asks
-- is_alive every millisecond; its worst wait is what the upload cost them.
print("a 30 MB upload through rock serve, is_alive from another process meanwhile:")
local remote = rock.sandbox.start{ base_url = url, image = "local" }
local big = home .. "-up.bin"
os.execute("head -c 30000000 /dev/urandom > " .. big)
local prober = io.popen(string.format([[%s -e 'local rock = require "rock"
local worst, n, stop = 0, 0, rock.uv.hrtime() + 1.5e9
while rock.uv.hrtime() < stop do
  local t0 = rock.uv.hrtime()
  rock.http.request{ url = "%sis_alive?sandbox_id=%s" }
  worst, n = math.max(worst, (rock.uv.hrtime() - t0) / 1e6), n + 1
  rock.sleep(0.001)
end
print(string.format("%%d is_alive calls, the worst took %%.1f ms", n, worst))']], exe, B, id))
rock.sleep(0.3)
for r = 1, 2 do
  local t0 = hr()
  remote:upload{ path = "/tmp/rock-bench-up-" .. remote.id .. ".bin", file = big }
  print(string.format("  upload %d: %.0f ms", r, (hr() - t0) / 1e6))
end
print("  meanwhile: " .. prober:read("a"):gsub("%s+$", ""))
prober:close()
remote:execute{ command = { "rm", "-f", "/tmp/rock-bench-up-" .. remote.id .. ".bin" } }
remote:stop()
os.remove(big)

sb:stop()
post("stop", { sandbox_id = id })
os.execute("kill -TERM " .. server .. "; while kill -0 " .. server .. " 2>/dev/null; do sleep 0.05; done; rm -rf " .. home .. " " .. log)
