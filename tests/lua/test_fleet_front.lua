-- test_fleet_front.lua: a front `rock serve --nodes ...` over three real
-- `rock serve` nodes (local backend, small real sandboxes; budgets are
-- accounting only), driven over real HTTP as ROCK's SDK drives one node:
-- start_async + get_status (the sandbox lives on a node under the same
-- id), sessions, files, upload, stop and delete through the front; its
-- PUT .../file relayed at each hop (nothing stored on the way, a client
-- gone mid-body ends both hops); GET .../node is the pool's aggregate; wait=false is refused at once
-- when no node has room; ROCK_NODES and @FILE name the nodes too; a node
-- killed with kill -9 is down in the aggregate and its sandbox's calls
-- through the front fail node_lost.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local S = dofile(here .. "serve_client.lua")
local json = rock.json

local GB = 1 << 30
local IMAGE = "rock-test/debian:12" -- local backend nodes: the image is recorded, not run
local BUDGET = { "--budget-cpu", "8", "--budget-memory-gb", "32", "--max-starting", "4" }

local home = T.sh("mktemp -d /tmp/rock-front-test.XXXXXX"):gsub("%s+$", "")
local nodes = {}
for i = 1, 3 do
  T.sh("mkdir -p " .. home .. "/n" .. i .. "/tmp")
  nodes[i] = S.start{ backend = "local", args = BUDGET, home = home .. "/n" .. i,
    env = "TMPDIR=" .. home .. "/n" .. i .. "/tmp" }
end
local list = nodes[1].url .. "," .. nodes[2].url .. "," .. nodes[3].url
T.sh("mkdir -p " .. home .. "/front/tmp")
local front = S.start{ args = { "--nodes", list }, home = home .. "/front", env = "TMPDIR=" .. home .. "/front/tmp" }

local function ok(env, what)
  T.eq(env.status, "Success", (type(what) == "string" and what or "call") .. ": " .. json.encode(env))
  return env.result
end

-- what a failed test left, stopped through the front, so the next starts afresh
local test = T.test
T.test = function(name, fn)
  local env = front.get("sandboxes", { page_size = 500 })
  for _, it in ipairs(env.status == "Success" and env.result.items or {}) do
    front.post("stop", { sandbox_id = it.sandbox_id })
    front.post("delete", { sandbox_id = it.sandbox_id })
  end
  return test(name, fn)
end

-- which node holds sandbox id (the front starts it there under its own id)
local function node_of(id)
  for i, n in ipairs(nodes) do
    if n.alive ~= false then
      local st = n.get("get_status", { sandbox_id = id })
      if st.status == "Success" then return i, st.result end
    end
  end
end

