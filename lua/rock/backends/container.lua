--- rock.backends.container: a sandbox is a container (docker or podman,
-- both through the Engine API: rock.engine).
-- The rocklet binary is bind-mounted read-only at /.rock/rocklet and is the
-- container's command, so it runs as PID 1: it reaps zombies, ends
-- everything on SIGTERM, and exits when its idle lease lapses (the
-- container then stops with no host left). Nothing of the host is mounted
-- writable: the rocklet listens on /.rock/rocklet.sock and keeps its state
-- (output spills) in /.rock/state, both in the container's own layer; the
-- host reaches the socket through /proc/<pid>/root, pid being the
-- container's init as the host sees it, and checks that the server is
-- that pid (SO_PEERCRED), so a symlink planted there leads nowhere. The
-- host keeps only the record (state dir/sandboxes/<id>), written before
-- the create, and with the network "none" (unless asked) read-only
-- /etc/hosts, /etc/hostname and /etc/resolv.conf of its own (M.ETC). No
-- port is published. Labels rock.sandbox, rock.owner, rock.expires, rock.dir and
-- rock.nonce let `rock gc` find what a dead host left; the container's
-- name (rock-<id>) and the record prove it rock's (images committed from
-- it carry the labels, never the name). Limits (memory, pids, disk) are
-- config() and watch_disk; commit() makes an image with the config of
-- the one the sandbox started from. It is registered twice, as "docker"
-- and "podman" (M.backend(kind): the contract of backends/init.lua with
-- every capability); its data plane is rocklet_transport; reap() and
-- list() are gc's and ps's sweep of the engine's containers. Read next:
-- sandbox.lua, gc.lua.
local uv = require "luv"
local core = require "rock.core"
local errors = require "rock.errors"
local rocklet = require "rock.rocklet"
local task = require "rock.task"
local state = require "rock.state"
local engine = require "rock.engine"
local images = require "rock.images"
local json = require "rock.json"
local transport = require "rock.backends.rocklet_transport"

local M = {}

local IN_ROCKLET = "/.rock/rocklet"
local IN_SOCKET = "/.rock/rocklet.sock"
local IN_STATE = "/.rock/state"
M.DEFAULT_LEASE = 1800 -- seconds idle before a container ends itself
M.CREATE_WAIT = 30 -- seconds a stop waits for a create in flight to land

--- The host's path to the socket of the rocklet whose pid (host's view)
--- is pid.
function M.socket_path(pid)
  return string.format("/proc/%d/root%s", pid, IN_SOCKET)
end

