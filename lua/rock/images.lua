--- rock.images: the image cache, its policy (the mechanism, an LRU index
-- shared under a lock, is c/images/).
--   rock.images.ensure(image, {pull="missing"|"always"|"never"})
--     1. present in the engine: done;  2. a tar in the cache dir
--     (`docker save` format): load it;  3. pull, with retries and a
--     machine-wide pull-rate limit.
--   rock.images.save(image)     keep a tar of it in the cache dir
--   rock.images.remove(image)   from the engine, the cache dir and the index
--   rock.images.evict()         drop least-recently-used images and tars
--                               until the disk budget holds
-- Settings (rock.images.configure{...} or the environment):
--   cache_dir  ROCK_IMAGE_CACHE   default <state dir>/images
--   budget     ROCK_IMAGE_BUDGET  bytes ("200g" too) for images + tars; none by default
--   pull_retries 3, pull_backoff 2 (s, doubling), pulls_per_minute 30,
--   max_pulls 2 (at once); pulls_per_minute also from ROCK_PULLS_PER_MINUTE;
--   keep: images never evicted
local core = require "rock.core"
local task = require "rock.task"
local errors = require "rock.errors"
local engine_mod = require "rock.engine"
local state = require "rock.state"
local uv = require "luv"
local trim = require("rock.text").trim

local M = {}

--- A size in bytes, a whole number, from a number or "200g", "512m",
--- "100k", "1.5t" (units of 1024; "g", "gb" and "gib" alike); nil for
--- nil, false or "". A negative, infinite or NaN number, one past 2^62,
--- or any other text raises invalid_argument; what names the field.
function M.parse_size(v, what)
  if v == nil or v == false or v == "" then return nil end
  local function bad()
    errors.raise("invalid_argument", string.format("%s: bad size '%s' (bytes, or a number with k, m, g or t)",
      what or "size", tostring(v)))
  end
  local n
  if type(v) == "number" then
    n = v
  elseif type(v) == "string" then
    local digits, unit = trim(v:lower()):match("^([%d%.]+)%s*([kmgt]?)i?b?$") -- trimmed first: %s*...%s*$ backtracks
    if not digits or not tonumber(digits) then bad() end
    n = tonumber(digits) * ({ [""] = 1, k = 1024, m = 1024 ^ 2, g = 1024 ^ 3, t = 1024 ^ 4 })[unit]
  else
    bad()
  end
  if n ~= n or n < 0 or n > 2 ^ 62 then bad() end
  return math.tointeger(math.floor(n))
end
local function bytes(v) return M.parse_size(v, "images budget") end

local settings
local function cfg()
  if not settings then
    settings = {
      cache_dir = os.getenv("ROCK_IMAGE_CACHE"),
      budget = bytes(os.getenv("ROCK_IMAGE_BUDGET")),
      pull_retries = 3, pull_backoff = 2,
      pulls_per_minute = tonumber(os.getenv("ROCK_PULLS_PER_MINUTE") or "") or 30,
      pull_rate_window = 60, -- seconds: "a minute", shorter in tests
      max_pulls = 2,
      keep = {}, -- images never evicted (base images shared by many tasks)
    }
    if not settings.cache_dir or settings.cache_dir == "" then
      settings.cache_dir = state.dir() .. "/images"
    end
    state.mkdir_p(settings.cache_dir)
  end
  return settings
end

--- Change settings (any of the fields above); returns them.
function M.configure(t)
  local c = cfg()
  for k, v in pairs(t or {}) do c[k] = (k == "budget") and bytes(v) or v end
  state.mkdir_p(c.cache_dir)
  return c
end

--- The SWE-bench evaluation image of an instance:
--- "django__django-11099" -> "swebench/sweb.eval.x86_64.django_1776_django-11099:latest".
function M.swebench_name(instance_id)
  if type(instance_id) ~= "string" or instance_id == "" then
    errors.raise("invalid_argument", "swebench_name: instance_id must be a non-empty string")
  end
  return "swebench/sweb.eval.x86_64." .. instance_id:gsub("__", "_1776_"):lower() .. ":latest"
end

local function engine_of(opts)
  if opts and opts.engine then return opts.engine end
  local kind = engine_mod.detect()
  if not kind then
    errors.raise("engine_unavailable", "images: no container engine answers (docker, podman)")
  end
  return engine_mod.connect(kind)
end

--- The tar file that holds image in the cache dir (it may not exist).
function M.tar_path(image) return core.images_tar_path(cfg().cache_dir, image) end

local function file_size(path)
  local st = uv.fs_stat(path)
  return st and st.size or nil
end

--- The image's size in the engine, or nil when the engine has no such
--- image; any other failure (engine down) raises.
local function engine_size(e, image)
  local ok, info = pcall(e.image_inspect, e, image)
  if ok then return info.Size end
  if errors.is(info, "image_not_found") or errors.is(info, "not_found") then return nil end
  error(info, 0)
end

