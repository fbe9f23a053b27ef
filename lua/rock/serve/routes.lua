--- rock.serve.routes: ROCK's sandbox API, one function per endpoint
-- (../shared/ROCK-API.md; docs/http-api.md). Each takes (srv, args, req):
-- srv the server (its registry), args the JSON body of a POST or the
-- query of a GET, req the HTTP request; it returns the result (wrapped in
-- a Success envelope) or raises: a rock.error becomes a Failed envelope
-- with the route's text, envelope.invalid() an "invalid parameter" one.
-- rock's own fields ride along where ROCK has none (encoding, max_output,
-- interrupt, editor, jobs, a start's wait, node): ROCK's SDK never sends
-- them and ignores them in answers.
local json = require "rock.json"
local errors = require "rock.errors"
local core = require "rock.core"
local uv = require "luv"
local env = require "rock.serve.envelope"

local field = env.field
local M = {}

-- The route's failure text, as ROCK words it.
M.TEXT = {
  start = "start sandbox failed", start_async = "start sandbox failed", restart = "restart sandbox failed",
  get_status = "get sandbox status failed", is_alive = "sandbox is alive failed",
  create_session = "create session failed", run_in_session = "run in session failed",
  close_session = "close session failed", execute = "execute command failed",
  read_file = "read file failed", write_file = "write file failed", upload = "upload file failed",
  file = "file failed",
  stop = "stop sandbox failed", delete = "delete sandbox failed", commit = "commit sandbox failed",
  get_sandbox_statistics = "get sandbox statistics failed", get_token = "get token failed",
  ["warmup/tasks"] = "start warmup failed", sandboxes = "list sandboxes failed",
  ["sandboxes/batch"] = "batch get sandbox status failed", interrupt = "interrupt failed",
  editor = "editor failed", ["jobs/start"] = "start job failed", ["jobs/wait"] = "wait job failed",
  jobs = "list jobs failed", ["jobs/kill"] = "kill job failed", node = "get node failed",
  ["env/start"] = "start env failed", ["env/call"] = "call env failed", ["env/stop"] = "stop env failed",
}

local function entry(srv, args, where)
  local id = field(args, "sandbox_id", "string", true, where)
  local e = srv.registry:get(id)
  if not e then errors.raise("sandbox_not_found", "sandbox " .. id .. " not found") end
  return e
end

-- The live Sandbox named by args, held for the call (req._held: the
-- dispatcher releases it after; a sandbox with a call in flight is
-- never idle, however long the call).
local function live(srv, args, req, where)
  local e = entry(srv, args, where)
  local held = req._held or {}
  req._held = held
  return srv.registry:live(e, held), e
end

-- memory "8g" | "512m" | bytes -> what sandbox.start takes (bytes or the string)
local function start_request(args, headers)
  local req = {
    image = field(args, "image", "string", true),
    sandbox_id = field(args, "sandbox_id", "string"),
    pull = field(args, "pull", "string"),
    memory = args.memory ~= json.null and args.memory or nil,
    cpus = field(args, "cpus", "number"),
    disk = field(args, "disk", "string"),
    num_gpus = field(args, "num_gpus", "integer"),
    accelerator_type = field(args, "accelerator_type", "string"),
    startup_timeout = field(args, "startup_timeout", "number"),
    wait = field(args, "wait", "boolean"), -- false: refused at once when it does not fit (admission.lua)
    -- rock's: a start sent again with the same key is the same start (the
    -- first one's answer was lost): registry.start answers that sandbox
    idempotency_key = field(args, "idempotency_key", "string"),
  }
  if req.memory ~= nil and type(req.memory) ~= "string" and type(req.memory) ~= "number" then
    env.invalid("body.memory", "Input should be a valid string")
  end
  if type(req.memory) == "number" and not (req.memory > 0 and req.memory - req.memory == 0) then
    env.invalid("body.memory", "Input should be greater than 0")
  end
  if req.cpus and req.cpus <= 0 then env.invalid("body.cpus", "Input should be greater than 0") end
  if req.pull and req.pull ~= "missing" and req.pull ~= "always" and req.pull ~= "never" then
    env.invalid("body.pull", "Input should be 'missing', 'always' or 'never'")
  end
  local minutes = field(args, "auto_clear_time_minutes", "number") or field(args, "auto_clear_time", "number")
  if minutes then
    if minutes <= 0 or minutes > 1e6 then env.invalid("body.auto_clear_time_minutes", "Input should be greater than 0") end
    req.lease = minutes * 60
  end
  if req.startup_timeout and (req.startup_timeout <= 0 or req.startup_timeout > 3600) then
    env.invalid("body.startup_timeout", "Input should be between 0 and 3600")
  end
  if req.sandbox_id and not require("rock.state").valid_id(req.sandbox_id) then
    env.invalid("body.sandbox_id", "String should match pattern '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'")
  end
  local who = { user_id = headers["x-user-id"], experiment_id = headers["x-experiment-id"],
                namespace = headers["x-namespace"] }
  return req, who