T.test("the front places, serves the data plane and stops, as one node does", function()
  T.match(T.read(front.log_path), "a front of 3 node%(s%)")
  local ids, on = {}, {}
  for i = 1, 3 do
    local id, st = S.start_sandbox(front, { image = IMAGE, cpus = 4, memory = "16g" })
    ids[i] = id
    T.eq(st.state, "running")
    T.eq(st.host_ip, "127.0.0.1", "get_status names the node's address")
    T.ok(type(st.host_name) == "string" and st.host_name ~= "", "and its name")
    local n = node_of(id)
    T.ok(n, "the sandbox is on a node under the same id")
    T.eq(st.node_url, nodes[n].url, "get_status names the node that holds it")
    on[n] = (on[n] or 0) + 1
  end
  T.eq(on[1], 1); T.eq(on[2], 1); T.eq(on[3], 1) -- spread (the default)
  local id = ids[1]
  ok(front.post("create_session", { sandbox_id = id, session = "s" }), "create_session")
  T.eq(ok(front.post("run_in_session", { sandbox_id = id, session = "s", command = "echo $((40 + 2))" })).output, "42\n")
  local failed = ok(front.post("run_in_session", { sandbox_id = id, session = "s", command = "false", check = "ignore" }))
  T.eq(failed.exit_code, 1)
  local tmp = ok(front.post("execute", { sandbox_id = id, command = "mktemp -d", shell = true })).stdout:gsub("%s+$", "")
  T.eq(ok(front.post("write_file", { sandbox_id = id, path = tmp .. "/f.txt", content = "héllo\n" })).success, true)
  T.eq(ok(front.post("read_file", { sandbox_id = id, path = tmp .. "/f.txt" })).content, "héllo\n")
  local boundary = "XyZbound"
  local body = table.concat({
    "--" .. boundary, 'Content-Disposition: form-data; name="sandbox_id"', "", id,
    "--" .. boundary, 'Content-Disposition: form-data; name="target_path"', "", tmp .. "/bin.dat",
    "--" .. boundary, 'Content-Disposition: form-data; name="file"; filename="bin.dat"',
    "Content-Type: application/octet-stream", "", "\0\1\2\255binary",
    "--" .. boundary .. "--", "" }, "\r\n")
  ok(front.post("upload", body, { ["Content-Type"] = "multipart/form-data; boundary=" .. boundary }), "upload")
  local back = ok(front.post("read_file", { sandbox_id = id, path = tmp .. "/bin.dat", encoding = "base64" }))
  T.eq(rock.core.base64_decode(back.content), "\0\1\2\255binary")
  ok(front.post("execute", { sandbox_id = id, command = { "rm", "-rf", tmp } }))
  -- the aggregate: three nodes' budgets, what the three sandboxes reserve
  local r = ok(front.get("node"), "node")
  T.eq(r.backend, "fleet")
  T.eq(r.healthy, true)
  T.eq(r.nodes_up, 3); T.eq(#r.nodes, 3)
  T.eq(r.budget.cpus, 24); T.eq(r.budget.memory, 96 * GB)
  T.eq(r.reserved.cpus, 12); T.eq(r.reserved.memory, 48 * GB)
  T.eq(r.running, 3)
  for _, n in ipairs(r.nodes) do T.eq(n.up, true, n.url) end
  T.match(front.raw{ path = "/metrics" }.body, 'rock_fleet_node_up{url="' .. nodes[1].url:gsub("%p", "%%%0") .. '"} 1')
  -- stop and delete through the front reach the node
  for _, x in ipairs(ids) do
    T.eq(ok(front.post("stop", { sandbox_id = x })), x .. " stopped")
    ok(front.post("delete", { sandbox_id = x }))
    T.eq(node_of(x), nil, x .. " is gone from its node")
  end
end)

T.test("wait=false is refused at once when no node has room; a waiting start takes the room freed", function()
  local ids = {}
  for i = 1, 6 do ids[i] = S.start_sandbox(front, { image = IMAGE, cpus = 4, memory = "16g" }) end
  local env = front.post("start_async", { image = IMAGE, cpus = 4, memory = "16g", wait = false })
  local id = ok(env).sandbox_id -- start_async answers at once; the start itself is refused
  local st
  T.wait_until("the refused start ends", function()
    st = ok(front.get("get_status", { sandbox_id = id, include_all_states = "true" }))
    return st.state ~= "pending"
  end, 10)
  T.eq(st.state, "stopped")
  T.match(tostring(st.failure_reason), "no node has room now for 4 CPU / 16 GB")
  -- a start that may wait is queued in the front's pool until a stop frees room
  local env2 = ok(front.post("start_async", { image = IMAGE, cpus = 4, memory = "16g" }))
  rock.sleep(0.3)
  T.eq(ok(front.get("get_status", { sandbox_id = env2.sandbox_id })).state, "pending")
  T.eq(ok(front.get("node")).pool_queued, 1)
  ok(front.post("stop", { sandbox_id = ids[1] }))
  T.wait_until("the queued start runs", function()
    return ok(front.get("get_status", { sandbox_id = env2.sandbox_id })).is_alive
  end, 10)
  ids[1] = env2.sandbox_id
  local total = 0
  for _, n in ipairs(nodes) do
    local r = ok(n.get("node"))
    total = total + r.running
    T.ok(r.reserved.cpus <= r.budget.cpus, "within the node's budget")
  end
  T.eq(total, 6)
  for _, x in ipairs(ids) do ok(front.post("stop", { sandbox_id = x })) end
end)

T.test("ROCK_NODES and --nodes @FILE name the nodes", function()
  local f = home .. "/nodes.txt"
  T.write(f, "# two of them\n" .. nodes[1].url .. "\n" .. nodes[2].url .. "\n")
  T.sh("mkdir -p " .. home .. "/front2")
  local a = S.start{ args = { "--nodes", "@" .. f, "--strategy", "pack" }, home = home .. "/front2" }
  local r = ok(a.get("node"))
  T.eq(#r.nodes, 2); T.eq(r.strategy, "pack")
  a.stop()
  local b = S.start{ env = "ROCK_NODES=" .. nodes[3].url, home = home .. "/front2" }
  r = ok(b.get("node"))
  T.eq(#r.nodes, 1); T.eq(r.nodes[1].url, nodes[3].url)
  b.stop()
end)

-- the temp files a server left in its $TMPDIR (rock serve's own start with "rock")
local function temps(dir)
  local n = 0
  for _, name in ipairs(T.listdir(dir)) do if name:find("^rock") then n = n + 1 end end
  return n
end
-- the offsets of the processes writing a rocklet's temp file of the upload to name
local function writers(name)
  local out = T.sh("for f in $(find /proc/[0-9]*/fd -lname '*/" .. name .. ".rock-tmp.*' 2>/dev/null); do " ..
    "sed -n 's/^pos:[[:space:]]*//p' \"$(echo $f | sed 's,/fd/,/fdinfo/,')\" 2>/dev/null; done")
  local w = {}
  for pos in out:gmatch("%d+") do w[#w + 1] = tonumber(pos) end
  return w
end

T.test("PUT .../file through the front: relayed at each hop as the client sends it (Content-Length, chunked), " ..
    "byte-exact, no temp file on the front nor the node; a client gone mid-body leaves no file", function()
  local id = S.start_sandbox(front, { image = IMAGE, cpus = 1, memory = "1g" })
  local n = node_of(id)
  local d = ok(front.post("execute", { sandbox_id = id, command = "mktemp -d", shell = true })).stdout:gsub("%s+$", "")
  local function url(name) return "/apis/envs/sandbox/v1/file?sandbox_id=" .. id .. "&path=" .. d .. "/" .. name end
  local src = home .. "/up.bin"
  T.sh("head -c " .. (24 << 20) .. " /dev/urandom > '" .. src .. "'")
  local want = T.sh("md5sum < '" .. src .. "'"):match("%x+")
  T.eq(T.run{ "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-T", src, front.url .. url("sized") }, "200")
  T.eq(T.sh("curl -sS -o /dev/null -w '%{http_code}' -T - '" .. front.url .. url("chunked") .. "' < '" .. src .. "'"),
    "200", "chunked")
  os.remove(src)
  for _, name in ipairs({ "sized", "chunked" }) do
    local sum = ok(front.post("execute", { sandbox_id = id, command = { "sh", "-c", "md5sum < " .. d .. "/" .. name } }))
    T.eq(sum.stdout:match("%x+"), want, name .. ": byte-exact through two hops")
  end
  local line = "PUT /apis/envs/sandbox/v1/file " .. id .. " 200 "
  T.ok(front.log():find(line, 1, true) and nodes[n].log():find(line, 1, true), "both hops served it")
  -- a client that sends 4 MiB of a 64 MiB body, then hangs up once the sandbox has bytes of it
  local name = "cut-" .. id
  local tcp = rock.await(function(done)
    local c = rock.uv.new_tcp()
    c:connect("127.0.0.1", front.port, function(err)
      if err then return done(nil) end
      c:write("PUT " .. url(name) .. " HTTP/1.1\r\nHost: 127.0.0.1:" .. front.port .. "\r\nContent-Length: " ..
        (64 << 20) .. "\r\n\r\n" .. string.rep("\0x", 2 << 20), function() done(c) end)
    end)
    return function() c:close() end
  end)
  T.ok(tcp, "connected")
  T.wait_until("the sandbox writes what came through both hops", function()
    local w = writers(name)
    return w[1] and w[1] >= (1 << 20)
  end, 20)
  tcp:close()
  T.wait_until("the front logs the cut upload (499)", function()
    return front.log():find("PUT /apis/envs/sandbox/v1/file " .. id .. " 499 Failed", 1, true) ~= nil
  end, 10)
  T.wait_until("its node ends its side too (499)", function()
    return nodes[n].log():find("PUT /apis/envs/sandbox/v1/file " .. id .. " 499 Failed", 1, true) ~= nil
  end, 10)
  T.wait_until("the rocklet lets its temp file go", function() return #writers(name) == 0 end, 10)
  T.eq(ok(front.post("execute", { sandbox_id = id, command = { "ls", "-A", d } })).stdout, "chunked\nsized\n",
    "no file, no part of the cut one")
  T.eq(temps(home .. "/front/tmp"), 0, "no temp file on the front")
  T.eq(temps(home .. "/n" .. n .. "/tmp"), 0, "no temp file on the node")
  ok(front.post("execute", { sandbox_id = id, command = { "rm", "-rf", d } }))
  ok(front.post("stop", { sandbox_id = id }))
end)

T.test("a node killed with kill -9: down in the aggregate, node_lost through the front", function()
  local id = S.start_sandbox(front, { image = IMAGE, cpus = 1, memory = "1g" })
  local n = node_of(id)
  nodes[n].kill("KILL")
  nodes[n].wait(10)
  nodes[n].alive = false
  local env = front.post("run_in_session", { sandbox_id = id, session = "s", command = "true" })
  T.eq(env.status, "Failed")
  T.eq(env.result and env.result.rock_code, "node_lost", json.encode(env))
  T.wait_until("the node is drained", function()
    local r = ok(front.get("node"))
    return r.nodes_up == 2 and r.budget.cpus == 16
  end, 10)
  local r = ok(front.get("node"))
  T.eq(r.nodes[n].up, false)
  -- new starts go to the others
  local id2 = S.start_sandbox(front, { image = IMAGE, cpus = 1, memory = "1g" })
  T.ok(node_of(id2) ~= n, "placed on a live node")
  ok(front.post("stop", { sandbox_id = id2 }))
  ok(front.post("stop", { sandbox_id = id })) -- quiet: its node is gone, it ends there by its lease
end)

front.stop()
for _, srv in ipairs(nodes) do srv.stop() end
T.eq(T.sh("pgrep -f '[r]ocklet.*" .. home .. "/' | wc -l"):gsub("%s", ""), "0", "no rocklet left")
os.execute("rm -rf '" .. home .. "'")
T.done()
