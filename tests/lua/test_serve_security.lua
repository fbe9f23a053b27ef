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

-- fn(srv) against a `rock serve` of its own (S.start(opts)), stopped after,
-- also when fn fails; finally(), if given, runs before the stop.
local function with_serve(opts, fn, finally)
  local srv = S.start(opts)
  local ok, err = pcall(fn, srv)
  if finally then finally() end
  srv.stop()
  if not ok then error(err, 0) end
end

T.test("a 60,000-space bearer token, a 60 KB X-Key, 300 header fields, a 60 KB boundary: linear, the loop goes on", function()
  local done = false
  with_serve({ backend = "local", args = { "--token", "s3cret" }, token = "s3cret" }, function(srv)
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
  end, function() done = true end)
end)

-- Send the head of a POST announcing a 32 MiB body and 4 MiB of it, then
-- wait up to 3 s for an answer, watching dir for temp files meanwhile.
-- Returns what came back, whether the server closed, temp files seen.
local function unread_body(port, dir, token)
  local seen = {}
  local watch = uv.new_timer()
  watch:start(0, 5, function()
    for _, name in ipairs(T.listdir(dir)) do seen[name] = true end
  end)
  local got, closed = rock.await(function(done)
    local tcp = uv.new_tcp()
    local buf, finished = {}, false
    local timer = uv.new_timer()
    local function fin(eof)
      if finished then return end
      finished = true
      timer:close()
      tcp:close()
      done(table.concat(buf), eof)
    end
    timer:start(3000, 0, function() fin(false) end)
    tcp:connect("127.0.0.1", port, function(cerr)
      if cerr then return fin(false) end
      tcp:write(string.format("POST %swrite_file HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%sContent-Type: application/json\r\n" ..
        "Content-Length: %d\r\n\r\n", PREFIX, port, token and ("Authorization: Bearer " .. token .. "\r\n") or "",
        32 << 20))
      tcp:write(string.rep("x", 4 << 20), function() end)
      tcp:read_start(function(e, chunk) -- closed: an EOF, or a reset (the body unread)
        if e or not chunk then return fin(not e or tostring(e):find("ECONNRESET") ~= nil) end
        buf[#buf + 1] = chunk
      end)
    end)
    return function() fin(false) end
  end)
  watch:close()
  local names = {}
  for n in pairs(seen) do names[#names + 1] = n end
  return got, closed, names
end

T.test("an unauthenticated 32 MiB POST: 401 at its headers, its body never read nor stored", function()
  local tmp = HOME .. "/bodies"
  os.execute("mkdir -p '" .. tmp .. "'")
  with_serve({ backend = "local", args = { "--token", "s3cret" }, token = "s3cret", env = "TMPDIR=" .. tmp }, function(srv)
    local before = rss_kib(srv.pid)
    for i = 1, 3 do
      local got, closed, files = unread_body(srv.port, tmp, i == 3 and "wrong" or nil)
      T.match(got, "^HTTP/1%.1 401 ", "401 before the body is sent")
      T.match(got, "Connection: close\r\n")
      T.ok(closed, "the connection is closed after the 401")
      T.eq(#files, 0, "no temp file: " .. table.concat(files, " "))
    end
    T.rss_under(rss_kib(srv.pid) - before, 8 * 1024, "the server's memory did not grow by the bodies")
    -- the token's holder still sends large bodies (to a temp file, gone after)
    local res = call(srv.url, { method = "POST", path = PREFIX .. "write_file", body = string.rep(" ", 3 << 20) .. "{}",
      headers = { Authorization = "Bearer s3cret", ["Content-Type"] = "application/json" } })
    T.eq(res.status, 200)
    T.eq(json.decode(res.body).message, "invalid parameter")
    T.eq(#T.listdir(tmp), 0, "its temp file is gone")
  end, function() os.execute("rm -rf '" .. tmp .. "'") end)
end)

T.test("rock.http.serve on_headers: refuses before the body, admits with its fields, fails closed", function()
  local tmp = HOME .. "/hook"
  os.execute("mkdir -p '" .. tmp .. "'")
  local seen, afters = {}, {}
  local srv = rock.http.serve{ port = 0, tmpdir = tmp,
    on_headers = function(req)
      T.eq(req.body, nil, "no body yet")
      if req.headers["x-deny"] then return { status = 401, body = "no " .. req.path } end
      if req.headers["x-raise"] then error("the hook broke") end
      if req.headers["x-bad"] then return { status = "x" } end
      req.who = req.headers["x-who"]
    end,
    handler = function(req)
      seen[#seen + 1] = req.path
      return { body = (req.who or "-") .. " " .. (req.body_file and "file" or #req.body) }
    end,
    after = function(req, res) afters[#afters + 1] = req.path .. " " .. (res and tostring(res.status or 200) or "nil") end,
  }
  local ok, err = pcall(function()
    local r = call(srv.url, { path = "/a", headers = { ["X-Who"] = "me" }, method = "POST", body = "abc" })
    T.eq(r.status, 200)
    T.eq(r.body, "me 3", "the hook's field, the body")
    r = call(srv.url, { path = "/b", headers = { ["X-Who"] = "big" }, method = "POST", body = string.rep("x", 3 << 20) })
    T.eq(r.body, "big file")
    local got, closed, files = unread_body(srv.port, tmp, nil) -- admitted: its body is stored as it comes
    T.eq(got, "")
    T.ok(#files > 0, "an admitted body goes to its temp file")
    -- refused: no temp file, the connection closes after the answer
    local raw = T.raw_tcp(srv.port, "POST /c HTTP/1.1\r\nHost: x\r\nX-Deny: 1\r\nContent-Length: 33554432\r\n\r\n" ..
      string.rep("y", 1 << 20))
    T.match(raw, "^HTTP/1%.1 401 .*Connection: close\r\n.*no /c$")
    r = call(srv.url, { path = "/d", headers = { ["X-Raise"] = "1" } })
    T.eq(r.status, 500)
    T.match(r.body, "the hook broke")
    r = call(srv.url, { path = "/e", headers = { ["X-Bad"] = "1" } })
    T.eq(r.status, 500)
    T.match(r.body, "bad response status")
    -- pipelined: the refused request ends the connection, nothing after it runs
    raw = T.raw_tcp(srv.port, "GET /f HTTP/1.1\r\nHost: x\r\n\r\nGET /g HTTP/1.1\r\nHost: x\r\nX-Deny: 1\r\n\r\n" ..
      "GET /h HTTP/1.1\r\nHost: x\r\n\r\n")
    T.match(raw, "^HTTP/1%.1 200 .*HTTP/1%.1 401 ")
    T.ok(not raw:find("HTTP/1.1 200.*HTTP/1.1 200"), "nothing after the refusal: " .. raw)
    T.eq(table.concat(seen, " "), "/a /b /f", "the handler saw the admitted only")
    for _ = 1, 50 do if #afters >= 7 then break end rock.sleep(0.01) end
    T.eq(table.concat(afters, " "), "/a 200 /b 200 /c 401 /d nil /e x /f 200 /g 401")
    T.eq(#T.listdir(tmp), 0, "no temp file left")
  end)
  srv:stop()
  os.execute("rm -rf '" .. tmp .. "'")
  if not ok then error(err, 0) end
end)

T.test("the request log escapes what the client chose: no forged line, no terminal escape", function()
  with_serve({ backend = "local" }, function(srv)
    local evil = "rk-x\nrock info serve: GET / - 200 Success 0.1ms\n\27[2J\27]0;owned\7 \255\\"
    T.eq(srv.get("is_alive", { sandbox_id = evil }).status, "Success")
    T.eq(srv.post("stop", { sandbox_id = evil .. "-post" }).status, "Failed")
    local raw = T.raw_tcp(srv.port, "GET /nope%0a\255\254%1b?x=1 HTTP/1.1\r\nHost: 127.0.0.1:" .. srv.port ..
      "\r\nConnection: close\r\n\r\n") -- raw: rock.http would encode the bytes
    T.match(raw, "^HTTP/1%.1 404 ")
    local want = "rk-x\\nrock\\x20info\\x20serve:\\x20GET\\x20/\\x20-\\x20200\\x20Success\\x200.1ms\\n" ..
      "\\x1b[2J\\x1b]0;owned\\x07\\x20\\xff\\\\"
    local log
    for _ = 1, 100 do
      log = srv.log()
      if log:find("/nope", 1, true) and log:find("-post", 1, true) then break end
      rock.sleep(0.02)
    end
    T.ok(log:find("GET " .. PREFIX .. "is_alive " .. want .. " 200 Success ", 1, true), "escaped sandbox id: " .. log)
    T.ok(log:find("POST " .. PREFIX .. "stop " .. want .. "-post 200 Failed ", 1, true), "escaped sandbox id of a POST")
    T.ok(log:find("GET /nope%0a\\xff\\xfe%1b - 404 ", 1, true), "escaped path")
    T.ok(not log:find("\27", 1, true), "no escape byte in the log")
    T.ok(not log:find("\255", 1, true), "no invalid UTF-8 in the log")
    for line in log:gmatch("[^\n]+") do
      T.ok(not line:find("^rock info serve: GET / %- 200 Success 0%.1ms$"), "a forged line: " .. line)
    end
    -- printable UTF-8 is kept as it is
    T.eq(srv.get("is_alive", { sandbox_id = "héllo-日本" }).status, "Success")
    for _ = 1, 100 do
      if srv.log():find("héllo-日本 200", 1, true) then break end
      rock.sleep(0.02)
    end
    T.ok(srv.log():find("is_alive héllo-日本 200 Success", 1, true), "UTF-8 kept")
  end)
end)

T.test("without a token: no web page (Origin, DNS rebinding, text/plain bodies), this host's clients served", function()
  with_serve({ backend = "local" }, function(srv)
    local own = "127.0.0.1:" .. srv.port
    local body = json.encode{ image = "local" }
    local function post(name, headers, b)
      local res = call(srv.url, { method = "POST", path = PREFIX .. name, headers = headers, body = b or body })
      local dok, v = pcall(json.decode, res.body)
      return res.status, dok and v or res.body
    end
    -- a web page's simple requests (no CORS preflight): refused, nothing starts
    for _, ct in ipairs({ "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x", "application/jsonx", "" }) do
      local status, v = post("start_async", ct ~= "" and { ["Content-Type"] = ct } or {})
      T.eq(status, 415, "Content-Type " .. ct)
      T.eq(v.status, "Failed")
      T.eq(v.message, "unsupported media type")
      T.match(v.error, "application/json")
    end
    local status, v = post("execute", { ["Content-Type"] = "text/plain" },
      json.encode{ sandbox_id = "x", command = "id" })
    T.eq(status, 415)
    status, v = post("upload", { ["Content-Type"] = "application/json" }, "{}")
    T.eq(status, 415, "upload wants multipart")
    T.match(v.error, "multipart/form%-data")
    for _, origin in ipairs({ "http://evil.example", "null", "http://127.0.0.1:" .. (srv.port + 1),
        "https://" .. own, "http://" .. own .. ".evil.example" }) do
      status, v = post("start_async", { ["Content-Type"] = "application/json", Origin = origin })
      T.eq(status, 403, "Origin " .. origin)
      T.eq(v.message, "forbidden")
      T.match(v.error, "Origin")
    end
    -- DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends its own Host
    for _, host in ipairs({ "evil.example:" .. srv.port, "evil.example", "127.0.0.1:" .. (srv.port + 1),
        "127.0.0.2:" .. srv.port, "localhost" }) do
      local res = call(srv.url, { path = "/", headers = { Host = host } })
      T.eq(res.status, 403, "Host " .. host)
      T.match(json.decode(res.body).error, "not this server's address")
    end
    T.eq(#srv.get("sandboxes", {}).result.items, 0, "no sandbox started")
    -- this host's clients: ROCK's SDK (JSON, no Origin), curl, the server's own origin
    for _, h in ipairs({ { ["Content-Type"] = "application/json" },
        { ["Content-Type"] = "Application/JSON; charset=utf-8" },
        { ["Content-Type"] = "application/json", Origin = "http://" .. own },
        { ["Content-Type"] = "application/json", Origin = "http://localhost:" .. srv.port, Host = "localhost:" .. srv.port },
        { ["Content-Type"] = "application/json", Host = "LOCALHOST:" .. srv.port } }) do
      status, v = post("sandboxes/batch", h, json.encode{ sandbox_ids = {} })
      T.eq(status, 200, json.encode(h))
      T.eq(v.status, "Success")
    end
    T.eq(call(srv.url, { path = "/", headers = { Host = own } }).status, 200)
    local out = T.sh(string.format("curl -s -H 'Content-Type: application/json' -d '{\"sandbox_ids\": []}' %s",
      api_url(srv, "sandboxes/batch")))
    T.eq(json.decode(out).status, "Success", "curl with -H 'Content-Type: application/json'")
    -- the SDK's flow and the remote backend (JSON and multipart) go on
    local id = S.start_sandbox(srv, { image = "local" })
    T.eq(srv.post("execute", { sandbox_id = id, command = "echo ok" }).result.stdout, "ok\n")
    srv.post("stop", { sandbox_id = id })
    srv.post("delete", { sandbox_id = id })
    local sb = rock.sandbox.start{ base_url = srv.url, image = "local" }
    local src = HOME .. "/up.txt"
    T.write(src, "uploaded")
    local target = HOME .. "/up-target.txt"
    sb:upload{ path = target, file = src }
    T.eq(sb:read_file{ path = target }.content, "uploaded")
    T.eq(sb:execute{ command = { "echo", "remote" } }.stdout, "remote\n")
    sb:stop()
    os.remove(src)
    os.remove(target)
  end)
end)

T.test("--unix-socket under umask 000: the socket and serve.owner are the owner's only", function()
  local home = HOME .. "/unix"
  os.execute("mkdir -p '" .. home .. "'")
  local sock, log = home .. "/rock.sock", home .. "/serve.log"
  local pid = tonumber((T.sh(string.format("umask 000; ROCK_HOME=%s %s serve --unix-socket %s --backend local >%s 2>&1 & echo $!",
    home, T.rock_exe(), sock, log)):match("%d+")))
  local ok, err = pcall(function()
    for _ = 1, 200 do
      if (T.read(log) or ""):find("listening on", 1, true) then break end
      rock.sleep(0.05)
    end
    T.match(T.read(log), "listening on " .. sock:gsub("%p", "%%%0"))
    T.eq(T.sh("stat -c %a " .. sock), "600\n", "the socket's mode")
    T.eq(T.sh("stat -c %a " .. home .. "/serve.owner"), "600\n", "serve.owner's mode")
    local res = call("http://localhost", { path = "/", unix_socket = sock })
    T.eq(res.status, 200)
    res = call("http://localhost", { path = PREFIX .. "sandboxes/batch", method = "POST", unix_socket = sock,
      headers = { ["Content-Type"] = "text/plain" }, body = "{}" })
    T.eq(res.status, 415, "no token here either: JSON bodies only")
  end)
  T.sh("kill -TERM " .. pid)
  for _ = 1, 200 do
    if not T.sh("kill -0 " .. pid .. " 2>/dev/null && echo alive"):find("alive") then break end
    rock.sleep(0.05)
  end
  os.execute("rm -rf '" .. home .. "'")
  if not ok then error(err, 0) end
end)

T.test("no engine answers: an image request is engine_unavailable, nothing runs on the host", function()
  local dead = HOME .. "/no-engine.sock" -- nothing listens there
  local dirs = #T.listdir(HOME .. "/sandboxes")
  with_serve({ backend = "auto",
    env = "DOCKER_HOST=unix://" .. dead .. " ROCK_PODMAN_SOCKET=" .. dead .. " CONTAINER_HOST=" }, function(srv)
    local env = srv.post("start", { image = "rock-test/debian:12" })
    T.eq(env.status, "Failed", json.encode(env))
    T.eq(env.result.rock_code, "engine_unavailable")
    T.match(env.error, "container engine")
    local a = srv.post("start_async", { image = "rock-test/debian:12" })
    T.eq(a.status, "Success")
    local st
    for _ = 1, 200 do
      st = srv.get("get_status", { sandbox_id = a.result.sandbox_id, include_all_states = "true" }).result
      if st.state ~= "pending" then break end
      rock.sleep(0.05)
    end
    T.eq(st.state, "stopped")
    T.eq(st.is_alive, false)
    T.match(st.failure_reason, "container engine")
    local w = srv.post("warmup/tasks", { image = "rock-test/debian:12" })
    T.eq(w.result.rock_code, "engine_unavailable")
    T.ok(not srv.log():find("backend local", 1, true), "no local backend said")
    T.eq(#T.listdir(HOME .. "/sandboxes"), dirs, "no sandbox dir made: nothing ran here")
  end)
  -- in-process, the same choice
  local saved = { os.getenv("DOCKER_HOST"), os.getenv("ROCK_PODMAN_SOCKET"), os.getenv("CONTAINER_HOST") }
  uv.os_setenv("DOCKER_HOST", "unix://" .. dead)
  uv.os_setenv("ROCK_PODMAN_SOCKET", dead)
  uv.os_unsetenv("CONTAINER_HOST")
  local ok2, err2 = pcall(T.raises, "engine_unavailable", rock.sandbox.start, { image = "rock-test/debian:12" })
  for i, k in ipairs({ "DOCKER_HOST", "ROCK_PODMAN_SOCKET", "CONTAINER_HOST" }) do
    if saved[i] then uv.os_setenv(k, saved[i]) else uv.os_unsetenv(k) end
  end
  if not ok2 then error(err2, 0) end
  -- the local backend only when told, and said at start
  local l = S.start{ backend = "local" }
  local said = l.log()
  l.stop()
  T.match(said, "rock warn serve: backend local: sandboxes run on this host as user %S+ %(uid %d+%), unconfined")
end)

T.test("a lease of 2 s: a 8 s command and an 8 s jobs/wait complete, the sandbox runs on, then idle it is reaped", function()
  with_serve({ backend = "local", args = { "--lease", "2" } }, function(srv)
    local id = S.start_sandbox(srv, { image = "local" })
    T.eq(srv.post("create_session", { sandbox_id = id, session = "s" }).status, "Success")
    local job = srv.post("jobs/start", { sandbox_id = id, command = "sleep 8; echo job done" })
    T.eq(job.status, "Success", json.encode(job))
    local t0 = uv.hrtime()
    local tasks = {
      rock.spawn(function()
        return srv.post("run_in_session", { sandbox_id = id, session = "s", command = "sleep 8; echo slept", timeout = 60 })
      end),
      rock.spawn(function()
        return srv.post("jobs/wait", { sandbox_id = id, job_id = job.result.job_id, timeout = 60 })
      end),
    }
    local vals, errs = rock.wait(tasks)
    T.eq(errs[1], nil)
    T.eq(errs[2], nil)
    T.ok((uv.hrtime() - t0) / 1e9 >= 7.5, "they took their 8 s")
    T.eq(vals[1].status, "Success", json.encode(vals[1]))
    T.eq(vals[1].result.output, "slept\n")
    T.eq(vals[2].status, "Success", json.encode(vals[2]))
    T.eq(vals[2].result.exit_code, 0)
    T.match(vals[2].result.output, "job done")
    local st = srv.get("get_status", { sandbox_id = id }).result
    T.eq(st.state, "running")
    T.eq(st.is_alive, true)
    T.eq(srv.post("run_in_session", { sandbox_id = id, session = "s", command = "echo still" }).result.output, "still\n")
    -- idle now: the listing does not renew the lease; reaped within lease + a check or two
    local t1, stopped = uv.hrtime(), nil
    while not stopped and uv.hrtime() - t1 < 20e9 do
      for _, it in ipairs(srv.get("sandboxes", { state = "stopped" }).result.items) do
        if it.sandbox_id == id then stopped = it end
      end
      rock.sleep(0.1)
    end
    T.ok(stopped, "reaped once idle")
    T.ok((uv.hrtime() - t1) / 1e9 >= 1.5, "not before its lease")
    srv.post("delete", { sandbox_id = id })
  end)
end)

T.done()
