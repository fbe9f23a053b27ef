-- test_http_client.lua: rock.http.request against servers that misbehave
-- on purpose (c/http/plain.c carries these: numeric hosts, unix sockets).
-- Each server here is a raw luv socket in this process answering with the
-- exact bytes a case needs: keep-alive and its limits, a server that drops
-- idle connections, chunked and EOF-delimited bodies, HEAD, interim 1xx,
-- timeouts, cancels, a drop mid-answer, a malformed answer, big and
-- non-UTF-8 bodies, many requests at once, a socket with nobody behind it.
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local rock = require "rock"
local uv = rock.uv

local tmp = assert(os.getenv("ROCK_HOME"))

local raw = dofile(arg[0]:match("(.*/)") .. "raw_http.lua")
local ok_answer, get = raw.ok_answer, raw.get

-- A server whose answer(req_text, conn, st) returns the bytes to send (or
-- nil: say nothing) and whether to close the connection after them.
local function server(answer, path)
  return raw.server(function(req, c, st)
    local out, close = answer(req, c, st)
    if out then c:write(out) end
    if close then
      st.clients[c] = nil
      c:close()
    end
  end, { path = path })
end

T.test("keep-alive: many requests, one connection; the request's bytes are HTTP/1.1", function()
  local seen
  local st = server(function(req) seen = req; return ok_answer("hi") end)
  for _ = 1, 50 do T.eq(get(st).body, "hi") end
  T.eq(st.conns, 1, "one connection")
  T.eq(st.reqs, 50)
  T.match(seen, "^GET / HTTP/1%.1\r\n")
  T.match(seen, "\r\nHost: 127%.0%.0%.1:%d+\r\n")
  local r = rock.http.request{ url = st.url .. "/p?q=1#frag", method = "POST", body = "abc",
    headers = { ["X-One"] = "1", "X-Two: 2" } }
  T.eq(r.status, 200)
  T.match(seen, "^POST /p%?q=1 HTTP/1%.1\r\n")
  T.match(seen, "X%-One: 1\r\n")
  T.match(seen, "X%-Two: 2\r\n")
  T.match(seen, "Content%-Length: 3\r\n\r\nabc$")
  st.close()
end)

T.test("a server that closes every idle connection: each request still succeeds", function()
  local st = server(function() return ok_answer("x"), true end) -- closes without saying so
  for _ = 1, 20 do T.eq(get(st).body, "x") end
  T.eq(st.reqs, 20, "each request was answered once: none lost, none sent twice")
  st.close()
end)

T.test("Connection: close is honoured; HTTP/1.0 too", function()
  local st = server(function(req)
    if req:find("^GET /old") then return "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\no" end
    return ok_answer("c", "Connection: close\r\n")
  end)
  T.eq(get(st).body, "c")
  T.eq(get(st).body, "c")
  T.eq(get(st, { path = "/old" }).body, "o")
  T.eq(get(st, { path = "/old" }).body, "o")
  T.eq(st.conns, 4)
  st.close()
end)

T.test("chunked, EOF-delimited, empty and HEAD answers; headers lowercased", function()
  local st = server(function(req)
    if req:find("^GET /chunked") then
      return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Multi: a\r\n\r\n3\r\nabc\r\n5\r\ndefgh\r\n0\r\n\r\n"
    elseif req:find("^GET /eof") then
      return "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end", true
    elseif req:find("^HEAD") then
      return "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nX-Head: yes\r\n\r\n"
    elseif req:find("^GET /empty") then
      return "HTTP/1.1 204 No Content\r\n\r\n"
    end
    return ok_answer("plain")
  end)
  local r = get(st, { path = "/chunked" })
  T.eq(r.body, "abcdefgh")
  T.eq(r.headers["x-multi"], "a")
  T.eq(get(st, { path = "/eof" }).body, "until the end")
  r = get(st, { method = "HEAD" })
  T.eq(r.body, "")
  T.eq(r.headers["content-length"], "1234")
  T.eq(r.headers["x-head"], "yes")
  r = get(st, { path = "/empty" })
  T.eq(r.status, 204)
  T.eq(r.body, "")
  T.eq(get(st).body, "plain", "the connection is still good after HEAD and 204")
  st.close()
end)

T.test("an interim 100 Continue, then the answer", function()
  local st = server(function()
    return "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"
  end)
  local r = get(st, { method = "POST", body = "b" })
  T.eq(r.status, 201)
  T.eq(r.body, "ok")
  st.close()
end)

T.test("a 101 is the answer; its connection is not reused", function()
  local st = server(function(req)
    if req:find("^GET /up") then return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n" end
    return ok_answer("after")
  end)
  T.eq(get(st, { path = "/up", timeout = 5 }).status, 101)
  T.eq(get(st).body, "after")
  T.eq(st.conns, 2)
  st.close()
end)

T.test("timeout: an error after the time, and the next request works", function()
  local slow = true
  local st = server(function() if not slow then return ok_answer("late") end end)
  local t0 = uv.hrtime()
  local e = T.raises("timeout", get, st, { timeout = 0.2 })
  T.ok((uv.hrtime() - t0) / 1e9 >= 0.19, "not before its time")
  T.match(e.message, "timed out")
  slow = false
  T.eq(get(st, { timeout = 5 }).body, "late")
  st.close()
end)

