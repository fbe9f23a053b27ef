-- test_http_client_hostile.lua: attacks on c/http/plain.c (rock's plain
-- HTTP/1.1 client for its own peers: unix sockets, numeric addresses).
-- Servers here are raw luv sockets in this process (or a python3 child)
-- that misbehave on purpose: connections that die while idle, answers
-- before the body is read, answers one byte per read, huge or contradictory
-- headers, a 1xx and then nothing, cancels at every stage, backlogs that
-- overflow, connections dropped at random, a socket path taken over by
-- another process. Each case says what a caller (rocklet.lua, engine.lua,
-- llm.lua) must see: one answer per request, never two, never a hang.
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local rock = require "rock"
local uv = rock.uv

local tmp = assert(os.getenv("ROCK_HOME"))
local nsock = 0
local function sock_path()
  nsock = nsock + 1
  return tmp .. "/h" .. nsock .. ".sock"
end

local raw = dofile(arg[0]:match("(.*/)") .. "raw_http.lua")
local server, ok_answer, get = raw.server, raw.ok_answer, raw.get


-- Answer each request after `delay` seconds (so requests overlap and each
-- takes its own connection).
local function later(delay, bytes)
  return function(_, c)
    rock.spawn(function()
      rock.sleep(delay)
      if not c:is_closing() then c:write(bytes) end
    end)
  end
end

T.test("two idle connections both dead: the request is sent again on a new one, answered once", function()
  for _, unix in ipairs({ true, false }) do
    local st = server(later(0.02, ok_answer("ok")), { path = unix and sock_path() or nil })
    local a = rock.spawn(get, st)
    local b = rock.spawn(get, st)
    local res, errs = rock.wait({ a, b })
    T.eq(next(errs), nil)
    T.eq(res[1].body, "ok")
    T.eq(st.conns, 2, "two connections kept alive")
    st.drop() -- both die in this very turn: the client has not seen it yet
    local r = get(st, { timeout = 10 })
    T.eq(r.body, "ok")
    T.eq(st.reqs, 3, "sent once more, not lost")
    st.close()
  end
end)

T.test("a server that answers before reading the body (a 20 MB POST) gets its answer seen", function()
  local big = string.rep("x", 20 * 1024 * 1024)
  for _, unix in ipairs({ true, false }) do
    local st = server(function(_, c)
      c:write("HTTP/1.1 413 Payload Too Large\r\nContent-Length: 8\r\nConnection: close\r\n\r\ntoo much",
        function() c:shutdown() end)
    end, { path = unix and sock_path() or nil, early = true })
    local ok, r = pcall(get, st, { method = "POST", body = big, timeout = 20 })
    if ok then
      T.eq(r.status, 413)
      T.eq(r.body, "too much")
    else -- the kernel may drop the answer with the connection (TCP RST): an error, never a hang
      T.ok(rock.errors.is(r) and (r.code == "http_error"), "an http_error: " .. tostring(r))
    end
    T.eq(st.reqs, 1, "not sent again")
    T.eq(get(st, { timeout = 10 }).status, 413, "the next request works")
    st.close()
  end
end)

T.test("an answer one byte per read (status, headers, chunked body) parses the same", function()
  local answer = "HTTP/1.1 200 OK\r\nX-A: 1\r\nTransfer-Encoding: chunked\r\n\r\n" ..
    "3\r\nabc\r\n1;ext=1\r\nd\r\n0\r\nX-Trailer: t\r\n\r\n"
  local st = server(function(_, c)
    rock.spawn(function()
      for i = 1, #answer do
        if c:is_closing() then return end
        c:write(answer:sub(i, i))
        rock.sleep(0.001)
      end
    end)
  end, { path = sock_path() })
  for _ = 1, 2 do
    local r = get(st, { timeout = 20 })
    T.eq(r.status, 200)
    T.eq(r.body, "abcd")
    T.eq(r.headers["x-a"], "1")
  end
  T.eq(st.conns, 1, "kept alive across byte-by-byte answers")
  st.close()
end)

T.test("a status line without a reason: headers still parsed, status kept", function()
  local st = server(function(_, c)
    c:write("HTTP/1.1 100\r\nX-Interim: yes\r\n\r\nHTTP/1.1 200\r\nX-Final: yes\r\nContent-Length: 2\r\n\r\nok")
  end)
  local r = get(st)
  T.eq(r.status, 200)
  T.eq(r.body, "ok")
  T.eq(r.headers["x-final"], "yes")
  T.eq(r.headers["x-interim"], nil, "only the last answer's headers")
  st.close()
end)

