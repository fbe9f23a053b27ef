--- rock.layers: the content-addressed layer store of the runc backend.
-- An image's layers are unpacked once each, from an engine's `docker
-- save` tar (the image cache's tar when it has one: images.lua), into
-- <state dir>/layers/sha256/<diff id>/ (M.dir), a dir overlayfs takes as a lower
-- dir as it is: the OCI whiteouts of the layer (".wh.NAME", and
-- ".wh..wh..opq" for an opaque dir) are turned into overlayfs's (a 0/0
-- character device, the xattr trusted.overlay.opaque=y: c/overlay/). Two
-- images with a layer in common share its dir. An unpack is safe under
-- concurrency, in one process and across processes: the layer's flock,
-- then a check, then tar into a temp dir renamed into place, so a layer
-- dir that exists is whole. The engine names the diff ids (its inspect);
-- the tar's manifest maps them to its layer files in the same order. Its
-- answer is kept beside the layers (M.recorded), so a start of an image
-- unpacked before needs no engine: when none answers, that record serves.
-- A runc commit adds its layer and a record (M.add, M.record).
-- Layers are never removed by rock (the store is shared by every image of
-- the state dir): remove <state dir>/layers with no runc sandbox running.
local uv = require "luv"
local core = require "rock.core"
local errors = require "rock.errors"
local state = require "rock.state"
local task = require "rock.task"
local images = require "rock.images"
local json = require "rock.json"
local proc = require "rock.proc"

local M = {}
local record_path, record -- below

--- The store's dir: $ROCK_LAYERS/sha256, default <state dir>/layers/sha256
--- (state dirs may share one store: the test suites do).
function M.dir()
  local d = os.getenv("ROCK_LAYERS")
  return ((d and d ~= "") and d or (state.dir() .. "/layers")) .. "/sha256"
end

--- The dir of the layer whose diff id is "sha256:<hex>".
function M.path(diff_id)
  local hex = tostring(diff_id):match("^sha256:(%x+)$")
  if not hex or #hex ~= 64 then errors.raise("invalid_argument", "layers: bad diff id " .. tostring(diff_id)) end
  return M.dir() .. "/" .. hex
end

local function rand()
  return (uv.random(6, {}):gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

-- The lock of path (path .. ".lock"), waited for without blocking the
-- loop; returns its fd.
local function lock(path)
  while true do
    local fd = core.flock_try(path .. ".lock")
    if fd then return fd end
    task.sleep(0.02)
  end
end

local function tar_error(what, out, err, code)
  errors.raise("io_error", string.format("layers: %s failed (exit %s): %s", what, tostring(code),
    (err ~= "" and err or out):sub(1, 2000)))
end

-- Unpack the layer file member of tar into the layer dir of diff_id
-- (under its lock; nothing to do when another unpack made it meanwhile).
-- Returns true when this call unpacked it.
local function unpack(tar, member, diff_id)
  local final = M.path(diff_id)
  local fd = lock(final)
  local ok, made = pcall(function()
    if uv.fs_stat(final) then return false end
    local tmp = final .. ".tmp-" .. rand()
    assert(uv.fs_mkdir(tmp, tonumber("755", 8)))
    local done, err = pcall(function()
      local out, eout, code = proc.run({ "bash", "-c",
        'set -o pipefail; tar -xOf "$1" "$2" | tar -x -C "$3" --numeric-owner --xattrs --xattrs-include="*"',
        "unpack", tar, member, tmp })
      if code ~= 0 then tar_error("unpacking layer " .. diff_id, out, eout, code) end
      core.overlay_whiteouts(tmp)
      local renamed, rerr = uv.fs_rename(tmp, final)
      if not renamed then errors.raise("io_error", "layers: cannot rename " .. tmp .. ": " .. tostring(rerr)) end
    end)
    if not done then
      pcall(core.rmtree, tmp)
      error(err, 0)
    end
    return true
  end)
  core.flock_release(fd)
  if not ok then error(made, 0) end
  return made
end

-- The manifest entry of the image whose config digest is id in tar.
local function manifest(tar, id)
  local out, err, code = proc.run({ "tar", "-xOf", tar, "manifest.json" })
  if code ~= 0 then tar_error("reading manifest.json of " .. tar, out, err, code) end
  local list = json.decode(out)
  local hex = id:match("^sha256:(%x+)$")
  for _, m in ipairs(type(list) == "table" and list or {}) do
    if type(m.Config) == "string" and m.Config:find(hex, 1, true) then return m end
  end
  if type(list) == "table" and #list == 1 then return list[1] end
  errors.raise("image_not_found", "layers: " .. tar .. " holds no image " .. id)
end

-- The record of image's id, layers and config (the engine's answer), so
-- a start finds them with no engine answering: <store>/../images/<name>.json.
record_path = function(image)
  return M.dir() .. "/../images/" .. image:gsub("[^%w%.%-_]", function(c) return string.format("%%%02X", c:byte()) end)
    .. ".json"
end