T.test("a cancelled request: its connection is not reused for the next one", function()
  local n = 0
  local st = server(function()
    n = n + 1
    if n == 1 then return nil end -- never answers the first
    return ok_answer("second")
  end)
  T.raises("timeout", rock.timeout, 0.1, get, st)
  T.eq(get(st).body, "second", "not the first request's late answer")
  T.eq(st.conns, 2)
  st.close()
end)

T.test("a drop mid-answer and a malformed answer are http_error", function()
  local st = server(function(req)
    if req:find("^GET /half") then return "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly some", true end
    if req:find("^GET /junk") then return "SPDY/9 what\r\n\r\n" end
    if req:find("^GET /nothing") then return nil, true end
    return ok_answer("fine")
  end)
  local e = T.raises("http_error", get, st, { path = "/half" })
  T.match(e.message, "closed before the response ended")
  e = T.raises("http_error", get, st, { path = "/junk" })
  T.match(e.message, "malformed response")
  T.raises("http_error", get, st, { path = "/nothing" })
  T.eq(get(st).body, "fine")
  st.close()
end)

T.test("big bodies both ways, bytes that are not UTF-8", function()
  local big = string.rep("\0\255\128abc", 2 * 1024 * 1024) -- 12 MiB
  local st = server(function(req)
    local body = req:match("\r\n\r\n(.*)$")
    return ok_answer(body)
  end)
  local r = get(st, { method = "POST", body = big })
  T.eq(#r.body, #big)
  T.ok(r.body == big, "the same bytes back")
  st.close()
end)

T.test("max_body: a body past it is http_error (told by Content-Length, or as it comes)", function()
  local chunked = false
  local st = server(function()
    if chunked then
      return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n"
    end
    return ok_answer(string.rep("x", 100))
  end)
  local e = T.raises("http_error", get, st, { max_body = 99 })
  T.eq(e.too_large, 99)
  T.match(e.message, "larger than 99 bytes")
  T.eq(#get(st, { max_body = 100 }).body, 100)
  chunked = true
  T.eq(T.raises("http_error", get, st, { max_body = 15 }).too_large, 15)
  T.eq(get(st, { max_body = 16 }).body, "0123456789abcdef")
  st.close()
end)

T.test("output_file: a 2xx body goes to the file, not to res.body; no file after an error", function()
  local status = 200
  local body = string.rep("\0\255ab", 300000)
  local st = server(function()
    if status == 0 then return "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort", true end
    return (ok_answer(body):gsub("^HTTP/1.1 200 OK", "HTTP/1.1 " .. status .. " X"))
  end)
  local f = tmp .. "/out_file"
  local r = get(st, { output_file = f })
  T.eq(r.status, 200)
  T.eq(r.body, "")
  local h = assert(io.open(f, "rb"))
  T.ok(h:read("a") == body, "the file holds the exact bytes")
  h:close()
  os.remove(f)
  status = 404 -- an error answer stays in memory, for its message
  r = get(st, { output_file = f })
  T.eq(r.status, 404)
  T.eq(#r.body, #body)
  T.eq(io.open(f), nil)
  status = 0 -- cut mid-body: no partial file
  T.raises("http_error", get, st, { output_file = f })
  T.eq(io.open(f), nil)
  status, body = 200, "" -- a 2xx with an empty body: an empty file
  T.eq(get(st, { output_file = f }).status, 200)
  T.eq(T.file_size(f), 0, "an empty file is there")
  os.remove(f)
  st.close()
end)

T.test("two hundred requests at once from many tasks", function()
  local st = server(function(req) return ok_answer(req:match("^GET (%S+)")) end)
  local tasks = {}
  for i = 1, 200 do
    tasks[i] = rock.spawn(function() return get(st, { path = "/n" .. i }).body end)
  end
  local res, errs = rock.wait(tasks)
  T.eq(next(errs), nil, "no request failed")
  for i = 1, 200 do T.eq(res[i], "/n" .. i) end
  st.close()
end)

T.test("unix sockets: answers; nobody there is connection_failed with its errno", function()
  local path = tmp .. "/c.sock"
  local st = server(function() return ok_answer("unix") end, path)
  T.eq(get(st).body, "unix")
  T.eq(get(st).body, "unix")
  T.eq(st.conns, 1)
  st.close() -- libuv removes the socket file with it
  rock.sleep(0.05)
  local e = T.raises("connection_failed", get, st)
  T.eq(e.errno, "ENOENT")
  local deaf = uv.new_pipe(false) -- a socket file nobody listens on
  assert(deaf:bind(path))
  e = T.raises("connection_failed", get, st)
  T.eq(e.errno, "ECONNREFUSED")
  deaf:close()
end)

T.test("a header with a line break is refused before anything is sent", function()
  local st = server(function() return ok_answer("no") end)
  T.raises("invalid_argument", get, st, { headers = { ["X-Evil"] = "a\r\nInjected: 1" } })
  T.eq(st.reqs, 0)
  st.close()
end)

T.done()
