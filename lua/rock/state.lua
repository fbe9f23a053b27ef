--- rock.state: the state dir and the sandbox records in it.
-- $ROCK_HOME (default ~/.local/state/rock) holds sandboxes/<id>/ for every
-- sandbox of every backend: its socket dir and a record, sandbox.json,
-- saying who owns it (host name, pid and the pid's start time, so a reused
-- pid is not mistaken for the owner). gc.lua reads the records; the
-- backends write them.
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

function M.mkdir_p(path)
  local acc = path:sub(1, 1) == "/" and "" or "."
  for part in path:gmatch("[^/]+") do
    acc = acc .. "/" .. part
    local ok, err, code = uv.fs_mkdir(acc, tonumber("755", 8))
    if not ok and code ~= "EEXIST" then
      errors.raise("io_error", "mkdir " .. acc .. ": " .. tostring(err))
    end
  end
end

--- A fresh sandbox id: "rk-" and 12 hex digits.
function M.new_id()
  local bytes = uv.random(6, {})
  return "rk-" .. (bytes:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

--- This process as an owner: {host=, pid=, start=}.
function M.me()
  local pid = core.getpid()
  return { host = uv.os_gethostname(), pid = pid, start = core.proc_start_time(pid) }
end

--- The owner as one label value: "host:pid:start".
function M.owner_label(o)
  return string.format("%s:%d:%d", o.host, o.pid, o.start or 0)
end

function M.parse_owner(s)
  local host, pid, start = tostring(s or ""):match("^(.*):(%d+):(%d+)$")
  if not host then return nil end
  return { host = host, pid = tonumber(pid), start = tonumber(start) }
end

--- Is the owner process still there? Owners on another host count as
--- alive: only that host can tell.
function M.owner_alive(o)
  if not o then return false end
  if o.host and o.host ~= uv.os_gethostname() then return true end
  local st = core.proc_start_time(o.pid)
  return st ~= nil and (o.start == nil or o.start == 0 or st == o.start)
end

--- Write rec as dir/sandbox.json (atomically: temp file, then rename).
function M.write_record(dir, rec)
  local tmp = dir .. "/sandbox.json.tmp"
  local f = assert(io.open(tmp, "w"))
  f:write(cjson.encode(rec))
  f:close()
  assert(os.rename(tmp, dir .. "/sandbox.json"))
end

function M.read_record(dir)
  local f = io.open(dir .. "/sandbox.json")
  if not f then return nil end
  local rec = cjson.decode(f:read("a"))
  f:close()
  return type(rec) == "table" and rec or nil
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

--- Remove a sandbox dir (no symlink followed, no mount crossed).
function M.remove_dir(dir)
  if not uv.fs_stat(dir) then return end
  local ok, err = core.rmtree(dir)
  if not ok then errors.raise("io_error", err) end
end

return M