T.test("huge headers, Content-Length with chunked, 1xx then close: an error or an answer, never a hang", function()
  local huge = "HTTP/1.1 200 OK\r\nX-Big: " .. string.rep("h", 200 * 1024) .. "\r\nContent-Length: 1\r\n\r\nz"
  local st = server(function(req, c)
    if req:find("^GET /huge") then c:write(huge)
    elseif req:find("^GET /both") then
      c:write("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n")
    elseif req:find("^GET /interim") then
      c:write("HTTP/1.1 100 Continue\r\n\r\n", function() c:close() end)
    else c:write(ok_answer("fine")) end
  end)
  local ok, r = pcall(get, st, { path = "/huge", timeout = 10 })
  T.ok(ok and r.body == "z" or rock.errors.is(r) and r.code == "http_error", "huge: " .. tostring(r))
  ok, r = pcall(get, st, { path = "/both", timeout = 10 })
  T.ok(ok and r.body == "ab" or rock.errors.is(r) and r.code == "http_error", "both: " .. tostring(r))
  local e = T.raises("http_error", get, st, { path = "/interim", timeout = 10 })
  T.match(e.message, "closed before the response ended")
  T.eq(get(st, { timeout = 10 }).body, "fine")
  st.close()
end)

T.test("cancel while connecting, writing 20 MB, reading: nothing delivered late, next request clean", function()
  local big = string.rep("y", 20 * 1024 * 1024)
  -- a server that reads nothing: the 20 MB write stalls
  local path = sock_path()
  local st = server(function() end, { path = path, early = true })
  T.raises("timeout", rock.timeout, 0.2, get, st, { method = "POST", body = big })
  st.close()
  -- a listener that never accepts: the connect is made by the kernel (backlog)
  -- but nothing answers; a cancel then
  local st2 = server(function() end, { path = sock_path(), no_accept = true, backlog = 1 })
  T.raises("timeout", rock.timeout, 0.1, get, st2)
  st2.close()
  -- reading: half an answer, then cancelled
  local n = 0
  local st3 = server(function(_, c)
    n = n + 1
    if n == 1 then c:write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf") return end
    c:write(ok_answer("whole"))
  end, { path = sock_path() })
  T.raises("timeout", rock.timeout, 0.1, get, st3)
  T.eq(get(st3, { timeout = 10 }).body, "whole")
  T.eq(st3.conns, 2, "the half-read connection was not reused")
  st3.close()
  T.eq(rock.core.http_local_pending(), 0, "no request left counted as under way")
end)

T.test("hundreds of requests at once on a small backlog: answers or EAGAIN, nothing else", function()
  local st = server(function(_, c) c:write(ok_answer("b")) end, { path = sock_path(), backlog = 1 })
  local tasks = {}
  for i = 1, 300 do
    tasks[i] = rock.spawn(function()
      local ok, r = pcall(get, st, { timeout = 20 })
      if ok then return "ok" end
      if rock.errors.is(r) and r.code == "connection_failed" and r.errno == "EAGAIN" then return "busy" end
      return "other: " .. tostring(r) .. " errno=" .. tostring(r.errno)
    end)
  end
  local res, errs = rock.wait(tasks)
  T.eq(next(errs), nil)
  local count = {}
  for i = 1, 300 do
    T.ok(res[i] == "ok" or res[i] == "busy", res[i])
    count[res[i]] = (count[res[i]] or 0) + 1
  end
  T.eq(st.reqs, count.ok, "each answered request was sent once")
  T.eq(rock.core.http_local_pending(), 0)
  st.close()
end)

