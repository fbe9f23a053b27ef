-- test_http_serve_hostile.lua: attacks on rock.http.serve's request
-- workers (lua/rock/http_server.lua over rock.task's idle/hand): answers
-- given twice or never, a cancel meant for one request hitting the next
-- on the same worker, workers left parked (the process would not exit),
-- pipelining with waiting and non-waiting handlers, stops from inside a
-- handler or with requests in flight, handlers that fail oddly, and the
-- buffered request lines of `rock serve` at exit and on SIGTERM.
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local rock = require "rock"
local uv = rock.uv
local task = require "rock.task"

local raw = T.raw_tcp

local function bodies(text)
  local out, pos = {}, 1
  while true do
    local e = text:find("\r\n\r\n", pos, true)
    if not e then break end
    local len = tonumber(text:sub(pos, e):match("Content%-Length: (%d+)"))
    out[#out + 1] = text:sub(e + 4, e + 3 + len)
    pos = e + 4 + len
  end
  return out
end

local function get(srv, path)
  return rock.http.request{ url = srv.url .. path, timeout = 20 }
end

local live0 -- tasks alive before each test

-- every server here: after it stops, no worker task is left
local function stopped_clean(srv, what)
  srv:stop{ timeout = 1 }
  rock.sleep(0.01) -- idle workers end at once; a cancelled one on the next turn
  T.eq(task.live(), live0, (what or "") .. ": no worker task left after stop")
end

-- the host's gc pass runs beside the main task: let it end first, so the
-- count of live tasks below is ours (slow under valgrind)
for _ = 1, 1000 do
  if task.live() <= 1 then break end
  rock.sleep(0.01)
end

local test = T.test
function T.test(name, fn)
  rock.sleep(0.01)
  live0 = task.live()
  return test(name, fn)
end

T.test("a cancel for a gone client never reaches the next request of that worker", function()
  local log = {}
  local srv
  srv = rock.http.serve{ port = 0, handler = function(req)
    if req.path == "/shielded" then
      -- the client goes while the handler is in a shield: the cancel is
      -- only marked; the handler then returns without waiting again
      task.shield(function() rock.sleep(0.05) end)
      log[#log + 1] = "shielded done"
      return { body = "late" }
    end
    local ok, err = pcall(rock.sleep, 0.02)
    log[#log + 1] = req.path .. " " .. (ok and "slept" or err.code)
    return { body = ok and "ok" or "cancelled" }
  end }
  -- single worker reuse: the shielded one is the only worker in the pool after
  T.eq(raw(srv.port, "GET /shielded HTTP/1.1\r\n\r\n", true), "")
  while log[1] ~= "shielded done" do rock.sleep(0.005) end
  -- the next request lands on the same (idle) worker; it must sleep normally
  T.eq(get(srv, "/next").body, "ok")
  T.eq(log[2], "/next slept")
  stopped_clean(srv, "shield")
end)

T.test("a rock.timeout that fell in one request does not fire in the next", function()
  local srv = rock.http.serve{ port = 0, handler = function(req)
    if req.path == "/expire" then
      -- the deadline falls while the handler runs Lua: it is only marked
      local ok, err = pcall(rock.timeout, 0.001, function()
        local t0 = uv.hrtime()
        while uv.hrtime() - t0 < 5e6 do end
        return "spun"
      end)
      return { body = tostring(ok) .. " " .. tostring(err) }
    end
    local ok, err = pcall(rock.sleep, 0.01)
    return { body = ok and "slept" or tostring(err) }
  end }
  get(srv, "/expire")
  T.eq(get(srv, "/after").body, "slept")
  stopped_clean(srv, "timeout")
end)

T.test("pipelined requests, waiting and not, are answered once each and in order", function()
  local srv = rock.http.serve{ port = 0, handler = function(req)
    if req.query.wait then rock.sleep(tonumber(req.query.wait)) end
    return { body = req.query.n }
  end }
  local parts, want = {}, {}
  for i = 1, 12 do
    local q = (i % 3 == 0) and ("?wait=0.01&n=" .. i) or (i % 3 == 1 and "?n=" .. i or "?wait=0&n=" .. i)
    parts[#parts + 1] = "GET /p" .. q .. " HTTP/1.1\r\nHost: x\r\n\r\n"
    want[#want + 1] = tostring(i)
  end
  parts[#parts + 1] = "GET /p?n=last HTTP/1.1\r\nConnection: close\r\n\r\n"
  want[#want + 1] = "last"
  local text = raw(srv.port, table.concat(parts))
  local got = bodies(text)
  T.eq(table.concat(got, ","), table.concat(want, ","))
  local _, n = text:gsub("HTTP/1%.1 200", "")
  T.eq(n, #want, "one answer per request")
  stopped_clean(srv, "pipelined")
end)

T.test("handlers that fail oddly are answered 500 at once, and the worker goes on", function()
  local bad_tostring = setmetatable({}, { __tostring = function() error("tostring broke") end })
  local srv = rock.http.serve{ port = 0, handler = function(req)
    if req.path == "/nil-error" then error(nil) end
    if req.path == "/bad-tostring" then error(bad_tostring) end
    if req.path == "/bad-message" then error({ message = bad_tostring }) end
    if req.path == "/nothing" then return end
    if req.path == "/status" then return { status = 1e300 } end
    return { body = "fine" }
  end }
  for _, p in ipairs{ "/nil-error", "/bad-tostring", "/bad-message", "/nothing", "/status" } do
    -- an answer that never comes fails the test (not a hang)
    local ok, text = pcall(rock.timeout, 10, raw, srv.port, "GET " .. p .. " HTTP/1.1\r\n\r\n", false, 1)
    T.ok(ok, p .. " answered: " .. tostring(text))
    T.eq(tonumber(text:match("^HTTP/1%.1 (%d+)")), 500, p)
    T.eq(get(srv, "/ok").body, "fine", "after " .. p)
  end
  stopped_clean(srv, "odd failures")
end)

T.test("a handler that yields directly is resumed, answered, and the server stops", function()
  local srv = rock.http.serve{ port = 0, handler = function(req)
    if req.path == "/yield" then coroutine.yield("odd") end
    return { body = "yielded" }
  end }
  -- the first request starts a new worker, the second is handed one
  for _ = 1, 2 do
    local ok, text = pcall(rock.timeout, 10, raw, srv.port,
      "GET /yield HTTP/1.1\r\nConnection: close\r\n\r\n")
    T.ok(ok, "answered: " .. tostring(text))
    T.match(text, "\r\n\r\nyielded$")
  end
  local stopper = rock.spawn(function() srv:stop{ timeout = 0.05 } end)
  T.ok(pcall(rock.timeout, 10, rock.wait, stopper), "the stop returns")
  rock.sleep(0.01)
  T.eq(task.live(), live0, "no worker task left")
end)

T.test("a handler that stops its own server is answered and the server stops", function()
  local srv
  local stopped_in = nil
  srv = rock.http.serve{ port = 0, handler = function(req)
    if req.path == "/stop" then
      local t0 = uv.hrtime()
      srv:stop()
      stopped_in = (uv.hrtime() - t0) / 1e9
      return { body = "stopping" }
    end
    return { body = "x" }
  end }
  -- the first request makes a worker; the stop comes on the second, handed
  -- to that worker from the pool
  T.eq(get(srv, "/x").body, "x")
  local r = raw(srv.port, "GET /stop HTTP/1.1\r\n\r\n")
  srv:wait()
  -- waiting for its own request, the stop used to end by its 30 s timeout
  T.ok(stopped_in and stopped_in < 10, "srv:stop from its own handler does not wait for itself (" ..
    tostring(stopped_in) .. " s)")
  T.match(r, "^HTTP/1%.1 200")
  T.eq(r:match("\r\n\r\n(.*)$"), "stopping", "the stopping request is answered")
  rock.sleep(0.01)
  T.eq(task.live(), live0, "no worker task left")
end)

T.test("hundreds of slow and fast requests at once, then a stop with some in flight", function()
  local srv = rock.http.serve{ port = 0, handler = function(req)
    local n = tonumber(req.query.n)
    if n % 2 == 0 then rock.sleep(0.001 * (n % 7)) end
    if req.query.hang then rock.sleep(60) end
    return { body = tostring(n * 2) }
  end }
  local ts = {}
  for i = 1, 300 do ts[i] = rock.spawn(get, srv, "/x?n=" .. i) end
  local values, errs = rock.wait(ts)
  for i = 1, 300 do
    T.ok(errs[i] == nil, "request " .. i .. ": " .. tostring(errs[i]))
    T.eq(values[i].body, tostring(i * 2))
  end
  -- now 20 that hang and 20 that do not, then a stop that times out
  local hang = {}
  for i = 1, 20 do hang[i] = rock.spawn(get, srv, "/x?hang=1&n=" .. i) end
  while srv:stats().tasks < 20 do rock.sleep(0.001) end
  for i = 1, 20 do T.eq(get(srv, "/x?n=" .. (2 * i + 1)).body, tostring(4 * i + 2)) end
  srv:stop{ timeout = 0.05 }
  local _, herrs = rock.wait(hang)
  for i = 1, 20 do T.ok(herrs[i] ~= nil, "a hung request is not answered 200 after the stop") end
  rock.sleep(0.01)
  T.eq(task.live(), live0, "no worker task left")
end)

T.test("rock.task.hand refuses tasks that are not idle, and works from a task", function()
  local t = rock.spawn(function() rock.sleep(0.01) end)
  T.eq(task.hand(t, 1), nil, "not idle (queued)")
  rock.wait(t)
  T.eq(task.hand(t, 1), nil, "dead")
  local got = {}
  local w = rock.spawn(function()
    while true do
      local job = task.idle()
      if job == nil then return "ended" end
      if job == "wait" then rock.sleep(0.001) end
      got[#got + 1] = job
    end
  end)
  rock.sleep(0.001)
  T.eq(task.hand(w, "a"), true, "a job without a wait: idle again")
  T.eq(got[1], "a")
  T.eq(task.hand(w, "wait"), false, "a job that waits")
  T.eq(task.hand(w, "b"), nil, "not idle while it waits")
  while not got[2] do rock.sleep(0.001) end
  T.eq(got[2], "wait")
  task.cancel(w, rock.errors.new("cancelled", "for nothing")) -- idle: dropped at the next hand
  T.eq(task.hand(w, "c"), true)
  T.eq(got[3], "c")
  T.eq(task.hand(w, nil), true, "ended: done")
  T.ok(w.done and w.ok)
  T.eq(task.hand(w, "d"), nil, "dead")
end)

--- Run `rock serve --port 0` with ROCK_LOG unset; send n requests (each
--- logs a buffered info line), then the signals (1 or 2 SIGTERMs); returns
--- its stderr and exit code.
local function serve_then_term(n, signals)
  local exe = uv.exepath()
  local out, err = uv.new_pipe(), uv.new_pipe()
  local chunks, echunks = {}, {}
  local code, eof_out, eof_err
  local env = {}
  for _, k in ipairs{ "PATH", "HOME", "ROCK_HOME", "ROCK_TEST_TAG", "TMPDIR" } do
    if os.getenv(k) then env[#env + 1] = k .. "=" .. os.getenv(k) end
  end
  local proc, pid
  local finished = rock.await(function(done)
    local function maybe() if code and eof_out and eof_err then done(true) end end
    proc, pid = uv.spawn(exe, { args = { "serve", "--port", "0", "--backend", "local" },
      stdio = { nil, out, err }, env = env }, function(c) code = c; maybe() end)
    assert(proc, "cannot start rock serve")
    out:read_start(function(_, d) if d then chunks[#chunks + 1] = d else eof_out = true; maybe() end end)
    err:read_start(function(_, d) if d then echunks[#echunks + 1] = d else eof_err = true; maybe() end end)
    rock.spawn(function()
      local url
      while not url do
        rock.sleep(0.005)
        url = table.concat(chunks):match("listening on (http://[%d.:]+)")
        if code then return end
      end
      for i = 1, n do rock.http.request{ url = url .. "/line" .. i, timeout = 20 } end
      for _ = 1, signals do uv.kill(pid, "sigterm") end
    end)
    return nil
  end)
  out:close(); err:close(); proc:close()
  return finished and table.concat(echunks), code
end

T.test("rock serve: no request line lost or out of order at SIGTERM, before the warn line", function()
  for _, signals in ipairs{ 1, 2 } do
    local text, code = serve_then_term(300, signals)
    T.eq(code, 143, "exit status after SIGTERM")
    local last, count, order_ok = 0, 0, true
    local warn_at = text:find("rock warn host: SIGTERM", 1, true)
    T.ok(warn_at, "the SIGTERM line is there: " .. text:sub(1, 300))
    for pos, i in text:gmatch("()rock info serve: GET /line(%d+) ") do
      i = tonumber(i)
      if i ~= last + 1 then order_ok = false end
      T.ok(pos < warn_at, "request line " .. i .. " comes before the warn line")
      last, count = i, count + 1
    end
    T.eq(count, 300, signals .. " SIGTERM(s): every request line is there")
    T.ok(order_ok, "request lines in order")
  end
end)

T.done()
