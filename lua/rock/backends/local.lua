--- rock.backends.local: a sandbox without a container.
-- A sandbox is a directory under the state dir ($ROCK_HOME, default
-- ~/.local/state/rock) holding the rocklet's socket, its work dir and a
-- record (sandbox.json), plus one rocklet process: its own session and
-- process group (detached), a child subreaper, dying with its owner
-- (PDEATHSIG through --owner-pid), cwd inside the sandbox dir. Commands run
-- on the host's file system: this backend isolates processes, not files.
-- Stop: /close (the rocklet kills every descendant and exits; SIGTERM, the
-- same for it, when it does not answer), SIGKILL if it does not go, then
-- the directory is removed. Limits: disk bounds each file (the rocklet's
-- --max-file-size: RLIMIT_FSIZE for all it starts); memory and pids_limit
-- are not applied (no cgroup of its own; RLIMIT_NPROC counts every
-- process of the user, the host's too, and binds no root). It takes no
-- image and has no capability beyond the contract's required functions
-- (backends/init.lua); its data plane is rocklet_transport. Read next:
-- sandbox.lua.
local uv = require "luv"
local core = require "rock.core"
local task = require "rock.task"
local errors = require "rock.errors"
local rocklet = require "rock.rocklet"
local state = require "rock.state"
local transport = require "rock.backends.rocklet_transport"
local backends = require "rock.backends"

local M = { caps = { keep = true, upload_stream = true, download_stream = true } }
local warned -- the local backend's unbounded limits are said once per process

local function write_record(sb)
  local me = state.me()
  sb.pid_start = core.proc_start_time(sb.pid)
  state.write_record(sb.dir, {
    id = sb.id, backend = sb.backend, pid = sb.pid, pid_start = sb.pid_start,
    rocklet_pid = sb.pid, socket = sb.socket, owner = state.owner_label(me),
    created = sb.create_time, auto_clear_seconds = sb.auto_clear_seconds,
  })
end

--- Start a local sandbox: fill sb (id, dir, socket, pid) and bring its
--- rocklet up. phase(name, status, message) records progress.
function M.start(sb, opts, phase)
  phase("image_pull", "success", "no image for the local backend")
  sb.id = opts.sandbox_id or state.new_id()
  local dir = state.sandboxes_dir() .. "/" .. sb.id
  sb.socket = dir .. "/rocklet.sock"
  if #sb.socket >= 108 then -- sun_path
    errors.raise("invalid_argument", "state dir path too long for a unix socket: " .. sb.socket)
  end
  sb.dir = state.make_sandbox_dir(sb.id) -- from here on, stop removes it
  local ok, err = pcall(function()
    state.mkdir_p(sb.dir .. "/work")
    phase("container_create", "success", "sandbox dir " .. sb.dir)
    M._spawn(sb, opts, phase)
  end)
  if not ok then
    task.shield(pcall, M.stop, sb) -- even past the deadline that cut the start
    error(err, 0)
  end
end

function M._spawn(sb, opts, phase)
  phase("container_start", "running", "starting rocklet")
  local exe = core.rocklet_path()
  local log, lerr = uv.fs_open(sb.dir .. "/rocklet.log", "a", tonumber("600", 8))
  if not log then errors.raise("io_error", "cannot open " .. sb.dir .. "/rocklet.log: " .. tostring(lerr)) end
  uv.fs_fchmod(log, tonumber("600", 8)) -- whatever the umask
  local args = { "serve", "--socket", sb.socket, "--dir", sb.dir .. "/rocklet",
                 "--owner-pid", tostring(core.getpid()) }
  if opts.auto_clear_seconds then
    args[#args + 1] = "--idle-timeout"
    args[#args + 1] = tostring(opts.auto_clear_seconds)
  end
  local limits = opts.limits or {}
  if limits.disk then -- per file only: the host's file system is the sandbox's
    args[#args + 1] = "--max-file-size"
    args[#args + 1] = tostring(limits.disk)
  end
  if (limits.memory or limits.pids_limit) and not warned then
    warned = true
    require("rock.log").info("sandbox", "the local backend does not bound memory or processes " ..
      "(memory, pids_limit): only disk, per file")
  end
  local handle, pid_or_err = uv.spawn(exe, {
    args = args, cwd = sb.dir .. "/work", detached = true,
    stdio = { nil, log, log },
  }, function(code, signal)
    sb.exited = { code = code, signal = signal }
    if sb.proc and not sb.proc:is_closing() then sb.proc:close() end
    if sb.on_exit then sb.on_exit() end
  end)
  uv.fs_close(log)
  if not handle then
    errors.raise("spawn_failed", "cannot start rocklet " .. exe .. ": " .. tostring(pid_or_err))
  end
  sb.proc, sb.pid, sb.rocklet_pid = handle, pid_or_err, pid_or_err
  write_record(sb)
  phase("container_start", "success", "rocklet pid " .. sb.pid)

  phase("rocklet_ready", "running", "waiting for " .. sb.socket)
  rocklet.wait_ready(sb.socket, opts.startup_timeout, function()
    if not sb.exited then return nil end
    local f = io.open(sb.dir .. "/rocklet.log")
    local tail = f and f:read("a"):sub(-500) or ""
    if f then f:close() end
    return string.format("rocklet exited at once (code %s, signal %s): %s",
      sb.exited.code, sb.exited.signal, tail)
  end, sb.pid)
  phase("rocklet_ready", "success", "rocklet answers")
end

--- Why the rocklet is gone (it exited, or the pid is another process
--- now), or nil while it runs.
function M.gone(sb)
  if sb.exited then
    return string.format("rocklet exited (code %s, signal %s)", sb.exited.code, sb.exited.signal)
  end
  if sb.pid and core.proc_start_time(sb.pid) ~= sb.pid_start then return "rocklet process gone" end
  return nil
end

--- Stop: everything the rocklet started dies, then the directory goes.
--- Safe to call twice.
function M.stop(sb)
  if sb.proc and not sb.exited then
    if not pcall(transport.close, sb, 5) and not sb.exited then
      uv.kill(sb.pid, "sigterm") -- not answering (yet): it ends its tree on SIGTERM too
    end
    if not sb.exited then
      task.await(function(done)
        local timer = uv.new_timer()
        local function close()
          sb.on_exit = nil
          if not timer:is_closing() then timer:close() end
        end
        sb.on_exit = function() close(); done() end
        timer:start(5000, 0, function() close(); done() end)
        return close -- cancelled: an exit that comes later finds nothing to close
      end)
    end
    if not sb.exited then -- it did not go: no more asking
      uv.kill(-sb.pid, "sigkill")
      uv.kill(sb.pid, "sigkill")
    end
  end
  if sb.dir then state.remove_dir(sb.dir) end
end

--- Keep: nothing to mark; a local sandbox dies with its host regardless
--- (its rocklet follows its owner), as docs/lua-api.md says.
function M.keep() end

M.op = transport.op
M.is_alive = transport.is_alive
M.lease = transport.lease

--- Its part of the status: this node's address.
function M.status() return backends.this_host() end

--- Is pid the rocklet serving dir's socket? Its command line says so
--- ("serve --socket <dir>/rocklet.sock ..."). A record is data anyone who
--- can write the dir may have written (the local backend's commands run
--- on the host's files): a pid read from it proves nothing by itself, and
--- a pid of 0, 1 or -1 would have made the group kill below kill(-1).
local function is_rocklet_of(pid, dir)
  if math.type(pid) ~= "integer" or pid <= 1 then return false end
  local f = io.open("/proc/" .. pid .. "/cmdline", "rb")
  if not f then return false end
  local cmd = f:read(65536) or ""
  f:close()
  return cmd:find("\0--socket\0" .. dir .. "/rocklet.sock\0", 1, true) ~= nil
end

--- Release what a sandbox whose owner died left (gc): end its rocklet,
--- only ours (same pid, same start time, and its command line serves
--- dir's socket). SIGTERM first: the rocklet then kills every process it
--- started, which a SIGKILL would orphan; SIGKILL to its process group if
--- it has not gone in 3 s. Its dir is the caller's. Returns true.
function M.release(rec, dir)
  local function alive()
    return rec.pid and rec.pid_start and core.proc_start_time(rec.pid) == rec.pid_start
  end
  if not dir or not is_rocklet_of(rec.pid, dir) then return true end
  if not alive() then return true end
  uv.kill(rec.pid, "sigterm")
  for _ = 1, 60 do
    if not alive() then return true end
    task.sleep(0.05)
  end
  uv.kill(-rec.pid, "sigkill")
  uv.kill(rec.pid, "sigkill")
  return true
end

return M
