--- rock.http.serve: an HTTP/1.1 server on the shared loop. Each request
-- is handled in a task (the handler may wait: run a command, call a
-- sandbox) while the server goes on with other connections; a connection
-- is not read past its read-ahead until its answer is sent. The tasks are
-- workers reused from request to request: a request starts at once on an
-- idle worker, so a handler that does not wait is answered before the
-- loop turns (see "Workers" below).
-- An on_headers hook may refuse a request before its body is read
-- (authentication). Large bodies go to temp files, or, for a request whose
-- hook asked req:stream_body(), to the handler as they come (relayed on:
-- rock.http.request{body_from = req}); multipart forms are parsed in C
-- (req:form()), a stop is graceful. Read next: c/http/lua_serve.c (the
-- binding), c/http/server.c (the mechanism), c/http/multipart.c.
local core = require "rock.core"
local task = require "rock.task"
local errors = require "rock.errors"
local log = require "rock.log"
local json = require "rock.json"
local uv = require "luv"
local trim = require("rock.text").trim

local M = {}

---@class rock.HttpServeOpts
---@field handler fun(req: rock.HttpServerRequest): rock.HttpServerResponse  required
---@field after fun(req: rock.HttpServerRequest, res: rock.HttpServerResponse|nil)|nil
---                              runs once the answer is written (nil res: the handler
---                              failed): metrics, access logs, off the client's wait
---@field on_headers fun(req: rock.HttpServerRequest): rock.HttpServerResponse|nil
---                              runs once the headers are in, before the body is read,
---                              on the loop (it must not wait): a response refuses the
---                              request unread (authentication); nil goes on
---@field host string|nil        numeric address to bind (default "127.0.0.1"; "localhost" is 127.0.0.1)
---@field port integer|nil       default 8080; 0 = any free port (srv.port tells)
---@field unix_socket string|nil listen on this unix socket instead of host/port
---@field max_body integer|nil   bytes (default 32 MiB); larger bodies get 413
---@field body_to_file integer|nil bodies larger than this (default 1 MiB), or chunked ones
---                              that grow past it, go to a temp file (req.body_file)
---@field max_header integer|nil URL + header bytes (default 64 KiB); past it 431
---@field max_conns integer|nil  open connections (default 4096); past it a new one replaces the oldest idle or half-sent one, else is closed at once
---@field idle_timeout number|nil seconds a connection may idle (default 600; 0 never)
---@field tmpdir string|nil      where temp files go (default $TMPDIR or /tmp)

---@class rock.HttpServerRequest
---@field method string
---@field path string            without the query string, not decoded
---@field query table<string,string> decoded (on first use); of repeated keys the last wins
---@field raw_query string
---@field headers table<string,string> lowercased names; repeats joined with ", "
---@field body string|nil        the body ("" when none), unless it went to body_file or streams
---@field body_file string|nil   temp file holding the body; deleted as the answer goes (before it is sent)
---@field body_size integer|nil  with body_file: its size; with body_stream: its Content-Length (nil: chunked)
---@field body_stream boolean|nil true: the body was not read (req:stream_body()): relay it with
---                              rock.http.request{body_from = req}; an answer given first drops the rest
---@field peer string|nil        the client's address (nil on a unix socket)

---@class rock.HttpServerResponse
---@field status integer|nil     default 200
---@field headers table|nil      {["Name"]="value"}; Content-Length and Connection are the server's
---@field body string|nil        default ""
---@field body_file string|nil   stream this file as the body instead (not deleted)

local Server = {}
Server.__index = Server

local Request = {}

local MiB = 1024 * 1024

local function check_int(v, name, dflt, min)
  if v == nil then return dflt end
  if math.type(v) ~= "integer" or v < (min or 0) then
    errors.raise("invalid_argument", string.format("rock.http.serve: %s must be an integer >= %d, got %s",
      name, min or 0, tostring(v)))
  end
  return v
end

