--- rock.backends.runc: a sandbox is an OCI container run by runc itself,
-- with no daemon in the way (backend = "runc").
-- Its image is unpacked once into the layer store (layers.lua); each
-- sandbox gets an overlay of those layers with an upper and a work dir of
-- its own, all in its dir (state dir/sandboxes/<id>/: upper, work,
-- bundle/rootfs the mount, bundle/config.json), and runc runs the bundle
-- detached: every namespace (network none: only a loopback), cgroup limits
-- for memory (no swap on top), cpus and pids, Docker's default
-- capabilities, masked and read-only paths and /dev, and a seccomp
-- profile no looser than Docker's (runc_seccomp.lua). As in the container
-- backends the rocklet is bind-mounted read-only at /.rock/rocklet and is
-- PID 1, the host reaches its socket through /proc/<pid>/root (checked:
-- SO_PEERCRED), and read-only /etc/hosts, hostname and resolv.conf come
-- from the sandbox's dir (container.lua's M.write_etc). runc's state is
-- under <state dir>/runc (its --root), the container named rock-<id>;
-- the record (written before the container is made) and the bundle's
-- annotations (rock.sandbox, rock.owner, rock.expires, rock.dir,
-- rock.nonce) let `rock gc` prove what a dead host left and remove it:
-- the container, the overlay mount, the dir. Stop is runc delete --force
-- (the kernel ends every process of the container with its PID 1), then
-- the unmount and the dir. Statistics are runc's (the cgroup's). A disk
-- limit bounds every file (the rocklet's --max-file-size) and the upper
-- dir (a watch of its size, as container.lua's without quotas).
-- runtime = "runsc" runs the same bundle under gVisor: the rocklet's
-- socket is then made on the host (runsc --host-uds) in a small tmpfs of
-- the sandbox's dir, served by runsc's gofer. commit() makes an image of the
-- base plus the upper dir (an archive in the image cache, its layer in the
-- store). A start without runc, overlayfs or a cgroup controller its limits
-- need raises engine_unavailable naming it before anything is made;
-- health() (a node's report) checks the same. Not here: a network
-- other than none. docs/runc.md says all of it for a user.
local uv = require "luv"
local core = require "rock.core"
local errors = require "rock.errors"
local rocklet = require "rock.rocklet"
local task = require "rock.task"
local state = require "rock.state"
local engine = require "rock.engine"
local json = require "rock.json"
local layers = require "rock.layers"
local proc = require "rock.proc"
local container = require "rock.backends.container"
local seccomp = require "rock.backends.runc_seccomp"
local transport = require "rock.backends.rocklet_transport"

local M = {}

local IN_ROCKLET = "/.rock/rocklet"
local IN_SOCKET = "/.rock/rocklet.sock"
local IN_STATE = "/.rock/state"
local IN_SOCK_DIR = "/.rock/sock" -- runsc's: bound from the sandbox's dir
local IN_HOST_SOCKET = IN_SOCK_DIR .. "/rocklet.sock"
M.DEFAULT_LEASE = container.DEFAULT_LEASE
M.SOCK_DIR_BYTES = 64 * 1024 -- runsc's socket dir: a tmpfs this big

--- The runc binary (ROCK_RUNC, default runc on PATH).
function M.runc_bin() return os.getenv("ROCK_RUNC") or "runc" end

--- runc's state dir for this state dir (its --root).
function M.root() return state.dir() .. "/runc" end

--- The container's name for sandbox id.
function M.container_name(id) return "rock-" .. id end

local function runc(rt, root, args, opts)
  local argv = { rt.bin, "--root", root }
  for _, a in ipairs(rt.flags or {}) do argv[#argv + 1] = a end
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  local out, err, code = proc.run(argv, opts)
  if code == 127 and err:find("ENOENT", 1, true) then
    errors.raise("engine_unavailable", "the runc backend needs " .. rt.bin .. " (Debian's runc package): " ..
      "it is not on PATH")
  end
  return out, err, code
end

-- Is bin (a path, or a name looked up on PATH) an executable?
local function found(bin)
  if bin:find("/", 1, true) then return uv.fs_access(bin, "x") == true end
  for d in (os.getenv("PATH") or ""):gmatch("[^:]+") do
    if uv.fs_access(d .. "/" .. bin, "x") then return true end
  end
  return false
end

-- The runtime of name: "runc" (default) or "runsc" (gVisor); check: its
-- binary must be there (else engine_unavailable).
local function runtime(name, check)
  name = name or "runc"
  local rt
  if name == "runc" then rt = { name = "runc", bin = M.runc_bin() }
  elseif name == "runsc" then
    rt = { name = "runsc", bin = os.getenv("ROCK_RUNSC") or "runsc",
      flags = { "--network", "none", "--host-uds", "all" } }
  else
    errors.raise("invalid_argument", "sandbox.start: runtime must be runc or runsc, got " .. tostring(name))
  end
  if check and not found(rt.bin) then
    errors.raise("engine_unavailable", "the runc backend needs " .. rt.bin .. " (Debian's " .. name ..
      " package) and it is not there")
  end
  return rt
end

M.CGROUP_ROOT = "/sys/fs/cgroup" -- where the host's cgroup controllers are read
M.FILESYSTEMS = "/proc/filesystems" -- the kernel's file systems
M.MODULES = "/lib/modules" -- its modules (overlayfs may be one, loaded at the first mount)

-- The cgroup controllers of this host ({name = true}): cgroup v2's list at
-- the root (cgroup.controllers), else v1's hierarchies (a dir each).
local function controllers()
  local have = {}
  local v2 = io.open(M.CGROUP_ROOT .. "/cgroup.controllers", "r")
  if v2 then
    for c in v2:read("a"):gmatch("%S+") do have[c] = true end
    v2:close()
  else
    for _, c in ipairs({ "memory", "pids", "cpu" }) do have[c] = uv.fs_stat(M.CGROUP_ROOT .. "/" .. c) ~= nil end
  end
  return have
end

-- Why a sandbox cannot have the cgroup limits it needs ("memory" when
-- memory, "pids" when pids, "cpu" when cpus), or nil.
local function cgroups_missing(memory, pids, cpus)
  local have = controllers()
  for _, c in ipairs({ { "memory", memory }, { "pids", pids }, { "cpu", cpus } }) do
    if c[2] and not have[c[1]] then
      return "the runc backend needs the cgroup controller '" .. c[1] .. "' for the limits it sets and this host " ..
        "has none (" .. M.CGROUP_ROOT .. ")"
    end
  end
end

-- Why this kernel cannot mount an overlay, or nil: overlay is in its list
-- of file systems, or a module of it is there to load.
local function overlay_missing()
  local f = io.open(M.FILESYSTEMS, "r")
  local text = f and f:read("a") or ""
  if f then f:close() end
  if (text .. "\n"):find("%soverlay\n") then return nil end
  local mods = M.MODULES .. "/" .. uv.os_uname().release .. "/kernel/fs/overlayfs"
  if uv.fs_stat(mods) then return nil end
  return "the runc backend needs overlayfs and this kernel has none (not in " .. M.FILESYSTEMS ..
    ", no module: modprobe overlay)"
end

--- The contract's health(): can this node start sandboxes (runc, the
--- default runtime, is there; overlayfs; the memory, pids and cpu
--- controllers ROCK's starts ask limits of): true, or false and why.
--- File reads only: no runc is run.
function M.health()
  if not found(M.runc_bin()) then
    return false, "the runc backend needs " .. M.runc_bin() .. " (Debian's runc package) and it is not there"
  end
  local missing = overlay_missing() or cgroups_missing(true, true, true)
  if missing then return false, missing end
  return true, "ok"
end

local function env_of(image_env, env)
  local out, seen = json.array(), {}
  local keys = {}
  for k in pairs(env or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do seen[k] = true end
  for _, kv in ipairs(image_env or {}) do
    local k = kv:match("^([^=]*)")
    if not seen[k] then out[#out + 1] = kv end
  end
  if #out == 0 then out[#out + 1] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" end
  for _, k in ipairs(keys) do out[#out + 1] = k .. "=" .. tostring(env[k]) end
  return out
end

-- This process's hard limit of open files (/proc/self/limits): a
-- container's, soft and hard (Docker's gives dockerd's own).
local function nofile()
  local f = io.open("/proc/self/limits", "r")
  local text = f and f:read("a") or ""
  if f then f:close() end
  return math.tointeger(tonumber(text:match("Max open files%s+%S+%s+(%d+)"))) or 1024
end

local function bind(src, dst, ro)
  local o = json.array{ "rbind", "nosuid", "nodev" }
  if ro then o[#o + 1] = "ro" end
  return { destination = dst, type = "bind", source = src, options = o }
end

-- The user's mounts (sandbox.start's mounts: "host:container[:ro]" or
-- {source=, target=, read_only=}) as OCI mounts; the targets they take.
local function user_mounts(mounts, out, taken)
  for _, m in ipairs(mounts or {}) do
    local src, dst, ro
    if type(m) == "string" then
      src, dst = m:match("^([^:]+):([^:]+)")
      ro = m:match(":ro$") ~= nil
    elseif type(m) == "table" then
      src, dst, ro = m.source, m.target, m.read_only
    end
    if not src or not dst then
      errors.raise("invalid_argument", "sandbox.start: a mount is 'host:container[:ro]' or {source=, target=}")
    end
    out[#out + 1] = bind(src, dst, ro)
    taken[dst] = true
  end
end

-- Docker's default masked paths: moby's defaultLinuxMaskedPaths
-- (daemon/pkg/oci/defaults.go, as of docker v29.7.2): these, and the
-- thermal_throttle dir of each possible CPU where the host has one
-- (GHSA-6fw5-f8r9-fgfm). Read from the host once.
local MASKED = { "/proc/acpi", "/proc/asound", "/proc/interrupts", "/proc/kcore", "/proc/keys",
  "/proc/latency_stats", "/proc/sched_debug", "/proc/scsi", "/proc/timer_list", "/proc/timer_stats",
  "/sys/devices/virtual/powercap", "/sys/firmware" }
local masked

--- The paths a runc sandbox's config masks (a new list each call).
function M.masked_paths()
  if not masked then
    masked = {}
    for i, p in ipairs(MASKED) do masked[i] = p end
    local f = io.open("/sys/devices/system/cpu/possible", "r")
    local possible = f and f:read("a") or ""
    if f then f:close() end
    for range in possible:gmatch("[^,%s]+") do
      local a, b = range:match("^(%d+)%-(%d+)$")
      a, b = tonumber(a or range), tonumber(b or range)
      for cpu = a or 1, a and b or 0 do
        local path = "/sys/devices/system/cpu/cpu" .. cpu .. "/thermal_throttle"
        if uv.fs_stat(path) then masked[#masked + 1] = path end
      end
    end
  end
  local out = {}
  for i, p in ipairs(masked) do out[i] = p end
  return out
end

--- The OCI runtime config (config.json) of sandbox sb: the image's
--- config img (its Env, WorkingDir), opts (sandbox.start's: limits,
--- cpus, env, mounts, auto_clear_seconds).
function M.config(sb, img, opts)
  local lease = opts.auto_clear_seconds or M.DEFAULT_LEASE
  local limits = opts.limits or {}
  local gvisor = sb.runtime and sb.runtime.name == "runsc"
  local args = json.array{ IN_ROCKLET, "serve", "--socket", gvisor and IN_HOST_SOCKET or IN_SOCKET, "--dir", IN_STATE,
    "--idle-timeout", tostring(lease) }
  if limits.disk then args[#args + 1] = "--max-file-size"; args[#args + 1] = tostring(limits.disk) end
  local caps = json.array(seccomp.CAPS)
  local mounts = json.array{
    { destination = "/proc", type = "proc", source = "proc", options = json.array{ "nosuid", "noexec", "nodev" } },
    { destination = "/dev", type = "tmpfs", source = "tmpfs",
      options = json.array{ "nosuid", "strictatime", "mode=755", "size=65536k" } },
    { destination = "/dev/pts", type = "devpts", source = "devpts",
      options = json.array{ "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5" } },
    { destination = "/dev/shm", type = "tmpfs", source = "shm",
      options = json.array{ "nosuid", "noexec", "nodev", "mode=1777", "size=65536k" } },
    { destination = "/dev/mqueue", type = "mqueue", source = "mqueue",
      options = json.array{ "nosuid", "noexec", "nodev" } },
    { destination = "/sys", type = "sysfs", source = "sysfs", options = json.array{ "nosuid", "noexec", "nodev", "ro" } },
    { destination = "/sys/fs/cgroup", type = "cgroup", source = "cgroup",
      options = json.array{ "nosuid", "noexec", "nodev", "relatime", "ro" } },
    bind(core.rocklet_path(), IN_ROCKLET, true),
  }
  -- gVisor's file system is its own: the rocklet's socket is made on the
  -- host, in a dir of the sandbox's dir bound there (runsc --host-uds)
  if gvisor then mounts[#mounts + 1] = bind(sb.dir .. "/sock", IN_SOCK_DIR, false) end
  local taken = {}
  user_mounts(opts.mounts, mounts, taken)
  for _, f in ipairs(container.ETC) do
    if not taken[f[2]] then mounts[#mounts + 1] = bind(sb.dir .. "/etc-" .. f[1], f[2], true) end
  end
  local resources = {
    devices = json.array{ { allow = false, access = "rwm" } },
    memory = limits.memory and { limit = limits.memory, swap = limits.memory } or nil,
    pids = limits.pids_limit and { limit = limits.pids_limit } or nil,
    cpu = opts.cpus and { quota = math.floor(opts.cpus * 100000), period = 100000 } or nil,
  }
  local cfg = {
    ociVersion = "1.0.2",
    process = {
      terminal = false,
      user = { uid = 0, gid = 0 },
      args = args,
      env = env_of(img.Env ~= json.null and img.Env or nil, opts.env),
      cwd = (img.WorkingDir and img.WorkingDir ~= json.null and img.WorkingDir ~= "") and img.WorkingDir or "/",
      capabilities = { bounding = caps, effective = caps, permitted = caps },
      rlimits = json.array{ { type = "RLIMIT_NOFILE", hard = nofile(), soft = nofile() } },
      noNewPrivileges = false,
    },
    root = { path = "rootfs", readonly = false },
    hostname = sb.id,
    mounts = mounts,
    annotations = {
      ["rock.sandbox"] = sb.id,
      ["rock.owner"] = state.owner_label(state.me()),
      ["rock.expires"] = tostring(os.time() + lease),
      ["rock.dir"] = sb.dir,
      ["rock.nonce"] = sb.nonce,
    },
    linux = {
      cgroupsPath = "/rock/" .. M.container_name(sb.id),
      resources = resources,
      namespaces = json.array{ { type = "pid" }, { type = "network" }, { type = "ipc" }, { type = "uts" },
        { type = "mount" }, { type = "cgroup" } },
      maskedPaths = json.array(M.masked_paths()),
      readonlyPaths = json.array{ "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger" },
      seccomp = seccomp.profile(),
    },
  }
  if gvisor then -- its /proc and /sys are gVisor's own, the kernel's seen by none; it has no seccomp of the
    -- sandbox's (gVisor itself is the filter, in a seccomp of its own)
    cfg.linux.maskedPaths, cfg.linux.readonlyPaths, cfg.linux.seccomp = nil, nil, nil
  end
  return cfg
end

local function write(path, text, mode)
  local fd, err = uv.fs_open(path, "w", mode or tonumber("600", 8))
  if not fd then errors.raise("io_error", "cannot write " .. path .. ": " .. tostring(err)) end
  local ok, werr = uv.fs_write(fd, text, 0)
  uv.fs_close(fd)
  if not ok then errors.raise("io_error", "cannot write " .. path .. ": " .. tostring(werr)) end
end

local function mkdir(path, mode)
  local ok, err = uv.fs_mkdir(path, mode or tonumber("700", 8))
  if not ok then errors.raise("io_error", "cannot make " .. path .. ": " .. tostring(err)) end
  uv.fs_chmod(path, mode or tonumber("700", 8))
end

local function nonce()
  return (uv.random(8, {}):gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

-- runc's log of the last command in dir (its --log), its messages.
local function runc_log(dir)
  local f = io.open(dir .. "/runc.log", "rb")
  if not f then return "" end
  local msgs = {}
  for line in f:lines() do
    local ok, e = pcall(json.decode, line)
    msgs[#msgs + 1] = ok and type(e) == "table" and e.msg or line
  end
  f:close()
  return table.concat(msgs, "; "):sub(-2000)
end

local function rootfs(dir) return dir .. "/bundle/rootfs" end

-- The disk watch (container.lua's, on the upper dir): its size (du) is
-- read every (limit - size) / DISK_RATE seconds, within DISK_POLL; past
-- the limit the container is killed and the sandbox stopped with that
-- reason (gone). overlayfs on the host's disk has no quota of its own.
local function watch_disk(sb, limit)
  local timer = uv.new_timer()
  sb.disk_timer = timer
  local function again(seconds)
    if timer:is_closing() then return end
    timer:start(math.floor(seconds * 1000), 0, function()
      task.spawn(function()
        if timer:is_closing() or sb.state == "stopped" then return end
        local out, _, code = proc.run({ "du", "-sb", sb.dir .. "/upper" })
        local used = code == 0 and tonumber(out:match("^(%d+)")) or nil
        if timer:is_closing() then return end
        if used and used > limit then
          sb.limit_reason = string.format("disk limit exceeded: the sandbox wrote %d bytes (its writable layer), " ..
            "its limit (disk) is %d", used, limit)
          require("rock.log").warn("sandbox", "%s: %s: stopping it", sb.id, sb.limit_reason)
          timer:close()
          runc(sb.runtime, sb.root, { "kill", sb.container, "KILL" })
          if sb._check_gone then sb:_check_gone() end
        else
          again(math.max(container.DISK_POLL[1], math.min(container.DISK_POLL[2],
            (limit - (used or 0)) / container.DISK_RATE)))
        end
      end)
    end)
    timer:unref()
  end
  again(math.max(container.DISK_POLL[1], math.min(container.DISK_POLL[2], limit / container.DISK_RATE)))
end

-- runsc's gofer of container name (the process that serves the host's
-- files to the sandbox, and the sockets it makes there): from runsc's
-- state file.
local function gofer_pid(root, name)
  local f = io.open(root .. "/" .. name .. "_sandbox:" .. name .. ".state", "rb")
  local ok, st = pcall(json.decode, f and f:read("a") or "")
  if f then f:close() end
  local pid = ok and type(st) == "table" and math.tointeger(st.goferPid)
  if not pid then errors.raise("sandbox_start_failed", "runsc: no gofer pid in its state of " .. name) end
  return pid
end

--- Start: fill sb (id, dir, container, rocklet_pid, socket) and bring its
--- rocklet up. A failed start removes what it made (container, mount,
--- dir) before raising.
function M.start(sb, opts, phase)
  if type(opts.image) ~= "string" or opts.image == "" then
    errors.raise("invalid_argument", "sandbox.start: 'image' is required for the runc backend")
  end
  if opts.network and opts.network ~= "none" then
    errors.raise("invalid_argument", "sandbox.start: the runc backend has network \"none\" only")
  end
  local rt = runtime(opts.runtime, true)
  sb.runtime = rt
  sb.image = opts.image
  sb.id = opts.sandbox_id or state.new_id()
  if uv.fs_stat(state.sandboxes_dir() .. "/" .. sb.id) then
    errors.raise("invalid_argument", "sandbox " .. sb.id .. " already exists")
  end
  local limits = opts.limits or {}
  local missing = overlay_missing() or cgroups_missing(limits.memory, limits.pids_limit, opts.cpus)
  if missing then errors.raise("engine_unavailable", missing) end

  phase("image_pull", "running", "ensuring " .. sb.image)
  local e = engine.connect(opts.engine or engine.detect() or "docker")
  local img = layers.ensure(sb.image, { engine = e, pull = opts.pull })
  phase("image_pull", "success", #img.layers .. " layer(s)")

  sb.dir = state.make_sandbox_dir(sb.id) -- from here on, stop removes it
  sb.root = M.root()
  local ok, err = pcall(function()
    phase("container_create", "running", "mounting the overlay, writing the bundle")
    sb.container = M.container_name(sb.id)
    sb.nonce = nonce()
    local rec = {
      id = sb.id, backend = "runc", runtime = rt.name, image = sb.image, image_id = img.id,
      owner = state.owner_label(state.me()), runc_root = sb.root, container = sb.container,
      created = sb.create_time, auto_clear_seconds = opts.auto_clear_seconds or M.DEFAULT_LEASE,
      nonce = sb.nonce, limits = { memory = limits.memory, pids_limit = limits.pids_limit, disk = limits.disk },
    }
    state.write_record(sb.dir, rec) -- before the mount and the container: the proof for gc
    mkdir(sb.dir .. "/upper", tonumber("755", 8))
    mkdir(sb.dir .. "/work")
    mkdir(sb.dir .. "/bundle")
    mkdir(rootfs(sb.dir), tonumber("755", 8))
    if rt.name == "runsc" then -- bound writable into the sandbox: a small tmpfs, not the host's disk
      mkdir(sb.dir .. "/sock")
      core.tmpfs_mount(sb.dir .. "/sock", M.SOCK_DIR_BYTES)
    end
    state.mkdir_p(sb.root)
    container.write_etc(sb, { network = "none" })
    container.write_etc_file(sb, "hostname", sb.id .. "\n")
    core.overlay_mount(img.layers, sb.dir .. "/upper", sb.dir .. "/work", rootfs(sb.dir))
    write(sb.dir .. "/bundle/config.json", json.encode(M.config(sb, img.config, opts)))
    phase("container_create", "success", "overlay mounted, bundle written")

    phase("container_start", "running", "runc run --detach")
    local pidfile = sb.dir .. "/pid"
    sb.creating = true
    local out, eout, code = task.shield(runc, rt, sb.root, { "--log", sb.dir .. "/runc.log", "--log-format", "json",
      "run", "--detach", "--pid-file", pidfile, "--bundle", sb.dir .. "/bundle", sb.container },
      { null_stdio = true })
    sb.creating = false
    if code ~= 0 then
      errors.raise("sandbox_start_failed", rt.name .. " run failed (exit " .. tostring(code) .. "): " ..
        (runc_log(sb.dir) ~= "" and runc_log(sb.dir) or (eout .. out)))
    end
    local f = io.open(pidfile, "r")
    local pid = f and math.tointeger(tonumber(f:read("a")))
    if f then f:close() end
    if not pid or pid <= 0 then errors.raise("sandbox_start_failed", rt.name .. " wrote no pid file") end
    phase("container_start", "success", "pid " .. pid)

    phase("rocklet_ready", "running", "waiting for the rocklet")
    sb.init_pid, sb.pid_start = pid, core.proc_start_time(pid)
    sb.rocklet_pid, sb.socket = pid, container.socket_path(pid)
    if rt.name == "runsc" then -- the socket is the gofer's on the host
      sb.rocklet_pid, sb.socket = gofer_pid(sb.root, sb.container), sb.dir .. "/sock/rocklet.sock"
    end
    rec.init_pid, rec.pid_start, rec.rocklet_pid, rec.socket = pid, sb.pid_start, sb.rocklet_pid, sb.socket
    state.write_record(sb.dir, rec)
    rocklet.wait_ready(sb.socket, opts.startup_timeout, function()
      if core.proc_start_time(pid) ~= sb.pid_start then return "the container's rocklet exited at once" end
    end, sb.rocklet_pid)
    phase("rocklet_ready", "success", "rocklet answers")
    if limits.disk then watch_disk(sb, limits.disk) end
  end)
  if not ok then
    task.shield(pcall, M.stop, sb) -- even past the deadline that cut the start
    error(err, 0)
  end
end

--- Attach sb to the running container of record rec (a restarted `rock
--- serve`): its pid must be the one recorded and its rocklet answer.
function M.attach(sb, rec)
  sb.runtime, sb.root, sb.container = runtime(rec.runtime), rec.runc_root, rec.container
  sb.rocklet_pid, sb.socket, sb.pid_start = rec.rocklet_pid, rec.socket, rec.pid_start
  sb.init_pid = rec.init_pid or rec.rocklet_pid
  if not sb.init_pid or core.proc_start_time(sb.init_pid) ~= sb.pid_start then
    errors.raise("sandbox_not_alive", "container " .. tostring(rec.container) .. " is not running")
  end
  rocklet.call(sb.socket, "/is_alive", {}, 5, sb.rocklet_pid)
  local disk = math.tointeger((rec.limits or {}).disk)
  if disk and disk > 0 then watch_disk(sb, disk) end
end

--- Why it is gone: its PID 1 ended (the rocklet's start time is no
--- longer its pid's), or nil while it runs.
function M.gone(sb)
  if sb.limit_reason then return sb.limit_reason end
  if not sb.init_pid then return "no container" end
  if core.proc_start_time(sb.init_pid) ~= sb.pid_start then return "the container stopped" end
  return nil
end

--- Keep: mark the record so gc spares the container while it runs.
function M.keep(sb)
  local rec = state.read_record(sb.dir)
  if not rec then errors.raise("io_error", "cannot read the record of " .. sb.id) end
  rec.kept = true
  state.write_record(sb.dir, rec)
end

-- Remove container name of runc root (none is fine) and unmount dir's
-- rootfs; raises when runc cannot delete it.
local function remove(rt, root, name, dir)
  local ok, err = true, nil
  if name and root and uv.fs_stat(root) then
    ok, err = pcall(function()
      local out, eout, code = runc(rt, root, { "delete", "--force", name })
      if code ~= 0 and not (eout .. out):find("not exist", 1, true) then
        errors.raise("io_error", rt.name .. " delete " .. name .. " failed: " .. (eout ~= "" and eout or out))
      end
    end)
  end
  -- the mount goes whatever runc said: its processes are gone with it, or
  -- held by a lazy unmount until they are
  if dir and core.overlay_mounted(rootfs(dir)) then core.overlay_umount(rootfs(dir)) end
  if dir and core.overlay_mounted(dir .. "/sock") then core.overlay_umount(dir .. "/sock") end
  if not ok then error(err, 0) end
end

--- Stop: runc delete --force (its PID 1 and every process with it), the
--- overlay unmounted, the dir removed. Safe to call twice.
function M.stop(sb)
  local deadline = uv.now() + 30000
  while sb.creating and uv.now() < deadline do task.sleep(0.02) end
  if sb.disk_timer and not sb.disk_timer:is_closing() then sb.disk_timer:close() end
  if sb.container then
    remove(sb.runtime or runtime(), sb.root, sb.container, sb.dir)
    sb.container = nil
  elseif sb.dir then
    remove(sb.runtime or runtime(), nil, nil, sb.dir)
  end
  if sb.dir then state.remove_dir(sb.dir) end
end

M.op = transport.op
M.is_alive = transport.is_alive
M.lease = transport.lease

local function sh(what, argv)
  local out, err, code = proc.run(argv)
  if code ~= 0 then
    errors.raise("io_error", string.format("commit: %s failed (exit %s): %s", what, tostring(code),
      ((err ~= "" and err or out)):sub(1, 2000)))
  end
  return out
end

local function sha256_file(path)
  return "sha256:" .. sh("sha256sum", { "sha256sum", path }):match("^(%x+)")
end

--- Commit sb's files as the image reference ("repo[:tag]"): the image it
--- started from plus one layer, the sandbox's upper dir with its
--- whiteouts in OCI form (the container paused while it is copied). The
--- image is a `docker save` archive in the image cache
--- (images.tar_path(reference): `docker load` takes it, images.ensure
--- loads it into an engine), its layer is added to the layer store and
--- the store records the image, so a runc start of reference needs no
--- engine and no unpack. The base image's archive is the cache's tar, or
--- the engine's `docker save` (an engine must answer then). Its config is
--- the base image's; history says "rock commit of sandbox <id>". Whatever
--- fails, nothing made on the way is left. Returns the image id.
function M.commit(sb, reference)
  local ref = engine.parse_reference(reference)
  local name = ref.repo .. ":" .. ref.tag
  local images = require "rock.images"
  local work = state.dir() .. "/commit-" .. sb.id .. "-" .. nonce()
  local out_tar = images.tar_path(name) .. ".part-" .. nonce()
  local base_tmp
  local ok, res = pcall(function()
    state.mkdir_p(work)
    -- the new layer: the upper dir, copied while the container is paused
    local paused = select(3, runc(sb.runtime, sb.root, { "pause", sb.container })) == 0
    local copied, cerr = pcall(sh, "copying the upper dir", { "cp", "-a", "--reflink=auto", sb.dir .. "/upper",
      work .. "/layer" })
    if paused then runc(sb.runtime, sb.root, { "resume", sb.container }) end
    if not copied then error(cerr, 0) end
    core.overlay_oci_whiteouts(work .. "/layer")
    sh("tar of the layer", { "tar", "-C", work .. "/layer", "--sort=name", "--numeric-owner", "--xattrs",
      "--xattrs-exclude=trusted.overlay.*", "-cf", work .. "/layer.tar", "." })
    local diff_id = sha256_file(work .. "/layer.tar")
    local lhex = diff_id:sub(8)
    -- the base image's archive, its manifest and config
    local base = images.tar_path(sb.image)
    if not uv.fs_stat(base) then
      base_tmp = work .. "/base.tar"
      engine.connect(engine.detect() or "docker"):image_save(sb.image, base_tmp)
      base = base_tmp
    end
    local list = json.decode(sh("reading the base manifest", { "tar", "-xOf", base, "manifest.json" }))
    local m = type(list) == "table" and list[1]
    if type(m) ~= "table" or type(m.Config) ~= "string" or type(m.Layers) ~= "table" then
      errors.raise("image_not_found", "commit: the archive of " .. sb.image .. " has no image manifest")
    end
    local cfg = json.decode(sh("reading the base config", { "tar", "-xOf", base, m.Config }))
    cfg.rootfs = cfg.rootfs or { type = "layers", diff_ids = json.array() }
    local diff_ids = json.array()
    for i, d in ipairs(cfg.rootfs.diff_ids or {}) do diff_ids[i] = d end
    diff_ids[#diff_ids + 1] = diff_id
    cfg.rootfs.diff_ids = diff_ids
    cfg.created = os.date("!%Y-%m-%dT%H:%M:%SZ")
    local hist = json.array()
    for i, h in ipairs(cfg.history or {}) do hist[i] = h end
    hist[#hist + 1] = { created = cfg.created, created_by = "rock commit of sandbox " .. sb.id }
    cfg.history = hist
    local cfg_text = json.encode(cfg)
    write(work .. "/config.json", cfg_text)
    local id = sha256_file(work .. "/config.json")
    local chex = id:sub(8)
    os.rename(work .. "/config.json", work .. "/" .. chex .. ".json")
    mkdir(work .. "/" .. lhex)
    os.rename(work .. "/layer.tar", work .. "/" .. lhex .. "/layer.tar")
    local layer_files = json.array()
    for i, l in ipairs(m.Layers) do layer_files[i] = l end
    layer_files[#layer_files + 1] = lhex .. "/layer.tar"
    write(work .. "/manifest.json", json.encode(json.array{ { Config = chex .. ".json",
      RepoTags = json.array{ name }, Layers = layer_files } }))
    -- the archive: the base's members but its manifest, then the new ones
    sh("copying the base archive", { "cp", "--reflink=auto", base, out_tar })
    proc.run({ "tar", "--delete", "-f", out_tar, "manifest.json", "repositories" }) -- "repositories" may be absent
    sh("writing the archive", { "tar", "-rf", out_tar, "-C", work, "--numeric-owner", "manifest.json",
      chex .. ".json", lhex .. "/layer.tar" })
    layers.add(out_tar, lhex .. "/layer.tar", diff_id)
    images.add_tar(name, out_tar)
    layers.record(name, id, diff_ids, cfg.config or {})
    return id
  end)
  pcall(core.rmtree, work)
  if not ok then os.remove(out_tar) error(res, 0) end
  return res
end

--- Its part of the status: this node's address.
function M.status() return require("rock.backends").this_host() end

--- ROCK's statistics from the container's cgroup (runc events --stats):
--- cpu in percent since the last call (of one core), mem in percent of
--- its limit, mem_bytes; disk the size of its upper dir; no network.
function M.stats(sb)
  local out, err, code = runc(sb.runtime, sb.root, { "events", "--stats", sb.container })
  if code ~= 0 then errors.raise("sandbox_not_alive", "runc events: " .. err) end
  local ev = json.decode(out)
  local d = ev.data or {}
  local cpu_ns = ((d.cpu or {}).usage or {}).total or 0
  local now = uv.hrtime()
  local cpu = 0
  if sb._cpu then cpu = (cpu_ns - sb._cpu[1]) / math.max(1, now - sb._cpu[2]) * 100 end
  sb._cpu = { cpu_ns, now }
  local mu = ((d.memory or {}).usage or {})
  local limit = mu.limit or 0
  if limit > 2 ^ 62 then limit = 0 end
  local du = proc.run({ "du", "-sb", sb.dir .. "/upper" })
  return { cpu = cpu, mem = limit > 0 and (mu.usage or 0) / limit * 100 or 0, mem_bytes = mu.usage or 0,
    disk = tonumber(du:match("^(%d+)")) or 0, disk_log_percent = 0, disk_dind_percent = 0, net = 0 }
end

--- gc's release of a sandbox no host serves (its record rec, its dir):
--- the container (named in rec, its annotations' nonce rec's) deleted,
--- the overlay unmounted.
function M.release(rec, dir)
  local root = rec.runc_root or M.root()
  local rt = runtime(rec.runtime)
  if rec.container and uv.fs_stat(root) then
    local out, _, code = runc(rt, root, { "state", rec.container })
    if code == 0 then
      local ok, st = pcall(json.decode, out)
      local ann = ok and type(st) == "table" and st.annotations or {}
      if ann["rock.nonce"] == rec.nonce then remove(rt, root, rec.container, nil) end
    end
  end
  remove(rt, nil, nil, dir)
  return true
end

-- The mounts of sandboxes under dir: an overlay at <id>/bundle/rootfs, a
-- tmpfs at <id>/sock (runsc's), as {id=, target=}.
local function mounts_under(dir)
  local out = {}
  local f = io.open("/proc/self/mounts", "r")
  if not f then return out end
  local prefix = dir .. "/"
  for line in f:lines() do
    local target, fstype = line:match("^%S+ (%S+) (%S+) ")
    if target and target:sub(1, #prefix) == prefix then
      local rest = target:sub(#prefix + 1)
      local id = (fstype == "overlay" and rest:match("^([^/]+)/bundle/rootfs$"))
        or (fstype == "tmpfs" and rest:match("^([^/]+)/sock$"))
      if id then out[#out + 1] = { id = id, target = target } end
    end
  end
  f:close()
  return out
end

--- gc's sweep (ctx: gc.lua) of what no record proves: runc's and runsc's
--- containers of this state dir's root named rock-<id> whose owner (their annotation) is
--- dead and whose sandbox has no record, and mounts (its overlays, runsc's socket tmpfs) under the
--- sandboxes dir whose sandbox has no record and a dead owner mark.
function M.reap(ctx)
  local root = M.root()
  for _, name in ipairs(uv.fs_stat(root) and { "runc", "runsc" } or {}) do
    local rt = runtime(name)
    if not found(rt.bin) then goto next end
    local out, err, code = runc(rt, root, { "list", "--format", "json" })
    if code ~= 0 then ctx.error("runc list: " .. err) end
    local ok, list = pcall(json.decode, code == 0 and out or "[]")
    for _, c in ipairs(ok and type(list) == "table" and list or {}) do
      local id = tostring(c.id):match("^rock%-(.+)$")
      local ann = type(c.annotations) == "table" and c.annotations or {}
      local dir = state.sandboxes_dir() .. "/" .. tostring(id)
      local rec = id and state.valid_id(id) and state.read_record(dir)
      if rec and rec.container == c.id and c.status == "running" then
        ctx.running[id] = true -- a kept one is spared while it runs (gc.lua)
      elseif id and state.valid_id(id) and ann["rock.sandbox"] == id and not rec
          and not state.owner_alive(state.parse_owner(ann["rock.owner"])) then
        local gone, rerr = pcall(remove, rt, root, c.id, dir)
        if gone then ctx.removed(id, "runc", "owner dead (no record)")
        else ctx.unremoved[id] = true; ctx.error(tostring(rerr)) end
      end
    end
    ::next::
  end
  for _, m in ipairs(mounts_under(state.sandboxes_dir())) do
    local dir = state.sandboxes_dir() .. "/" .. m.id
    local mark = not state.read_record(dir) and state.marked_owner(dir)
    if mark and not state.owner_alive(mark) then pcall(core.overlay_umount, m.target) end
  end
end

M.caps = { image = true, attach = true, keep = true, stats = true, upload_stream = true, download_stream = true,
  own_files = true, commit = true }

return M
