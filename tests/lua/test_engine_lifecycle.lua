-- test_engine_lifecycle.lua: container sandboxes on docker and on podman
-- (through podman's Docker-compatible service): phases, limits, failures
-- reported with their reason, nothing left after a failed start.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")

local IMAGE = "rock-test/debian:12"
-- engine_args making the container's file system read-only: the rocklet
-- is there, but it cannot make its socket, so it exits at once ("cannot
-- listen")
local NO_SOCKET_DIR = { ReadonlyRootfs = true }

--- Containers of this test's state dir in engine e.
local function our_containers(e)
  local n = 0
  for _, c in ipairs(e:container_list("rock.sandbox")) do
    if (c.Labels["rock.dir"] or ""):find(require("rock.state").dir(), 1, true) then n = n + 1 end
  end
  return n
end

local function nothing_left(e)
  T.eq(our_containers(e), 0, "containers left")
  T.eq(#require("rock.state").list(), 0, "sandbox dirs left")
end

for _, kind in ipairs({ "docker", "podman" }) do
  local e = rock.engine.connect(kind)

  T.test(kind .. ": start, phases, status, stop", function()
    local sb = rock.sandbox.start{ backend = kind, image = IMAGE }
    local st = sb:get_status()
    T.eq(st.state, "running")
    T.eq(st.is_alive, true)
    for _, name in ipairs({ "image_pull", "container_create", "container_start", "rocklet_ready" }) do
      local p = st.phases[name]
      T.eq(p.status, "success", name)
      T.ok(p.started_at and p.completed_at and p.completed_at >= p.started_at, name .. " timestamps")
    end
    local info = e:container_inspect(sb.container)
    T.eq(info.HostConfig.NetworkMode, "none")
    local ports = info.HostConfig.PortBindings
    T.ok(type(ports) ~= "table" or next(ports) == nil, "no port published")
    T.eq(info.Config.Labels["rock.sandbox"], sb.id)
    T.match(info.Config.Labels["rock.owner"], ":" .. rock.core.getpid() .. ":")
    T.match(info.Config.Labels["rock.expires"], "^%d+$")
    -- only the loopback interface inside
    local dev = sb:execute{ command = { "cat", "/proc/net/dev" } }.stdout
    T.ok(not dev:find("eth0"), "no eth0: " .. dev)
    local id, container = sb.id, sb.container
    sb:stop()
    T.eq(sb:get_status().state, "stopped")
    T.raises("not_found", e.container_inspect, e, container)
    T.ok(not rock.uv.fs_stat(require("rock.state").sandboxes_dir() .. "/" .. id), "dir removed")
    sb:stop() -- twice is fine
  end)

  T.test(kind .. ": memory, cpu and pids limits are visible inside", function()
    local sb = rock.sandbox.start{ backend = kind, image = IMAGE, memory = "256m",
      cpus = 0.5, pids_limit = 64, env = { GREETING = "hi" } }
    local r = sb:execute{ command = "cat /sys/fs/cgroup/memory.max 2>/dev/null || " ..
      "cat /sys/fs/cgroup/memory/memory.limit_in_bytes; " ..
      "cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max; " ..
      "cat /sys/fs/cgroup/cpu.max 2>/dev/null || cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us; echo $GREETING" }
    local lines = {}
    for l in r.stdout:gmatch("[^\n]+") do lines[#lines + 1] = l end
    T.eq(lines[1], tostring(256 * 1024 * 1024), "memory limit")
    T.eq(lines[2], "64", "pids limit")
    T.match(lines[3], "^50000", "cpu quota for 0.5 cpu")
    T.eq(lines[4], "hi", "env")
    -- the pids limit holds: forking stops short of 64 processes
    local forks = sb:execute{ timeout = 30, command = { "python3", "-c",
      "import os, time\nn = 0\ntry:\n  while n < 200:\n    if os.fork() == 0:\n" ..
      "      time.sleep(3); os._exit(0)\n    n += 1\nexcept OSError:\n  pass\nprint(n)" } }
    local n = tonumber(forks.stdout)
    T.ok(n and n > 0 and n < 64, "forks before the pids limit: " .. forks.stdout .. forks.stderr)
    sb:stop()
  end)

  -- issue 7 item 13: nothing the sandbox writes lands on the host's disk
  T.test(kind .. ": issue7-13: no host dir is mounted writable; spills stay in the container", function()
    local sb = rock.sandbox.start{ backend = kind, image = IMAGE }
    local ok, err = pcall(function()
      local info = e:container_inspect(sb.container)
      for _, b in ipairs(info.HostConfig.Binds or {}) do
        T.ok(b:find(":ro$") or b:find(":ro,"), "bind mount read-only: " .. b)
      end
      T.eq(sb.rocklet_pid, math.tointeger(info.State.Pid), "the rocklet's pid is the container's init")
      T.eq(sb.socket, "/proc/" .. sb.rocklet_pid .. "/root/.rock/rocklet.sock")
      T.eq(require("rock.state").read_record(sb.dir).rocklet_pid, sb.rocklet_pid, "recorded")
      -- output past the cap spills to a file; big files in the rocklet's dir
      sb:create_session{ session = "s" }
      local o = sb:run_in_session{ session = "s", command = "seq 1 200000", max_output = 1024 }
      T.ok(o.output_file, "output spilled to " .. tostring(o.output_file))
      sb:execute{ command = { "sh", "-c", "dd if=/dev/zero of=/.rock/state/big bs=1M count=8 2>/dev/null" } }
      local names = {}
      for name in io.popen("ls -A " .. sb.dir):lines() do names[#names + 1] = name end
      table.sort(names)
      T.eq(#names, 5, "host dir holds the record, the owner mark and the read-only /etc files only: " ..
        table.concat(names, " "))
      T.eq(table.concat(names, " ", 1, 3), "etc-hostname etc-hosts etc-resolv.conf")
      T.eq(names[5], "sandbox.json")
      T.match(names[4], "^owner=")
    end)
    sb:stop()
    if not ok then error(err, 0) end
  end)

  T.test(kind .. ": issue7-18: get_status says stopped after the rocklet died", function()
    local sb = rock.sandbox.start{ backend = kind, image = IMAGE }
    rock.uv.kill(sb.rocklet_pid, "sigkill") -- the container's init: the container stops
    for _ = 1, 100 do
      local ok, info = pcall(e.container_inspect, e, sb.container)
      if not ok or not info.State.Running then break end
      rock.sleep(0.02)
    end
    local st = sb:get_status()
    T.eq(st.is_alive, false)
    T.eq(st.state, "stopped")
    T.match(st.stop_reason, "container")
    sb:stop()
    T.raises("not_found", e.container_inspect, e, sb.container or "-")
  end)

  T.test(kind .. ": a container whose command dies at once fails with its reason", function()
    local err = T.raises("sandbox_start_failed", rock.sandbox.start, {
      backend = kind, image = IMAGE, startup_timeout = 20,
      engine_args = NO_SOCKET_DIR,
    })
    T.match(err.message, "exited at once")
    T.match(err.message, "cannot listen")
    T.eq(err.phases.container_start.status, "success")
    T.eq(err.phases.rocklet_ready.status, "failed")
    nothing_left(e)
  end)

  T.test(kind .. ": a missing image fails image_pull with image_not_found", function()
    local err = T.raises("image_not_found", rock.sandbox.start, {
      backend = kind, image = T.tmp_image("missing"), pull = "never" })
    T.eq(err.phases.image_pull.status, "failed")
    T.eq(err.phases.container_create.status, "waiting")
    nothing_left(e)
  end)

  T.test(kind .. ": busybox without bash: the rocklet runs, sessions say why", function()
    local sb = rock.sandbox.start{ backend = kind, image = "rock-test/busybox:1" }
    local err = T.raises("bash_not_found", sb.create_session, sb, { session = "s" })
    T.match(err.message, "no bash")
    T.eq(sb:execute{ command = { "sh", "-c", "echo from busybox" } }.stdout, "from busybox\n")
    sb:stop()
  end)

  -- issue 15 item 9: a commit kept the rocklet as entrypoint and rock's
  -- labels (and on podman, with no body, failed)
  T.test(kind .. ": a commit is the sandbox's files with its image's own config", function()
    local sb = rock.sandbox.start{ backend = kind, image = IMAGE, env = { KEPT = "1" } }
    local tag = T.tmp_image("lifecycle-" .. kind)
    local plain
    local ok, err = pcall(function()
      sb:execute{ command = { "sh", "-c", "echo mine > /etc/mark" } }
      require("rock.backends.container").commit(sb, tag)
      local src, img = e:image_inspect(IMAGE).Config, e:image_inspect(tag).Config
      local labels = img.Labels ~= rock.json.null and img.Labels or {}
      for k in pairs(labels) do T.ok(k:sub(1, 5) ~= "rock.", "label " .. k) end
      T.eq(rock.json.encode(img.Entrypoint), rock.json.encode(src.Entrypoint), "entrypoint")
      T.eq(rock.json.encode(img.Cmd), rock.json.encode(src.Cmd), "cmd")
      T.eq(img.User, src.User, "user")
      local env = table.concat(img.Env or {}, " ")
      T.match(env, "KEPT=1", "the sandbox's env stays")
      -- `docker run IMAGE cat /etc/mark`, through the Engine API
      plain = e:container_create(nil, { Image = tag, Cmd = { "cat", "/etc/mark" }, HostConfig = { NetworkMode = "none" } })
      e:container_start(plain)
      T.eq(math.tointeger(e:container_wait(plain, 60)), 0)
      T.eq(e:container_logs(plain), "mine\n")
    end)
    if plain then pcall(e.container_remove, e, plain, true) end
    sb:stop()
    pcall(e.image_remove, e, tag, true)
    if not ok then error(err, 0) end
  end)

  T.test(kind .. ": start_retry_times retries, and says so", function()
    local err = T.raises("sandbox_start_failed", rock.sandbox.start, {
      backend = kind, image = IMAGE, start_retry_times = 1,
      engine_args = NO_SOCKET_DIR })
    T.eq(#err.attempts, 2)
    nothing_left(e)
  end)

  T.test(kind .. ": a rock.timeout cutting start at 12 points leaves no container", function()
    -- a create cut client-side landed in the engine after stop's removal
    -- by name had found nothing: a container no one removed (1 in 4 cuts)
    for i = 1, 12 do
      pcall(rock.timeout, 0.002 + i * 0.006, rock.sandbox.start, { backend = kind, image = IMAGE })
    end
    rock.sleep(1) -- a create still in flight would land by now
    nothing_left(e)
  end)
end

T.test("bad options raise invalid_argument", function()
  T.raises("invalid_argument", rock.sandbox.start, { backend = "docker" })
  T.raises("invalid_argument", rock.sandbox.start, { backend = "docker", image = IMAGE, memory = "lots" })
  T.raises("invalid_argument", rock.sandbox.start, { backend = "docker", image = IMAGE, mounts = { 5 } })
  T.raises("invalid_argument", rock.sandbox.start, { backend = "nope" })
end)

T.test("an unreachable engine is reported clearly", function()
  local out, ok = T.sh("DOCKER_HOST=unix:///nonexistent/docker.sock " .. T.rock_exe() ..
    " -e 'local ok, e = pcall(require(\"rock\").sandbox.start, {backend=\"docker\", image=\"x\"})" ..
    " print(e.code, e.phases.image_pull.status, e.message)'")
  T.ok(ok, out)
  T.match(out, "^engine_unavailable\tfailed\tcannot reach the docker engine at /nonexistent/docker.sock")
end)

T.test("mounts, and the auto backend picks an engine when an image is given", function()
  local dir = require("rock.state").dir() .. "/shared"
  require("rock.state").mkdir_p(dir)
  local f = assert(io.open(dir .. "/hello.txt", "w")); f:write("from the host"); f:close()
  local sb = rock.sandbox.start{ image = IMAGE, mounts = { dir .. ":/mnt/shared:ro" } }
  T.eq(sb.backend, "docker")
  T.eq(sb:read_file{ path = "/mnt/shared/hello.txt" }.content, "from the host")
  T.eq(sb:execute{ command = "touch /mnt/shared/x" }.exit_code, 1, "read-only mount")
  sb:stop()
  os.remove(dir .. "/hello.txt"); os.remove(dir)
end)

T.done()
