--- rock.state: the state dir and the sandbox records in it.
-- $ROCK_HOME (default ~/.local/state/rock) holds sandboxes/<id>/ for every
-- sandbox of every backend: a record, sandbox.json, saying who owns it
-- (host name, pid and the pid's start time, so a reused pid is not
-- mistaken for the owner), and an empty file whose name carries the same
-- owner ("owner=host:pid:start"), made right after the dir, before any
-- byte is written: when the record cannot be read (a full disk, a crash
-- mid-start) it still tells gc whose the dir is. Everything here is owner-
-- only (dirs 0700, files 0600) whatever the umask. gc.lua reads the
-- records; the backends write them (a container's before its create:
-- its name and the create's nonce, then its id and pid, its limits).
local uv = require "luv"
local core = require "rock.core"
local cjson = require "cjson.safe"
local errors = require "rock.errors"

local M = {}

--- The state dir: $ROCK_HOME or ~/.local/state/rock.
function M.dir()
  local home = os.getenv("ROCK_HOME")
  if home and home ~= "" then return home end
  return (os.getenv("HOME") or "/tmp") .. "/.local/state/rock"
end

function M.sandboxes_dir() return M.dir() .. "/sandboxes" end

local DIR_MODE = tonumber("700", 8)
local FILE_MODE = tonumber("600", 8)

--- mkdir -p, making each missing dir owner-only (0700, whatever the
--- umask), or with mode as the umask leaves it (a user's output dirs);
--- dirs that exist are left as they are.
function M.mkdir_p(path, mode)
  local acc, existed = path:sub(1, 1) == "/" and "" or ".", false
  for part in path:gmatch("[^/]+") do
    acc = acc .. "/" .. part
    local ok, err, code = uv.fs_mkdir(acc, mode or DIR_MODE)
    existed = code == "EEXIST"
    if ok then
      if not mode then uv.fs_chmod(acc, DIR_MODE) end -- mkdir's mode went through the umask
    elseif not existed then
      errors.raise("io_error", "mkdir " .. acc .. ": " .. tostring(err))
    end
  end
  -- the last one there already: a dir, not a file of that name (as mkdir -p)
  if existed and (uv.fs_stat(acc) or {}).type ~= "directory" then
    errors.raise("io_error", "mkdir " .. acc .. ": exists and is not a directory")
  end
end

--- A valid sandbox id: what may name a dir under sandboxes/ and a
--- container: ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$.
function M.valid_id(id)
  return type(id) == "string" and #id <= 64 and id:match("^[A-Za-z0-9][A-Za-z0-9_.%-]*$") ~= nil
end

--- The file whose name marks dir's owner.
local MARK = "owner="

--- Make sandboxes/<id> (0700) and mark its owner (this process) in it.
--- Raises invalid_argument if it exists already, io_error if it cannot
--- be made. Returns the dir.
function M.make_sandbox_dir(id)
  if not M.valid_id(id) then
    errors.raise("invalid_argument", "invalid sandbox id " .. string.format("%q", tostring(id)))
  end
  M.mkdir_p(M.sandboxes_dir())
  local dir = M.sandboxes_dir() .. "/" .. id
  local ok, err, code = uv.fs_mkdir(dir, DIR_MODE)
  if not ok then
    if code == "EEXIST" then errors.raise("invalid_argument", "sandbox " .. id .. " already exists") end
    errors.raise("io_error", "mkdir " .. dir .. ": " .. tostring(err))
  end
  uv.fs_chmod(dir, DIR_MODE)
  local fd, err2 = uv.fs_open(dir .. "/" .. MARK .. M.owner_label(M.me()), "w", FILE_MODE)
  if not fd then
    uv.fs_rmdir(dir)
    errors.raise("io_error", "cannot mark the owner of " .. dir .. ": " .. tostring(err2))
  end
  uv.fs_close(fd)
  return dir
end

--- The owner marked in dir (make_sandbox_dir), or nil.
function M.marked_owner(dir)
  local h = uv.fs_scandir(dir)
  if not h then return nil end
  while true do
    local name = uv.fs_scandir_next(h)
    if not name then return nil end
    if name:sub(1, #MARK) == MARK then return M.parse_owner(name:sub(#MARK + 1)) end
  end
end

--- A fresh sandbox id: "rk-" and 12 hex digits.
function M.new_id()
  local bytes = uv.random(6, {})
  return "rk-" .. (bytes:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

local owner_override -- M.serve_as: the service owns what this process starts

--- This process as an owner: {host=, pid=, start=}; under `rock serve`,
--- the service of this state dir: {host=, serve=<key>}.
function M.me()
  if owner_override then return owner_override end
  local pid = core.getpid()
  return { host = uv.os_gethostname(), pid = pid, start = core.proc_start_time(pid) }
end

-- A short key naming a state dir (FNV-1a of its path, 32 bits, hex).
local function dir_key(path)
  local h = 2166136261
  for i = 1, #path do h = ((h ~ path:byte(i)) * 16777619) & 0xffffffff end
  return string.format("%08x", h)
end

--- The file naming the process that serves this state dir.
function M.serve_file() return M.dir() .. "/serve.owner" end

--- Make this process `rock serve` for the state dir: what it starts is
--- owned by the service ("serve-<key>@host"), alive while the process
--- named in serve.owner lives, so a server restarted on the same
--- ROCK_HOME owns its sandboxes again (rock serve's adoption) and gc
--- spares them meanwhile only as long as a server runs. Raises conflict
--- when another live process serves this dir.
function M.serve_as()
  M.mkdir_p(M.dir())
  local f = io.open(M.serve_file(), "r")
  if f then
    local other = M.parse_owner(f:read("l"))
    f:close()
    local pid = core.getpid()
    if other and other.pid ~= pid and M.owner_alive(other) then
      errors.raise("conflict", string.format("another rock serve (pid %d) serves %s", other.pid, M.dir()))
    end
  end
  owner_override = nil
  local label = M.owner_label(M.me())
  local tmp = M.serve_file() .. ".tmp"
  local data = label .. "\n"
  local fd = uv.fs_open(tmp, "w", FILE_MODE)
  local ok = fd and uv.fs_fchmod(fd, FILE_MODE) -- owner-only: open's mode went through the umask
  ok = ok and uv.fs_write(fd, data, 0) == #data
  if fd then ok = uv.fs_close(fd) and ok end
  if not ok or not uv.fs_rename(tmp, M.serve_file()) then
    if fd then uv.fs_unlink(tmp) end
    errors.raise("io_error", "cannot write " .. M.serve_file())
  end
  owner_override = { host = uv.os_gethostname(), serve = dir_key(M.dir()) }
  return owner_override
end

--- The owner as one label value: "host:pid:start", or "serve-<key>@host".
function M.owner_label(o)
  if o.serve then return string.format("serve-%s@%s", o.serve, o.host) end
  return string.format("%s:%d:%d", o.host, o.pid, o.start or 0)
end

function M.parse_owner(s)
  s = tostring(s or "")
  local key, shost = s:match("^serve%-(%x+)@(.+)$")
  if key then return { host = shost, serve = key } end
  local host, pid, start = s:match("^(.*):(%d+):(%d+)$")
  if not host then return nil end
  return { host = host, pid = tonumber(pid), start = tonumber(start) }
end

--- Is the owner process still there? Owners on another host count as
--- alive: only that host can tell; so does the service of another state
--- dir. The service of this one lives while its serve.owner process does.
function M.owner_alive(o)
  if not o then return false end
  if o.host and o.host ~= uv.os_gethostname() then return true end
  if o.serve then
    if o.serve ~= dir_key(M.dir()) then return true end
    local f = io.open(M.serve_file(), "r")
    if not f then return false end
    local proc = M.parse_owner(f:read("l"))
    f:close()
    return proc ~= nil and not proc.serve and M.owner_alive(proc)
  end
  local st = core.proc_start_time(o.pid)
  return st ~= nil and (o.start == nil or o.start == 0 or st == o.start)
end

--- Write rec as dir/sandbox.json, owner-only (0600), atomically (a temp
--- file, then rename), checking every step: a record that cannot be
--- written whole (a full disk) raises io_error and leaves the old one.
function M.write_record(dir, rec)
  local data = cjson.encode(rec)
  local tmp, final = dir .. "/sandbox.json.tmp", dir .. "/sandbox.json"
  local fd, err = uv.fs_open(tmp, "w", FILE_MODE)
  local why
  if not fd then
    why = err
  else
    uv.fs_fchmod(fd, FILE_MODE) -- open's mode went through the umask
    local n, werr = uv.fs_write(fd, data, 0)
    if n ~= #data then why = werr or string.format("short write (%s of %d bytes)", tostring(n), #data) end
    local ok, cerr = uv.fs_close(fd)
    if not ok and not why then why = cerr end
    if not why then
      local rok, rerr = uv.fs_rename(tmp, final)
      if not rok then why = rerr end
    end
  end
  if why then
    uv.fs_unlink(tmp)
    errors.raise("io_error", "cannot write the sandbox record " .. final .. ": " .. tostring(why))
  end
end

--- The largest record read (records are a few hundred bytes).
M.MAX_RECORD = 64 * 1024
local O_NONBLOCK = 2048 -- 04000 on Linux: a FIFO opens without waiting for a writer

--- The record of dir, or nil when it is missing or unreadable. Only a
--- regular file, not a symlink, of at most MAX_RECORD bytes is read: a
--- FIFO or a device planted there (the local backend's dir is the
--- sandbox's to write) must not block or flood gc, which every host
--- start waits for (issue 7, hostile round).
function M.read_record(dir)
  local path = dir .. "/sandbox.json"
  local lst = uv.fs_lstat(path)
  if not lst or lst.type ~= "file" or lst.size > M.MAX_RECORD then return nil end
  local fd = uv.fs_open(path, O_NONBLOCK, 0)
  if not fd then return nil end
  local st = uv.fs_fstat(fd)
  local data
  if st and st.type == "file" and st.ino == lst.ino and st.dev == lst.dev then
    data = uv.fs_read(fd, M.MAX_RECORD, 0) -- swapped since the lstat: not read
  end
  uv.fs_close(fd)
  local rec = data and cjson.decode(data)
  if type(rec) ~= "table" then return nil end
  for k, v in pairs(rec) do -- cjson reads 8305 as 8305.0: pids must be integers
    if math.type(v) == "float" then rec[k] = math.tointeger(v) or v end
  end
  return rec
end

--- Every sandbox dir under the state dir: list of {id=, dir=, record=}
--- (record nil when missing or unreadable).
function M.list()
  local out = {}
  local base = M.sandboxes_dir()
  local h = uv.fs_scandir(base)
  if not h then return out end
  while true do
    local name, kind = uv.fs_scandir_next(h)
    if not name then break end
    if kind == "directory" then
      local dir = base .. "/" .. name
      out[#out + 1] = { id = name, dir = dir, record = M.read_record(dir) }
    end
  end
  return out
end

--- Remove a sandbox dir (no symlink followed, no mount crossed); raises
--- io_error when some of it cannot go.
function M.remove_dir(dir)
  if not uv.fs_stat(dir) then return end
  core.rmtree(dir)
end

return M