T.test("a server dropping idle connections at random: every request answered exactly once", function()
  math.randomseed(7)
  for _, unix in ipairs({ true, false }) do
    local st = server(function(_, c, st)
      c:write(ok_answer("r" .. st.reqs))
      if math.random() < 0.5 then c:close() end
    end, { path = unix and sock_path() or nil })
    local tasks = {}
    for i = 1, 40 do
      tasks[i] = rock.spawn(function()
        local got = {}
        for _ = 1, 10 do
          got[#got + 1] = get(st, { timeout = 10 }).body
          if math.random() < 0.3 then st.drop_idle() end
          if math.random() < 0.3 then rock.sleep(0) end
        end
        return got
      end)
    end
    local res, errs = rock.wait(tasks)
    local _, e1 = next(errs)
    T.eq(e1, nil, "no request failed")
    local seen = {}
    for i = 1, 40 do
      for _, b in ipairs(res[i]) do
        T.eq(seen[b], nil, "answer " .. b .. " delivered once")
        seen[b] = true
      end
    end
    T.eq(st.reqs, 400, "400 requests, each sent once")
    st.close()
  end
end)

T.test("a socket path taken over by another process: peer_pid refuses it, and after", function()
  local path = sock_path()
  local me = rock.core.getpid and rock.core.getpid() or uv.os_getpid()
  local st = server(function(_, c) c:write(ok_answer("mine")) end, { path = path })
  T.eq(get(st, { peer_pid = me }).body, "mine")
  st.close()
  -- another process serves the same path now
  local py = io.popen("exec python3 -c '\
import socket, sys, os\
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)\
print(os.getpid(), flush=True)\
while True:\
    c, _ = s.accept()\
    try:\
        c.recv(65536)\
        c.sendall(b\"HTTP/1.1 200 OK\\r\\nContent-Length: 5\\r\\n\\r\\nother\")\
    except OSError:\
        pass\
    c.close()\
' " .. path, "r")
  local other = tonumber(py:read("l"))
  T.ok(other and other > 0, "python server up")
  local ok, err = pcall(function()
    local e = T.raises("connection_failed", get, st, { peer_pid = me })
    T.eq(e.peer_pid, other, "the process found is named")
    T.eq(get(st, { peer_pid = other }).body, "other")
    T.eq(get(st).body, "other")
  end)
  os.execute("kill " .. other)
  py:close()
  os.remove(path)
  if not ok then error(err, 0) end
end)

T.test("localhost is ::1 too, as with curl: a server bound to ::1 only answers", function()
  local s = uv.new_tcp()
  assert(s:bind("::1", 0))
  local port = s:getsockname().port
  local conns = {}
  assert(s:listen(16, function()
    local c = uv.new_tcp()
    s:accept(c)
    conns[#conns + 1] = c
    c:read_start(function(_, d)
      if not d then c:close() return end
      if d:find("\r\n\r\n") then c:write(ok_answer("v6")) end
    end)
  end))
  for _ = 1, 3 do
    T.eq(rock.http.request{ url = "http://localhost:" .. port .. "/", timeout = 10 }.body, "v6")
  end
  s:close()
  for _, c in ipairs(conns) do if not c:is_closing() then c:close() end end
  -- nobody on either: connection_failed, its errno
  local e = T.raises("connection_failed", rock.http.request, { url = "http://localhost:" .. port .. "/", timeout = 10 })
  T.eq(e.errno, "ECONNREFUSED")
end)

T.test("a unix socket path too long for sun_path is refused, never cut to another socket", function()
  local dir = tmp .. "/" .. string.rep("d", 100)
  assert(uv.fs_mkdir(dir, 448))
  local path = dir .. "/rocklet.sock" -- past the 107 bytes sun_path holds
  local st = server(function(_, c) c:write(ok_answer("wrong socket")) end, { path = path:sub(1, 107) })
  local ok, r = pcall(get, { url = "http://peer", path = path }, { timeout = 5 })
  T.ok(not ok, "not answered by the socket at the cut path: " .. tostring(ok and r.body))
  T.ok(rock.errors.is(r) and r.code == "http_error", tostring(r))
  T.match(r.message, "too long")
  T.eq(st.reqs, 0)
  st.close()
  os.remove(path:sub(1, 107))
  assert(uv.fs_rmdir(dir))
end)

T.test("a TCP connect refused at once (broadcast address: no packet leaves) carries its errno", function()
  local e = T.raises("connection_failed", rock.http.request, { url = "http://255.255.255.255:9/", timeout = 5 })
  T.ok(e.errno == "ENETUNREACH" or e.errno == "EACCES", "errno: " .. tostring(e.errno))
  T.match(e.message, "Failed to connect")
  T.eq(rock.core.http_local_pending(), 0)
end)

T.done()
