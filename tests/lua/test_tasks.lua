-- test_tasks.lua: tasks on the shared loop and the HTTP client.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local uv = rock.uv

T.test("spawn and wait return values and raise errors", function()
  local t = rock.spawn(function(a, b) rock.sleep(0.01); return a + b, "x" end, 2, 3)
  local s, x = rock.wait(t)
  T.eq(s, 5)
  T.eq(x, "x")
  local bad = rock.spawn(function() rock.errors.raise("not_found", "nope") end)
  T.raises("not_found", rock.wait, bad)
  local values, errs = rock.wait({ rock.spawn(function() return 1 end), bad,
    rock.spawn(function() return 3 end) })
  T.eq(values[1], 1)
  T.eq(values[3], 3)
  T.eq(errs[2].code, "not_found")
end)

T.test("sleep runs tasks concurrently", function()
  local t0 = uv.hrtime()
  local ts = {}
  for i = 1, 50 do ts[i] = rock.spawn(function() rock.sleep(0.2); return i end) end
  local values = rock.wait(ts)
  T.eq(#values, 50)
  local s = (uv.hrtime() - t0) / 1e9
  T.ok(s < 0.6, "50 sleeps of 0.2 s overlapped: " .. s)
end)

T.test("semaphore bounds concurrency", function()
  local sem = rock.semaphore(3)
  local inside, peak = 0, 0
  local ts = {}
  for i = 1, 12 do
    ts[i] = rock.spawn(function()
      sem:with(function()
        inside = inside + 1
        peak = math.max(peak, inside)
        rock.sleep(0.01)
        inside = inside - 1
      end)
    end)
  end
  rock.wait(ts)
  T.eq(peak, 3)
  T.eq(inside, 0)
end)

T.test("timeout cancels what the task waits on", function()
  local t0 = uv.hrtime()
  local err = T.raises("timeout", rock.timeout, 0.1, function() rock.sleep(10) end)
  T.ok((uv.hrtime() - t0) / 1e9 < 1, "raised at the deadline")
  T.match(err.message, "timed out")
  T.eq(rock.timeout(1, function() rock.sleep(0.01); return "in time" end), "in time")
end)

T.test("luv handles mix with rock calls on the same loop", function()
  local fired = false
  local timer = uv.new_timer()
  timer:start(10, 0, function() fired = true; timer:close() end)
  rock.sleep(0.05)
  T.ok(fired, "a luv timer fired while the task slept")
end)

T.test("waiting outside a task from a callback is refused", function()
  local got
  local timer = uv.new_timer()
  timer:start(1, 0, function()
    timer:close()
    got = select(2, pcall(rock.sleep, 0.01))
  end)
  rock.sleep(0.05)
  T.ok(rock.errors.is(got, "not_in_task"), "not_in_task: " .. tostring(got))
end)

-- HTTP client against a rocklet: a real server on a unix socket
local sb = rock.sandbox.start{ backend = "local" }

local function rocklet_sockets()
  local r = sb:execute{ command = { "sh", "-c", "ls -l /proc/" .. sb.pid .. "/fd | grep -c socket" } }
  return tonumber(r.stdout)
end

T.test("http: requests, headers, keep-alive reuse", function()
  local before = rocklet_sockets()
  for _ = 1, 20 do
    local r = rock.http.request{ url = "http://rocklet/is_alive", unix_socket = sb.socket,
      method = "POST", body = "{}", headers = { ["X-Test"] = "1" } }
    T.eq(r.status, 200)
    T.eq(r.headers["content-type"], "application/json")
  end
  -- the same kept-alive connection served all 20
  T.eq(rocklet_sockets(), before, "sockets open in the rocklet")
end)

T.test("http: many requests at once", function()
  local ts = {}
  for i = 1, 100 do
    ts[i] = rock.spawn(function()
      return rock.http.request{ url = "http://rocklet/is_alive", unix_socket = sb.socket, body = "{}" }.status
    end)
  end
  local values, errs = rock.wait(ts)
  T.eq(next(errs), nil)
  for i = 1, 100 do T.eq(values[i], 200) end
end)

T.test("http: timeout and connection errors", function()
  sb:create_session{ session = "slow" }
  local t0 = uv.hrtime()
  T.raises("timeout", rock.http.request, { url = "http://rocklet/run_in_session", unix_socket = sb.socket,
    body = rock.json.encode({ session = "slow", command = "sleep 2" }), timeout = 0.2 })
  T.ok((uv.hrtime() - t0) / 1e9 < 1, "timed out at 0.2 s")
  T.raises("connection_failed", rock.http.request, { url = "http://rocklet/", unix_socket = "/nonexistent.sock" })
  T.raises("invalid_argument", rock.http.request, {})
  sb:close_session{ session = "slow" }
end)

T.test("http: a cancelled request does not resume the task later", function()
  T.raises("timeout", rock.timeout, 0.1, rock.http.request, {
    url = "http://rocklet/execute", unix_socket = sb.socket, body = '{"command":"sleep 0.5"}' })
  rock.sleep(0.7) -- the answer arrives into nothing
  T.eq(rock.http.request{ url = "http://rocklet/is_alive", unix_socket = sb.socket, body = "{}" }.status, 200)
end)

sb:stop()
T.done()
