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

--- The image's history, newest first: {Created=, CreatedBy=, Comment=,
--- Size=} each.
function Engine:image_history(name) return self:call("image_history", { name = name }) end

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

--- Commit a container's filesystem as an image, named repo:tag, or
--- untagged when repo is nil; returns the image id. The config is what
--- the engine makes of the container's (labels, entrypoint and all):
--- backends/container.lua's commit gives the image its own config after.
function Engine:container_commit(id, repo, tag, timeout)
  local params = { container = id }
  if repo then params.repo, params.tag = repo, tag or "latest" end
  -- podman reads a body, docker merges it into the config: {} is "none"
  local r = self:call("container_commit", params, { body = "{}", timeout = timeout or 600 })
  return type(r) == "table" and r.Id or nil
end

-- image references ------------------------------------------------------------

-- A path component: [a-z0-9]+ runs joined by ".", "_", "__" or dashes.
local function path_component(c)
  if not c:match("^[a-z0-9]") or not c:match("[a-z0-9]$") or c:find("[^a-z0-9._-]") then return false end
  for sep in c:gmatch("[^a-z0-9]+") do
    if sep ~= "." and sep ~= "_" and sep ~= "__" and not sep:match("^%-+$") then return false end
  end
  return true
end

-- A registry host[:port]: dot-separated [A-Za-z0-9] labels (dashes
-- inside), or an [IPv6] address.
local function domain(d)
  local host, port = d:match("^(.-):(%d+)$")
  host = host or d
  if d:find(":") and not port and not d:match("^%[[%x:]+%]$") then return false end
  if host:match("^%[[%x:]+%]$") then return true end
  for label in (host .. "."):gmatch("([^.]*)%.") do
    if not (label:match("^[A-Za-z0-9]$") or label:match("^[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9]$")) then
      return false
    end
  end
  return true
end

--- Parse an image reference for a name to give an image (a commit, a
--- tag), as Docker's reference grammar (distribution/reference) reads it:
--- [host[:port]/]component[/component...][:tag], components lowercase
--- ([a-z0-9] runs joined by ".", "_", "__" or dashes), the tag
--- [A-Za-z0-9_][A-Za-z0-9_.-]{0,127} (default "latest"), the name at most
--- 255 characters and not 64 hex digits (an image id). A digest (@sha256:)
--- names content, not a new image: refused. Returns {repo=, tag=, name=
--- "repo:tag"}; raises invalid_argument saying what is wrong.
function M.parse_reference(s)
  local function bad(why)
    errors.raise("invalid_argument", string.format("invalid image reference %q: %s", tostring(s), why))
  end
  if type(s) ~= "string" or s == "" then bad("it is empty") end
  if s:find("@", 1, true) then bad("a digest (@...) cannot name a new image") end
  local name, tag = s, "latest"
  local colon = s:match("^.*():")
  if colon and not s:find("/", colon, true) then
    name, tag = s:sub(1, colon - 1), s:sub(colon + 1)
    if #tag > 128 or not tag:match("^[%w_][%w_.%-]*$") then
      bad("the tag must match [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
    end
  end
  if name == "" then bad("the name is empty") end
  if #name > 255 then bad("the name is longer than 255 characters") end
  if name:match("^%x+$") and #name == 64 then bad("64 hex digits name an image id, not a repository") end
  local parts = {}
  for p in (name .. "/"):gmatch("([^/]*)/") do parts[#parts + 1] = p end
  local first = 1
  if #parts > 1 and (parts[1]:find("[.:]") or parts[1] == "localhost" or parts[1]:find("%u")) then
    if not domain(parts[1]) then bad("the registry host '" .. parts[1] .. "' is not host[:port]") end
    first = 2
  end
  for i = first, #parts do
    local c = parts[i]
    if c:find("%u") then bad("the repository name must be lowercase") end
    if c:find(":", 1, true) then bad("a tag comes once, at the end (name:tag)") end
    if not path_component(c) then
      bad("'" .. c .. "' is not a name component ([a-z0-9] joined by '.', '_', '__' or '-')")
    end
  end
  return { repo = name, tag = tag, name = name .. ":" .. tag }
end

-- an image from a config -------------------------------------------------------

-- One ustar entry: a 512-byte header, then data padded to 512 bytes.
local function tar_entry(name, data)
  local function octal(n, width) return string.format("%0" .. (width - 1) .. "o", n) .. "\0" end
  local function field(v, width) return v .. string.rep("\0", width - #v) end
  local head = field(name, 100) .. octal(420, 8) .. octal(0, 8) .. octal(0, 8) .. octal(#data, 12)
    .. octal(0, 12)
  local tail = "0" .. field("", 100) .. "ustar\0" .. "00" .. field("", 32) .. field("", 32)
    .. field("", 8) .. field("", 8) .. field("", 155)
  local sum = 0
  for _, part in ipairs({ head, "        ", tail }) do
    for i = 1, #part do sum = sum + part:byte(i) end
  end
  local header = head .. string.format("%06o", sum) .. "\0 " .. tail
  header = header .. string.rep("\0", 512 - #header)
  return header .. data .. string.rep("\0", (512 - #data % 512) % 512)
end

--- A new image whose layers are those the engine has for the diff ids in
--- config.rootfs and whose config is config (an image config table:
--- architecture, os, config, rootfs, history, ...): loads a docker-save
--- archive that holds the config, the manifest and an empty file per
--- layer. The engine reads none of those files: docker loads no layer
--- it has already, podman reuses a layer it has by its digest. Returns
--- the new image's id; an engine that lacks a layer refuses the archive.
function Engine:image_from_config(config)
  local layers, files = {}, {}
  for i = 1, #config.rootfs.diff_ids do
    layers[i] = "layers/" .. i .. ".tar"
    files[#files + 1] = tar_entry(layers[i], "")
  end
  local json = require "rock.json"
  table.insert(files, 1, tar_entry("config.json", json.encode(config)))
  files[#files + 1] = tar_entry("manifest.json", json.encode({
    { Config = "config.json", RepoTags = json.array(), Layers = layers } }))
  files[#files + 1] = string.rep("\0", 1024)
  local uv = require "luv"
  local fd, tmp = uv.fs_mkstemp((os.getenv("TMPDIR") or "/tmp") .. "/rock-image-XXXXXX")
  if not fd then errors.raise("io_error", "cannot make a temp file for the image config: " .. tostring(tmp)) end
  local data = table.concat(files)
  local n, werr = uv.fs_write(fd, data, 0)
  local closed, cerr = uv.fs_close(fd)
  if n ~= #data or not closed then
    uv.fs_unlink(tmp)
    errors.raise("io_error", "cannot write " .. tmp .. ": " .. tostring(werr or cerr or "short write"))
  end
  local ok, names = pcall(self.image_load, self, tmp, 120)
  uv.fs_unlink(tmp)
  if not ok then error(names, 0) end
  for _, name in ipairs(names) do
    local id = name:match("^sha256:(%x+)$") or name:match("^(%x+)$")
    if id and #id == 64 then return "sha256:" .. id end
  end
  errors.raise("engine_error", "the engine loaded the image config but named no image id: " ..
    table.concat(names, ", "), { engine = self.kind })
end

M.Engine = Engine
return M
