---@meta
--- rock.core: the C boundary (c/core/lua_core.c gathers each folder's
--- lua_*.c). Only lua/rock/*.lua call it; recipes use require "rock". This
--- file declares every function of it (tests/lua/test_core.lua checks);
--- it is never run.
---
--- Errors, one convention (as luv's): misuse (an argument of the wrong
--- type) raises a string through luaL_argerror. Every runtime failure is a
--- rock.Error table with the "rock.error" metatable (made by C when
--- rock.core loads; rock.errors uses the same one): raised by synchronous
--- functions, passed as cb(nil, err) by asynchronous ones (even when the
--- start fails: the callback then runs before the call returns).
error("rock.core's _meta file is documentation only")

---@class rock.Error
---@field code string       stable snake_case code (c/core/err.h): "timeout", "io_error", ...
---@field message string
---@field op string|nil     the operation: "http_request", "rmtree", "container_create", ...
---@field errno string|nil  the system error's name ("EAGAIN", "ENOENT") when there is one
---@field status integer|nil engine calls: the HTTP status (0: the engine was not reached)
---@field peer_pid integer|nil http_request with peer_pid: the process found serving the socket

---@class rock.core.HttpResponse
---@field status integer
---@field headers table<string,string>|nil lowercased names; absent with response_headers=false
---@field body string

local core = {}

-- ---- the library ---------------------------------------------------------

--- The library version, "MAJOR.MINOR.PATCH".
---@return string
function core.version() end

--- Path of the rocklet binary: $ROCK_ROCKLET, the build tree's, or libexec.
---@return string
function core.rocklet_path() end

--- This process's pid.
---@return integer
function core.getpid() end

--- Encode bytes as base64 (for contents JSON cannot carry).
---@param s string
---@return string
function core.base64_encode(s) end

--- before .. q .. after in one allocation, q the JSON string literal of s
--- (valid UTF-8 text), or with "base64" of s's base64 (any bytes).
---@param before string
---@param s string
---@param after string
---@param mode? "base64"
---@return string
function core.json_wrap(before, s, after, mode) end

--- Decode base64. Raises invalid_argument ("not base64") on bad input.
---@param s string
---@return string
function core.base64_decode(s) end

--- s with each byte of an invalid UTF-8 sequence replaced by U+FFFD
--- (strict, as Python reads UTF-8: no overlongs, surrogates or code points
--- past U+10FFFF; c/core/utf8.c, the rocklet's cleaning of output); s
--- itself when it is valid. Linear.
---@param s string
---@return string
function core.utf8_clean(s) end

--- Command output as the rocklet returns it as text (c/rocklet/output.h):
--- CRLF to LF, ANSI escape sequences removed, each byte of an invalid
--- UTF-8 sequence U+FFFD; s itself when nothing changes. For bytes that
--- came raw (GET /file, a raw /execute) and are returned as text. Linear.
---@param s string
---@return string
function core.output_clean(s) end

---@class rock.core.Lock
---@field release fun(self: rock.core.Lock) drop the lock (safe twice); also its __close and __gc

--- Take an exclusive flock(2) on path (made if missing, left in place),
--- held until lock:release() or the process ends (kill -9 too: the kernel
--- drops it); close-on-exec, so no child keeps it. The file then holds
--- this process's pid. Raises conflict when another open holds it (another
--- process, or this one), with holder_pid = the pid the file names;
--- io_error when path cannot be opened.
---@param path string
---@return rock.core.Lock
function core.lock_file(path) end

--- Write one line through the C logger (c/core/log.c): "rock LEVEL AREA:
--- MESSAGE" on stderr when ROCK_LOG lets LEVEL through. lua/rock/log.lua
--- is the API on top.
---@param level "debug"|"info"|"warn"|"error"
---@param area string
---@param message string
function core.log(level, area, message) end

--- Would core.log print a line at this level?
---@param level "debug"|"info"|"warn"|"error"
---@return boolean
function core.log_enabled(level) end

--- A line that may wait in the C logger's buffer (debug, info; warn and
--- error go at once) until 4 KiB, the next unbuffered line, core.log_flush
--- or exit (c/http/lua_serve.c registers it). Returns true when it went
--- into an empty buffer: the caller flushes soon (rock.log.buffered does,
--- within 100 ms).
---@param level "debug"|"info"|"warn"|"error"
---@param area string
---@param message string
---@return boolean
function core.log_buffered(level, area, message) end

--- Write the buffered log lines now.
function core.log_flush() end

--- The level printed when ROCK_LOG does not set one (warn unless set).
---@param level "debug"|"info"|"warn"|"error"
function core.log_default(level) end

--- s as one word of a log line: printable ASCII and UTF-8 as they are; a
--- space, a backslash, control bytes and what is not printable UTF-8 as
--- \n \r \t \\ or \xHH (a client's sandbox id must not forge lines). s
--- itself when nothing needs escaping.
---@param s string
---@return string
function core.log_escape(s) end

-- ---- HTTP (c/http/lua_http.c) --------------------------------------------

--- Start an HTTP request on the loop (libcurl multi). cb(res) or
--- cb(nil, err) runs later on the main state, never inside curl; err.code
--- is "timeout", "connection_failed" (err.errno says why: EAGAIN = the
--- server's listen backlog is full, ECONNREFUSED/ENOENT = nobody serves
--- the socket; err.peer_pid = the wrong process serves it) or
--- "http_error". Any HTTP status is a response.
--- opts.peer_pid (with unix_socket): the pid that must serve the socket,
--- checked (SO_PEERCRED) on each new connection before a byte is sent;
--- kept-alive connections are shared only between requests for that pid.
--- opts.relay (a rock.http_request handle of http_serve, unanswered): a
--- 2xx answer's status, type, range and body go on to that request's
--- client as they come, read no faster than it reads (res.body ""); a
--- client gone mid-way ends the request ("cancelled"); another answer
--- comes to res, the handle left unanswered.
--- opts.body_from (a rock.http_request handle whose body streams:
--- handle:stream_body() from on_headers): the body sent is that request's
--- body, read from its client as this request sends it (chunked when the
--- size is not known); a client gone mid-way ends the request
--- ("cancelled"), a malformed body too ("bad_request"); the handle is left
--- to answer (an answer before the body is over drops the rest).
---@param opts {url:string, method?:string, headers?:table, body?:string, body_file?:string, output_file?:string, max_body?:integer, relay?:rock.core.HttpRequestHandle, body_from?:rock.core.HttpRequestHandle, timeout?:number, unix_socket?:string, peer_pid?:integer, response_headers?:boolean}
---@param cb fun(res?:rock.core.HttpResponse, err?:rock.Error)
---@return integer id for http_cancel (0 when cb already ran)
function core.http_request(opts, cb) end

--- Abandon a request (http_request's or engine_request's): its callback
--- will not run.
---@param id integer
---@return boolean found false when it already ended
function core.http_cancel(id) end

--- Requests under way to a unix socket peer (a rocklet, the engine) that
--- the plain client carries: the loop polls briefly before it sleeps only
--- while there is one (lua/rock/task.lua).
---@return integer
function core.http_local_pending() end

-- ---- the HTTP server (c/http/lua_serve.c) --------------------------------

---@class rock.core.HttpServer  a rock.http_server userdata
---@field port fun(self):integer             the TCP port bound (0 on a unix socket)
---@field drain fun(self, cb:fun())          stop accepting, let requests under way finish;
---                                          cb() once no connection is left (never after close)
---@field close fun(self)                    close now: requests not answered become orphans
---@field stats fun(self):{conns:integer, inflight:integer, buffered:integer, open:boolean}

---@class rock.core.HttpRequestHandle  a rock.http_request userdata, answered once
---@field respond fun(self, status:integer, header_lines:string, body?:string)
---@field respond_file fun(self, status:integer, header_lines:string, path:string) raises io_error
---@field answered fun(self):boolean
---@field on_abort fun(self, fn?:fun())               fn() once if the client goes away unanswered
---@field max_body fun(self, n:integer)                from on_headers: the body may be up to n bytes
---@field stream_body fun(self)                        from on_headers: a body past body_to_file (or
---                                                    chunked) comes to on_request unread (req.body_stream)

--- Listen (TCP on a numeric host, or a unix socket) and call
--- on_request(req, handle) on the loop for every whole request; req is
--- {method, path, raw_query, headers (lowercased, repeats joined by ", "),
--- body | body_file + body_size | body_stream (+ body_size), peer}.
--- Bodies past body_to_file (and chunked ones) stream to a temp file in
--- tmpdir, deleted once answered or when the request dies, unless
--- on_headers asked handle:stream_body(): then on_request gets the
--- request before its body is read, for http_request's body_from. header_lines: "Name: value
" lines, the
--- caller's checked; the server adds Content-Length and Connection.
--- A listening server is kept alive until closed. Raises io_error (with
--- errno) when it cannot listen, invalid_argument for a bad host.
--- req._handle is the handle too, and opts.request_mt (a table) req's
--- metatable. on_abort(req), when given, runs once for a request still
--- unanswered when on_request returned whose client went away
--- (handle:on_abort(fn) sets one per request instead).
---@param opts {host?:string, port?:integer, unix_socket?:string, tmpdir:string, max_body?:integer, body_to_file?:integer, max_header?:integer, max_conns?:integer, idle_timeout?:number, request_mt?:table}
---@param on_request fun(req:table, handle:rock.core.HttpRequestHandle)
---@param on_abort? fun(req:table)
---@return rock.core.HttpServer
function core.http_serve(opts, on_request, on_abort) end

--- Parse a multipart/form-data body held in memory into its parts, in
--- order (c/http/lua_form.c). Parts with a filename, and values larger
--- than max_value (default 1 MiB), go to new temp files in tmpdir (the
--- caller deletes them). Raises bad_request for a malformed body (none of
--- its temp files is left), io_error when a temp file cannot be written.
---@param opts {body:string, boundary:string, tmpdir:string, max_value?:integer, max_parts?:integer}
---@return {name:string, filename?:string, content_type?:string, value?:string, file?:string}[]
function core.multipart_parse(opts) end

--- The same for the body in the file at path, streamed, on libuv's thread
--- pool: cb(parts) or cb(nil, err) runs on the loop. Returns an id for
--- multipart_cancel.
---@param opts {path:string, boundary:string, tmpdir:string, max_value?:integer, max_parts?:integer}
---@param cb fun(parts:table|nil, err:table|nil)
---@return integer
function core.multipart_parse_file(opts, cb) end

--- Let a parse go: its cb is not called, and the temp files it made are
--- removed (a parse already running finishes first, on its thread).
---@param id integer
function core.multipart_cancel(id) end

-- ---- the Engine API (c/engine/lua_engine.c) ------------------------------

--- Start one Docker Engine API operation (engine.c's table: "ping",
--- "container_create", "image_pull", ...). params fill the path's
--- placeholders; the rest become the query. cb(res) for 2xx/304, or
--- cb(nil, err) with the engine's own message and err.status; on_chunk
--- gets a streaming body (image pull progress) as it arrives. Raises
--- invalid_argument for an unknown op or a missing path parameter.
---@param opts {socket:string, op:string, params?:table<string,string|number>, body?:string, body_file?:string, out_file?:string, timeout?:number}
---@param cb fun(res?:{status:integer, body:string}, err?:rock.Error)
---@param on_chunk? fun(bytes:string)
---@return integer id for http_cancel
function core.engine_request(opts, cb, on_chunk) end

-- ---- the image cache index (c/images/lua_images.c) -----------------------
-- Quick local file operations under a lock, so synchronous; they raise a
-- rock.Error (op "images") on failure.

--- The tar file of image in the cache dir.
---@param dir string
---@param image string
---@return string
function core.images_tar_path(dir, image) end

--- Record a use of image now; sizes in bytes (0 = not there; nil keeps
--- the recorded value).
---@param dir string
---@param image string
---@param engine_size? number
---@param tar_size? number
function core.images_touch(dir, image, engine_size, tar_size) end

--- Drop image from the index.
---@param dir string
---@param image string
function core.images_forget(dir, image) end

--- The index.
---@param dir string
---@return table<string, {last_used:number, engine_size:number, tar_size:number}>
function core.images_index(dir) end

--- Images to evict, least recently used first, until the sizes left fit
--- in budget bytes; images in keep are never chosen.
---@param dir string
---@param budget number
---@param keep? string[]
---@return string[]
function core.images_plan(dir, budget, keep) end

-- ---- the local backend (c/local/fs.c) ------------------------------------

--- Remove a directory tree without following symlinks or crossing mounts.
--- A missing path is fine. Raises io_error (with errno) otherwise.
---@param path string
---@return true
function core.rmtree(path) end

--- The kernel start time (clock ticks since boot) of pid, or nil when
--- there is no such process, or it ended and is not reaped yet (a zombie
--- holds nothing): an answer, not a failure. With the pid, it tells a
--- live process from a reused pid.
---@param pid integer
---@return integer|nil
function core.proc_start_time(pid) end

-- ---- the runc backend's file systems (c/overlay/lua_overlay.c) ----------

--- Turn an unpacked OCI layer's whiteouts into overlayfs's: ".wh.NAME" a
--- 0/0 character device NAME, ".wh..wh..opq" the xattr
--- trusted.overlay.opaque=y on its dir. Returns how many it turned.
---@param dir string
---@return integer
function core.overlay_whiteouts(dir) end

--- The reverse, on a copy of an upper dir (a commit's layer): 0/0 devices
--- and opaque dirs become OCI's whiteout files. Returns how many.
---@param dir string
---@return integer
function core.overlay_oci_whiteouts(dir) end

--- Mount an overlay on target: lowers a list of dirs, the topmost first.
--- Raises engine_unavailable when the kernel has no overlayfs.
---@param lowers string[]
---@param upper string
---@param work string
---@param target string
function core.overlay_mount(lowers, upper, work, target) end

--- Unmount target (lazily when busy); false when nothing is mounted there.
---@param target string
---@return boolean
function core.overlay_umount(target) end

--- A tmpfs of at most bytes, mode 0700, on target.
---@param target string
---@param bytes integer
function core.tmpfs_mount(target, bytes) end

--- Is target a mount point (its device differs from its parent's)?
---@param target string
---@return boolean
function core.overlay_mounted(target) end

--- An exclusive flock on path (made 0600 if missing) without waiting: its
--- fd, or nil when another holder has it.
---@param path string
---@return integer|nil
function core.flock_try(path) end

--- Let a flock_try lock go.
---@param fd integer
function core.flock_release(fd) end

return core
