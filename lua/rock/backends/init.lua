--- rock.backends: the contract between a Sandbox (sandbox.lua) and what
-- runs it, and the registry of backends. A reader adding a backend reads
-- this file; docs/backends.md says the same for a user.
--
-- A backend is a table registered under a name (register(name, impl)):
--
--   caps          {cap = true, ...} what it can do beyond the required
--                 (below); nothing else asks a backend's name.
--   start(sb, opts, phase)    required. Bring a sandbox up and fill sb:
--                 sb.id (opts.sandbox_id or a fresh state.new_id()), and
--                 whatever its own calls need (sb.dir, sb.socket, ...).
--                 opts are sandbox.start's, checked, defaults filled in
--                 (startup_timeout, limits = sandbox.limits(opts)).
--                 phase(name, status, message) records progress of
--                 "image_pull", "container_create", "container_start",
--                 "rocklet_ready" (status running | success | failed).
--                 Raises a rock.error; before it does, it removes what it
--                 made (a start that fails leaves nothing).
--   op(sb, name, args, timeout, file)   required. The data plane: one
--                 operation by name with its arguments as the Sandbox
--                 checked them (strings are bytes: the backend encodes
--                 what its wire needs), timeout the seconds the exchange
--                 may take (nil: none). Returns the operation's result
--                 table; raises a rock.error (sandbox_not_alive when the
--                 sandbox does not answer). The names (OPS below) are
--                 those of ROCK's API and the rocklet's: create_session,
--                 run_in_session, interrupt, close_session, execute,
--                 read_file ({content=} bytes; args.binary asks for the
--                 exact bytes), write_file, upload (args.path; file is
--                 the host file: upload_stream), editor, jobs/start,
--                 jobs/wait, jobs, jobs/kill. A backend whose sandboxes
--                 run a rocklet on this host uses rocklet_transport.lua.
--   is_alive(sb)  required. Does it answer now (true/false; may renew an
--                 idle lease, as ROCK's is_alive does).
--   gone(sb)      required. Why it is gone for good (a string), or nil
--                 while it may still answer: only proof counts, an
--                 engine that does not answer is no proof.
--   stop(sb)      required. Every process ends, what it made goes. Safe
--                 twice; runs shielded from deadlines (Sandbox:stop).
--   status(sb)    required. Its part of the sandbox's status:
--                 {host_name=, host_ip=} the address its clients reach
--                 it by (this_host() for one on this node), and any
--                 fields of its own (port_mapping; slurm_job_id, ...:
--                 added to get_status's answer as they are).
-- Capabilities, each with the function it names:
--   image         takes an image (opts.image required; takes_image). One
--                 without records the image_pull phase done itself.
--   attach        attach(sb, rec): serve again a sandbox another process
--                 of this host started and left running, from its record
--                 rec (a restarted `rock serve`); raises sandbox_not_alive.
--   keep          keep(sb): outlive this host (its lease still ends it).
--   commit        commit(sb, reference) -> image id.
--   stats         stats(sb) -> ROCK's statistics {cpu, mem, mem_bytes,
--                 disk, net, ...}.
--   warmup        warmup(image) -> how it got there (a pull).
--   remove_image  remove_image(sb): remove the image it started from.
--   upload_stream op "upload" streams the host file, or relays the body
--                 of a `rock serve` request (args.relay, the request's
--                 handle: its body streams, http_server.lua's
--                 stream_body; rocklet_transport.lua); without it
--                 Sandbox:upload sends the file as one write_file.
--   download_stream  op "download" streams to the host file (args.file),
--                 or relays to a `rock serve` request (args.relay, the
--                 request's handle; args.range its Range, args.head a
--                 HEAD; returns {status=}: rocklet_transport.lua); without
--                 it Sandbox:download writes read_file's bytes.
--   own_files     what runs in it has a file system of its own: it cannot
--                 reach this host's files (a container; not local).
--   served_elsewhere  another host's `rock serve` runs its sandboxes and
--                 watches them (remote, slurm, fleet): a relay here leaves
--                 noticing one that dies to that server.
-- For a node's report (`rock serve`'s GET .../node, its /metrics):
--   health()      optional. Can this node start sandboxes now: true, or
--                 false and why (an engine that does not answer, a runtime
--                 or a kernel feature missing). Without it: yes. Quick: a
--                 report asks it at most once a second.
-- For `rock gc`, `rock ps` and a restarted server (records in the state
-- dir, state.lua, carry the backend's name in rec.backend):
--   release(rec, dir, final)  optional. Remove what a sandbox no host
--                 serves any more left beyond its dir (a process, a
--                 container the record proves its own). Returns true;
--                 false, seconds to wait and why, when that part may
--                 still appear and final is not set; raises when it cannot be
--                 removed now (the record then stays: it is the proof).
--   reap(ctx)     optional. A sweep of what dead hosts left that no
--                 record of this state dir lists (gc.lua says what ctx
--                 holds and how a sweep reports).
--   lease(rec, dir)  optional. {lease_left=} from a live sandbox's
--                 record without renewing it; raises when unreachable.
--   list(rows)    optional. Add to `rock ps`'s rows (by id) what this
--                 backend sees beyond records (rows.add(row) for a new
--                 one, rows.by_id[id] to annotate).
local errors = require "rock.errors"

local M = {}

--- The functions every backend has.
M.REQUIRED = { "start", "op", "is_alive", "gone", "stop", "status" }
--- Each capability and the function it needs.
M.CAPS = { image = false, attach = "attach", keep = "keep", commit = "commit", stats = "stats",
  warmup = "warmup", remove_image = "remove_image", upload_stream = false, download_stream = false,
  own_files = false, served_elsewhere = false }
--- The data-plane operations (op's names).
M.OPS = { "create_session", "run_in_session", "interrupt", "close_session", "execute", "read_file",
  "write_file", "upload", "download", "editor", "jobs/start", "jobs/wait", "jobs", "jobs/kill",
  "env/start", "env/call", "env/stop" }

local registry, order = {}, {}
-- the built-in backends, loaded on first use
local builtin = {
  ["local"] = "rock.backends.local",
  docker = "rock.backends.container",
  podman = "rock.backends.container",
  remote = "rock.backends.remote", -- base_url=: another host's `rock serve`
  fleet = "rock.fleet.backend", -- fleet=: a pool of them (rock.fleet)
  slurm = "rock.backends.slurm", -- a Slurm job per sandbox
  runc = "rock.backends.runc", -- runc (or runsc) itself, no daemon
}
local BUILTIN_ORDER = { "local", "docker", "podman", "remote", "fleet", "slurm", "runc" }

--- Register backend impl under name (a new one, or one replacing a
--- built-in). Raises invalid_argument naming what is missing: a required
--- function, or the function a declared capability needs.
function M.register(name, impl)
  if type(name) ~= "string" or not name:match("^[%w_.-]+$") then
    errors.raise("invalid_argument", "backends.register: name must be a word, got " .. tostring(name))
  end
  if type(impl) ~= "table" then errors.raise("invalid_argument", "backends.register: " .. name .. ": impl must be a table") end
  for _, f in ipairs(M.REQUIRED) do
    if type(impl[f]) ~= "function" then
      errors.raise("invalid_argument", string.format("backends.register: backend '%s' has no %s() (a backend " ..
        "provides %s: lua/rock/backends/init.lua)", name, f, table.concat(M.REQUIRED, ", ")))
    end
  end
  impl.caps = impl.caps or {}
  for cap, on in pairs(impl.caps) do
    local fn = M.CAPS[cap]
    if fn == nil then
      errors.raise("invalid_argument", string.format("backends.register: backend '%s' declares an unknown " ..
        "capability '%s'", name, tostring(cap)))
    end
    if on and fn and type(impl[fn]) ~= "function" then
      errors.raise("invalid_argument", string.format("backends.register: backend '%s' declares '%s' and has no %s()",
        name, cap, fn))
    end
  end
  impl.name = name
  if not registry[name] then order[#order + 1] = name end
  registry[name] = impl
  return impl
end

--- Remove a backend registered at runtime (a test's).
function M.unregister(name)
  registry[name] = nil
  for i, n in ipairs(order) do if n == name then table.remove(order, i); break end end
end

--- The backend named name, or nil.
function M.get(name)
  local impl = registry[name]
  if impl == nil and builtin[name] then
    local mod = require(builtin[name])
    impl = M.register(name, mod.backend and mod.backend(name) or mod)
  end
  return impl
end

--- Every backend's name, built-in ones first.
function M.names()
  for _, name in ipairs(BUILTIN_ORDER) do M.get(name) end
  local out = {}
  for i, n in ipairs(order) do out[i] = n end
  return out
end

--- Names of the backends that declare cap.
function M.having(cap)
  local out = {}
  for _, n in ipairs(M.names()) do if registry[n].caps[cap] then out[#out + 1] = n end end
  return out
end

--- Does backend name declare cap?
function M.can(name, cap)
  local impl = M.get(name)
  return impl ~= nil and impl.caps[cap] == true
end

--- Does a start on backend name take an image (false for local; true
--- for "auto" and nil, which pick an engine for one)?
function M.takes_image(name) return name == nil or name == "auto" or M.can(name, "image") end

--- The backend a start with opts means: opts.backend (default "auto"),
--- "remote" when opts.base_url is given, "fleet" when opts.fleet is, and "auto": "local" without an
--- image, else the container engine that answers (docker, then podman).
--- Raises engine_unavailable (auto with an image and no engine) or
--- invalid_argument (an unknown name).
function M.resolve(opts, fname)
  fname = fname or "sandbox.start"
  local name = opts.backend or "auto"
  if opts.base_url ~= nil then name = "remote" end
  if opts.fleet ~= nil then name = "fleet" end
  if name == "auto" then -- an image runs in a container, never on the host
    if opts.image == nil then
      name = "local"
    else
      name = require("rock.engine").detect() or errors.raise("engine_unavailable",
        fname .. ": image " .. tostring(opts.image) .. " needs a container engine and none answers " ..
        "(docker, podman); backend = \"local\" runs on this host without an image")
    end
  end
  if not M.get(name) then
    errors.raise("invalid_argument", fname .. ": unknown backend '" .. name ..
      "' (auto, docker, podman, local, remote, fleet, slurm or runc)")
  end
  return name
end

--- The address this node's sandboxes are reached by: {host_name=,
--- host_ip=}. "localhost" and 127.0.0.1 in a process of its own; a `rock
--- serve` sets its node's (set_host): its host name, and the address it
--- serves on.
local host = { host_name = "localhost", host_ip = "127.0.0.1" }
function M.this_host() return { host_name = host.host_name, host_ip = host.host_ip } end

--- Set this node's name and address (nil keeps one).
function M.set_host(host_name, host_ip)
  host = { host_name = host_name or host.host_name, host_ip = host_ip or host.host_ip }
end

return M
