--- rock.backends.local: a sandbox without a container.
-- A sandbox is a directory under the state dir ($ROCK_HOME, default
-- ~/.local/state/rock) holding the rocklet's socket, its work dir and a
-- record (sandbox.json), plus one rocklet process: its own session and
-- process group (detached), a child subreaper, dying with its owner
-- (PDEATHSIG through --owner-pid), cwd inside the sandbox dir. Commands run
-- on the host's file system: this backend isolates processes, not files.
-- Stop: /close (the rocklet kills every descendant and exits), SIGKILL if
-- it does not go, then the directory is removed. Read next: sandbox.lua.
local uv = require "luv"
local core = require "rock.core"
local task = require "rock.task"
local errors = require "rock.errors"
local rocklet = require "rock.rocklet"
local state = require "rock.state"

local M = {}

local function write_record(sb)
  local me = state.me()
  state.write_record(sb.dir, {
    id = sb.id, backend = "local", pid = sb.pid, pid_start = core.proc_start_time(sb.pid),
    socket = sb.socket, owner = state.owner_label(me),
    created = sb.create_time, auto_clear_seconds = sb.auto_clear_seconds,
  })
end

--- Start a local sandbox: fill sb (id, dir, socket, pid) and bring its
--- rocklet up. phase(name, status, message) records progress.
function M.start(sb, opts, phase)
  sb.id = opts.sandbox_id or state.new_id()
  sb.dir = state.sandboxes_dir() .. "/" .. sb.id
  sb.socket = sb.dir .. "/rocklet.sock"
  if #sb.socket >= 108 then -- sun_path
    errors.raise("invalid_argument", "state dir path too long for a unix socket: " .. sb.socket)
  end
  if uv.fs_stat(sb.dir) then
    errors.raise("invalid_argument", "sandbox " .. sb.id .. " already exists")
  end
  state.mkdir_p(sb.dir .. "/work")
  phase("container_create", "success", "sandbox dir " .. sb.dir)

  phase("container_start", "running", "starting rocklet")
  local exe = core.rocklet_path()
  local log = assert(uv.fs_open(sb.dir .. "/rocklet.log", "a", tonumber("644", 8)))
  local args = { "serve", "--socket", sb.socket, "--dir", sb.dir .. "/rocklet",
                 "--owner-pid", tostring(core.getpid()) }
  if opts.auto_clear_seconds then
    args[#args + 1] = "--idle-timeout"
    args[#args + 1] = tostring(opts.auto_clear_seconds)
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
    core.rmtree(sb.dir)
    errors.raise("spawn_failed", "cannot start rocklet " .. exe .. ": " .. tostring(pid_or_err))
  end
  sb.proc, sb.pid = handle, pid_or_err
  write_record(sb)
  phase("container_start", "success", "rocklet pid " .. sb.pid)

  phase("rocklet_ready", "running", "waiting for " .. sb.socket)
  local ok, err = pcall(rocklet.wait_ready, sb.socket, opts.startup_timeout or 30, function()
    if not sb.exited then return nil end
    local f = io.open(sb.dir .. "/rocklet.log")
    local tail = f and f:read("a"):sub(-500) or ""
    if f then f:close() end
    return string.format("rocklet exited at once (code %s, signal %s): %s",
      sb.exited.code, sb.exited.signal, tail)
  end)
  if not ok then
    M.stop(sb)
    error(err, 0)
  end
  phase("rocklet_ready", "success", "rocklet answers")
end

--- Stop: everything the rocklet started dies, then the directory goes.
--- Safe to call twice.
function M.stop(sb)
  if sb.proc and not sb.exited then
    pcall(rocklet.call, sb.socket, "/close", {}, 5)
    if not sb.exited then
      task.await(function(done)
        local timer = uv.new_timer()
        sb.on_exit = function() timer:close(); done() end
        timer:start(5000, 0, function()
          sb.on_exit = nil
          timer:close()
          done()
        end)
        return function() if not timer:is_closing() then timer:close() end end
      end)
    end
    if not sb.exited then -- it did not go: no more asking
      uv.kill(-sb.pid, "sigkill")
      uv.kill(sb.pid, "sigkill")
    end
  end
  if sb.dir then state.remove_dir(sb.dir) end
end

return M