local recorded_ids = {} -- image -> the id last recorded by this process
record = function(image, id, diff_ids, config)
  if recorded_ids[image] == id then return end
  local path = record_path(image)
  state.mkdir_p(M.dir() .. "/../images")
  local tmp = path .. ".tmp-" .. rand()
  local f = io.open(tmp, "wb")
  if not f then return end -- a cache only: a start does not fail for it
  f:write(json.encode({ name = image, id = id, diff_ids = json.array(diff_ids), config = config }))
  f:close()
  if os.rename(tmp, path) then recorded_ids[image] = id else os.remove(tmp) end
end

M.stats = { unpacked = 0 } -- layers this process unpacked (tests read it)

--- The image as the runc backend runs it: {id=, layers = {dir, ...} the
--- topmost first, config = the image's Config (Env, WorkingDir, ...),
--- diff_ids = its layers' ids, bottom first}. An image the engine does
--- not know but the store has a record of (a commit's) is that record.
--- The image is made present first (images.ensure: the engine, the
--- cache's tar, a pull), then every missing layer is unpacked. opts:
--- engine (a rock.engine), pull (images.ensure's).
function M.ensure(image, opts)
  local e = opts.engine
  local ok, info = pcall(e.image_inspect, e, image)
  if not ok and (errors.is(info, "engine_unavailable") or errors.is(info, "connection_failed")) then
    local rec = M.recorded(image)
    if rec then return rec end
    info.message = info.message .. " (and the layer store has no record of " .. image .. ": it is unpacked " ..
      "from an engine's image once)"
    error(info, 0)
  end
  if not ok then
    if not (errors.is(info, "image_not_found") or errors.is(info, "not_found")) then error(info, 0) end
    -- an image the engine does not know but the store does (a runc commit's)
    local rec = opts.pull ~= "always" and M.recorded(image)
    if rec then return rec end
    images.ensure(image, { pull = opts.pull or "missing", engine = e })
    info = e:image_inspect(image)
  elseif opts.pull == "always" then
    images.ensure(image, { pull = "always", engine = e })
    info = e:image_inspect(image)
  end
  local diff_ids = (info.RootFS or {}).Layers or {}
  if #diff_ids == 0 then errors.raise("image_not_found", "layers: image " .. image .. " has no layers") end
  local missing = {}
  for i, d in ipairs(diff_ids) do
    if not uv.fs_stat(M.path(d)) then missing[#missing + 1] = i end
  end
  if #missing > 0 then
    state.mkdir_p(M.dir())
    local tar = images.tar_path(image)
    local own
    if not uv.fs_stat(tar) then
      own = M.dir() .. "/.save-" .. rand() .. ".tar"
      tar = own
      e:image_save(image, tar)
    end
    local done, err = pcall(function()
      local m = manifest(tar, info.Id)
      if type(m.Layers) ~= "table" or #m.Layers ~= #diff_ids then
        errors.raise("image_not_found", "layers: the manifest of " .. image .. " does not list its " ..
          #diff_ids .. " layers")
      end
      for _, i in ipairs(missing) do
        if unpack(tar, m.Layers[i], diff_ids[i]) then M.stats.unpacked = M.stats.unpacked + 1 end
      end
    end)
    if own then os.remove(own) end
    if not done then error(err, 0) end
  end
  local dirs = {}
  for i = #diff_ids, 1, -1 do dirs[#dirs + 1] = M.path(diff_ids[i]) end
  local out = { id = info.Id, layers = dirs, config = info.Config or {}, diff_ids = diff_ids }
  record(image, info.Id, diff_ids, out.config)
  return out
end

--- What the store knows of image without an engine (the last ensure's
--- answer, kept in <store>/../images/): as M.ensure returns it, or nil
--- when it has no record or a layer is gone.
function M.recorded(image)
  local f = io.open(record_path(image), "rb")
  if not f then return nil end
  local ok, rec = pcall(json.decode, f:read("a"))
  f:close()
  if not ok or type(rec) ~= "table" or rec.name ~= image or type(rec.diff_ids) ~= "table" then return nil end
  local dirs = {}
  for i = #rec.diff_ids, 1, -1 do
    local d = M.path(rec.diff_ids[i])
    if not uv.fs_stat(d) then return nil end
    dirs[#dirs + 1] = d
  end
  return { id = rec.id, layers = dirs, config = type(rec.config) == "table" and rec.config or {},
    diff_ids = rec.diff_ids }
end

--- Add a layer to the store: member of tar (an OCI layer tar), whose
--- sha256 is diff_id (a commit's new layer, runc.lua). Returns its dir.
function M.add(tar, member, diff_id)
  state.mkdir_p(M.dir())
  unpack(tar, member, diff_id)
  return M.path(diff_id)
end

--- Record image as the store's: its id, diff_ids (bottom first) and
--- config, so a start of it needs no engine (M.recorded).
function M.record(image, id, diff_ids, config)
  record(image, id, diff_ids, config)
  if recorded_ids[image] ~= id then errors.raise("io_error", "layers: cannot record " .. image) end
end

--- Forget the store's record of image (its layers stay: others may share them).
function M.forget(image)
  recorded_ids[image] = nil
  os.remove(record_path(image))
end

return M
