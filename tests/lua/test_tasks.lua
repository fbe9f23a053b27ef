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

-- issue 7 item 1: a deadline that falls while the task is not parked
-- (queued, or running Lua) must still win at its next wait or resume.
local function spin(ms)
  local t0 = uv.hrtime()
  while uv.hrtime() - t0 < ms * 1e6 do end
end

T.test("issue7-1: a deadline that falls while the task is queued holds", function()
  local after = false
  local err = T.raises("timeout", rock.timeout, 0.05, function()
    -- a task that hogs the loop for 150 ms right after we park: when the
    -- loop turns again, our operation (due at 10 ms) completes first and
    -- queues us, then the deadline (50 ms) falls while we sit in the queue
    rock.spawn(spin, 150)
    local v = rock.await(function(done)
      local tm = uv.new_timer()
      tm:start(10, 0, function() tm:close(); done("op done") end)
      return function() if not tm:is_closing() then tm:close() end end
    end)
    after = v
    return "finished"
  end)
  T.match(err.message, "0.05")
  T.eq(after, false, "the task went on past its deadline")
end)

T.test("issue7-1: a deadline that falls while the task runs Lua holds at its next wait", function()
  local reached = {}
  T.raises("timeout", rock.timeout, 0.05, function()
    spin(150) -- past the deadline without waiting
    reached[#reached + 1] = "spun"
    rock.sleep(0) -- the next wait
    reached[#reached + 1] = "slept"
    return "finished"
  end)
  T.eq(#reached, 1, "stopped at the first wait after the deadline")
  -- the same, for a wait that completes at once (a free semaphore, a done task)
  local done_task = rock.spawn(function() return 1 end)
  rock.wait(done_task)
  T.raises("timeout", rock.timeout, 0.05, function()
    spin(150)
    rock.await(function(done) done("at once"); return nil end)
    error("went on past the deadline")
  end)
end)

T.test("issue7-1: a deadline caught inside its scope still holds at the next wait", function()
  local second
  T.raises("timeout", rock.timeout, 0.05, function()
    pcall(rock.sleep, 1) -- the timeout, swallowed by the callee
    second = "reached"
    rock.sleep(0.01)     -- the deadline has passed: raises again
    second = "went on"
  end)
  T.eq(second, "reached")
end)

T.test("issue7-1: nested timeouts each raise their own error", function()
  -- the inner one falls; the outer scope goes on and finishes in time
  local inner_err
  local r = rock.timeout(5, function()
    local ok, e = pcall(rock.timeout, 0.05, function() rock.sleep(5) end)
    T.ok(not ok, "inner timed out")
    inner_err = e
    rock.sleep(0.1) -- past the inner deadline: must not raise
    return "outer done"
  end)
  T.eq(r, "outer done")
  T.match(inner_err.message, "0.05")
  -- the outer one falls while the inner one (longer) runs: the outer's error
  local e = T.raises("timeout", rock.timeout, 0.05, function()
    rock.timeout(5, function() spin(100); rock.sleep(0) end)
  end)
  T.match(e.message, "0.05")
  e = T.raises("timeout", rock.timeout, 0.05, function()
    rock.timeout(5, function() rock.sleep(5) end)
  end)
  T.match(e.message, "0.05")
  -- and a wait after both scopes ended is not affected
  rock.sleep(0.01)
end)

T.test("issue7-18: durations that are NaN, negative or infinite are refused", function()
  for _, bad in ipairs({ 0 / 0, -1, math.huge, -math.huge, 1.8e16, 1e300, "1" }) do
    T.raises("invalid_argument", rock.sleep, bad)
    T.raises("invalid_argument", rock.timeout, bad, function() end)
  end
  T.raises("invalid_argument", rock.timeout, 1, "not a function")
  rock.sleep(0)
  T.eq(rock.timeout(0, function() return "no wait, no timeout" end), "no wait, no timeout")
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
  -- sandbox calls check the rocklet's pid and keep their own connections:
  -- open the unchecked one first, then count
  rock.http.request{ url = "http://rocklet/is_alive", unix_socket = sb.socket, body = "{}" }
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
