-- test_serve_hostile2.lua: `rock serve` under a hostile round after issues
-- 15/16. A bad field is refused at request time, quoted JSON-escaped in
-- the answer; a failed start's log line quotes client-supplied fields (the
-- image name): every message is escaped at the log's sink (c/core/log.c),
-- so no newline or terminal escape a client sends reaches the log raw.
-- The connection cap: clients holding idle or half-sent-header connections
-- no longer lock everyone out (c/http/server.c takes the oldest's place).
-- `--unix-socket PATH` replaces only a dead socket, never a live server's
-- or a file that is not a socket.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local S = dofile(here .. "serve_client.lua")

T.test("hostile start fields forge no log line and send no terminal escape", function()
  -- no engine answers (the sockets named are dead): a start with an image
  -- fails in its task with engine_unavailable, whose log line quotes the
  -- image name, on every machine, touching no engine
  local dead = os.getenv("ROCK_HOME") .. "/no-engine.sock"
  local srv = S.start{ backend = "auto",
    env = "DOCKER_HOST=unix://" .. dead .. " ROCK_PODMAN_SOCKET=" .. dead .. " CONTAINER_HOST=" }
  local evil = "x\nrock warn serve: FORGED line\r\27[31mred\27]0;title\7\194\155x"
  local ok, err = pcall(function()
    -- a bad memory size is refused at request time (admission parses it):
    -- the client's own answer quotes it, JSON-escaped; nothing is started
    local env, res = srv.post("start_async", { image = "rock-test/debian:12", memory = evil })
    T.eq(env.status, "Failed", rock.json.encode(env))
    T.eq(env.result.rock_code, "invalid_argument")
    T.eq(env.error, "memory: bad size '" .. evil .. "' (bytes, or a number with k, m, g or t)",
      "the refusal names the field and quotes the value as sent")
    T.ok(not res.body:find("\27", 1, true) and not res.body:find("\r", 1, true) and res.body:find("\\u001b", 1, true),
      "the answer carries it JSON-escaped: " .. res.body)
    T.eq(#srv.get("sandboxes", { page_size = 10 }).result.items, 0, "refused: no sandbox")
    -- an image name past request time: the failed start's log line quotes it
    local taken = srv.post("start_async", { image = "rock-test-tmp/none:1" .. evil, memory = "1g" })
    T.eq(taken.status, "Success", "the start is taken: " .. rock.json.encode(taken))
    T.wait_until("the failure is logged", function() return srv.log():find("FORGED", 1, true) end, 30)
    T.eq(srv.get("get_status", { sandbox_id = taken.result.sandbox_id, include_all_states = "true" }).result.state,
      "stopped", "its start failed")
  end)
  local log = srv.log()
  srv.kill("TERM"); srv.wait() -- (removes the log)
  if not ok then error(err, 0) end
  for line in log:gmatch("[^\n]+") do
    T.ok(line:match("^rock %a+ [%w_]+: ") or line:match("^rock serve: "), "a line of rock's: " .. line)
  end
  T.ok(not log:find("\nrock warn serve: FORGED", 1, true), "no forged line: " .. log)
  T.ok(not log:find("\27", 1, true), "no ESC")
  T.ok(not log:find("\r", 1, true), "no CR")
  T.ok(not log:find("\7", 1, true), "no BEL")
  T.ok(not log:find("\194\155", 1, true), "no C1 CSI")
  T.ok(log:find("image rock-test-tmp/none:1x\\nrock warn serve: FORGED line\\r\\x1b[31mred\\x1b]0;title\\x07\\xc2\\x9bx needs",
    1, true), "escaped, readable: " .. log)
end)

T.test("the sink escapes every message, whoever logs it", function()
  -- a recipe's own rock.log line goes through the same sink
  local out = T.sh("ROCK_LOG=info " .. T.rock_exe() .. " -e 'require(\"rock\").log(\"warn\", \"a\\nrock error x: forged\\27[0m caf\\195\\169 \\\\ ok\")' 2>&1")
  T.eq(out, "rock warn lua: a\\nrock error x: forged\\x1b[0m caf\195\169 \\ ok\n", "one line, UTF-8 and backslashes kept")
end)

-- open n connections that each send `bytes` and hold on; returns them
local function hold(port, n, bytes)
  local conns, closed = {}, 0
  for i = 1, n do
    local tcp = rock.uv.new_tcp()
    conns[i] = tcp
    rock.await(function(done)
      tcp:connect("127.0.0.1", port, function(err)
        assert(not err, err)
        if bytes ~= "" then tcp:write(bytes) end
        tcp:read_start(function(_, chunk) if not chunk then closed = closed + 1 end end)
        done()
      end)
    end)
  end
  return conns, function() return closed end
end

T.test("a full server of idle and half-sent connections still answers a real request", function()
  local srv = rock.http.serve{ port = 0, max_conns = 8, handler = function(req)
    if req.path == "/slow" then rock.sleep(5) end
    return { status = 200, body = "ok" }
  end }
  local port = tonumber(srv.url:match(":(%d+)$"))
  for _, shape in ipairs({ { "idle", "" }, { "half-sent headers", "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " } }) do
    local conns, closed = hold(port, 8, shape[2])
    rock.sleep(0.05)
    for i = 1, 3 do
      local r = rock.http.request{ url = srv.url .. "/", timeout = 5 }
      T.eq(r.status, 200, shape[1] .. ": request " .. i .. " answered")
    end
    T.ok(closed() >= 1, shape[1] .. ": the oldest held ones were closed for them")
    for _, c in ipairs(conns) do if not c:is_closing() then c:close() end end
  end
  -- requests in flight are never closed for a new one
  local inflight = {}
  for i = 1, 8 do
    inflight[i] = rock.spawn(function() return rock.http.request{ url = srv.url .. "/slow", timeout = 20 } end)
  end
  rock.sleep(0.3)
  local ok = pcall(rock.http.request, { url = srv.url .. "/", timeout = 2 })
  for i = 1, 8 do
    local r = rock.wait(inflight[i])
    T.eq(r.status, 200, "in flight " .. i .. " answered")
  end
  T.ok(not ok, "a full server of requests in flight refuses a ninth")
  srv:stop{ timeout = 1 }
end)

T.test("--unix-socket replaces only a dead socket", function()
  local dir = T.sh("mktemp -d /tmp/rock-serve-hostile2.XXXXXX"):gsub("%s+$", "")
  local sock = dir .. "/rock.sock"
  local function serve(home, path)
    os.execute("mkdir -p '" .. home .. "'")
    local log = home .. "/serve.log"
    local pid = tonumber((T.sh(string.format("ROCK_HOME=%s %s serve --unix-socket %s --backend local >%s 2>&1 & echo $!",
      home, T.rock_exe(), path, log)):match("%d+")))
    return pid, log
  end
  local function alive(pid) return T.sh("kill -0 " .. pid .. " 2>/dev/null && echo y") == "y\n" end
  local function wait_log(log, what)
    T.wait_until(what, function() return (T.read(log) or ""):find(what, 1, true) end, 20)
  end
  local function answers(path)
    local ok, res = pcall(rock.http.request, { url = "http://localhost/", unix_socket = path, timeout = 5 })
    return ok and res.status == 200
  end
  local a, alog = serve(dir .. "/a", sock)
  local pids = { a }
  local ok, err = pcall(function()
    wait_log(alog, "listening on")
    T.ok(answers(sock), "the first server answers")
    -- a second server on the live socket: a clear error, the first untouched
    local b, blog = serve(dir .. "/b", sock)
    pids[#pids + 1] = b
    T.wait_until("the second server exits", function() return not alive(b) end, 20)
    T.match(T.read(blog), "cannot listen on " .. sock:gsub("%p", "%%%0") .. ": a server is listening there")
    T.ok(answers(sock), "the first server still answers on its socket")
    -- a regular file is never removed
    local file = dir .. "/not-a-socket"
    T.write(file, "precious\n")
    local c, clog = serve(dir .. "/c", file)
    pids[#pids + 1] = c
    T.wait_until("the third server exits", function() return not alive(c) end, 20)
    T.match(T.read(clog), "it exists and is not a socket")
    T.eq(T.read(file), "precious\n", "the file is kept")
    -- a dead server's socket is replaced
    T.sh("kill -9 " .. a)
    T.wait_until("the first server is gone", function() return not alive(a) end, 20)
    T.ok(T.sh("test -S " .. sock .. " && echo y") == "y\n", "its socket file is left")
    local d, dlog = serve(dir .. "/d", sock)
    pids[#pids + 1] = d
    wait_log(dlog, "listening on")
    T.ok(answers(sock), "a new server took the dead socket")
  end)
  for _, pid in ipairs(pids) do T.sh("kill -9 " .. pid .. " 2>/dev/null") end
  for _, pid in ipairs(pids) do T.wait_until("server " .. pid .. " gone", function() return not alive(pid) end, 20) end
  T.sh("rm -rf '" .. dir .. "'")
  if not ok then error(err, 0) end
end)

T.done()
