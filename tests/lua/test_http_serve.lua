-- test_http_serve.lua: rock.http.serve (lua/rock/http_server.lua over
-- c/http/lua_serve.c and server.c) with real HTTP: rock.http.request, curl
-- as a subprocess (run without blocking the loop) and raw TCP bytes for
-- malformed requests. Every temp file goes to one dir, checked empty at
-- the end.
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local rock = require "rock"
local uv = rock.uv
local json = rock.json
local core = rock.core

local tmp = os.tmpname()
os.remove(tmp)
assert(os.execute("mkdir -p " .. tmp .. "/srv " .. tmp .. "/data"))
local SRVTMP = tmp .. "/srv"

local run, file_size, listdir = T.run, T.file_size, T.listdir
local raw = T.raw_tcp

local function status_of(text) return tonumber(text:match("^HTTP/1%.1 (%d%d%d)")) end

-- gates: a handler parks on gate(name) until open(name)
local gates, waiting = {}, {}
local function gate(name)
  if gates[name] then return end
  waiting[name] = (waiting[name] or 0) + 1
  rock.await(function(done)
    gates[#gates + 1] = { name = name, done = done }
    return nil
  end)
end
local function open(name)
  gates[name] = true
  local keep = {}
  for _, g in ipairs(gates) do
    if g.name == name then g.done() else keep[#keep + 1] = g end
  end
  for i = #gates, 1, -1 do gates[i] = nil end
  for i, g in ipairs(keep) do gates[i] = g end
end

local seen = {} -- what handlers saw, by path

local function handler(req)
  seen[req.path] = req
  if req.path == "/echo" then
    return { headers = { ["content-type"] = "application/json", ["X-Seen"] = "1" },
             body = json.encode({ method = req.method, query = req.query, raw_query = req.raw_query,
                                  headers = req.headers, body = req.body, peer = req.peer,
                                  body_file = req.body_file, body_size = req.body_size }) }
  elseif req.path == "/file-size" then -- a big body: where it went
    return { body = string.format("%s %s %s", tostring(req.body), req.body_file and "file" or "mem",
                                  tostring(req.body_file and file_size(req.body_file))) }
  elseif req.path == "/id" then
    return { body = req.query.id }
  elseif req.path:match("^/gate/") then
    gate(req.path:sub(7))
    return { body = "opened " .. req.path:sub(7) }
  elseif req.path == "/raise" then
    error("handler broke")
  elseif req.path == "/raise-rock" then
    rock.errors.raise("not_found", "no such thing")
  elseif req.path == "/bad-response" then
    return "just a string"
  elseif req.path == "/bad-header" then
    return { headers = { ["X-Evil"] = "a\r\nSet-Cookie: x=1" }, body = "no" }
  elseif req.path == "/form" then
    local ok, form = pcall(req.form, req)
    if not ok then
      return { status = form.code == "bad_request" and 400 or 500, body = tostring(form) }
    end
    local out = {}
    for name, f in pairs(form) do
      out[name] = { value = f.value, filename = f.filename, content_type = f.content_type,
                    file = f.file, size = f.file and file_size(f.file) }
      if f.file then
        local fh = io.open(f.file, "rb")
        out[name].head = fh:read(16)
        fh:seek("end", -16)
        out[name].tail = fh:read(16)
        fh:close()
      end
    end
    return { headers = { ["content-type"] = "application/json" }, body = json.encode(out) }
  elseif req.path == "/send-file" then
    return { body_file = req.query.path, headers = { ["content-type"] = "application/octet-stream" } }
  end
  return { status = 404, body = "no route " .. req.path }
end

local srv = rock.http.serve{ port = 0, handler = handler, tmpdir = SRVTMP, max_body = 64 * 1024 * 1024,
                             max_header = 8192 }

T.test("port 0: a free port, the url, a GET with query and headers", function()
  T.ok(srv.port > 0, "port bound")
  T.eq(srv.url, "http://127.0.0.1:" .. srv.port)
  local res = rock.http.request{ url = srv.url .. "/echo?a=1&b=x%20y+z&a=2&flag",
                                 headers = { ["X-Mixed-Case"] = "V" } }
  T.eq(res.status, 200)
  T.eq(res.headers["content-type"], "application/json")
  T.eq(res.headers["x-seen"], "1")
  local got = json.decode(res.body)
  T.eq(got.method, "GET")
  T.eq(got.query.a, "2", "repeated keys: last wins")
  T.eq(got.query.b, "x y z")
  T.eq(got.query.flag, "")
  T.eq(got.raw_query, "a=1&b=x%20y+z&a=2&flag")
  T.eq(got.headers["x-mixed-case"], "V")
  T.eq(got.peer, "127.0.0.1")
  T.eq(got.body, "")
  -- repeated headers joined (curl sends both)
  local out, code = run{ "curl", "-s", "-H", "X-Rep: 1", "-H", "X-Rep: 2", srv.url .. "/echo" }
  T.eq(code, 0)
  T.eq(json.decode(out).headers["x-rep"], "1, 2")
  -- a POST body in memory
  res = rock.http.request{ url = srv.url .. "/echo", method = "POST", body = "hello\0bytes" }
  T.eq(json.decode(res.body).body, "hello\0bytes")
  T.eq(rock.http.request{ url = srv.url .. "/nowhere" }.status, 404)
end)

T.test("keep-alive: one connection for many requests (rock.http and curl)", function()
  local out, code = run{ "curl", "-s", "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null",
                         "-w", "%{num_connects}\n",
                         srv.url .. "/id?id=1", srv.url .. "/id?id=2", srv.url .. "/id?id=3" }
  T.eq(code, 0)
  T.eq(out, "1\n0\n0\n", "curl reused its connection")
  for i = 1, 5 do T.eq(rock.http.request{ url = srv.url .. "/id?id=" .. i }.body, tostring(i)) end
  T.ok(srv:stats().conns <= 2, "rock.http reused its connection: " .. srv:stats().conns)
  -- pipelined requests over one socket answered in order
  local text = raw(srv.port, "GET /id?id=a HTTP/1.1\r\n\r\nGET /id?id=b HTTP/1.1\r\n\r\n" ..
                             "GET /id?id=c HTTP/1.1\r\nConnection: close\r\n\r\n")
  local bodies = {}
  for body in text:gmatch("\r\n\r\n(%a)") do bodies[#bodies + 1] = body end
  T.eq(table.concat(bodies), "abc")
end)

T.test("200 concurrent requests from several clients", function()
  local tasks = {}
  for i = 1, 150 do
    tasks[#tasks + 1] = rock.spawn(function()
      return rock.http.request{ url = srv.url .. "/id?id=" .. i }.body
    end)
  end
  local curls = {}
  for c = 1, 5 do -- 5 curl processes with 10 requests each, in parallel
    curls[c] = rock.spawn(function()
      local argv = { "curl", "-s", "--no-progress-meter", "--parallel", "--parallel-max", "10" }
      for k = 1, 10 do
        argv[#argv + 1] = srv.url .. "/id?id=c" .. c .. "-" .. k
        argv[#argv + 1] = "-o" -- one file per answer, named by what it should say
        argv[#argv + 1] = string.format("%s/data/c%d-%d", tmp, c, k)
      end
      return run(argv)
    end)
  end
  local values, errs = rock.wait(tasks)
  for i = 1, 150 do
    T.eq(errs[i], nil, "request " .. i)
    T.eq(values[i], tostring(i))
  end
  rock.wait(curls)
  local n = 0
  for c = 1, 5 do
    for k = 1, 10 do
      local path = string.format("%s/data/c%d-%d", tmp, c, k)
      local f = io.open(path, "rb")
      if f and f:read("a") == string.format("c%d-%d", c, k) then n = n + 1 end
      if f then f:close() end
      os.remove(path)
    end
  end
  T.eq(n, 50, "every curl request answered")
end)

T.test("a slow handler does not hold up other connections", function()
  local slow = rock.spawn(function() return rock.http.request{ url = srv.url .. "/gate/slow1" }.body end)
  while (waiting.slow1 or 0) == 0 do rock.sleep(0.001) end
  for i = 1, 10 do T.eq(rock.http.request{ url = srv.url .. "/id?id=" .. i }.body, tostring(i)) end
  T.ok(not slow.done, "the slow one is still waiting")
  T.eq(srv:stats().tasks, 1, "its handler task is running")
  open("slow1")
  T.eq(rock.wait(slow), "opened slow1")
end)

T.test("malformed requests get a 4xx (or a close) and the server keeps answering", function()
  local function still_up()
    T.eq(rock.http.request{ url = srv.url .. "/id?id=up" }.body, "up")
  end
  T.eq(status_of(raw(srv.port, "BLAH\r\n\r\n")), 400)
  still_up()
  T.eq(status_of(raw(srv.port, "\0\1\2garbage\255\r\n\r\n")), 400)
  still_up()
  local r = raw(srv.port, "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
  T.eq(status_of(r), 400)
  T.match(r, "malformed http request")
  still_up()
  r = raw(srv.port, "GET /echo HTTP/1.1\r\nX-Big: " .. string.rep("a", 9000) .. "\r\n\r\n")
  T.eq(status_of(r), 431)
  T.match(r, "larger than 8192")
  still_up()
  r = raw(srv.port, "GET /" .. string.rep("p", 9000) .. " HTTP/1.1\r\n\r\n")
  T.eq(status_of(r), 431)
  r = raw(srv.port, "POST /echo HTTP/1.1\r\nContent-Length: 100000000\r\n\r\n")
  T.eq(status_of(r), 413)
  T.match(r, "larger than 67108864")
  r = raw(srv.port, "POST /echo HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nabc")
  T.eq(status_of(r), 501)
  T.match(r, "Transfer%-Encoding")
  r = raw(srv.port, "CONNECT a.example:443 HTTP/1.1\r\nHost: a.example\r\n\r\n")
  T.eq(status_of(r), 501)
  r = raw(srv.port, "GET / HTTP/9.9\r\n\r\n")
  T.eq(status_of(r), 505)
  r = raw(srv.port, "BREW /pot HTTP/1.1\r\n\r\n") -- an unknown method
  T.eq(status_of(r), 400)
  -- a known method the handler does not serve: its own answer
  T.eq(rock.http.request{ url = srv.url .. "/nope", method = "DELETE" }.status, 404)
  still_up()
  -- a truncated body, then the client goes: nothing kept, nothing answered
  local files = 0
  local watch = rock.spawn(function() -- the body's temp file appears
    while files == 0 do files = #listdir(SRVTMP); rock.sleep(0.001) end
  end)
  raw(srv.port, "POST /echo HTTP/1.1\r\nContent-Length: 5000000\r\n\r\n" .. string.rep("x", 1000000), true)
  rock.wait(watch)
  T.eq(files, 1, "the body went to a temp file")
  while #listdir(SRVTMP) > 0 do rock.sleep(0.001) end -- removed once the server saw the close
  still_up()
  T.eq(srv:stats().tasks, 0, "no handler ran")
  -- huge body without Content-Length (chunked) past max_body: 413 or a close
  local small = rock.http.serve{ port = 0, handler = handler, tmpdir = SRVTMP, max_body = 100000 }
  local chunk = string.format("%x\r\n%s\r\n", 65536, string.rep("c", 65536))
  r = raw(small.port, "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" .. chunk:rep(4))
  T.ok(r == "" or status_of(r) == 413, "413 or a close, got: " .. r:sub(1, 40))
  T.eq(status_of(raw(small.port, "POST /echo HTTP/1.1\r\nContent-Length: 100001\r\n\r\n")), 413)
  T.eq(rock.http.request{ url = small.url .. "/id?id=small" }.body, "small")
  small:stop()
  still_up()
  T.eq(#listdir(SRVTMP), 0, "no temp file left")
end)

T.test("bodies past body_to_file go to a temp file, deleted after the answer", function()
  local big = string.rep("0123456789abcdef", 2 * 65536 + 1) -- 2 MiB + 16
  local res = rock.http.request{ url = srv.url .. "/file-size", method = "POST", body = big }
  T.eq(res.body, "nil file " .. #big)
  T.ok(seen["/file-size"].body_file:find(SRVTMP, 1, true) == 1, "in tmpdir")
  T.eq(file_size(seen["/file-size"].body_file), nil, "deleted once answered")
  -- a small chunked body comes back to memory
  local path = tmp .. "/data/small"
  local f = io.open(path, "wb"); f:write("chunky"); f:close()
  local out = run{ "curl", "-s", "-H", "Transfer-Encoding: chunked", "--data-binary", "@" .. path,
                   srv.url .. "/file-size" }
  T.eq(out, "chunky mem nil")
  T.eq(#listdir(SRVTMP), 0)
end)

T.test("multipart upload: a 50 MB file streamed to a temp file, RSS stays small", function()
  local path = tmp .. "/data/big.bin"
  local _, code = run{ "sh", "-c", "head -c 52428800 /dev/urandom > " .. path }
  T.eq(code, 0)
  local fh = io.open(path, "rb")
  local head = fh:read(16)
  fh:seek("end", -16)
  local tail = fh:read(16)
  fh:close()
  collectgarbage()
  local before = T.rss_kib()
  local out, c = run{ "curl", "-s", "-F", "file=@" .. path .. ";type=application/x-test",
                      "-F", "target_path=/tmp/x y", "-F", "sandbox_id=sb-1", srv.url .. "/form" }
  T.eq(c, 0)
  local grown = T.rss_kib() - before
  local form = json.decode(out)
  T.eq(form.file.filename, "big.bin")
  T.eq(form.file.content_type, "application/x-test")
  T.eq(form.file.size, 52428800)
  T.eq(form.file.head, head)
  T.eq(form.file.tail, tail)
  T.ok(form.file.file:find(SRVTMP, 1, true) == 1, "the part is in tmpdir")
  T.eq(form.target_path.value, "/tmp/x y")
  T.eq(form.sandbox_id.value, "sb-1")
  print(string.format("   rss grew %d KiB for a 50 MB upload", grown))
  T.rss_under(grown, 16 * 1024, "RSS grew less than 16 MiB")
  T.eq(#listdir(SRVTMP), 0, "body and part files deleted")
end)

T.test("multipart: small forms from memory, malformed ones are bad_request", function()
  local b = "XyZ"
  local body = table.concat({
    "preamble", "--XyZ", 'Content-Disposition: form-data; name="a"', "", "1\r\n--XyY a--XyZ", "--XyZ",
    'Content-Disposition: form-data; name="f"; filename="q\\"uote.txt"', "Content-Type: text/plain", "",
    "file body", "--XyZ--", "epilogue" }, "\r\n")
  local res = rock.http.request{ url = srv.url .. "/form", method = "POST", body = body,
                                 headers = { ["Content-Type"] = 'multipart/form-data; boundary="' .. b .. '"' } }
  T.eq(res.status, 200)
  local form = json.decode(res.body)
  T.eq(form.a.value, "1\r\n--XyY a--XyZ", "delimiter lookalikes stay content")
  T.eq(form.f.filename, 'q"uote.txt')
  T.eq(form.f.size, 9)
  local function bad(ctype, text, want)
    local r = rock.http.request{ url = srv.url .. "/form", method = "POST", body = text,
                                 headers = { ["Content-Type"] = ctype } }
    T.eq(r.status, 400, "refused: " .. want)
    T.match(r.body, "^bad_request: ")
    T.match(r.body, want)
  end
  local ct = "multipart/form-data; boundary=XyZ"
  bad("text/plain", "x", "not multipart")
  bad("multipart/form-data", "x", "without a boundary")
  bad(ct, "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nno end", "no closing boundary")
  bad(ct, "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x\"\r\n\r\n" ..
          string.rep("z", 3 * 65536), "no closing boundary")
  bad(ct, "--XyZ\r\nContent-Type: text/plain\r\n\r\nv\r\n--XyZ--", "without Content%-Disposition")
  bad(ct, "--XyZ\r\nContent-Disposition: form-data\r\n\r\nv\r\n--XyZ--", "without a name")
  bad(ct, "--XyZ junk\r\n", "delimiter line")
  T.eq(#listdir(SRVTMP), 0, "no part file left by a failed parse")
  -- the C parser directly: a value past max_value goes to a file
  local parts = core.multipart_parse{ body = "--b\r\nContent-Disposition: form-data; name=v\r\n\r\n" ..
    string.rep("v", 100) .. "\r\n--b--", boundary = "b", tmpdir = SRVTMP, max_value = 10 }
  T.eq(#parts, 1)
  T.eq(parts[1].name, "v")
  T.eq(file_size(parts[1].file), 100)
  os.remove(parts[1].file)
  T.raises("bad_request", core.multipart_parse, { body = "", boundary = string.rep("b", 71), tmpdir = SRVTMP })
end)

T.test("multipart in a file parses on the thread pool: parts, errors, a cancel and a closing host leave no file", function()
  local dir = tmp .. "/data/pool"
  assert(os.execute("mkdir -p " .. dir))
  local big = tmp .. "/data/form.body" -- a 20 MB part: ~30 ms of parsing
  local f = assert(io.open(big, "wb"))
  f:write('--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n',
          '--XyZ\r\nContent-Disposition: form-data; name="f"; filename="f.bin"\r\n\r\n')
  local chunk = string.rep("\255\0z", 65536)
  for _ = 1, 100 do f:write(chunk) end
  f:write("\r\n--XyZ--\r\n")
  f:close()
  local function parse(path)
    return rock.await(function(done)
      local id = core.multipart_parse_file({ path = path, boundary = "XyZ", tmpdir = dir }, done)
      return function() core.multipart_cancel(id) end
    end)
  end
  local parts = parse(big)
  T.eq(#parts, 2)
  T.eq(parts[1].value, "1")
  T.eq(file_size(parts[2].file), 100 * 3 * 65536)
  os.remove(parts[2].file)
  -- the loop went on while it parsed: a timer fired in between
  local ticks, t = 0, uv.new_timer()
  t:start(1, 1, function() ticks = ticks + 1 end)
  parts = parse(big)
  t:close()
  os.remove(parts[2].file)
  T.ok(ticks > 0, "the loop turned during the parse")
  -- errors come to the callback: a malformed body, a missing file
  local bad = tmp .. "/data/bad.body"
  T.write(bad, '--XyZ\r\nContent-Disposition: form-data; name="f"; filename="x"\r\n\r\nno end')
  local none, e = parse(bad)
  T.ok(not none and rock.errors.is(e, "bad_request"), "bad_request: " .. tostring(e))
  none, e = parse(tmp .. "/data/none")
  T.ok(not none and rock.errors.is(e, "io_error"), "io_error: " .. tostring(e))
  -- cancelled before and while it runs: no callback, no file left
  -- (a parse that ends before its cancel, on a fast disk, calls its
  -- callback: that one removes what it is given and is not counted)
  local called, cancelled = false, false
  local function cb(parts)
    if cancelled then called = true end
    for _, p in ipairs(type(parts) == "table" and parts or {}) do if p.file then os.remove(p.file) end end
  end
  local id = core.multipart_parse_file({ path = big, boundary = "XyZ", tmpdir = dir }, cb)
  cancelled = true
  core.multipart_cancel(id)
  cancelled = false
  id = core.multipart_parse_file({ path = big, boundary = "XyZ", tmpdir = dir }, cb)
  rock.sleep(0.005)
  cancelled = true
  core.multipart_cancel(id)
  for _ = 1, 200 do
    if #listdir(dir) == 0 then break end
    rock.sleep(0.01)
  end
  rock.sleep(0.05)
  T.ok(not called, "a cancelled parse calls nobody")
  T.eq(#listdir(dir), 0, "no part file left by a cancelled parse")
  -- a host that ends with a parse running exits cleanly, and leaves no file
  local script = tmp .. "/data/closing.lua"
  T.write(script, string.format([[
local core = require("rock").core
core.multipart_parse_file({ path = %q, boundary = "XyZ", tmpdir = %q }, function(parts)
  for _, p in ipairs(parts or {}) do if p.file then os.remove(p.file) end end -- delivered: the cb's
  print("called")
end)
print("leaving")
]], big, dir))
  local out, code = run{ T.rock_exe(), script }
  T.eq(code, 0)
  T.ok(out == "leaving\n" or out == "leaving\ncalled\n", "leaving, then at most the cb: " .. out)
  T.eq(#listdir(dir), 0, "no part file left by a host that closed")
  os.remove(big); os.remove(bad); os.remove(script)
  assert(os.execute("rmdir " .. dir))
end)

T.test("a server starting removes the temp files that dead processes left in its tmpdir, and only those", function()
  local dir = tmp .. "/data/sweep"
  assert(os.execute("mkdir -p " .. dir))
  local dead, me = 2 ^ 22 + 1, core.getpid()
  local names = { string.format("rock-body-%d-aB3dE9", dead), string.format("rock-part-%d-Zz09yy", dead),
    string.format("rock-body-%d-kept01", me), "rock-body-nopid", "mine.txt" }
  for _, n in ipairs(names) do T.write(dir .. "/" .. n, "x") end
  local s = rock.http.serve{ port = 0, tmpdir = dir, handler = function(req)
    return { body = req.body_file and req.body_file:match("[^/]*$") or "" }
  end }
  local left = T.listdir(dir)
  table.sort(left)
  T.eq(table.concat(left, " "), string.format("mine.txt rock-body-%d-kept01 rock-body-nopid", me))
  -- its own files carry its pid, so a later server can tell
  local r = rock.http.request{ url = s.url .. "/", method = "POST", body = string.rep("b", 2 * 1024 * 1024) }
  T.match(r.body, "^rock%-body%-" .. me .. "%-%w+$")
  s:stop()
  assert(os.execute("rm -rf '" .. dir .. "'"))
end)

T.test("handler errors are 500 with a JSON error; bad responses too", function()
  local r = rock.http.request{ url = srv.url .. "/raise" }
  T.eq(r.status, 500)
  T.eq(r.headers["content-type"], "application/json")
  T.match(json.decode(r.body).error, "handler broke")
  r = rock.http.request{ url = srv.url .. "/raise-rock" }
  T.eq(r.status, 500)
  T.eq(json.decode(r.body).error, "not_found: no such thing")
  r = rock.http.request{ url = srv.url .. "/bad-response" }
  T.eq(r.status, 500)
  T.match(json.decode(r.body).error, "not a response table")
  r = rock.http.request{ url = srv.url .. "/bad-header" }
  T.eq(r.status, 500)
  T.eq(r.headers["set-cookie"], nil, "no header injected")
  T.eq(rock.http.request{ url = srv.url .. "/id?id=fine" }.body, "fine")
end)

T.test("after: runs once per request when the client has its answer; a failed handler gets nil; after's own error is logged", function()
  local seen, released = {}, nil
  local s = rock.http.serve{ port = 0,
    handler = function(req)
      req.note = req.path
      if req.path == "/raise" then error("handler broke") end
      return { body = "ok " .. req.path }
    end,
    after = function(req, res)
      if req.path == "/hold" then rock.await(function(wake) released = wake end) end -- after may wait
      if req.path == "/after-raises" then error("after broke") end
      seen[#seen + 1] = { path = req.path, note = req.note, body = res and res.body or false }
    end }
  local r = rock.http.request{ url = s.url .. "/hold" } -- answered while its after still waits
  T.eq(r.body, "ok /hold")
  T.eq(#seen, 0)
  released()
  T.eq(rock.http.request{ url = s.url .. "/raise" }.status, 500)
  T.eq(rock.http.request{ url = s.url .. "/after-raises" }.body, "ok /after-raises")
  T.eq(rock.http.request{ url = s.url .. "/a" }.body, "ok /a") -- the server goes on
  s:stop()
  T.eq(#seen, 3)
  T.eq(seen[1].path, "/hold"); T.eq(seen[1].note, "/hold"); T.eq(seen[1].body, "ok /hold")
  T.eq(seen[2].path, "/raise"); T.eq(seen[2].body, false)
  T.eq(seen[3].path, "/a")
  T.raises("invalid_argument", rock.http.serve, { port = 0, handler = handler, after = 1 })
end)

T.test("an answer streamed from a file; HEAD gets no body", function()
  local path = tmp .. "/data/answer.bin"
  run{ "sh", "-c", "head -c 3000000 /dev/urandom > " .. path }
  local f = io.open(path, "rb"); local want = f:read("a"); f:close()
  local r = rock.http.request{ url = srv.url .. "/send-file?path=" .. path }
  T.eq(r.status, 200)
  T.eq(#r.body, #want)
  T.ok(r.body == want, "the same bytes")
  T.eq(r.headers["content-type"], "application/octet-stream")
  r = rock.http.request{ url = srv.url .. "/send-file?path=" .. tmp .. "/data/none" }
  T.eq(r.status, 500)
  T.match(json.decode(r.body).error, "io_error: cannot send")
  local out = run{ "curl", "-s", "-I", srv.url .. "/id?id=h" }
  T.match(out, "^HTTP/1.1 200")
  T.match(out, "Content%-Length: 1\r\n")
  T.ok(not out:find("\r\n\r\nh"), "no body")
end)

T.test("a unix socket server", function()
  local sock = tmp .. "/data/s.sock"
  local u = rock.http.serve{ unix_socket = sock, handler = handler, tmpdir = SRVTMP }
  T.eq(u.port, nil)
  T.eq(u.url, nil)
  local r = rock.http.request{ url = "http://x/echo?q=1", unix_socket = sock }
  T.eq(json.decode(r.body).query.q, "1")
  T.eq(json.decode(r.body).peer, nil)
  u:stop()
  T.raises("connection_failed", rock.http.request, { url = "http://x/echo", unix_socket = sock })
end)

T.test("bad options are invalid_argument; a busy port is io_error", function()
  T.raises("invalid_argument", rock.http.serve, { port = 0 })
  T.raises("invalid_argument", rock.http.serve, { port = 0, handler = handler, unix_socket = "/x" })
  T.raises("invalid_argument", rock.http.serve, { port = 70000, handler = handler })
  T.raises("invalid_argument", rock.http.serve, { port = 0, host = "example.com", handler = handler })
  T.raises("invalid_argument", rock.http.serve, { port = 0, idle_timeout = -1, handler = handler })
  local e = T.raises("io_error", rock.http.serve, { port = srv.port, handler = handler })
  T.eq(e.errno, "EADDRINUSE")
end)

T.test("graceful stop: requests in flight get their answer, idle connections close", function()
  local s2 = rock.http.serve{ port = 0, handler = handler, tmpdir = SRVTMP }
  T.eq(rock.http.request{ url = s2.url .. "/id?id=warm" }.body, "warm") -- an idle keep-alive conn
  local inflight = rock.spawn(function() return rock.http.request{ url = s2.url .. "/gate/stop1" } end)
  while (waiting.stop1 or 0) == 0 do rock.sleep(0.001) end
  local stopper = rock.spawn(function() s2:stop{ timeout = 60 } end)
  local again = rock.spawn(function() s2:stop() end) -- safe twice: waits for the first
  rock.sleep(0.01)
  T.ok(not stopper.done, "stop waits for the request in flight")
  T.raises("connection_failed", rock.http.request, { url = s2.url .. "/id?id=late" })
  open("stop1")
  local r = rock.wait(inflight)
  T.eq(r.status, 200)
  T.eq(r.body, "opened stop1")
  T.eq(r.headers["connection"], "close")
  rock.wait(stopper)
  rock.wait(again)
  T.eq(s2:stats().open, false)
  s2:stop() -- and again after it stopped
  -- past the timeout: the rest is closed and the handler task cancelled
  local s3 = rock.http.serve{ port = 0, handler = handler, tmpdir = SRVTMP }
  local hung = rock.spawn(function() return rock.http.request{ url = s3.url .. "/gate/never" } end)
  while (waiting.never or 0) == 0 do rock.sleep(0.001) end
  s3:stop{ timeout = 0.05 }
  T.eq(s3:stats().tasks, 0, "the handler task was cancelled and ended")
  local _, errs = rock.wait{ hung }
  T.eq(errs[1] and errs[1].code, "http_error", "the client saw the connection go")
end)

T.test("a recipe that stops its server exits (nothing keeps the loop)", function()
  local script = tmp .. "/data/recipe.lua"
  local f = io.open(script, "w")
  f:write([[
local rock = require "rock"
local srv = rock.http.serve{ port = 0, handler = function() return { body = "x" } end }
rock.spawn(function() rock.http.request{ url = srv.url .. "/" }; srv:stop() end)
srv:wait()
print("stopped")
]])
  f:close()
  local out, code = run{ T.rock_exe(), script }
  T.eq(code, 0)
  T.eq(out, "stopped\n")
end)

T.test("handlers that wait, fail, are cancelled or answer at once share the workers; none is left after stop", function()
  local task = require "rock.task"
  local live0 = task.live()
  local H = { ["X-V"] = "1" } -- one headers table for several answers, changed between them
  local gone = {}
  local s4 = rock.http.serve{ port = 0, tmpdir = SRVTMP, handler = function(req)
    if req.path == "/wait" then
      rock.sleep(0.001)
      return { body = "waited " .. req.query.n }
    elseif req.path == "/gate" then
      local ok, e = pcall(gate, req.query.name)
      if not ok then gone[req.query.name] = e.code; error(e, 0) end
      return { body = "opened" }
    elseif req.path == "/h" then
      return { headers = H, body = "h" }
    elseif req.path == "/raise" then
      error("broken")
    end
    return { body = "now " .. req.query.n }
  end }
  local function get(path) return rock.http.request{ url = s4.url .. path } end
  -- the first request (no idle worker yet) of a client that goes away at once
  T.eq(raw(s4.port, "GET /gate?name=g0 HTTP/1.1\r\n\r\n", true), "")
  while not gone.g0 do rock.sleep(0.001) end
  T.eq(gone.g0, "cancelled")
  for i = 1, 6 do -- one connection: each request on the worker the one before left
    T.eq(get("/now?n=" .. i).body, "now " .. i)
    T.eq(get("/wait?n=" .. i).body, "waited " .. i)
    T.eq(get("/raise").status, 500)
  end
  local many = {}
  for i = 1, 40 do -- at once: more workers, then back in the pool
    many[i] = rock.spawn(function() return get((i % 2 == 0 and "/wait?n=" or "/now?n=") .. i).body end)
  end
  local values = rock.wait(many)
  for i = 1, 40 do T.eq(values[i], (i % 2 == 0 and "waited " or "now ") .. i) end
  -- a client that goes away cancels its own handler's wait, and only that
  local text = raw(s4.port, "GET /gate?name=g4 HTTP/1.1\r\n\r\n", true)
  T.eq(text, "")
  while not gone.g4 do rock.sleep(0.001) end
  T.eq(gone.g4, "cancelled")
  T.eq(get("/wait?n=after").body, "waited after", "the next request on that worker waits normally")
  -- a changed headers table is answered as it is now
  T.eq(get("/h").headers["x-v"], "1")
  H["X-V"] = "2"
  T.eq(get("/h").headers["x-v"], "2")
  H["X-W"] = 3
  local r = get("/h")
  T.eq(r.headers["x-v"], "2")
  T.eq(r.headers["x-w"], "3")
  H["X-W"] = "bad\r\nvalue"
  T.eq(get("/h").status, 500)
  H["X-W"] = nil
  T.eq(get("/h").status, 200)
  -- stopped with a handler waiting: it is cancelled; every worker ends
  local hung = rock.spawn(function() return get("/gate?name=never4") end)
  while (waiting.never4 or 0) == 0 do rock.sleep(0.001) end
  T.eq(s4:stats().tasks, 1)
  s4:stop{ timeout = 0.05 }
  T.eq(s4:stats().tasks, 0)
  rock.wait{ hung }
  rock.sleep(0.01) -- the idle workers end on the next turn
  T.eq(task.live(), live0, "no worker task left")
end)

-- the refs rock.core holds in the registry (numbered entries that are no
-- free-list links)
local function refs()
  local n = 0
  for k, v in pairs(debug.getregistry()) do
    if math.type(k) == "integer" and type(v) ~= "number" then n = n + 1 end
  end
  return n
end

T.test("stream_body: a body past body_to_file goes on as the client sends it (body_from), never stored; " ..
    "chunked, an early answer, a client gone, max_body, misuse; the registry as it was", function()
  assert(os.execute("mkdir -p " .. tmp .. "/relay"))
  local RELAYTMP = tmp .. "/relay"
  local got = {} -- what the upstream took, by path
  local up = rock.http.serve{ port = 0, tmpdir = SRVTMP, max_body = 64 << 20, handler = function(req)
    got[req.path] = { size = req.body_file and req.body_size or #req.body,
      body = req.body_file and T.read(req.body_file) or req.body, te = req.headers["transfer-encoding"] }
    return { status = 201, body = tostring(got[req.path].size) }
  end }
  local seen = {}
  local relay = rock.http.serve{ port = 0, tmpdir = RELAYTMP,
    on_headers = function(req)
      if req.path ~= "/small" then
        req:allow_body(10 << 20)
        req:stream_body()
      end
    end,
    handler = function(req)
      seen[req.path] = { stream = req.body_stream, size = req.body_size, tmp = #listdir(RELAYTMP) }
      if req.path == "/early" then return { status = 409, body = "not now" } end
      if req.path == "/small" then -- not streamed: stream_body is too late here, body_from refused
        local ok, e = pcall(req.stream_body, req)
        local ok2, e2 = pcall(rock.core.http_request, { url = up.url, body_from = req._handle }, function() end)
        return { body = #req.body .. " " .. tostring(not ok and e) .. " " .. tostring(not ok2 and e2) }
      end
      if not req.body_stream then return { body = "memory " .. #req.body } end
      local ok, res = pcall(rock.http.request, { url = up.url .. req.path, method = "PUT", body_from = req,
        timeout = 60, response_headers = false })
      seen[req.path].err = not ok and res or nil
      if not ok then return { status = res.code == "bad_request" and 400 or 502, body = tostring(res.code) } end
      return { status = res.status, body = "relayed " .. res.body }
    end }
  collectgarbage()
  local before = refs()
  local big = string.rep("\0\1\2\255 rock ", 8 << 17) -- 8 MiB
  local r = rock.http.request{ url = relay.url .. "/a", method = "PUT", body = big }
  T.eq(r.status, 201)
  T.eq(r.body, "relayed " .. #big)
  T.ok(got["/a"].body == big, "8 MiB relayed exact")
  T.eq(seen["/a"].stream, true)
  T.eq(seen["/a"].size, #big)
  T.eq(seen["/a"].tmp, 0, "no temp file for it")
  r = rock.http.request{ url = relay.url .. "/b", method = "PUT", body = big:sub(1, 1000) }
  T.eq(r.body, "memory 1000", "a small body comes whole, as before")
  -- chunked: relayed chunked
  local function chunked(body, piece)
    local out = {}
    for i = 1, #body, piece do
      local c = body:sub(i, i + piece - 1)
      out[#out + 1] = string.format("%x\r\n", #c) .. c .. "\r\n"
    end
    return table.concat(out) .. "0\r\n\r\n"
  end
  local three = big:sub(1, 3 << 20) .. "tail"
  local head = "PUT %s HTTP/1.1\r\nHost: x\r\n%s\r\n"
  local out = raw(relay.port, head:format("/c", "Transfer-Encoding: chunked\r\n") .. chunked(three, 100000), false, 1)
  T.match(out, "^HTTP/1%.1 201 .*relayed " .. #three .. "$")
  T.eq(seen["/c"].size, nil, "no size known")
  T.eq(got["/c"].te, "chunked")
  T.ok(got["/c"].body == three, "chunked relayed exact")
  -- answered before the body is read, by a client that sends it all before it reads: the
  -- answer comes, the rest is dropped, the connection goes on with the next request;
  -- stream_body after on_headers and body_from on a body not streamed are refused
  out = raw(relay.port, head:format("/early", "Content-Length: " .. #three .. "\r\n") .. three ..
    head:format("/small", "Content-Length: 4\r\n") .. "tiny", false, 2)
  T.match(out, "^HTTP/1%.1 409 .-not nowHTTP/1%.1 200 .-\r\n\r\n4 ")
  T.match(out, "only from on_headers")
  T.match(out, "not streamed %(handle:stream_body%(%) from on_headers")
  T.eq(seen["/early"].stream, true)
  -- past max_body: a Content-Length is refused before the handler; a chunked body there is cut
  out = raw(relay.port, head:format("/d", "Content-Length: " .. (11 << 20) .. "\r\n"), false, 1)
  T.match(out, "^HTTP/1%.1 413 ")
  T.eq(seen["/d"], nil, "never handed over")
  out = raw(relay.port, head:format("/e", "Transfer-Encoding: chunked\r\n") .. chunked(big .. three, 1 << 20), false, 1)
  T.match(out, "^HTTP/1%.1 400 .*bad_request$")
  T.eq(got["/e"], nil, "the upstream took nothing")
  -- a client gone mid-body: the relay's transfer ends (cancelled), the upstream drops its part
  raw(relay.port, head:format("/g", "Content-Length: " .. (8 << 20) .. "\r\n") .. big:sub(1, 2 << 20), true)
  T.wait_until("the relay's handler ended", function() return seen["/g"] and seen["/g"].err end, 10)
  T.eq(seen["/g"].err.code, "cancelled")
  T.eq(got["/g"], nil, "the upstream took nothing")
  T.wait_until("no temp file upstream", function() return #listdir(SRVTMP) == 0 end, 10)
  T.eq(#listdir(RELAYTMP), 0, "none in the relay's tmpdir")
  -- misuse
  local e = T.raises("invalid_argument", function()
    local ok, err = pcall(rock.core.http_request, { url = up.url, body_from = {} }, function() end)
    if not ok then error(rock.errors.new("invalid_argument", tostring(err)), 0) end
  end)
  T.match(e.message, "request handle")
  collectgarbage()
  T.eq(refs(), before, "no ref left in the registry")
  -- curl's chunked upload (from stdin) relayed the same
  local f = tmp .. "/data/chunked"
  T.write(f, three)
  out = run{ "sh", "-c", "curl -sS -T - " .. relay.url .. "/h < " .. f }
  T.eq(out, "relayed " .. #three)
  T.ok(got["/h"].body == three and got["/h"].te == "chunked", "curl's chunked body relayed exact")
  os.remove(f)
  relay:stop()
  up:stop()
end)

T.test("body_from: an answer before the body is over ends the relay at once (not at the upstream's " ..
    "timeout); a body relayed once is not relayed again", function()
  local up = rock.http.serve{ port = 0, tmpdir = SRVTMP, max_body = 64 << 20, handler = function(req)
    return { status = 201, body = tostring(req.body_file and req.body_size or #req.body) }
  end }
  local r = {}
  local relay = rock.http.serve{ port = 0, tmpdir = SRVTMP,
    on_headers = function(req) req:allow_body(16 << 20); req:stream_body() end,
    handler = function(req)
      if req.path == "/early" then -- the relay waits for more body; the answer goes first
        rock.spawn(function()
          r.ok, r.res = pcall(rock.http.request, { url = up.url, method = "PUT", body_from = req,
            timeout = 60, response_headers = false })
          r.done = true
        end)
        rock.sleep(0.5)
        return { status = 200, body = "early" }
      end
      local res = rock.http.request{ url = up.url, method = "PUT", body_from = req, response_headers = false }
      local ok, e = pcall(rock.core.http_request, { url = up.url, body_from = req._handle }, function() end)
      return { body = res.body .. " " .. tostring(not ok and e) }
    end }
  local head = "PUT %s HTTP/1.1\r\nHost: x\r\n%s\r\n"
  local out = raw(relay.port, head:format("/early", "Content-Length: " .. (8 << 20) .. "\r\n") ..
    string.rep("x", 2 << 20), false, 1)
  T.match(out, "^HTTP/1%.1 200 .*early$")
  T.wait_until("the relay ended", function() return r.done end, 5)
  T.eq(r.ok, false)
  T.eq(r.res.code, "cancelled")
  T.match(r.res.message, "answered already")
  out = raw(relay.port, head:format("/twice", "Transfer-Encoding: chunked\r\n") .. "5\r\nhello\r\n0\r\n\r\n", false, 1)
  T.match(out, "^HTTP/1%.1 200 .*\r\n\r\n5 .*relayed already")
  relay:stop()
  up:stop()
end)

srv:stop()
T.eq(#listdir(SRVTMP), 0)
os.execute("rm -rf " .. tmp)
T.done()
