-- `rock serve` driven over real HTTP (issue 9): ROCK's SDK flow end to end,
-- every endpoint with bad input, tokens, leases, metrics, many clients at
-- once, and a recipe run in-process and through base_url. On the local
-- backend by default; ROCK_TEST_BACKEND/ROCK_TEST_IMAGE run it in docker
-- and podman (tests/CMakeLists.txt).
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local S = dofile(here .. "serve_client.lua")
local json = rock.json

local backend = os.getenv("ROCK_TEST_BACKEND") or "local"
local image = os.getenv("ROCK_TEST_IMAGE") or "local"
local srv = S.start{ backend = backend }
local function ok(env, what)
  if type(env) ~= "table" or env.status ~= "Success" then
    error((type(what) == "string" and what or "call") .. ": " .. json.encode(env), 2)
  end
  return env.result
end

T.test("GET / answers as ROCK's does; /metrics speaks Prometheus", function()
  local res = srv.raw{ path = "/" }
  T.eq(res.status, 200)
  T.eq(json.decode(res.body).message, "hello, ROCK!")
  local m = srv.raw{ path = "/metrics" }
  T.eq(m.status, 200)
  T.match(m.headers["content-type"], "^text/plain")
  T.match(m.body, "# TYPE rock_sandboxes gauge")
  T.match(m.body, 'rock_sandboxes{state="running"} %d+')
  T.match(m.body, "rock_leases_expired_total 0")
  T.eq(srv.raw{ path = "/nope" }.status, 404)
end)

T.test("histograms: cumulative buckets, +Inf, sum and count", function()
  local m = require("rock.serve.metrics").new()
  for _, v in ipairs({ 0.0001, 0.003, 0.004, 100, 1000 }) do m:observe("rock_command_seconds", v) end
  local text = m:render({})
  T.match(text, 'rock_command_seconds_bucket{le="0.0005"} 1\n')
  T.match(text, 'rock_command_seconds_bucket{le="0.001"} 1\n')
  T.match(text, 'rock_command_seconds_bucket{le="0.005"} 3\n')
  T.match(text, 'rock_command_seconds_bucket{le="60"} 3\n')
  T.match(text, 'rock_command_seconds_bucket{le="300"} 4\n')
  T.match(text, 'rock_command_seconds_bucket{le="%+Inf"} 5\n')
  T.match(text, "rock_command_seconds_count 5\n")
  T.match(text, "rock_command_seconds_sum 1100.0071\n")
end)

T.test("a request's log line (method, path, sandbox, status, envelope, ms) is out within a second", function()
  local env = srv.get("is_alive", { sandbox_id = "rk-log-probe" })
  T.eq(env.status, "Success")
  local want = "rock info serve: GET /apis/envs/sandbox/v1/is_alive rk%-log%-probe 200 Success [%d.]+ms\n"
  local t0 = rock.uv.hrtime()
  while not srv.log():find(want) and rock.uv.hrtime() - t0 < 1e9 do rock.sleep(0.01) end
  T.match(srv.log(), want)
  T.match(srv.log(), "rock info serve: GET / %- 200  [%d.]+ms\n", "the first test's GET / too")
end)

