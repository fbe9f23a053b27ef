-- test_fleet_netns.lua: a fleet node behind a link that goes down and back.
-- The test makes a network namespace joined to this one by a veth pair
-- (addresses from 198.18.0.0/15, the benchmarking range: never a private
-- one), runs a real `rock serve` in it, and removes both at the end. With
-- the link down the pool drains the node (its sandboxes' calls fail
-- node_lost, new starts go to the loopback node); with it back up the node
-- rejoins and its sandbox, still alive there, answers again. A node bound
-- to 0.0.0.0 in the namespace answers host_ip 127.0.0.1; a client that
-- reaches it by a host name (resolved to its 198.18 address by a hosts
-- file bind-mounted in a mount namespace of the client's own: the
-- machine's /etc/hosts is untouched) says where the sandbox really is.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local S = dofile(here .. "serve_client.lua")
local fleet = rock.fleet

if T.sh("id -u"):gsub("%s", "") ~= "0" or T.sh("command -v ip") == "" then
  print("SKIP test_fleet_netns: needs root and ip (iproute2)")
  os.exit(77) -- ctest's SKIP_RETURN_CODE (tests/CMakeLists.txt): reported skipped, not passed
end

local pid = rock.core.getpid()
local ns = "rockfleet" .. pid
local host_if, ns_if = "rfh" .. (pid % 100000), "rfn" .. (pid % 100000)
local octet = pid % 250
local host_ip, ns_ip = "198.18." .. octet .. ".1", "198.18." .. octet .. ".2"

local must = T.must

local TOKEN = "fleet-netns-" .. pid
local home = T.sh("mktemp -d /tmp/rock-fleet-netns.XXXXXX"):gsub("%s+$", "")
local inner, outer, wild
local ok, err = pcall(function()
  must("ip netns add " .. ns)
  must("ip link add " .. host_if .. " type veth peer name " .. ns_if)
  must("ip link set " .. ns_if .. " netns " .. ns)
  must("ip addr add " .. host_ip .. "/30 dev " .. host_if)
  must("ip link set " .. host_if .. " up")
  must("ip netns exec " .. ns .. " ip addr add " .. ns_ip .. "/30 dev " .. ns_if)
  must("ip netns exec " .. ns .. " ip link set " .. ns_if .. " up")
  must("ip netns exec " .. ns .. " ip link set lo up")
  T.sh("mkdir -p " .. home .. "/in " .. home .. "/out")
  -- a node off loopback needs a token
  inner = S.start{ backend = "local", host = ns_ip, home = home .. "/in", env = "ROCK_API_TOKEN=" .. TOKEN ..
    " ip netns exec " .. ns, token = TOKEN, args = { "--budget-cpu", "8", "--budget-memory-gb", "32" } }
  outer = S.start{ backend = "local", home = home .. "/out", token = TOKEN,
    env = "ROCK_API_TOKEN=" .. TOKEN, args = { "--budget-cpu", "8", "--budget-memory-gb", "32" } }

  wild = S.start{ backend = "local", host = "0.0.0.0", home = home .. "/wild", env = "ROCK_API_TOKEN=" .. TOKEN ..
    " ip netns exec " .. ns, token = TOKEN, args = { "--budget-cpu", "8", "--budget-memory-gb", "32" } }

  T.test("a node bound to 0.0.0.0 reached by a host name: host_ip is the address the name resolves to", function()
    local name = "node-" .. pid .. ".fleet.test"
    local url = string.format("http://%s:%d", name, wild.port)
    local hosts = home .. "/hosts"
    T.write(hosts, "127.0.0.1 localhost\n" .. ns_ip .. " " .. name .. "\n")
    local client = home .. "/client.lua"
    T.write(client, string.format([[
      local rock = require "rock"
      local remote = require "rock.backends.remote"
      local URL, TOKEN = %q, %q
      local pool = rock.fleet.pool{ nodes = { URL }, token = TOKEN }
      local f = pool:start{ image = "rock-test/debian:12", cpus = 1, memory = "1g" }
      local r = rock.sandbox.start{ base_url = URL, token = TOKEN, image = "rock-test/debian:12" }
      local out = {}
      for k, sb in pairs{ fleet = f, remote = r } do
        local st = sb:get_status()
        local own = remote.api({ base_url = URL, token = TOKEN }, "get_status", "sandbox_id=" .. sb.id, 10, { get = true })
        out[k] = { host_ip = st.host_ip, host_name = st.host_name, node_url = st.node_url, node_says = own.host_ip }
      end
      f:stop(); r:stop(); pool:close()
      print(rock.json.encode(out))
    ]], url, TOKEN))
    -- the name resolves only in the client's mount namespace
    T.eq(T.sh("getent hosts " .. name .. " || echo none"), "none\n", "the machine does not know the name")
    local out, ok2 = T.sh(string.format("ROCK_NO_GC=1 unshare -m sh -c %s 2>&1",
      T.q(string.format("mount --bind %s /etc/hosts && exec %s %s", hosts, T.rock_exe(), client))))
    T.ok(ok2, "the client ran: " .. out)
    local res = rock.json.decode(out:match("{.*}") or "{}")
    for _, k in ipairs({ "fleet", "remote" }) do
      local r = res[k] or {}
      T.eq(r.node_says, "127.0.0.1", k .. ": the node, bound to a wildcard, answers its loopback")
      T.eq(r.host_ip, ns_ip, k .. ": get_status gives the address the node's name resolves to")
      T.ok(type(r.host_name) == "string" and r.host_name ~= "", k .. ": and the node's name")
    end
    T.eq(res.fleet.node_url, url, "the fleet sandbox names its node by its URL")
    T.eq(T.sh("ls " .. home .. "/wild/sandboxes 2>/dev/null | wc -l"):gsub("%s", ""), "0", "the client stopped both")
  end)

  T.test("a link down drains the node, node_lost there; back up it rejoins and its sandbox answers", function()
    local pool = fleet.pool{ nodes = { inner.url, outer.url }, token = TOKEN, strategy = "pack",
      health_every = 0.2, health_timeout = 0.5 }
    -- pack: the first goes to whichever ranks first; put one on the inner node
    local sb
    local others = {}
    for _ = 1, 4 do
      local s = pool:start{ image = "rock-test/debian:12", cpus = 4, memory = "16g" }
      if s.node_url == inner.url and not sb then sb = s else others[#others + 1] = s end
      if sb then break end
    end
    T.ok(sb, "a sandbox on the namespaced node")
    sb:create_session{}
    T.eq(sb:run_in_session{ command = "echo before" }.output, "before\n")
    must("ip link set " .. host_if .. " down")
    T.raises("node_lost", sb.run_in_session, sb, { command = "echo during" })
    local drained = false
    for _ = 1, 50 do
      rock.sleep(0.1)
      for _, n in ipairs(pool:report().nodes) do if n.url == inner.url and not n.up then drained = true end end
      if drained then break end
    end
    T.ok(drained, "drained")
    local c = pool:start{ image = "rock-test/debian:12", cpus = 4, memory = "16g" }
    T.eq(c.node_url, outer.url, "a new start goes to the node that answers")
    must("ip link set " .. host_if .. " up")
    local back = false
    for _ = 1, 100 do
      rock.sleep(0.1)
      for _, n in ipairs(pool:report().nodes) do if n.url == inner.url and n.up then back = true end end
      if back then break end
    end
    T.ok(back, "rejoined")
    T.eq(sb:run_in_session{ command = "echo after" }.output, "after\n")
    sb:stop()
    c:stop()
    for _, s in ipairs(others) do s:stop() end
    pool:close()
  end)
end)
if inner then inner.stop() end
if wild then wild.stop() end
if outer then outer.stop() end
T.sh("ip link del " .. host_if .. " 2>/dev/null; ip netns del " .. ns .. " 2>/dev/null")
os.execute("rm -rf '" .. home .. "'")
T.test("set up and cleaned up", function()
  T.ok(ok, tostring(err))
  T.ok(not T.sh("ip netns list"):find(ns, 1, true), "namespace removed")
end)
T.done()