end

local function start_result(srv, e)
  local where = srv.registry:where(e)
  return { sandbox_id = e.id, host_name = where.host_name, host_ip = where.host_ip,
    cpus = e.cpus or json.null, memory = e.memory or json.null, disk = e.disk or json.null,
    code = json.null, exit_code = json.null, failure_reason = json.null }
end

function M.start_async(srv, args, req)
  local r, who = start_request(args, req.headers)
  return start_result(srv, srv.registry:start(r, who))
end

--- /start: as start_async, answered once the sandbox is alive (up to 85
--- s, ROCK's bound, time in the node's queue included). A start still
--- pending then is stopped when it lands, not leaked (ROCK leaks it).
function M.start(srv, args, req)
  local r, who = start_request(args, req.headers)
  local reg = srv.registry
  local e = reg:start(r, who)
  if not reg:wait_started(e, reg.START_WAIT or 85) then
    reg:stop(e, "start_timeout")
    errors.raise("timeout", string.format("sandbox %s did not start within %ds; it is stopped", e.id, 85))
  end
  if e.state ~= "running" then -- the start's own code: engine_unavailable, image_not_found, ...
    local err = e.start_error
    errors.raise(errors.is(err) and err.code or "sandbox_start_failed",
      tostring(err and (err.message or err) or e.state))
  end
  return start_result(srv, e)
end

function M.restart(srv, args, req)
  local e = entry(srv, args)
  if e.state ~= "stopped" then errors.raise("conflict", "sandbox " .. e.id .. " is " .. e.state .. ", not stopped") end
  srv.registry:delete(e)
  local r = e.request or { image = e.image }
  r.sandbox_id = e.id
  local ne = srv.registry:start(r, { user_id = e.user_id, experiment_id = e.experiment_id, namespace = e.namespace })
  return start_result(srv, ne)
end

function M.get_status(srv, args)
  local e = entry(srv, args, "query")
  local all = field(args, "include_all_states", "boolean", false, "query")
  if not all and e.state ~= "pending" and e.state ~= "running" then
    errors.raise("sandbox_not_found", "Sandbox " .. e.id .. " not found")
  end
  srv.registry:touch(e)
  local alive = e.state == "running" and e.sb and e.sb:is_alive() -- renews the rocklet's lease too
  return srv.registry:status(e, alive)
end

function M.is_alive(srv, args)
  local id = field(args, "sandbox_id", "string", true, "query")
  local e = srv.registry:get(id)
  if not e then return { is_alive = false, message = "sandbox " .. id .. " is alive failed" } end
  srv.registry:touch(e)
  local alive = e.state == "running" and e.sb ~= nil and e.sb:is_alive()
  return { is_alive = alive, message = srv.registry.host_name }
end