T.test("the SDK's flow: start_async, status polling, sessions, a nohup job, files, stop, delete", function()
  local id, st = S.start_sandbox(srv, { image = image, auto_clear_time_minutes = 30, auto_clear_time = 30,
    memory = "2g", cpus = 1 }, { ["X-User-Id"] = "u1", ["X-Experiment-Id"] = "exp-7", ["X-Namespace"] = "ns" })
  T.eq(st.state, "running")
  T.eq(st.is_alive, true)
  T.eq(st.user_id, "u1")
  T.eq(st.experiment_id, "exp-7")
  T.eq(st.namespace, "ns")
  T.eq(st.status.rocklet_ready.status, "success")
  T.ok(type(st.state_history) == "table" and #st.state_history >= 1, "state_history")
  T.eq(ok(srv.get("is_alive", { sandbox_id = id })).is_alive, true)
  T.eq(ok(srv.post("create_session", { sandbox_id = id, session = "bash-1", session_type = "bash",
    startup_source = {}, env_enable = false, env = json.null, startup_timeout = 1.0, max_read_size = 2000 })).session_type, "bash")
  local r = ok(srv.post("run_in_session", { sandbox_id = id, action_type = "bash", session = "bash-1",
    command = "echo hi; export KEEP=1", check = "ignore", timeout = 30 }))
  T.eq(r.output, "hi\n")
  T.eq(r.exit_code, 0)
  T.eq(r.failure_reason, "")
  -- a failing command with check=raise is a Failed envelope (the SDK's signal)
  local f = srv.post("run_in_session", { sandbox_id = id, session = "bash-1", command = "false" })
  T.eq(f.status, "Failed")
  T.eq(f.message, "run in session failed")
  T.eq(f.result.code, 6000)
  -- ROCK's SDK's arun(mode="nohup"): start, poll kill -0, read the file
  local tmp = backend == "local" and T.sh("mktemp -d"):gsub("%s+$", "") or "/tmp"
  local out = tmp .. "/nohup.out"
  r = ok(srv.post("run_in_session", { sandbox_id = id, session = "bash-1", check = "ignore",
    command = "nohup bash -c 'sleep 1; echo job done; exit 3' < /dev/null > " .. out .. " 2>&1 & echo PIDSTART${!}PIDEND;disown" }))
  local pid = r.output:match("PIDSTART(%d+)PIDEND")
  T.ok(pid, "pid printed: " .. r.output)
  local polls = 0
  while srv.post("run_in_session", { sandbox_id = id, session = "bash-1", command = "kill -0 " .. pid }).status == "Success" do
    polls = polls + 1
    T.ok(polls < 100, "the job ends")
    rock.sleep(0.2)
  end
  T.eq(ok(srv.post("run_in_session", { sandbox_id = id, session = "bash-1", command = "cat " .. out })).output, "job done\n")
  -- execute, files, upload
  local x = ok(srv.post("execute", { sandbox_id = id, command = { "sh", "-c", "echo out; echo err >&2; exit 4" } }))
  T.eq(x.stdout, "out\n")
  T.eq(x.stderr, "err\n")
  T.eq(x.exit_code, 4)
  T.eq(ok(srv.post("execute", { sandbox_id = id, command = "echo $((6*7))", shell = true })).stdout, "42\n")
  T.eq(ok(srv.post("write_file", { sandbox_id = id, path = tmp .. "/d/f.txt", content = "héllo\n" })).success, true)
  T.eq(ok(srv.post("read_file", { sandbox_id = id, path = tmp .. "/d/f.txt" })).content, "héllo\n")
  local boundary = "XyZbound"
  local body = table.concat({
    "--" .. boundary, 'Content-Disposition: form-data; name="sandbox_id"', "", id,
    "--" .. boundary, 'Content-Disposition: form-data; name="target_path"', "", tmp .. "/up/bin.dat",
    "--" .. boundary, 'Content-Disposition: form-data; name="file"; filename="bin.dat"',
    "Content-Type: application/octet-stream", "", "\0\1\2\255binary\r\n--not-the-boundary",
    "--" .. boundary .. "--", "" }, "\r\n")
  local up, res = srv.post("upload", body, { ["Content-Type"] = "multipart/form-data; boundary=" .. boundary })
  T.eq(res.status, 200)
  T.eq(ok(up, "upload").file_name, "bin.dat")
  local back = ok(srv.post("read_file", { sandbox_id = id, path = tmp .. "/up/bin.dat", encoding = "base64" }))
  T.eq(rock.core.base64_decode(back.content), "\0\1\2\255binary\r\n--not-the-boundary")
  T.eq(ok(srv.post("close_session", { sandbox_id = id, session = "bash-1", session_type = "bash" })).session_type, "bash")
  local gt = srv.get("get_token", { account = "primary" })
  T.eq(gt.status, "Failed")
  -- delete before stop is refused; stop, then delete; unknown delete is a no-op
  T.eq(srv.post("delete", { sandbox_id = id }).status, "Failed")
  T.eq(ok(srv.post("stop", { sandbox_id = id })), id .. " stopped")
  local gs = srv.get("get_status", { sandbox_id = id })
  T.eq(gs.status, "Failed")
  T.eq(gs.error, "Sandbox " .. id .. " not found")
  local all = ok(srv.get("get_status", { sandbox_id = id, include_all_states = "True" }))
  T.eq(all.state, "stopped")
  T.eq(all.is_alive, false)
  T.eq(ok(srv.post("delete", { sandbox_id = id })), id .. " deleted")
  T.eq(ok(srv.post("delete", { sandbox_id = "rk-nope" })), "rk-nope deleted")
  if backend == "local" then os.execute("rm -rf '" .. tmp .. "'") end
end)

T.test("bad input on every endpoint: invalid parameter or Failed, the server still answers", function()
  local posts = { "start", "start_async", "restart", "create_session", "run_in_session", "close_session",
    "execute", "read_file", "write_file", "stop", "delete", "commit", "sandboxes/batch", "interrupt", "editor" }
  for _, name in ipairs(posts) do
    for _, body in ipairs({ "{not json", "[1,2]", "", "null", '"str"', json.encode{ sandbox_id = "" },
        json.encode{ sandbox_id = "   " }, json.encode{ sandbox_id = 42 }, json.encode{ sandbox_id = "rk-unknown", path = 5, command = {} } }) do
      local env, res = srv.post(name, body)
      T.eq(res.status, 200, name .. " " .. body)
      if not (name == "delete" and body:find("rk-unknown", 1, true)) then -- ROCK: deleting an unknown id is a no-op
        T.eq(env.status, "Failed", name .. " " .. body)
        T.ok(type(env.error) == "string" and #env.error > 0, "the reason is said")
      end
    end
  end
  local env = srv.post("run_in_session", { sandbox_id = "rk-unknown", command = "ls" })
  T.eq(env.status, "Failed")
  T.match(env.error, "not found")
  env = srv.post("start_async", { image = "   " })
  T.eq(env.message, "invalid parameter")
  T.match(env.error, "^body%.image")
  env = srv.post("start_async", {})
  T.eq(env.message, "invalid parameter")
  T.eq(env.result, json.null)
  for _, name in ipairs({ "get_status", "is_alive", "get_sandbox_statistics" }) do
    local e2 = srv.get(name, {})
    T.eq(e2.status, "Failed", name)
  end
  local il = ok(srv.get("is_alive", { sandbox_id = "rk-unknown" }))
  T.eq(il.is_alive, false)
  T.eq(il.message, "sandbox rk-unknown is alive failed")
  -- wrong methods, huge bodies, truncated and garbage requests
  T.eq(srv.raw{ method = "GET", path = "/apis/envs/sandbox/v1/start" }.status, 405)
  -- a body past 32 MiB: 413 before it is read, then the connection closes
  -- (a client still sending may see the close before the answer)
  local hok, huge = pcall(srv.raw, { method = "POST", path = "/apis/envs/sandbox/v1/write_file",
    body = string.rep("x", 40 << 20), headers = { ["Content-Type"] = "application/json" } })
  if hok then T.eq(huge.status, 413) else T.ok(rock.errors.is(huge), tostring(huge)) end
  local raw = T.sh(string.format("printf 'POST /apis/envs/sandbox/v1/stop HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 100\\r\\n\\r\\n{\"sa' | timeout 5 curl -s --max-time 2 telnet://127.0.0.1:%d; printf 'GARBAGE\\r\\n\\r\\n' | timeout 5 curl -s --max-time 2 telnet://127.0.0.1:%d", srv.port, srv.port))
  T.ok(raw ~= nil, "sent")
  T.eq(srv.raw{ path = "/" }.status, 200) -- still up
end)

T.test("two hundred requests from several clients at once, no error", function()
  local id = S.start_sandbox(srv, { image = image })
  ok(srv.post("create_session", { sandbox_id = id, session = "s" }))
  local tasks = {}
  for c = 1, 8 do
    tasks[c] = rock.spawn(function()
      local bad = 0
      for i = 1, 25 do
        local env
        if i % 3 == 0 then env = srv.get("get_status", { sandbox_id = id })
        elseif i % 3 == 1 then env = srv.post("execute", { sandbox_id = id, command = { "echo", tostring(i) } })
        else env = srv.get("is_alive", { sandbox_id = id }) end
        if env.status ~= "Success" then bad = bad + 1 end
      end
      return bad
    end)
  end
  local values, errs = rock.wait(tasks)
  for c = 1, 8 do
    T.eq(errs[c], nil)
    T.eq(values[c], 0)
  end
  local list = ok(srv.get("sandboxes", { state = "running" }))
  T.ok(list.total >= 1, "listed")
  local found = false
  for _, it in ipairs(list.items) do if it.sandbox_id == id then found = true end end
  T.ok(found, "the sandbox is in the list")
  T.eq(#ok(srv.post("sandboxes/batch", { sandbox_ids = { id, "rk-nope" } })).statuses, 1)
  ok(srv.post("stop", { sandbox_id = id }))
  ok(srv.post("delete", { sandbox_id = id }))
end)

T.test("a client that goes away mid-command: the command is interrupted, the session free", function()
  local id = S.start_sandbox(srv, { image = image })
  ok(srv.post("create_session", { sandbox_id = id, session = "g" }))
  local sleep = string.format("sleep 47.%d", math.random(1, 1 << 30))
  local gave_up = pcall(srv.raw, { method = "POST", path = "/apis/envs/sandbox/v1/run_in_session", timeout = 1,
    body = json.encode{ sandbox_id = id, session = "g", command = sleep, check = "ignore" } })
  T.eq(gave_up, false) -- the client's own timeout
  -- without the cancel the session would stay busy for 47 s
  local r = ok(srv.post("run_in_session", { sandbox_id = id, session = "g", command = "echo free", timeout = 20 }))
  T.eq(r.output, "free\n")
  T.eq((T.sh("ps -eo args | grep -cx '" .. sleep .. "'"):match("%d+")), "0")
  ok(srv.post("stop", { sandbox_id = id }))
  ok(srv.post("delete", { sandbox_id = id }))
end)

T.test("a lapsed lease: the server stops the sandbox and counts it", function()
  local id = S.start_sandbox(srv, { image = image, auto_clear_time_minutes = 0.03 }) -- ~2 s
  -- get_status would renew the lease: watch the listing, which does not
  local stopped = false
  for _ = 1, 200 do
    for _, it in ipairs(ok(srv.get("sandboxes", { state = "stopped" })).items) do
      if it.sandbox_id == id then stopped = true end
    end
    if stopped then break end
    rock.sleep(0.1)
  end
  T.ok(stopped, "stopped by the server")
  local st = srv.get("get_status", { sandbox_id = id, include_all_states = true })
  T.eq(st.result.state, "stopped")
  T.eq(st.result.state_history[#st.result.state_history].event, "lease_expired")
  T.match(srv.raw{ path = "/metrics" }.body, "rock_leases_expired_total [1-9]")
  ok(srv.post("delete", { sandbox_id = id }))
end)

T.test("the same recipe in-process and through base_url", function()
  local function recipe(opts)
    local sb = rock.sandbox.start(opts)
    sb:create_session{ session = "r" }
    local a = sb:run_in_session{ session = "r", command = "cd /tmp && echo $PWD && printf 'x%.0s' 1 2 3", timeout = 30 }
    local t = sb:run_in_session{ session = "r", command = "sleep 10", timeout = 1 }
    local b = sb:run_in_session{ session = "r", command = "echo still $PWD", timeout = 30 }
    local e = sb:execute{ command = { "sh", "-c", "exit 5" } }
    local path = "/tmp/rock-serve-" .. sb.id .. ".bin"
    sb:write_file{ path = path, content = "\0\255bytes" }
    local rf = sb:read_file{ path = path, binary = true }
    sb:execute{ command = { "rm", "-f", path } }
    local bad = pcall(sb.run_in_session, sb, { session = "nope", command = "ls" })
    local job = sb:arun{ command = "echo in the background; exit 3", mode = "nohup", wait = false }
    local jr = job:wait(30)
    sb:stop()
    return { a.output, a.exit_code, t.failure_reason, b.output, e.exit_code, rf.content, bad, jr.exit_code, jr.output }
  end
  local so = T.sandbox_opts()
  if backend == "local" then so.image = nil end
  local mine = recipe(so)
  local remote = recipe({ base_url = srv.url, image = image })
  for i = 1, 9 do T.eq(remote[i], mine[i], "result " .. i) end
  T.eq(mine[3], "timeout")
  T.eq(mine[8], 3)
end)

T.test("a remote upload streams its body: 24 MB through base_url, the bytes arrive, RSS stays small", function()
  local src = os.getenv("ROCK_HOME") .. "/up.bin"
  local _, made = T.sh("head -c 25165824 /dev/urandom > " .. src)
  T.ok(made, "the file is made")
  local want = T.sh("md5sum < " .. src):match("%x+")
  local sb = rock.sandbox.start{ base_url = srv.url, image = image }
  local target = "/tmp/rock-serve-up-" .. sb.id .. ".bin"
  collectgarbage()
  local before = T.rss_kib()
  sb:upload{ path = target, file = src }
  local grown = T.rss_kib() - before
  local r = sb:execute{ command = { "sh", "-c", "md5sum < " .. target .. "; rm -f " .. target } }
  sb:stop()
  os.remove(src)
  T.eq((r.stdout or r.output or ""):match("%x+"), want, "the same bytes")
  print(string.format("   rss grew %d KiB for a 24 MB remote upload", grown))
  T.rss_under(grown, 16 * 1024, "RSS grew less than 16 MiB")
end)

T.test("a remote upload on a full disk: none on the host, none on the node (relayed: its full $TMPDIR does not " ..
    "matter); the sandbox's full disk is io_error, no temp file left, the sandbox goes on", function()
  local src = os.getenv("ROCK_HOME") .. "/up-full.bin"
  local _, made = T.sh("head -c 2097152 /dev/urandom > " .. src)
  T.ok(made, "the file is made")
  local want = T.sh("md5sum < " .. src):match("%x+")
  local old = os.getenv("TMPDIR")
  local ok, mounted = pcall(T.with_tmpfs, os.getenv("ROCK_HOME") .. "/tmpfull", 256, function(dir)
    -- the host's $TMPDIR full: the upload is streamed from the file, no temp file is made
    local sb = rock.sandbox.start{ base_url = srv.url, image = image }
    local target = "/tmp/rock-serve-full-" .. sb.id .. ".bin"
    rock.uv.os_setenv("TMPDIR", dir)
    local up, err = pcall(sb.upload, sb, { path = target, file = src })
    if old then rock.uv.os_setenv("TMPDIR", old) else rock.uv.os_unsetenv("TMPDIR") end
    T.ok(up, "the upload needs no host temp file: " .. tostring(err))
    T.eq(sb:execute{ command = { "sh", "-c", "md5sum < " .. target .. "; rm -f " .. target } }.stdout:match("%x+"), want)
    sb:stop()
    -- the node's $TMPDIR full: the body (past body_to_file) is not stored there but relayed into the sandbox
    local srv2 = S.start{ backend = backend, home = os.getenv("ROCK_HOME") .. "/full-node", env = "TMPDIR=" .. dir }
    local ok2, err2 = pcall(function()
      local sb2 = rock.sandbox.start{ base_url = srv2.url, image = image }
      sb2:upload{ path = target, file = src }
      T.eq(sb2:execute{ command = { "sh", "-c", "md5sum < " .. target .. "; rm -f " .. target } }.stdout:match("%x+"),
        want, "whole past the node's full $TMPDIR")
      T.eq(T.sh("ls -A " .. dir), "", "nothing stored on the node")
      if backend == "local" then -- the sandbox's disk full (a local sandbox's files are this host's)
        local inside = dir .. "/up.bin"
        local up2, e2 = pcall(sb2.upload, sb2, { path = inside, file = src })
        T.ok(not up2, "the upload failed")
        T.ok(rock.errors.is(e2, "io_error"), "io_error: " .. tostring(e2))
        T.match(tostring(e2.message), "No space left")
        T.eq(T.sh("ls -A " .. dir), "", "no temp file left")
        local fits = os.getenv("ROCK_HOME") .. "/fits.txt"
        T.write(fits, "fits") -- a small one goes in
        sb2:upload{ path = inside, file = fits }
        T.eq(sb2:read_file{ path = inside }.content, "fits")
        os.remove(fits)
        sb2:execute{ command = { "rm", "-f", inside } }
      end
      sb2:stop()
    end)
    srv2.stop()
    if not ok2 then error(err2, 0) end
  end)
  if old then rock.uv.os_setenv("TMPDIR", old) else rock.uv.os_unsetenv("TMPDIR") end
  os.remove(src)
  if not ok then error(mounted, 0) end
  T.ok(mounted, "tmpfs mounted (needs root)")
end)

T.test("tokens: a non-loopback bind needs one; every request is checked", function()
  local home = T.sh("mktemp -d"):gsub("%s+$", "")
  -- no token, not loopback: refused at start
  local out, started = T.sh(string.format("ROCK_HOME=%s timeout 20 %s serve --host 127.0.0.2 --port 0 --backend local",
    home, T.rock_exe()))
  T.ok(not started, "it did not serve")
  T.match(out, "needs a token")
  local s2 = S.start{ host = "127.0.0.2", backend = "local", home = home, args = { "--token", "s3cret" } }
  local ok2, err = pcall(function()
    local _, res = srv.get("is_alive", { sandbox_id = "x" }) -- the loopback server needs none
    T.eq(res.status, 200)
    local env, r = s2.get("is_alive", { sandbox_id = "x" })
    T.eq(r.status, 401)
    T.eq(env.status, "Failed")
    s2.token = "wrong"
    T.eq(select(2, s2.get("is_alive", { sandbox_id = "x" })).status, 401)
    s2.token = "s3cret"
    T.eq(select(2, s2.get("is_alive", { sandbox_id = "x" })).status, 200)
    s2.token = nil
    T.eq(select(2, s2.get("is_alive", { sandbox_id = "x" }, { ["X-Key"] = "s3cret" })).status, 200)
    T.eq(s2.raw{ path = "/", headers = { Authorization = "Bearer s3cret" } }.status, 200)
    T.eq(s2.raw{ path = "/metrics" }.status, 401)
  end)
  s2.stop()
  os.execute("rm -rf '" .. home .. "'")
  if not ok2 then error(err, 0) end
end)

srv.stop()
T.done()