local function env_list(env)
  local out = {}
  for k, v in pairs(env or {}) do out[#out + 1] = k .. "=" .. tostring(v) end
  table.sort(out)
  return out
end

--- Binds from mounts: a list of "host:container[:ro]" strings or
--- {source=, target=, read_only=} tables.
local function binds(mounts)
  local out = {}
  for _, m in ipairs(mounts or {}) do
    if type(m) == "string" then
      out[#out + 1] = m
    elseif type(m) == "table" and m.source and m.target then
      out[#out + 1] = m.source .. ":" .. m.target .. (m.read_only and ":ro" or "")
    else
      errors.raise("invalid_argument", "sandbox.start: a mount is 'host:container[:ro]' or {source=, target=}")
    end
  end
  return out
end

--- /etc/hosts, /etc/hostname and /etc/resolv.conf: the engine binds
--- its own files there, writable and on the host's disk outside the
--- writable layer (a sandbox could fill the host's disk through them past
--- its disk limit). With the network "none" rock binds files of its own
--- instead, read-only, from the sandbox's dir (removed with it): what the
--- engine would write there (the loopback names, the container's short id,
--- the host's resolv.conf). Another network keeps the engine's (its DNS
--- and addresses are the engine's to write).
M.ETC = { { "hosts", "/etc/hosts" }, { "hostname", "/etc/hostname" }, { "resolv.conf", "/etc/resolv.conf" } }
M.HOSTS = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\n" ..
  "ff00::0\tip6-mcastprefix\nff02::1\tip6-allnodes\nff02::2\tip6-allrouters\n"

local function own_etc(sb, opts)
  return (opts.network or "none") == "none" and sb.dir ~= nil
end

local function write_etc(sb, name, text)
  local path = sb.dir .. "/etc-" .. name
  local fd, err = uv.fs_open(path, "w", tonumber("644", 8))
  if not fd then errors.raise("io_error", "cannot write " .. path .. ": " .. tostring(err)) end
  local ok, werr = uv.fs_write(fd, text, 0)
  uv.fs_close(fd)
  if not ok then errors.raise("io_error", "cannot write " .. path .. ": " .. tostring(werr)) end
  uv.fs_chmod(path, tonumber("644", 8))
end

local function resolv_conf()
  local f = io.open("/etc/resolv.conf", "rb")
  local text = f and f:read(65536) or ""
  if f then f:close() end
  return text
end

--- Write one of them (name: "hosts", "hostname", "resolv.conf") into sb.dir.
M.write_etc_file = write_etc

--- Write the /etc files M.config binds (network none: M.ETC) into sb.dir;
--- before M.config's container is created.
function M.write_etc(sb, opts)
  if not own_etc(sb, opts) then return end
  write_etc(sb, "hosts", M.HOSTS)
  write_etc(sb, "hostname", "localhost\n") -- the container's short id once it has one
  write_etc(sb, "resolv.conf", resolv_conf())
end

--- The container log's bound: the rocklet's stdout and stderr go to the
--- engine's json-file log on the host's disk, outside the writable layer
--- and its disk limit; a sandbox writing to /proc/1/fd/1 would fill the
--- host's disk. One file of at most this size (json-file's max-size).
M.LOG_MAX = "10m"

--- The Engine API ContainerConfig for sb. opts.limits (sandbox.start
--- checks them: bytes, a count; nil is none): memory bounds RAM with no
--- swap on top (Memory = MemorySwap: past it the kernel's OOM killer ends
--- a process inside), pids_limit the processes and threads (PidsLimit),
--- disk every file (the rocklet's --max-file-size) and the writable
--- layer: StorageOpt size when the engine has quotas (with_storage_opt),
--- else the watch (watch_disk). The log is json-file, bounded (LOG_MAX).
function M.config(sb, opts, with_storage_opt)
  local lease = opts.auto_clear_seconds or M.DEFAULT_LEASE
  local limits = opts.limits or {}
  local me = state.me()
  local hb = binds(opts.mounts)
  table.insert(hb, 1, core.rocklet_path() .. ":" .. IN_ROCKLET .. ":ro")
  if own_etc(sb, opts) then
    local taken = {}
    for _, b in ipairs(hb) do
      local target = b:match("^[^:]*:([^:]*)")
      if target then taken[target] = true end
    end
    for _, f in ipairs(M.ETC) do
      if not taken[f[2]] then hb[#hb + 1] = sb.dir .. "/etc-" .. f[1] .. ":" .. f[2] .. ":ro" end
    end
  end
  local host = {
    Binds = hb,
    NetworkMode = opts.network or "none",
    Memory = limits.memory, MemorySwap = limits.memory,
    NanoCpus = opts.cpus and math.floor(opts.cpus * 1e9) or nil,
    PidsLimit = limits.pids_limit,
    StorageOpt = with_storage_opt and limits.disk and { size = tostring(limits.disk) } or nil,
    Init = false,
    LogConfig = { Type = "json-file", Config = { ["max-size"] = M.LOG_MAX, ["max-file"] = "1" } },
  }
  for k, v in pairs(opts.engine_args or {}) do host[k] = v end
  local cmd = { "serve", "--socket", IN_SOCKET, "--dir", IN_STATE, "--idle-timeout", tostring(lease) }
  if limits.disk then
    cmd[#cmd + 1] = "--max-file-size"
    cmd[#cmd + 1] = tostring(limits.disk)
  end
  return {
    Image = sb.image,
    -- the rocklet is the init and runs as root whatever the image's USER
    -- (it makes its socket and state dirs, and sessions may switch to a
    -- remote_user); commands default to root, as in ROCK
    User = "0",
    Entrypoint = { IN_ROCKLET },
    Cmd = cmd,
    Env = opts.env and next(opts.env) and env_list(opts.env) or nil,
    Labels = {
      ["rock.sandbox"] = sb.id,
      ["rock.owner"] = state.owner_label(me),
      ["rock.expires"] = tostring(os.time() + lease),
      ["rock.dir"] = sb.dir,
      ["rock.nonce"] = sb.nonce,
    },
    HostConfig = host,
  }
end

--- The name of sandbox id's container. Only rock gives it (a container
--- started from an image committed from a sandbox carries the sandbox's
--- labels, never its name), so gc and a restarted `rock serve` tell
--- rock's containers by it.
function M.container_name(id) return "rock-" .. id end

-- A nonce for one container create: in its label rock.nonce and in the
-- record written before the create, so a container whose id never made
-- it to the record is still proven the sandbox's.
local function nonce()
  return (uv.random(8, {}):gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

-- ROCK_TEST_PAUSE_START=<point>: a start stops at that point for good
-- (dir, record, created, recorded, started, pid, ready), so a test can
-- kill its host there (test_engine_serve_crash.lua). Unset: nothing.
local function pause(point)
  if os.getenv("ROCK_TEST_PAUSE_START") == point then
    require("rock.log").warn("sandbox", "start paused at %s (ROCK_TEST_PAUSE_START)", point)
    task.sleep(task.MAX_SECONDS)
  end
end

--- Does the container info (an inspect, or a list entry) carry the name
--- rock gives sandbox id's container?
function M.is_named(info, id)
  local want = "/" .. M.container_name(tostring(id))
  if info.Name == want then return true end
  for _, n in ipairs(info.Names or {}) do if n == want then return true end end
  return false
end

--- Is the container info (an inspect, or a list entry) the one rock
--- made for the record rec? Its name is rock's for rec.id and its id is
--- the one rec names or, when rec names none yet (a start cut during the
--- create), its rock.nonce label is rec's.
function M.is_recorded(info, rec)
  if type(rec) ~= "table" or not state.valid_id(rec.id) or not M.is_named(info, rec.id) then return false end
  if rec.container then return info.Id == rec.container end
  local labels = info.Labels or (info.Config or {}).Labels or {}
  return rec.nonce ~= nil and labels["rock.nonce"] == rec.nonce
end

--- Remove the container of a sandbox whose start or host was cut short
--- (its record rec): the one rec names, or that its create made, if it
--- is that sandbox's (is_recorded). Returns true once none is left; false
--- and the seconds to wait when rec names no container yet and was made
--- less than CREATE_WAIT ago (unless final): the engine finishes a create
--- whose client died, so the container may still land. An engine that
--- does not answer raises (the record must then stay: it is the proof).
function M.release(rec, _, final)
  local e = engine.connect(rec.engine_socket or rec.backend)
  local ok, info = pcall(e.container_inspect, e, rec.container or M.container_name(rec.id))
  if ok then
    if M.is_recorded(info, rec) then e:container_remove(info.Id, true) end
    return true
  end
  if not errors.is(info, "not_found") then error(info, 0) end
  local left = (tonumber(rec.created) or 0) + M.CREATE_WAIT - os.time()
  if not final and not rec.container and rec.nonce and left > 0 then
    return false, left, "its container create may still land"
  end
  return true
end

-- Engines known to refuse StorageOpt size, by socket (docker's overlay2
-- and podman's overlay want xfs with pquota for it).
local quotas = {}

--- The disk watch, for a disk limit the engine cannot hold itself: the
--- size of the container's writable layer (SizeRw) is read every
--- (limit - size) / DISK_RATE seconds (within DISK_POLL), so a sandbox
--- writing at up to DISK_RATE is seen within DISK_POLL[1] of passing its
--- limit; past it the container is killed and the sandbox is stopped with
--- that reason (gone). A file is bounded exactly (--max-file-size); the
--- layer by what is written between two reads.
M.DISK_RATE = 2 * 1024 ^ 3 -- bytes/s: a fast NVMe disk (this machine's docker writes ~0.25 GB/s)
M.DISK_POLL = { 0.25, 30 }  -- seconds between reads, least and most

local function human(n)
  for _, u in ipairs({ { 1024 ^ 3, "GiB" }, { 1024 ^ 2, "MiB" }, { 1024, "KiB" } }) do
    if n >= u[1] then return string.format("%.1f %s", n / u[1], u[2]) end
  end
  return string.format("%d bytes", n)
end

local function watch_disk(sb, limit)
  local timer = uv.new_timer()
  sb.disk_timer = timer
  local function close() if not timer:is_closing() then timer:close() end end
  local function again(seconds)
    if timer:is_closing() then return end
    timer:start(math.floor(seconds * 1000), 0, function()
      task.spawn(function()
        if timer:is_closing() or sb._released or sb.state == "stopped" then return end
        local ok, info = pcall(sb.engine.container_inspect_size, sb.engine, sb.container)
        local used = ok and tonumber(info.SizeRw)
        if timer:is_closing() or sb._released then return end -- stopped meanwhile
        if used and used > limit then
          sb.limit_reason = string.format("disk limit exceeded: the sandbox wrote %s (its writable layer), " ..
            "its limit (disk) is %s", human(used), human(limit))
          require("rock.log").warn("sandbox", "%s: %s: stopping it", sb.id, sb.limit_reason)
          close()
          pcall(sb.engine.container_kill, sb.engine, sb.container, "KILL")
          if sb._check_gone then sb:_check_gone() end
        elseif ok then
          again(math.max(M.DISK_POLL[1], math.min(M.DISK_POLL[2], (limit - (used or 0)) / M.DISK_RATE)))
        elseif errors.is(info, "not_found") then
          close()
        else
          again(M.DISK_POLL[2]) -- the engine does not answer now
        end
      end)
    end)
    timer:unref()
  end
  again(math.max(M.DISK_POLL[1], math.min(M.DISK_POLL[2], limit / M.DISK_RATE)))
end

--- Why a container that should be running is not: its state and the
--- last lines it wrote. nil while it runs.
local function why_not_running(e, id)
  local ok, info = pcall(e.container_inspect, e, id)
  if not ok then return "container is gone: " .. tostring(info) end
  local st = info.State or {}
  if st.Running then return nil end
  local ok2, logs = pcall(e.container_logs, e, id, 20)
  return string.format("container exited at once (status %s, exit code %s%s): %s",
    tostring(st.Status), tostring(math.tointeger(st.ExitCode) or st.ExitCode),
    (st.Error and st.Error ~= "") and (", " .. st.Error) or "",
    ok2 and logs or "(no logs)")
end

--- Start: fill sb (id, dir, container, rocklet_pid, socket) and bring its
--- rocklet up. phase(name, status, message) records progress. A failed
--- start removes what it made (container, dir) before raising.
function M.start(sb, opts, phase)
  local e = engine.connect(sb.backend)
  sb.engine = e
  if type(opts.image) ~= "string" or opts.image == "" then
    errors.raise("invalid_argument", "sandbox.start: 'image' is required for the " .. sb.backend .. " backend")
  end
  sb.image = opts.image
  sb.id = opts.sandbox_id or state.new_id()
  if uv.fs_stat(state.sandboxes_dir() .. "/" .. sb.id) then
    errors.raise("invalid_argument", "sandbox " .. sb.id .. " already exists")
  end

  phase("image_pull", "running", "ensuring " .. sb.image)
  local how = images.ensure(sb.image, { pull = opts.pull or "missing", engine = e })
  phase("image_pull", "success", how)

  sb.dir = state.make_sandbox_dir(sb.id) -- from here on, stop removes it
  local ok, err = pcall(function()
    pause("dir")
    phase("container_create", "running", "creating container")
    sb.container_name = M.container_name(sb.id) -- stop removes it by name if the create was cut
    sb.nonce = nonce()
    local limits = opts.limits or {}
    M.write_etc(sb, opts)
    local config = M.config(sb, opts, limits.disk ~= nil and quotas[e.socket] ~= false)
    local rec = {
      id = sb.id, backend = sb.backend, image = sb.image,
      owner = config.Labels["rock.owner"], engine_socket = e.socket,
      created = sb.create_time, auto_clear_seconds = opts.auto_clear_seconds or M.DEFAULT_LEASE,
      container_name = sb.container_name, nonce = sb.nonce,
    }
    -- the record comes before the container: however the start is cut
    -- from here on (a kill -9), gc and a restarted server can prove the
    -- container this sandbox's (its name and nonce) and remove it
    state.write_record(sb.dir, rec)
    pause("record")
    sb.creating = true -- a stop from another task (the exit sweep) waits for it to land
    -- the create runs to its end under a deadline too (task.shield): one
    -- cut here still lands in the engine, after stop's removal by name
    -- found nothing, and no one removes it (a rock.timeout around start)
    local created, c = task.shield(pcall, e.container_create, e, sb.container_name, config)
    if not created and config.HostConfig.StorageOpt and tostring(c.message):find("storage%-opt") then
      quotas[e.socket] = false -- the engine has no quota here (overlay on ext4): the watch bounds it
      config = M.config(sb, opts, false)
      created, c = task.shield(pcall, e.container_create, e, sb.container_name, config)
    end
    sb.creating = false
    if not created then error(c, 0) end
    sb.disk_by = limits.disk and (config.HostConfig.StorageOpt and "storage_opt" or "watch") or nil
    rec.limits = { memory = limits.memory, pids_limit = limits.pids_limit, disk = limits.disk,
                   disk_by = sb.disk_by }
    sb.container = c
    if own_etc(sb, opts) then write_etc(sb, "hostname", c:sub(1, 12) .. "\n") end
    pause("created")
    rec.container = sb.container
    state.write_record(sb.dir, rec)
    phase("container_create", "success", "container " .. sb.container:sub(1, 12))
    pause("recorded")

    phase("container_start", "running", "starting container")
    e:container_start(sb.container)
    phase("container_start", "success", "started")
    pause("started")

    phase("rocklet_ready", "running", "waiting for the rocklet")
    local info = e:container_inspect(sb.container)
    local pid = math.tointeger((info.State or {}).Pid)
    if not pid or pid <= 0 then
      errors.raise("sandbox_start_failed", why_not_running(e, sb.container) or
        "the engine reports no pid for the container")
    end
    sb.rocklet_pid, sb.socket = pid, M.socket_path(pid)
    rec.rocklet_pid, rec.socket = pid, sb.socket
    state.write_record(sb.dir, rec)
    phase("rocklet_ready", "running", "waiting for " .. sb.socket)
    pause("pid")
    rocklet.wait_ready(sb.socket, opts.startup_timeout, function()
      return why_not_running(e, sb.container)
    end, pid)
    phase("rocklet_ready", "success", "rocklet answers")
    if sb.disk_by == "watch" then watch_disk(sb, limits.disk) end
    pause("ready")
  end)
  if not ok then
    task.shield(pcall, M.stop, sb) -- even past the deadline that cut the start
    error(err, 0)
  end
end

--- Attach sb to the running container of record rec (sandbox.attach):
--- the container's current pid gives the rocklet's socket, which must
--- answer.
function M.attach(sb, rec)
  local e = engine.connect(sb.backend)
  sb.engine, sb.container = e, rec.container
  local info = e:container_inspect(rec.container)
  local pid = math.tointeger((info.State or {}).Pid)
  if not (info.State or {}).Running or not pid or pid <= 0 then
    errors.raise("sandbox_not_alive", "container " .. tostring(rec.container) .. " is not running")
  end
  sb.rocklet_pid, sb.socket = pid, M.socket_path(pid)
  rocklet.call(sb.socket, "/is_alive", {}, 5, pid)
  local limits = rec.limits or {}
  sb.disk_by = limits.disk_by
  local disk = math.tointeger(limits.disk)
  if limits.disk_by == "watch" and disk and disk > 0 then watch_disk(sb, disk) end
end

--- Why the rocklet is gone (its container stopped or went), or nil while
--- the container runs.
function M.gone(sb)
  if sb.limit_reason then return sb.limit_reason end
  if not sb.container then return "no container" end
  local ok, info = pcall(sb.engine.container_inspect, sb.engine, sb.container)
  if not ok then -- only an engine that says so is proof, not one that is unreachable
    return errors.is(info, "not_found") and "the container is gone" or nil
  end
  local st = info.State or {}
  if st.Running then return nil end
  return string.format("the container stopped (status %s, exit code %s)", tostring(st.Status),
    tostring(math.tointeger(st.ExitCode) or st.ExitCode))
end

--- Keep: mark the record so gc spares the container while it runs.
function M.keep(sb)
  local rec = state.read_record(sb.dir)
  if not rec then errors.raise("io_error", "cannot read the record of " .. sb.id) end
  rec.kept = true
  state.write_record(sb.dir, rec)
end

-- Image config fields that are lists: an empty one must be written [].
local LISTS = { Cmd = true, Entrypoint = true, Env = true, OnBuild = true, Shell = true }

local function unnull(v) if v == json.null then return nil end return v end

-- The config a commit gives its image: the committed one (the engine's
-- copy of the container's), with the entrypoint, command, user and labels
-- of the image the sandbox started from (src; nil when it is gone: then
-- none), never rock's (the rocklet as entrypoint, user 0, rock.* labels).
local function own_config(committed, src)
  local cfg = {}
  for k, v in pairs(committed or {}) do cfg[k] = v end
  src = src or {}
  cfg.Entrypoint, cfg.Cmd, cfg.User = unnull(src.Entrypoint), unnull(src.Cmd), unnull(src.User) or ""
  local labels = {}
  for k, v in pairs(unnull(src.Labels) or {}) do
    if k:sub(1, 5) ~= "rock." then labels[k] = v end
  end
  cfg.Labels = next(labels) and labels or json.null
  for k, v in pairs(cfg) do
    if LISTS[k] and type(v) == "table" then cfg[k] = json.array(v) end
  end
  return cfg
end

-- The image config (the JSON an image's id is the digest of) of the
-- committed image img, with config cfg. The Engine API gives no image's
-- raw config: it is rebuilt from the inspect and the history (whose
-- entries say no more than a size; an entry of size 0 counts as one with
-- no layer, as long as every layer keeps an entry).
local function image_config(img, history, cfg, what)
  local diff_ids = json.array()
  for i, d in ipairs((img.RootFS or {}).Layers or {}) do diff_ids[i] = d end
  local hist, layered = json.array(), 0
  for i = #history, 1, -1 do
    local h = history[i]
    local created = math.tointeger(h.Created)
    hist[#hist + 1] = { created = created and os.date("!%Y-%m-%dT%H:%M:%SZ", created) or nil,
      created_by = unnull(h.CreatedBy), comment = unnull(h.Comment), empty_layer = (h.Size or 0) <= 0 }
    if (h.Size or 0) > 0 then layered = layered + 1 end
  end
  if hist[#hist] then hist[#hist].created_by = what end -- the engine wrote the rocklet's command
  for i = #hist, 1, -1 do -- newest first: a commit's own layer may be empty
    if layered >= #diff_ids then break end
    if hist[i].empty_layer then hist[i].empty_layer, layered = false, layered + 1 end
  end
  for _, h in ipairs(hist) do if not h.empty_layer then h.empty_layer = nil end end
  return { architecture = unnull(img.Architecture) or "amd64", os = unnull(img.Os) or "linux",
    variant = unnull(img.Variant), author = unnull(img.Author), created = unnull(img.Created),
    config = cfg, rootfs = { type = "layers", diff_ids = diff_ids }, history = hist }
end

--- Commit sb's filesystem as the image named reference ("repo[:tag]",
--- checked first: engine.parse_reference). The image is the sandbox's
--- files with the config of the image it started from: that image's
--- entrypoint, command, user and labels, not rock's (a container started
--- from it with plain `docker run` runs the image's own command and
--- carries no rock.* label); the env the sandbox was started with stays,
--- as docker commit keeps it. The engine's commit makes the layer, its
--- config is replaced (Engine:image_from_config), then the image is
--- tagged; whatever fails, no image made on the way is left. Returns the
--- image id.
function M.commit(sb, reference)
  local ref = engine.parse_reference(reference)
  local e = sb.engine
  local raw, id
  local ok, err = pcall(function()
    local from = e:container_inspect(sb.container).Image
    raw = e:container_commit(sb.container)
    local img = e:image_inspect(raw)
    local found, src = pcall(e.image_inspect, e, from)
    local cfg = own_config(img.Config, found and src.Config or nil)
    id = e:image_from_config(image_config(img, e:image_history(raw), cfg, "rock commit of sandbox " .. sb.id))
    e:image_tag(id, ref.repo, ref.tag)
  end)
  local function remove(image)
    local gone, rerr = pcall(e.image_remove, e, image, false)
    if not gone and not errors.is(rerr, "image_not_found") then
      require("rock.log").warn("commit", "cannot remove image %s: %s", image, tostring(rerr))
    end
  end
  if not ok and id and id ~= raw then task.shield(remove, id) end
  if raw and raw ~= id then task.shield(remove, raw) end -- its layer stays: the image has it
  if not ok then error(err, 0) end
  return id
end

--- Stop: the container is removed by force (its PID 1, the rocklet, is
--- killed and the kernel ends every process of the container with it),
--- then the socket dir goes. Safe to call twice.
function M.stop(sb)
  -- the exit sweep (SIGINT/SIGTERM) may stop a sandbox whose create is in
  -- flight in its start task: the engine makes the container all the
  -- same, after a removal by name found none. Let the create land first
  -- (its own request is bounded by the engine client's timeout).
  local deadline = uv.now() + M.CREATE_WAIT * 1000
  while sb.creating and uv.now() < deadline do task.sleep(0.02) end
  if sb.disk_timer and not sb.disk_timer:is_closing() then sb.disk_timer:close() end
  local which = sb.container or sb.container_name
  if which then
    -- a create cut by a deadline (rock.timeout) may have made the
    -- container all the same: remove it by name; none is fine then
    local ok, err = pcall(sb.engine.container_remove, sb.engine, which, true)
    if not ok and not (sb.container == nil and errors.is(err, "not_found")) then error(err, 0) end
    sb.container, sb.container_name = nil, nil
  end
  if sb.dir then state.remove_dir(sb.dir) end
end

M.op = transport.op
M.is_alive = transport.is_alive
M.lease = transport.lease

--- Its part of the status: this node's address.
function M.status() return require("rock.backends").this_host() end

--- Remove the image sb started from (teardown's remove_image).
function M.remove_image(sb) return images.remove(sb.image, { engine = sb.engine }) end

local function cpu_percent(st)
  local cs, ps = st.cpu_stats or {}, st.precpu_stats or {}
  local cpu = ((cs.cpu_usage or {}).total_usage or 0) - ((ps.cpu_usage or {}).total_usage or 0)
  local sys = (cs.system_cpu_usage or 0) - (ps.system_cpu_usage or 0)
  local n = cs.online_cpus or 1
  if sys <= 0 or cpu < 0 then return 0 end
  return cpu / sys * n * 100
end

--- ROCK's statistics of sb: cpu and mem in percent (of its limit),
--- mem_bytes, disk (its writable layer, bytes), net (bytes both ways).
function M.stats(sb)
  local st = sb.engine:container_stats(sb.container) or {}
  local mem = st.memory_stats or {}
  local size = sb.engine:container_inspect_size(sb.container) or {}
  local limit = mem.limit or 0
  local net = 0
  for _, n in pairs(st.networks or {}) do net = net + (n.rx_bytes or 0) + (n.tx_bytes or 0) end
  return { cpu = cpu_percent(st), mem = limit > 0 and (mem.usage or 0) / limit * 100 or 0,
    mem_bytes = mem.usage or 0, disk = size.SizeRw or 0, disk_log_percent = 0, disk_dind_percent = 0, net = net }
end

--- The sandbox a container labelled rock.sandbox is, as {id=, dir=,
--- record=}, or nil and why not. Its labels prove nothing: an image
--- committed from a sandbox passes them to every container started from
--- it (and a user's `docker run` of it is no sandbox). What proves it is
--- a record, in the sandbox dir its rock.dir label names, that names the
--- container (is_recorded: rock's name for the sandbox, and the
--- container's id or its create's nonce); in a dir with no readable
--- record (a start of an older rock cut before its record), the name and
--- the owner mark, the same owner as the label.
local function claim(c)
  local labels = c.Labels or {}
  local id, dir = labels["rock.sandbox"], labels["rock.dir"]
  if not state.valid_id(id) then return nil, "its rock.sandbox label is no sandbox id" end
  if type(dir) ~= "string" or not dir:match("/sandboxes/" .. id:gsub("%p", "%%%0") .. "$") then
    return nil, "its rock.dir label is no sandbox dir of " .. id
  end
  local rec = state.read_record(dir)
  if rec then
    if rec.id == id and M.is_recorded(c, rec) then return { id = id, dir = dir, record = rec } end
    return nil, "its sandbox's record names another container"
  end
  local mark = uv.fs_stat(dir) and state.marked_owner(dir)
  if mark and state.owner_label(mark) == labels["rock.owner"]
      and M.is_recorded(c, { id = id, nonce = labels["rock.nonce"] }) then
    return { id = id, dir = dir }
  end
  return nil, "no record of its sandbox names it"
end

-- The engine of kind when it answers now, else nil.
local function answering(kind)
  local e = engine.connect(kind)
  if uv.fs_stat(e.socket) and e:ping(2) then return e end
  return nil
end

--- gc's sweep of the engine's containers labelled rock.sandbox (ctx:
--- gc.lua): one whose owner is dead and that a record proves a sandbox's
--- (claim) is removed, with its dir, unless kept and running; one named
--- as rock names its own whose proof is gone is reported left.
function M.sweep(e, ctx)
  local ok, list = pcall(e.container_list, e, "rock.sandbox")
  if not ok then ctx.error(tostring(list)); list = {} end
  for _, c in ipairs(list) do
    local labels = c.Labels or {}
    local id = labels["rock.sandbox"] or "?"
    local owner = state.parse_owner(labels["rock.owner"])
    local why, sb, not_ours
    if not state.owner_alive(owner) then -- the owner first: never a live one's
      sb, not_ours = claim(c)
      local rec = sb and sb.record or {}
      if sb and (not rec.kept or c.State ~= "running") then
        why = rec.kept and ("kept, container " .. tostring(c.State)) or "owner dead"
      end
    end
    if why then
      local ok2, err = pcall(e.container_remove, e, c.Id, true)
      if ok2 then
        ctx.gone[id] = true
        pcall(state.remove_dir, sb.dir)
        ctx.removed(id, e.kind, why)
      else
        ctx.unremoved[id] = true
        ctx.error(tostring(err))
      end
    elseif not_ours and M.is_named(c, id) then -- rock's, its proof gone
      ctx.left(id, "container " .. c.Id:sub(1, 12) .. ": " .. not_ours)
    elseif not not_ours then
      ctx.running[id] = ctx.running[id] or c.State == "running"
    end
  end
end

--- `rock ps`: the engine's sandbox containers (rows: gc.ps), a record's
--- row annotated with its container, another state dir's added.
function M.list_engine(e, rows)
  local ok, list = pcall(e.container_list, e, "rock.sandbox")
  for _, c in ipairs(ok and list or {}) do
    local labels = c.Labels or {}
    local id = labels["rock.sandbox"]
    local row = rows.by_id[id]
    if not M.is_named(c, id) then -- not one rock made: a container of an image committed from a sandbox
      row = nil
    elseif not row then -- another state dir's
      local owner = state.parse_owner(labels["rock.owner"])
      row = { id = id, backend = e.kind, owner = labels["rock.owner"],
              owner_alive = state.owner_alive(owner), image = c.Image,
              age = c.Created and (os.time() - c.Created) or nil }
      rows.add(row)
    end
    if row then
      row.state = c.State
      row.container = c.Id:sub(1, 12)
    end
  end
end

--- The backend of engine kind ("docker" | "podman"), for backends.get.
function M.backend(kind)
  local b = setmetatable({
    caps = { image = true, attach = true, keep = true, commit = true, stats = true, warmup = true,
      remove_image = true, upload_stream = true, download_stream = true, own_files = true },
  }, { __index = M })
  function b.warmup(image) return images.ensure(image, { pull = "missing", engine = engine.connect(kind) }) end
  function b.health()
    if answering(kind) then return true end
    return false, kind .. " does not answer"
  end
  function b.reap(ctx)
    local e = answering(kind)
    if e then M.sweep(e, ctx) end
  end
  function b.list(rows)
    local e = answering(kind)
    if e then M.list_engine(e, rows) end
  end
  return b
end

return M