local function unescape(s)
  s = s:gsub("+", " ")
  return (s:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

--- A Content-Type's media type, lowercased and trimmed ("" when none), and
--- the value of its parameter named param (unquoted; nil when absent). In
--- time linear in the header's length.
function M.media_type(ctype, param)
  local semi = ctype:find(";", 1, true)
  local mime = trim(semi and ctype:sub(1, semi - 1) or ctype):lower()
  if not (param and semi) then return mime end
  local value
  for seg in ctype:sub(semi + 1):gmatch("[^;]+") do
    local eq = seg:find("=", 1, true)
    if eq and trim(seg:sub(1, eq - 1)):lower() == param then
      local v = trim(seg:sub(eq + 1))
      value = v:match('^"(.*)"$') or v
    end
  end
  return mime, value
end

--- Decode a query string: {k = v}, the last of repeated keys wins.
function M.parse_query(q)
  local t = {}
  if q == nil or q == "" then return t end
  for pair in q:gmatch("[^&]+") do
    local k, v = pair:match("^([^=]*)=(.*)$")
    if not k then k, v = pair, "" end
    t[unescape(k)] = unescape(v)
  end
  return t
end

-- The header lines of an answer ("Name: value\r\n" each); raises a plain
-- string for a bad name or value (the handler's bug: a 500).
local SERVER_OWNED = { ["content-length"] = true, connection = true, ["transfer-encoding"] = true }
local DEFAULT_LINES = "Content-Type: text/plain; charset=utf-8\r\n"

-- The lines made of a headers table last time, with what it held then
-- ({lines, n, k1, v1, k2, v2, ...}): answers often share one table (rock
-- serve's do), so a table that still holds the same is not checked and
-- joined again. Weak keys: a table dropped by its owner goes.
local made = setmetatable({}, { __mode = "k" })

local function build_lines(h)
  local out, ctype = {}, false
  for k, v in pairs(h) do
    if type(k) ~= "string" or not k:match("^[!#$%%&'*+%-.^_`|~%w]+$") then
      error("bad response header name: " .. tostring(k), 0)
    end
    if type(v) == "number" then v = tostring(v) end
    if type(v) ~= "string" or v:find("[\r\n%z]") then
      error("bad response header value for " .. k, 0)
    end
    local lk = k:lower()
    if lk == "content-type" then ctype = true end
    if not SERVER_OWNED[lk] then out[#out + 1] = k .. ": " .. v .. "\r\n" end
  end
  if not ctype then out[#out + 1] = DEFAULT_LINES end
  local lines = table.concat(out)
  local snap, n = { lines, 0 }, 0
  for k, v in pairs(h) do
    snap[n + 3], snap[n + 4] = k, v
    n = n + 2
  end
  snap[2] = n
  made[h] = snap
  return lines
end

local function header_lines(h)
  if h == nil then return DEFAULT_LINES end
  if type(h) ~= "table" then error("response headers must be a table", 0) end
  local snap = made[h]
  if snap then -- the same pairs as then, in the same order: the same lines
    local i = 3
    for k, v in pairs(h) do
      if snap[i] ~= k or snap[i + 1] ~= v then return build_lines(h) end
      i = i + 2
    end
    if i - 3 == snap[2] then return snap[1] end
  end
  return build_lines(h)
end

-- The words of a handler's error; never raises (a table whose __tostring
-- fails still gets its request a 500).
local function message_of(e)
  if not errors.is(e) and type(e) == "table" and e.message ~= nil then e = e.message end
  local ok, s = pcall(tostring, e)
  return ok and s or "an error that cannot be printed"
end

-- The request's method and path as one may log them (control bytes and
-- the like escaped: a path must not forge log lines).
local function what(req)
  return core.log_escape(req.method) .. " " .. core.log_escape(req.path)
end

local function keep_traceback(e)
  if type(e) == "table" then
    if errors.is(e) and e.traceback == nil then e.traceback = debug.traceback("", 2) end
    return e
  end
  return { message = tostring(e), traceback = debug.traceback("", 2) }
end

-- A handler's response checked: status, header lines, body, body_file;
-- raises a plain string for a bad one (the handler's bug: a 500).
local function check_response(res)
  if type(res) ~= "table" then error("the handler returned " .. type(res) .. ", not a response table", 0) end
  local st = res.status or 200
  if math.type(st) ~= "integer" or st < 100 or st > 999 then
    error("bad response status: " .. tostring(res.status), 0)
  end
  if res.body ~= nil and type(res.body) ~= "string" then error("response body must be a string", 0) end
  if res.body_file ~= nil and (type(res.body_file) ~= "string" or res.body ~= nil) then
    error("response body_file must be a path, without body", 0)
  end
  return st, header_lines(res.headers), res.body or "", res.body_file
end

-- The temp files of req's form parts go before its answer does (a client
-- that has its answer finds them gone), except one the answer streams:
-- that goes once the answer has it open.
local function drop_files(req, except)
  local files, kept = req._files, false
  if not files then return false end
  req._files = nil
  for _, f in ipairs(files) do
    if f == except then kept = true else os.remove(f) end
  end
  return kept
end

-- Answer req with what the handler returned (or its failure).
local function answer(req, ok, res)
  local handle = req._handle
  if handle:answered() then return end
  local status, lines, body, file
  if ok then
    ok, status, lines, body, file = pcall(check_response, res)
    if not ok then res = status end
  end
  local streamed = drop_files(req, ok and file or nil)
  if ok and file then
    ok, res = pcall(handle.respond_file, handle, status, lines, file)
    if streamed then os.remove(file) end
  elseif ok then
    handle:respond(status, lines, body)
  end
  if not ok and req._gone then -- cancelled as its client went away: nobody to answer
    handle:respond(499, "", "")
    return
  end
  if not ok then
    local e = res
    log.error("http", "%s: handler failed: %s%s", what(req), message_of(e),
      type(e) == "table" and e.traceback and ("\n" .. e.traceback) or "")
    if not handle:answered() then
      handle:respond(500, "Content-Type: application/json\r\n", json.encode({ error = message_of(e) }))
    end
  end
end

local function run(srv, req)
  local t0 = log.enabled("debug") and uv.hrtime()
  local ok, res = xpcall(srv._handler, keep_traceback, req)
  answer(req, ok, res)
  if srv._after then
    local aok, e = pcall(srv._after, req, ok and res or nil)
    if not aok then log.error("http", "%s: after failed: %s", what(req), message_of(e)) end
  end
  drop_files(req) -- the answer failed to go, or was given by the handle
  if t0 then
    log.debug("http", "%s ms=%.1f", what(req), (uv.hrtime() - t0) / 1e6)
  end
end

-- Workers. A worker is a task that runs requests one after another
-- (rock.task.idle / rock.task.hand): idle, it sits in srv._pool; a
-- request is handed to an idle worker right from the C callback that
-- delivered it, so a handler that does not wait runs, answers and is idle
-- again before the callback returns. One that waits parks as any task does
-- (srv._waiting holds it) and is resumed by rock.task; done, it goes back
-- to the pool. Without an idle worker, or when the callback runs inside a
-- task (an answer can deliver the next pipelined request), a new worker
-- task is spawned for the request. A worker ends when the pool is full or
-- the server closed.
local MAX_IDLE = 32   -- idle workers kept
local GONE_ERR = "the client went away"

-- A request is over: it no longer counts.
local function request_done(srv, w)
  srv._ntasks = srv._ntasks - 1
  if srv._waiting[w] then
    srv._waiting[w] = nil
    if #srv._idle_waiters > 0 then -- close_now, waiting for the handlers
      local ws = srv._idle_waiters
      srv._idle_waiters = {}
      for _, wake in ipairs(ws) do wake() end
    end
  end
  if srv._progress then srv._progress() end
end

local function worker(srv, w, req)
  while req do -- req._worker = w and w.req = req: set by dispatch
    local ok, err = pcall(run, srv, req)
    w.req = nil
    if not ok then -- a bug in run itself: still one answer, and the worker goes on
      log.error("http", "%s: %s", what(req), message_of(err))
      local h = req._handle
      if not h:answered() then pcall(h.respond, h, 500, "", "") end
    end
    request_done(srv, w)
    if srv._closed or #srv._pool >= MAX_IDLE then return end
    srv._pool[#srv._pool + 1] = w
    req = task.idle()
  end
end

-- The server's on_headers: opts.on_headers(req) before the body is read;
-- a response (or its failure, a 500) is the answer, the body unread.
-- true: admitted (rock.core refuses the request unless it hears so).
local function early(srv, req)
  local ok, res = xpcall(srv._on_headers, keep_traceback, req)
  if ok and res == nil then return true end
  answer(req, ok, res)
  if srv._after then
    local aok, e = pcall(srv._after, req, ok and res or nil)
    if not aok then log.error("http", "%s: after failed: %s", what(req), message_of(e)) end
  end
end

-- One per server: rock.core calls it for each request (req._handle set,
-- the server's request metatable on it).
local function dispatch(srv, req)
  srv._ntasks = srv._ntasks + 1
  local pool = srv._pool
  local n = #pool
  if n > 0 and not task.current() then
    local w = pool[n]
    pool[n] = nil
    req._worker, w.req = w, req
    if not task.hand(w.t, req) then srv._waiting[w] = true end -- parked in a wait
    return
  end
  local w = { req = req } -- a client gone before it starts cancels it too
  req._worker = w
  srv._waiting[w] = true
  w.t = task.spawn(worker, srv, w, req)
  w.t.quiet = true
  srv._workers[w.t] = w
end

-- The server's on_abort: the client of req went away before its answer.
-- What its handler waits on is cancelled (a command in a sandbox is then
-- interrupted by its rocklet, as for any caller).
local function client_gone(req)
  req._gone = true
  local w = req._worker
  if w and w.req == req then task.cancel(w.t, errors.new("cancelled", GONE_ERR)) end
end

-- The metatable of srv's requests: the methods, req.query decoded on
-- first use, req._srv.
local function request_mt(srv)
  return { __index = function(req, k)
    if k == "query" then
      local q = M.parse_query(req.raw_query)
      rawset(req, "query", q)
      return q
    end
    if k == "_srv" then return srv end
    return Request[k]
  end }
end

-- The temp files (request bodies, form parts) that processes now gone
-- left in tmpdir, say a server killed mid-upload: their names carry the
-- pid that made them (c/http/lua_serve.c, multipart.c). A live process's
-- files, and anything else, stay.
local function sweep(tmpdir)
  local dir = uv.fs_scandir(tmpdir)
  if not dir then return end
  while true do
    local name = uv.fs_scandir_next(dir)
    if not name then break end
    local pid = name:match("^rock%-body%-(%d+)%-%w+$") or name:match("^rock%-part%-(%d+)%-%w+$")
    if pid and not core.proc_start_time(tonumber(pid)) then os.remove(tmpdir .. "/" .. name) end
  end
end

--- Start a server; returns it at once (srv.port, srv.url). Raises
--- invalid_argument for bad options and io_error (err.errno, e.g.
--- "EADDRINUSE") when it cannot listen.
---@param opts rock.HttpServeOpts
function M.serve(opts)
  if type(opts) ~= "table" then errors.raise("invalid_argument", "rock.http.serve: expects an options table") end
  if type(opts.handler) ~= "function" then
    errors.raise("invalid_argument", "rock.http.serve: handler must be a function")
  end
  if opts.after ~= nil and type(opts.after) ~= "function" then
    errors.raise("invalid_argument", "rock.http.serve: after must be a function")
  end
  if opts.on_headers ~= nil and type(opts.on_headers) ~= "function" then
    errors.raise("invalid_argument", "rock.http.serve: on_headers must be a function")
  end
  if opts.unix_socket ~= nil and (opts.host ~= nil or opts.port ~= nil) then
    errors.raise("invalid_argument", "rock.http.serve: give host/port or unix_socket, not both")
  end
  if opts.unix_socket ~= nil and (type(opts.unix_socket) ~= "string" or opts.unix_socket == "") then
    errors.raise("invalid_argument", "rock.http.serve: unix_socket must be a path")
  end
  local host = opts.host
  if opts.unix_socket == nil then
    host = host or "127.0.0.1"
    if type(host) ~= "string" then errors.raise("invalid_argument", "rock.http.serve: host must be a string") end
    if host == "localhost" then host = "127.0.0.1" end
  end
  local port = check_int(opts.port, "port", 8080)
  if port > 65535 then errors.raise("invalid_argument", "rock.http.serve: port must be 0-65535") end
  local idle = task.check_seconds(opts.idle_timeout, "rock.http.serve: idle_timeout", true)
  local tmpdir = opts.tmpdir or os.getenv("TMPDIR") or "/tmp"
  if type(tmpdir) ~= "string" or tmpdir == "" then
    errors.raise("invalid_argument", "rock.http.serve: tmpdir must be a directory")
  end
  sweep(tmpdir)
  local srv = setmetatable({
    _handler = opts.handler, _after = opts.after, _on_headers = opts.on_headers, _pool = {}, _waiting = {},
    _idle_waiters = {}, _ntasks = 0, _waiters = {},
    _workers = setmetatable({}, { __mode = "k" }), -- task -> its worker
    tmpdir = tmpdir,
    body_to_file = check_int(opts.body_to_file, "body_to_file", MiB),
  }, Server)
  srv._ud = core.http_serve({
    host = opts.unix_socket == nil and host or nil,
    port = port,
    unix_socket = opts.unix_socket,
    max_body = check_int(opts.max_body, "max_body", 32 * MiB),
    body_to_file = srv.body_to_file,
    max_header = check_int(opts.max_header, "max_header", 64 * 1024, 1),
    max_conns = check_int(opts.max_conns, "max_conns", 4096),
    idle_timeout = idle,
    tmpdir = tmpdir,
    request_mt = request_mt(srv),
    on_headers = opts.on_headers and function(req) return early(srv, req) end,
  }, function(req) dispatch(srv, req) end, client_gone)
  if opts.unix_socket == nil then
    srv.port = srv._ud:port()
    srv.url = string.format(host:find(":") and "http://[%s]:%d" or "http://%s:%d", host, srv.port)
  end
  srv.unix_socket = opts.unix_socket
  return srv
end

--- What the server holds now: {conns=, inflight= (requests read, not yet
--- answered), tasks= (handler tasks running), open=}.
function Server:stats()
  local st = self._ud:stats()
  st.tasks = self._ntasks
  return st
end

-- Close at once: connections go, handlers still waiting are cancelled
-- (each still answers, to nobody, and removes its temp files) and waited
-- for; idle workers end.
local function close_now(self)
  self._closed = true
  self._ud:close()
  local me = task.current()
  local left = {}
  for w in pairs(self._waiting) do
    if w.t ~= me then left[#left + 1] = w end
  end
  for _, w in ipairs(left) do task.cancel(w.t, errors.new("cancelled", "the server stopped")) end
  local function others_waiting()
    for w in pairs(self._waiting) do if w.t ~= me then return true end end
    return false
  end
  while others_waiting() do
    task.await(function(done) self._idle_waiters[#self._idle_waiters + 1] = done end)
  end
  local pool = self._pool
  self._pool = {}
  for _, w in ipairs(pool) do task.hand(w.t, nil) end -- nil: end
end

--- Stop: no new connection is taken; requests under way finish and get
--- their answers (Connection: close), idle keep-alive connections close;
--- past timeout seconds (default 30) the rest are closed and their handler
--- tasks cancelled. Returns once stopped; safe to call twice (a second
--- call waits for the first). Waits. Called from one of the server's own
--- handlers, it cannot wait for that request: the stop starts in a task of
--- its own and the call returns at once (the handler's answer still goes
--- out, then its connection closes); srv:wait() elsewhere waits for the end.
---@param opts {timeout?: number}|nil
function Server:stop(opts)
  local timeout = task.check_seconds(opts and opts.timeout or 30, "srv:stop: timeout")
  if self._stopped then return end
  local me = task.current()
  local mine = me and self._workers[me]
  if mine and mine.req then
    if not self._stopping then task.spawn(self.stop, self, opts) end
    return
  end
  if self._stopping then return self:wait() end
  self._stopping = true
  local ok, err = pcall(task.await, function(done)
    local drained, finished = false, false
    local timer = uv.new_timer()
    local function finish()
      if finished then return end
      finished = true
      self._progress = nil
      timer:close()
      done()
    end
    self._progress = function()
      if drained and self._ntasks == 0 then finish() end
    end
    uv.update_time()
    timer:start(math.floor(timeout * 1000 + 0.5), 0, finish)
    self._ud:drain(function()
      drained = true
      if self._progress then self._progress() end
    end)
    if self._progress then self._progress() end
    return finish
  end)
  close_now(self) -- nothing left when it drained in time
  self._stopped = true
  local waiters = self._waiters
  self._waiters = {}
  for _, w in ipairs(waiters) do w() end
  if not ok then error(err, 0) end
end

--- Wait until the server is stopped (by srv:stop from another task).
function Server:wait()
  if self._stopped then return end
  task.await(function(done)
    self._waiters[#self._waiters + 1] = done
  end)
end

--- From on_headers: this request's body may be up to n bytes (not the
--- server's max_body): for a route that streams its body to a file.
function Request:allow_body(n) self._handle:max_body(n) end

--- From on_headers: a body that would go to a temp file (past
--- body_to_file, or chunked) is not stored: the handler gets the request
--- at once with req.body_stream = true and relays the body as the client
--- sends it (rock.http.request{body_from = req}, or a backend's upload
--- op with relay = req._handle), the client read no faster than it goes
--- on. A smaller body comes in req.body as usual.
function Request:stream_body() self._handle:stream_body() end

--- The body as a multipart/form-data form (RFC 7578), parsed in C from
--- the body or body_file as a stream: {[name] = {value=} or {filename=,
--- content_type=, file=}}. A part with a filename, or a value larger than
--- body_to_file, is in a temp file (file=), deleted with the request.
--- A body_file is parsed on libuv's thread pool (it waits; the loop serves
--- other requests meanwhile). Raises bad_request for a body that is not
--- multipart or is malformed.
function Request:form()
  if self._form then return self._form end
  local ctype = self.headers["content-type"] or ""
  local mime, boundary = M.media_type(ctype, "boundary")
  if mime ~= "multipart/form-data" then
    errors.raise("bad_request", "the body is not multipart/form-data (Content-Type: " ..
      core.log_escape(ctype:sub(1, 200)) .. ")")
  end
  if not boundary or boundary == "" then
    errors.raise("bad_request", "multipart/form-data without a boundary")
  end
  local srv = self._srv
  local opts = { boundary = boundary, tmpdir = srv.tmpdir, max_value = srv.body_to_file }
  local parts
  if self.body_file then -- on the thread pool: the loop serves others meanwhile
    opts.path = self.body_file
    local err
    parts, err = task.await(function(done)
      local id = core.multipart_parse_file(opts, done)
      return function() core.multipart_cancel(id) end
    end)
    if not parts then error(err, 0) end
  else
    opts.body = self.body or ""
    parts = core.multipart_parse(opts)
  end
  local form = {}
  for _, p in ipairs(parts) do
    if p.file then
      self._files = self._files or {}
      self._files[#self._files + 1] = p.file
    end
    form[p.name] = { value = p.value, filename = p.filename, content_type = p.content_type, file = p.file }
  end
  self._form = form
  return form
end

return M