function M.create_session(srv, args, req)
  local sb = live(srv, args, req)
  field(args, "env_enable", "boolean") -- a given env is applied either way (docs/http-api.md)
  local envs = field(args, "env", "object")
  local st = field(args, "startup_timeout", "number")
  local source = field(args, "startup_source", "list")
  for i, s in ipairs(source or {}) do
    if type(s) ~= "string" then env.invalid("body.startup_source." .. (i - 1), "Input should be a valid string") end
  end
  field(args, "session_type", "string")
  local r = sb:create_session{
    session = field(args, "session", "string") or "default",
    startup_source = source, env = envs,
    remote_user = field(args, "remote_user", "string"),
    -- ROCK's default is 1 s of reading; a startup that takes longer is not an error there
    startup_timeout = st and math.max(st, 1) or nil, cwd = field(args, "cwd", "string"),
  }
  return { output = r.output or "", session_type = "bash" }
end

local CHECKS = { raise = true, silent = true, ignore = true }

-- A command's answer (result: its fields, the output's text in big and,
-- for execute, stderr in second). ROCK's: the Success envelope, big
-- written into it once, in C (env.success_encoded). rock's remote backend
-- asks `Accept: application/octet-stream`: the text itself as the body
-- (second's after it, X-Stdout-Length bytes in), the other fields as
-- URL-encoded JSON in X-Rock-Result: no JSON around megabytes on either
-- side. The text is the cleaned text either way, byte for byte.
local TEXT_TYPE = "text/plain; charset=utf-8"
M.TEXT_TYPE = TEXT_TYPE
local function pct(s)
  return (s:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", c:byte()) end))
end
local function answer(req, result, big, second)
  local text, more = result[big] or "", second and result[second] or ""
  local rest = {}
  for k, v in pairs(result) do if k ~= big then rest[k] = v end end
  if (req.headers or {})["accept"] == "application/octet-stream" then
    if second then rest[second] = nil end
    return { status = 200, body = second and (text .. more) or text, headers = {
      ["content-type"] = TEXT_TYPE, ["x-stdout-length"] = second and tostring(#text) or nil,
      ["x-rock-result"] = pct(json.encode(rest)) } }
  end
  return env.success_encoded(big, text, rest)
end

function M.run_in_session(srv, args, req)
  local sb = live(srv, args, req)
  local command = field(args, "command", "string", true)
  local check = field(args, "check", "string") or "raise"
  if not CHECKS[check] then env.invalid("body.check", "Input should be 'raise', 'silent' or 'ignore'") end
  local timeout = field(args, "timeout", "number")
  if timeout and (timeout < 0 or timeout > 1e8) then env.invalid("body.timeout", "Input should be between 0 and 1e8") end
  local enc = field(args, "encoding", "string")
  if enc == "base64" then
    command = core.base64_decode(command)
    if not command then env.invalid("body.command", "Input should be valid base64") end
  end
  local t0 = uv.hrtime()
  local r = sb:run_in_session{ session = field(args, "session", "string") or "default", command = command,
    timeout = timeout, max_output = field(args, "max_output", "integer") }
  srv.metrics:command((uv.hrtime() - t0) / 1e9)
  local result = { session_type = "bash", output = r.output, exit_code = r.exit_code,
    failure_reason = r.failure_reason or "", expect_string = "", truncated = r.truncated,
    output_file = r.output_file, dropped_bytes = r.dropped_bytes }
  if r.failure_reason and r.failure_reason ~= "" then
    return env.failed(M.TEXT.run_in_session, errors.new(r.failure_reason,
      string.format("%s: %s", r.failure_reason, r.output or "")), env.COMMAND, result)
  end
  if check == "raise" and r.exit_code ~= 0 then
    local msg = field(args, "error_msg", "string")
    return env.failed(M.TEXT.run_in_session, errors.new("command_failed",
      string.format("%sexit code %s: %s", msg and msg ~= "" and (msg .. ": ") or "", tostring(r.exit_code),
        r.output or "")), env.COMMAND, result)
  end
  return answer(req, result, "output")
end

function M.interrupt(srv, args, req)
  local sb = live(srv, args, req)
  return sb:interrupt{ session = field(args, "session", "string") or "default" }
end

function M.close_session(srv, args, req)
  local sb = live(srv, args, req)
  sb:close_session{ session = field(args, "session", "string") or "default" }
  return { session_type = "bash" }
end

function M.execute(srv, args, req)
  local sb = live(srv, args, req)
  local cmd = args.command
  if type(cmd) ~= "string" and not (type(cmd) == "table" and cmd[1] ~= nil) then
    env.invalid("body.command", cmd == nil and "Field required" or "Input should be a valid string or list")
  end
  if type(cmd) == "table" then
    for i, a in ipairs(cmd) do if type(a) ~= "string" then env.invalid("body.command." .. (i - 1), "Input should be a valid string") end end
  end
  local shell = field(args, "shell", "boolean")
  if type(cmd) == "table" and shell then cmd = table.concat(cmd, " ") end
  local t0 = uv.hrtime()
  local r = sb:execute{ command = cmd, timeout = field(args, "timeout", "number") or 1200,
    cwd = field(args, "cwd", "string"), env = field(args, "env", "object"),
    max_output = field(args, "max_output", "integer") }
  srv.metrics:command((uv.hrtime() - t0) / 1e9)
  local result = { stdout = r.stdout, stderr = r.stderr, exit_code = r.exit_code,
    failure_reason = r.failure_reason }
  if field(args, "check", "boolean") and r.exit_code ~= 0 then
    return env.failed(M.TEXT.execute, errors.new("command_failed", string.format("exit code %s: %s",
      tostring(r.exit_code), r.stderr or "")), env.COMMAND, result)
  end
  return answer(req, result, "stdout", "stderr")
end

function M.read_file(srv, args, req)
  local sb = live(srv, args, req)
  local enc = field(args, "encoding", "string")
  local bin = enc == "base64"
  local r = sb:read_file{ path = field(args, "path", "string", true), binary = bin or nil }
  -- the content (cleaned text, or the bytes base64'd) written into the answer once, in C
  return env.success_encoded("content", r.content, bin and { encoding = "base64" } or nil, bin)
end

function M.write_file(srv, args, req)
  local sb = live(srv, args, req)
  local content = field(args, "content", "string", true)
  if field(args, "encoding", "string") == "base64" then
    content = core.base64_decode(content)
    if not content then env.invalid("body.content", "Input should be valid base64") end
  end
  local path = field(args, "path", "string", true)
  sb:write_file{ path = path, content = content }
  return { success = true, message = "write " .. path .. " success" }
end

--- /upload: multipart form (file, target_path, sandbox_id), the file
--- streamed into the sandbox through the rocklet's /upload.
function M.upload(srv, _, req)
  local ok, form = pcall(req.form, req)
  if not ok then env.invalid("body", "a multipart/form-data body is required: " .. tostring(form.message or form)) end
  local function value(name)
    local f = form[name]
    if not f or f.filename then return nil end
    return f.value
  end
  local id = value("sandbox_id")
  if not id or not id:find("%S") then env.invalid("body.sandbox_id", "Field required") end
  local target = value("target_path")
  if not target or not target:find("%S") then env.invalid("body.target_path", "Field required") end
  local file = form.file
  if not file then env.invalid("body.file", "Field required") end
  local sb = live(srv, { sandbox_id = id }, req)
  if file.file then sb:upload{ path = target, file = file.file }
  else sb:write_file{ path = target, content = file.value or "" } end
  local name = file.filename or require("rock.text").after_last(target, "/") -- [^/]*$ is quadratic
  return { success = true, message = "upload " .. target .. " success", file_name = name }
end

--- GET and PUT .../file?sandbox_id=&path= (rock's): a file's exact bytes
--- as the body, no JSON. GET (and HEAD) is relayed: the sandbox's answer
--- (200, or 206 for the client's Range: passed on; 416 past the end) goes
--- on to the client as it comes from the sandbox (op download with
--- relay: backends/rocklet_transport.lua, c/http/lua_serve.c), the
--- sandbox read no faster than the client reads, no byte held here past
--- a few MiB in flight, nothing on disk; a client gone mid-way ends the
--- transfer from the sandbox. A backend without download_stream reads
--- the file whole (read_file, up to its 32 MiB; Range ignored). PUT: a
--- body up to body_to_file (1 MiB, with a Content-Length) comes whole and
--- goes in by write_file; a larger or chunked one is relayed (op upload
--- with relay; serve/init.lua's admit asked stream_body): sent on to the
--- sandbox as the client sends it, the client read no faster than the
--- sandbox takes it, nothing stored here (no temp file); the sandbox
--- renames it into place once whole, so a client gone mid-body (499 in the
--- log) or a sandbox gone mid-way leaves no file. Answered {success,
--- message} in the envelope. A failure is an HTTP error status with the
--- Failed envelope as body (answered at once: the rest of a body still
--- coming is read and dropped).
local OCTETS = { ["content-type"] = "application/octet-stream" }
local JSON = { ["content-type"] = "application/json" }

-- While a relayed upload is in flight, the sandbox is watched: a paused
-- client (it sends nothing for a while) leaves the transfer to the
-- rocklet paused too, and a paused transfer does not see the rocklet
-- die. Every WATCH_S a small task asks whether the sandbox is gone
-- (Sandbox:_check_gone: the backend's proof, sb.exited for a local one)
-- and, if so, cancels the relaying task with sandbox_not_alive: the
-- transfer is aborted and the client answered at once. Not for a sandbox
-- another rock serve runs (caps.served_elsewhere: a fleet front relaying
-- to a node, a Slurm job's server): that server watches it and its error
-- answer ends the relay here. Returns a stop
-- function (the watcher ends; safe twice).
local WATCH_S = 0.5
local function watch_gone(sb)
  local task = require "rock.task"
  local me = task.current()
  if not me or require("rock.backends").can(sb.backend, "served_elsewhere") then return function() end end
  local stopped, over = errors.new("cancelled", "upload ended"), false
  local w = task.spawn(function()
    while not over do
      task.sleep(WATCH_S)
      local ok, why = pcall(sb._check_gone, sb) -- a container's engine is asked: it waits
      -- the stop may fall in that wait, its cancel caught there (the
      -- backend's errors are no proof of anything): over says it
      if over or (not ok and task.cancelled(why)) then return end
      -- only while the relaying task is parked in the transfer (not queued
      -- to resume from it, not shielded): a cancel that fell after the
      -- upload ended would hit the task's next wait, the answer's
      if ok and (why or sb.state ~= "running") and task.parked(me) then
        task.cancel(me, errors.new("sandbox_not_alive", "sandbox " .. tostring(sb.id) .. " is " .. sb.state ..
          (why and (": " .. why) or "") .. " (it went mid-upload)", { op = "upload" }))
        return
      end
    end
  end)
  w.quiet = true -- its end by stopped is no failure to log
  return function()
    over = true
    task.cancel(w, stopped)
  end
end
M._watch_gone = watch_gone -- for tests

function M.file(srv, args, req)
  local sb = live(srv, args, req)
  local path = field(args, "path", "string", true)
  if path == "" then env.invalid("query.path", "Field required") end
  if req.method == "PUT" then
    if req.body_stream then
      if not sb._impl.caps.upload_stream then -- every backend rock has streams; a test's may not
        errors.raise("not_supported", "this backend takes no streamed upload: send at most 1 MiB")
      end
      local unwatch = watch_gone(sb)
      local ok, r = pcall(sb._op, sb, "upload", { path = path, relay = req._handle })
      unwatch()
      if not ok and req._gone then return { status = 499, body = "", outcome = "Failed" } end -- for the log
      if not ok then error(r, 0) end
    else
      sb:write_file{ path = path, content = req.body or "" }
    end
    return { status = 200, headers = JSON,
      body = json.encode(env.success({ success = true, message = "write " .. path .. " success" })) }
  end
  if not sb._impl.caps.download_stream then
    return { status = 200, headers = OCTETS, body = sb:read_file{ path = path, binary = true }.content }
  end
  local ok, r = pcall(sb._op, sb, "download", { path = path, relay = req._handle,
    range = (req.headers or {}).range, head = req.method == "HEAD" or nil })
  if ok then return { status = r.status, headers = OCTETS, body = "" } end -- answered as it came
  if req._handle:answered() then -- cut mid-way: the client went, or the sandbox did
    return { status = errors.is(r, "cancelled") and 499 or 502, body = "", outcome = "Failed" } -- for the log
  end
  if errors.is(r) and r.http_status == 416 then -- not satisfiable: the size, as HTTP says it
    return { status = 416, headers = { ["content-type"] = "application/json", ["content-range"] = r.content_range },
      body = json.encode(env.failed(M.TEXT.file, r)) }
  end
  error(r, 0)
end

function M.stop(srv, args)
  local e = entry(srv, args)
  srv.registry:stop(e, "stop")
  return e.id .. " stopped"
end

function M.delete(srv, args)
  local id = field(args, "sandbox_id", "string", true)
  local e = srv.registry:get(id)
  if not e then return id .. " deleted" end -- ROCK: an unknown id is a no-op
  if e.state ~= "stopped" then errors.raise("conflict", "sandbox " .. id .. " is " .. e.state .. ": stop it first") end
  srv.registry:delete(e)
  return id .. " deleted"
end

--- /commit: the sandbox's filesystem as an image (docker and podman),
--- named image_tag (default "rock-commit:<sandbox id>"), with the config
--- of the image it started from (backends/container.lua's commit). A
--- name that is no image reference is an invalid parameter, checked
--- before anything is made; a failure later leaves no image.
function M.commit(srv, args, req)
  local sb = live(srv, args, req)
  local tag = field(args, "image_tag", "string") or ("rock-commit:" .. sb.id)
  local ok, err = pcall(require("rock.engine").parse_reference, tag)
  if not ok then env.invalid("body.image_tag", err.message) end
  sb:_capable("commit", "commit")(sb, tag)
  return sb.id .. " commited"
end

function M.get_sandbox_statistics(srv, args, req)
  local sb = live(srv, args, req, "query")
  return sb:_capable("stats", "statistics")(sb)
end

function M.get_token()
  errors.raise("not_supported", "rock has no OSS token: use /upload")
end

--- /warmup/tasks: pull the image now; a failed pull is Failed (ROCK
--- always says Success).
function M.warmup(srv, args)
  local image = field(args, "image", "string") or "python:3.11"
  local backends = require "rock.backends"
  local ok, backend = pcall(backends.resolve, { backend = srv.registry.backend, image = image }, "warmup")
  if not ok then
    if errors.is(backend, "engine_unavailable") then
      errors.raise("engine_unavailable", "warmup needs a container engine: none answers (docker, podman)")
    end
    error(backend, 0)
  end
  if not backends.can(backend, "warmup") then
    errors.raise("invalid_argument", "warmup needs a container engine (the backend is " .. backend .. ")")
  end
  return { image = image, result = backends.get(backend).warmup(image) }
end

local function entries_status(srv, list)
  local out = json.array()
  for i, e in ipairs(list) do out[i] = srv.registry:status(e, e.state == "running" and e.sb ~= nil and e.sb.state == "running") end
  return out
end

function M.sandboxes(srv, args)
  local page = field(args, "page", "integer", false, "query") or 1
  local size = field(args, "page_size", "integer", false, "query") or 500
  if page < 1 then env.invalid("query.page", "Input should be greater than or equal to 1") end
  if size < 1 or size > 5000 then env.invalid("query.page_size", "Input should be between 1 and 5000") end
  local list = srv.registry:list{ state = args.state, image = args.image, user_id = args.user_id,
    experiment_id = args.experiment_id, namespace = args.namespace }
  local from = (page - 1) * size + 1
  local items = {}
  for i = from, math.min(#list, from + size - 1) do items[#items + 1] = list[i] end
  return { items = entries_status(srv, items), total = #list, has_more = from + size - 1 < #list }
end

function M.sandboxes_batch(srv, args)
  local ids = field(args, "sandbox_ids", "list", true)
  if #ids > 2000 then env.invalid("body.sandbox_ids", "List should have at most 2000 items") end
  local list = {}
  for i, id in ipairs(ids) do
    if type(id) ~= "string" then env.invalid("body.sandbox_ids." .. (i - 1), "Input should be a valid string") end
    list[#list + 1] = srv.registry:get(id)
  end
  return { statuses = entries_status(srv, list) }
end

function M.editor(srv, args, req)
  local sb = live(srv, args, req)
  local o = {}
  for k, v in pairs(args) do if k ~= "sandbox_id" and v ~= json.null then o[k] = v end end
  return sb:editor(o)
end

--- rock's background jobs (/jobs/start, /jobs/wait, /jobs, /jobs/kill)
--- and process environments (/env/start, /env/call, /env/stop), passed to
--- the sandbox's rocklet as they are (docs/rocklet-api.md), so a remote
--- Sandbox's sb:arun{mode="nohup"} and rock.envs work through the API.
local function jobs_call(path)
  return function(srv, args, req)
    local sb = live(srv, args, req)
    local body = {}
    for k, v in pairs(args) do if k ~= "sandbox_id" and v ~= json.null then body[k] = v end end
    local wait = type(body.timeout) == "number" and body.timeout or nil
    if path == "jobs/wait" and body.timeout == nil then wait = 1e8 end
    local r = sb:_op(path, body, (wait or 0) + 60)
    if path == "env/call" then return env.success_exact(r) end -- a reward, exact
    return r
  end
end

--- GET /node (rock): the node's budget, reservations, starts and queue,
--- health and version, for a placer (admission.lua's report).
function M.node(srv) return srv.admission:report(srv) end

-- The table the dispatcher routes by: path under the prefix -> {method, fn}.
M.ROUTES = {
  ["start"] = { "POST", M.start }, ["start_async"] = { "POST", M.start_async },
  ["restart"] = { "POST", M.restart }, ["get_status"] = { "GET", M.get_status },
  ["is_alive"] = { "GET", M.is_alive }, ["create_session"] = { "POST", M.create_session },
  ["run_in_session"] = { "POST", M.run_in_session, text = true }, ["close_session"] = { "POST", M.close_session },
  ["interrupt"] = { "POST", M.interrupt }, ["execute"] = { "POST", M.execute, text = true },
  ["read_file"] = { "POST", M.read_file }, ["write_file"] = { "POST", M.write_file },
  ["upload"] = { "POST", M.upload, raw = true }, ["stop"] = { "POST", M.stop },
  ["delete"] = { "POST", M.delete }, ["commit"] = { "POST", M.commit },
  ["get_sandbox_statistics"] = { "GET", M.get_sandbox_statistics }, ["get_token"] = { "GET", M.get_token },
  ["warmup/tasks"] = { "POST", M.warmup }, ["sandboxes"] = { "GET", M.sandboxes },
  ["sandboxes/batch"] = { "POST", M.sandboxes_batch }, ["editor"] = { "POST", M.editor },
  ["node"] = { "GET", M.node }, ["file"] = { "GET", M.file, PUT = true, raw = true, bytes = true },
  ["jobs/start"] = { "POST", jobs_call("jobs/start") }, ["jobs/wait"] = { "POST", jobs_call("jobs/wait") },
  ["jobs"] = { "POST", jobs_call("jobs") }, ["jobs/kill"] = { "POST", jobs_call("jobs/kill") },
  -- process environments (rock.envs, docs/environments.md), passed through
  -- the same way: a remote Sandbox, and so a fleet front's, holds them too
  ["env/start"] = { "POST", jobs_call("env/start") }, ["env/call"] = { "POST", jobs_call("env/call") },
  ["env/stop"] = { "POST", jobs_call("env/stop") },
}

return M
