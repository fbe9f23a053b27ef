--- rock.engine: the Docker Engine API from Lua (docker, or podman's
-- Docker-compatible socket). Each method is one call of c/engine/engine.c,
-- waited on inside a task; JSON answers come back decoded. Errors are rock
-- errors: engine_unavailable (no answer on the socket), image_not_found,
-- not_found, conflict, engine_error, timeout; each with the engine's
-- message. No policy here: backends/container.lua and images.lua decide.
--   local e = engine.connect("docker")      -- or "podman", or a socket path
--   local info = e:container_inspect(id)
local core = require "rock.core"
local task = require "rock.task"
local errors = require "rock.errors"
local cjson = require "cjson.safe"

local M = {}

local Engine = {}
Engine.__index = Engine

--- The socket of an engine: "docker" reads DOCKER_HOST (unix:// only) or
--- /var/run/docker.sock; "podman" reads ROCK_PODMAN_SOCKET, CONTAINER_HOST,
--- or the rootful default /run/podman/podman.sock. A path is taken as is.
function M.socket_of(kind)
  local function unix(v)
    if v and v ~= "" then return (v:gsub("^unix://", "")) end
  end
  if kind == "docker" then
    return unix(os.getenv("DOCKER_HOST")) or "/var/run/docker.sock"
  elseif kind == "podman" then
    return unix(os.getenv("ROCK_PODMAN_SOCKET")) or unix(os.getenv("CONTAINER_HOST"))
      or "/run/podman/podman.sock"
  end
  return kind
end

--- An engine client for kind ("docker" | "podman") or a socket path.
function M.connect(kind)
  local socket = M.socket_of(kind)
  return setmetatable({ kind = kind, socket = socket }, Engine)
end

--- The first engine that answers: "docker", then "podman"; nil if none.
--- The answer is remembered for the process.
local detected
function M.detect()
  if detected == nil then
    local found = false
    for _, kind in ipairs({ "docker", "podman" }) do
      if M.connect(kind):ping(2) then found = kind; break end
    end
    detected = found -- tasks asking meanwhile ping too, and agree
  end
  return detected or nil
end

local function decode(body)
  if body == "" then return nil end
  local v = cjson.decode(body)
  if v == nil then return body end
  return v
end

--- One raw call: op, params {name=value}, opts {body= (table: JSON-encoded),
--- body_file=, out_file=, timeout= (default 60), on_chunk=}.
--- Returns the decoded answer (or its text).
function Engine:call(op, params, opts)
  opts = opts or {}
  local body = opts.body
  if type(body) == "table" then body = cjson.encode(body) end
  local res, err = task.await(function(done)
    local id = core.engine_request({
      socket = self.socket, op = op, params = params, body = body,
      body_file = opts.body_file, out_file = opts.out_file,
      timeout = opts.timeout or 60,
    }, done, opts.on_chunk)
    return function() core.http_cancel(id) end
  end)
  if not res then
    err.engine = self.kind
    if err.code == "engine_unavailable" then
      err.message = string.format("cannot reach the %s engine at %s: %s",
        self.kind, self.socket, err.message)
    end
    error(err, 0) -- a rock error already (lrock_push_error)
  end
  return decode(res.body)
end

--- Is the engine answering? Returns true, or false and the error.
function Engine:ping(timeout)
  local ok, err = pcall(self.call, self, "ping", nil, { timeout = timeout or 5 })
  return ok, (not ok) and err or nil
end

function Engine:version() return self:call("version") end

-- images ------------------------------------------------------------------

function Engine:image_inspect(name) return self:call("image_inspect", { name = name }) end

--- Images, optionally filtered: filters is the Engine API's map, e.g.
--- {reference={"rock-test/*"}}.
function Engine:image_list(filters)
  return self:call("image_list", filters and { filters = cjson.encode(filters) } or nil)
end

function Engine:image_remove(name, force)
  return self:call("image_remove", { name = name, force = force and "true" or "false" })
end

function Engine:image_tag(name, repo, tag)
  return self:call("image_tag", { name = name, repo = repo, tag = tag or "latest" })
end

--- Write the image as a `docker save` tar to path (whole or not at all).
function Engine:image_save(name, path, timeout)
  return self:call("image_save", { name = name }, { out_file = path, timeout = timeout or 1800 })
end

--- Load a `docker save` tar. Returns the names loaded.
function Engine:image_load(path, timeout)
  local out = self:call("image_load", { quiet = "1" }, { body_file = path, timeout = timeout or 1800 })
  local names = {}
  local text = type(out) == "table" and (out.stream or "") or tostring(out or "")
  for name in text:gmatch("Loaded image: ([^\n]+)") do names[#names + 1] = name end
  for id in text:gmatch("Loaded image ID: ([^\n]+)") do names[#names + 1] = id end
  return names
end

--- Pull an image; on_progress(p) is called with {status=, current=, total=}
--- (bytes summed over layers) as the engine reports. The engine reports a
--- failed pull inside a 200 answer: that raises here as image_not_found or
--- engine_error.
function Engine:image_pull(name, on_progress, timeout)
  local repo, tag = name:match("^(.*):([^:/]+)$")
  if not repo then repo, tag = name, "latest" end
  local pending, failure, layers = {}, nil, {} -- pending: the pieces of a line not ended yet
  local function on_line(line)
    local ev = cjson.decode(line)
    if type(ev) ~= "table" then return end
    if ev.error or ev.errorDetail then
      failure = failure or tostring(ev.error or (ev.errorDetail or {}).message)
      return
    end
    local d = ev.progressDetail
    if ev.id and type(d) == "table" and d.total then layers[ev.id] = d end
    if on_progress then
      local cur, tot = 0, 0
      for _, l in pairs(layers) do cur, tot = cur + (l.current or 0), tot + (l.total or 0) end
      on_progress({ status = ev.status, id = ev.id, current = cur, total = tot })
    end
  end
  self:call("image_pull", { fromImage = repo, tag = tag }, {
    timeout = timeout or 3600,
    on_chunk = function(bytes) -- each byte looked at once ([^\n]*$ rescans a long line from each byte)
      local pos = 1
      while true do
        local nl = bytes:find("\n", pos, true)
        if not nl then break end
        pending[#pending + 1] = bytes:sub(pos, nl - 1)
        on_line(table.concat(pending))
        pending, pos = {}, nl + 1
      end
      if pos <= #bytes then pending[#pending + 1] = bytes:sub(pos) end
    end,
  })
  if #pending > 0 then on_line(table.concat(pending)) end
  if failure then
    local missing = failure:find("not found") or failure:find("manifest unknown")
      or failure:find("pull access denied") or failure:find("does not exist")
    errors.raise(missing and "image_not_found" or "engine_error",
      "pull " .. name .. ": " .. failure, { engine = self.kind })
  end
end

-- containers ----------------------------------------------------------------

--- Create a container from an Engine API ContainerConfig table; returns its id.
function Engine:container_create(name, config)
  return self:call("container_create", name and { name = name } or nil, { body = config }).Id
end

function Engine:container_start(id) return self:call("container_start", { id = id }) end
function Engine:container_inspect(id) return self:call("container_inspect", { id = id }) end

--- Wait for the container to stop; returns its exit code.
function Engine:container_wait(id, timeout)
  local r = self:call("container_wait", { id = id, condition = "not-running" },
    { timeout = timeout or 3600 })
  return type(r) == "table" and r.StatusCode or nil
end

function Engine:container_stop(id, grace)
  return self:call("container_stop", { id = id, t = tostring(grace or 5) },
    { timeout = (grace or 5) + 30 })
end

function Engine:container_kill(id, signal)
  return self:call("container_kill", { id = id, signal = signal or "KILL" })
end

--- Remove a container (force: kill it first if running). A container
--- already gone counts as removed.
--- A conflict (the engine busy with the container, e.g. still tearing
--- down a process that just exited) is retried a few times.
function Engine:container_remove(id, force)
  for attempt = 1, 5 do
    local ok, err = pcall(self.call, self, "container_remove",
      { id = id, force = force and "true" or "false", v = "true" })
    if ok or errors.is(err, "not_found") then return end
    if not errors.is(err, "conflict") or attempt == 5 then error(err, 0) end
    task.sleep(0.1 * attempt)
  end
end

--- Containers (running or not) carrying label (a "key" or "key=value").
function Engine:container_list(label)
  return self:call("container_list", {
    all = "true", filters = cjson.encode({ label = { label } }),
  }) or {}
end

--- The last n lines the container wrote (stdout and stderr), as text.
--- Without a TTY the engine frames the stream (8-byte headers); with one,
--- or from podman in some versions, it is raw.
function Engine:container_logs(id, n)
  local raw = self:call("container_logs", {
    id = id, stdout = "true", stderr = "true", tail = tostring(n or 20),
  })
  raw = type(raw) == "string" and raw or ""
  local out, pos = {}, 1
  while pos + 7 <= #raw do
    local kind, size = raw:byte(pos), string.unpack(">I4", raw, pos + 4)
    if (kind ~= 1 and kind ~= 2 and kind ~= 0) or raw:byte(pos + 1) ~= 0 then
      return raw -- not framed
    end
    out[#out + 1] = raw:sub(pos + 8, pos + 7 + size)
    pos = pos + 8 + size
  end
  return table.concat(out)
end

--- One sample of a container's resource use (the Engine API's stats).
function Engine:container_stats(id)
  return self:call("container_stats", { id = id, stream = "false", ["one-shot"] = "true" }, { timeout = 30 })
end

--- Inspect with the size of the container's writable layer (SizeRw).
function Engine:container_inspect_size(id)
  return self:call("container_inspect", { id = id, size = "true" })
end

--- Commit a container's filesystem as repo:tag; returns the image id.
function Engine:container_commit(id, repo, tag, timeout)
  local r = self:call("container_commit", { container = id, repo = repo, tag = tag or "latest" },
    { timeout = timeout or 600 })
  return type(r) == "table" and r.Id or nil
end

M.Engine = Engine
return M