-- Pulls are limited per process: at most max_pulls at once and
-- pulls_per_minute started in any minute (registries rate-limit); a pull
-- that would exceed it waits.
local pull_sem
local pull_starts = {}
local function pull_slot()
  local c = cfg()
  local window = c.pull_rate_window * 1000
  while true do
    local now = uv.now()
    while pull_starts[1] and now - pull_starts[1] >= window do table.remove(pull_starts, 1) end
    if #pull_starts < c.pulls_per_minute then break end
    task.sleep((window - (now - pull_starts[1])) / 1000 + 0.001)
  end
  pull_starts[#pull_starts + 1] = uv.now()
end

local function pull(e, image, opts)
  local c = cfg()
  pull_sem = pull_sem or task.semaphore(c.max_pulls)
  return pull_sem:with(function()
    local last, tries = nil, 0
    for attempt = 1, c.pull_retries do
      pull_slot()
      tries = attempt
      local ok, err = pcall(e.image_pull, e, image, opts.on_progress)
      if ok then return tries end
      if task.cancelled(err) then error(err, 0) end -- the caller's cancel: not tried again
      last = err
      if errors.is(err, "image_not_found") or errors.is(err, "engine_unavailable") then
        break -- retrying will not help
      end
      if attempt < c.pull_retries then task.sleep(c.pull_backoff * 2 ^ (attempt - 1)) end
    end
    if errors.is(last) then
      last.message = string.format("%s (after %d attempt(s))", last.message,
        tries)
    end
    error(last, 0)
  end)
end

--- Make image present in the engine. opts: pull ("missing" default,
--- "always", "never"), engine (a rock.engine; default: the one that
--- answers), on_progress (pull progress). Returns how: "present",
--- "loaded from cache" or "pulled", and for a pull the attempts it took.
--- Raises image_not_found when it can't.
function M.ensure(image, opts)
  opts = opts or {}
  if type(image) ~= "string" or image == "" then
    errors.raise("invalid_argument", "images.ensure: image must be a non-empty string")
  end
  local policy = opts.pull or "missing"
  if policy ~= "missing" and policy ~= "always" and policy ~= "never" then
    errors.raise("invalid_argument", "images.ensure: pull must be missing, always or never")
  end
  local e = engine_of(opts)
  local c = cfg()
  local how, attempts
  local size = policy ~= "always" and engine_size(e, image) -- one inspect per path
  if size then
    how = "present"
  else
    local tar = M.tar_path(image)
    if policy ~= "always" and file_size(tar) then
      e:image_load(tar)
      size = engine_size(e, image)
      if not size then
        errors.raise("image_not_found", "images.ensure: " .. tar .. " did not hold " .. image)
      end
      how = "loaded from cache"
    elseif policy == "never" then
      errors.raise("image_not_found", "image " .. image .. " is not in the " .. e.kind ..
        " engine nor in the cache (" .. tar .. "), and pull is 'never'")
    else
      attempts = pull(e, image, opts)
      size = engine_size(e, image)
      how = "pulled"
    end
  end
  core.images_touch(c.cache_dir, image, size or 0, file_size(M.tar_path(image)) or 0)
  if c.budget then M.evict({ engine = e, keep = { image } }) end
  return how, attempts
end

--- Keep a tar of image in the cache dir; returns its path.
function M.save(image, opts)
  local e = engine_of(opts)
  local c = cfg()
  state.mkdir_p(c.cache_dir)
  local tar = M.tar_path(image)
  local tmp = tar .. ".part"
  e:image_save(image, tmp)
  local ok, err = os.rename(tmp, tar)
  if not ok then os.remove(tmp); errors.raise("io_error", "images.save: " .. tostring(err)) end
  core.images_touch(c.cache_dir, image, engine_size(e, image) or 0, file_size(tar) or 0)
  return tar
end

--- Keep the archive at path (a `docker save` tar of image, made by the
--- caller on the cache's file system) as image's tar in the cache: moved
--- there and indexed. Returns the cache's path.
function M.add_tar(image, path)
  local c = cfg()
  state.mkdir_p(c.cache_dir)
  local tar = M.tar_path(image)
  local ok, err = os.rename(path, tar)
  if not ok then errors.raise("io_error", "images.add_tar: " .. tostring(err)) end
  core.images_touch(c.cache_dir, image, 0, file_size(tar) or 0)
  return tar
end

--- Remove image from the engine (unless opts.keep_engine), its tar (unless
--- opts.keep_tar) and the index. An image a container still uses stays in
--- the engine and the call raises conflict.
function M.remove(image, opts)
  opts = opts or {}
  local e = engine_of(opts)
  local c = cfg()
  if not opts.keep_engine then
    local ok, err = pcall(e.image_remove, e, image, opts.force)
    if not ok and not errors.is(err, "image_not_found") then error(err, 0) end
  end
  if not opts.keep_tar then os.remove(M.tar_path(image)) end
  local tar = file_size(M.tar_path(image))
  local size = engine_size(e, image)
  if not tar and not size then core.images_forget(c.cache_dir, image)
  else core.images_touch(c.cache_dir, image, size or 0, tar or 0) end
end

--- Evict least-recently-used images (engine copy and tar) until the index
--- fits in the budget. opts: budget (default the setting), keep (names not
--- to evict), engine. Images in use by a container are skipped. Returns
--- the names evicted.
function M.evict(opts)
  opts = opts or {}
  local c = cfg()
  local budget = bytes(opts.budget) or c.budget
  if not budget then return {} end
  local e = engine_of(opts)
  local keep = {}
  for _, list in ipairs({ c.keep, opts.keep or {} }) do
    for _, name in ipairs(list) do keep[#keep + 1] = name end
  end
  local evicted = {}
  for _, image in ipairs(core.images_plan(c.cache_dir, budget, keep)) do
    local ok = pcall(M.remove, image, { engine = e })
    if ok then evicted[#evicted + 1] = image end
  end
  return evicted
end

--- The index: {image = {last_used=, engine_size=, tar_size=}}.
function M.list() return core.images_index(cfg().cache_dir) end

return M
