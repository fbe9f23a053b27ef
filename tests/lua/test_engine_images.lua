-- test_engine_images.lua: the image cache on docker. save -> remove ->
-- ensure loads the tar back; LRU eviction under a small budget; the pull
-- policy; pulls that fail are retried, then reported; swebench names.
-- The images here are tags of rock-test/busybox:1 named by T.tmp_image
-- (so the leak check sees any left behind); the cache dir is under this
-- test's $ROCK_HOME.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")

local images = rock.images
images.configure{ keep = { "rock-test/busybox:1", "rock-test/debian:12" } } -- the fixtures
local docker = rock.engine.connect("docker")
local BASE = "rock-test/busybox:1"

local function make(what) return T.tag_image(docker, BASE, what) end

local function present(name)
  local ok = pcall(docker.image_inspect, docker, name)
  return ok
end

local function exists(path) return rock.uv.fs_stat(path) ~= nil end

T.test("swebench_name", function()
  T.eq(images.swebench_name("django__django-11099"),
    "swebench/sweb.eval.x86_64.django_1776_django-11099:latest")
  T.eq(images.swebench_name("Astropy__Astropy-12907"),
    "swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest")
  T.raises("invalid_argument", images.swebench_name, "")
end)

T.test("ensure finds an image already in the engine", function()
  T.eq(images.ensure(BASE, { pull = "never" }), "present")
  T.ok(images.list()[BASE], "recorded in the index")
end)

T.test("save, remove, then ensure restores it from the tar cache", function()
  local name = make("saved")
  local tar = images.save(name)
  T.ok(exists(tar), "tar written: " .. tar)
  T.ok(images.list()[name].tar_size > 0, "tar size indexed")
  images.remove(name, { keep_tar = true })
  T.ok(not present(name), "removed from the engine")
  T.eq(images.ensure(name, { pull = "never" }), "loaded from cache")
  T.ok(present(name), "back in the engine")
  images.remove(name)
  T.ok(not present(name) and not exists(tar), "gone from engine and cache")
  T.eq(images.list()[name], nil, "and from the index")
end)

T.test("pull=never with nothing anywhere is a clear image_not_found", function()
  local err = T.raises("image_not_found", images.ensure, T.tmp_image("nowhere"), { pull = "never" })
  T.match(err.message, "pull is 'never'")
end)

T.test("a failing pull is retried, then reported with the engine's reason", function()
  images.configure{ pull_retries = 2, pull_backoff = 0.05 }
  -- a registry on a closed loopback port: refused at once, no traffic out
  local err = T.raises("engine_error", images.ensure, "127.0.0.1:9/rock-test-none:1")
  T.match(err.message, "after 2 attempt")
  T.raises("invalid_argument", images.ensure, BASE, { pull = "sometimes" })
end)

T.test("LRU eviction under a small budget keeps the recently used", function()
  local a, b, c = make("lru-a"), make("lru-b"), make("lru-c")
  for _, n in ipairs({ a, b, c }) do images.save(n) end
  local idx = images.list()
  local one = idx[a].engine_size + idx[a].tar_size
  -- use a again: b is now the least recently used
  images.ensure(a, { pull = "never" })
  local evicted = images.evict{ budget = 2.5 * one }
  T.eq(#evicted, 1, "one evicted")
  T.eq(evicted[1], b)
  T.ok(not present(b) and not exists(images.tar_path(b)), "b gone (engine and tar)")
  T.ok(present(a) and present(c), "a and c kept")
  -- a budget set once applies on every ensure
  images.configure{ budget = 1.5 * one }
  images.ensure(c, { pull = "never" })
  images.configure{ budget = false }
  T.ok(present(c) and not present(a), "ensure evicted a, kept c (just used)")
  for _, n in ipairs({ a, b, c }) do pcall(images.remove, n) end
  T.ok(not present(c), "cleaned up")
end)

--- A registry on 127.0.0.1 serving the image saved in tar (registry.py);
--- calls fn(port) and stops it.
local function with_registry(tar, extra, fn)
  local out = rock.uv.new_pipe()
  local proc = rock.uv.spawn("python3", {
    args = { arg[0]:match("(.*/)") .. "../images/registry.py", tar, table.unpack(extra) },
    stdio = { nil, out, 2 },
  }, function() end)
  local port = rock.await(function(done)
    out:read_start(function(_, data) out:read_stop(); done(tonumber(data)) end)
    return function() out:read_stop() end
  end)
  local ok, err = pcall(fn, port)
  proc:kill("sigkill")
  out:close()
  proc:close()
  if not ok then error(err, 0) end
end

T.test("pull from a registry, with progress; a failing pull is retried", function()
  -- an image with a layer the engine does not have: random bytes, imported
  local src = T.tmp_image("src")
  local dir = require("rock.state").dir()
  local out, ok = T.sh("cd " .. dir .. " && mkdir -p layer && head -c 3000000 /dev/urandom > layer/blob" ..
    " && tar -C layer -cf layer.tar . && docker import layer.tar " .. src)
  T.ok(ok, out)
  local tar = images.save(src)
  images.remove(src, { keep_tar = true })
  T.sh("rm -rf " .. dir .. "/layer " .. dir .. "/layer.tar")
  with_registry(tar, {}, function(port)
    local name = string.format("127.0.0.1:%d/%s", port, T.tmp_image("pulled"))
    local seen = {}
    T.eq(images.ensure(name, { on_progress = function(p) seen[#seen + 1] = p end }), "pulled")
    T.ok(present(name), "pulled into the engine")
    local max_total, last_current = 0, 0
    for _, p in ipairs(seen) do
      max_total = math.max(max_total, p.total or 0)
      last_current = math.max(last_current, p.current or 0)
    end
    T.ok(max_total > 1000000, "progress reported the layer size: " .. max_total)
    T.ok(last_current > 0, "progress reported bytes done")
    images.remove(name)
    T.ok(not present(name), "removed")
  end)
  -- the engine itself asks twice before it gives up on a 500: two
  -- failures make one failed attempt of ours
  with_registry(tar, { "--fail-first", "2" }, function(port)
    images.configure{ pull_retries = 3, pull_backoff = 0.05 }
    local name = string.format("127.0.0.1:%d/%s", port, T.tmp_image("retried"))
    local how, attempts = images.ensure(name)
    T.eq(how, "pulled")
    T.eq(attempts, 2, "attempts")
    images.remove(name)
  end)
  -- the rate limit: 1 pull per 0.4 s window, so the third pull starts
  -- no sooner than 0.8 s after the first
  with_registry(tar, {}, function(port)
    images.configure{ pulls_per_minute = 1, pull_rate_window = 0.4 }
    local name = string.format("127.0.0.1:%d/%s", port, T.tmp_image("rated"))
    local t0 = rock.uv.now()
    for _ = 1, 3 do T.eq(images.ensure(name, { pull = "always" }), "pulled") end
    T.ok(rock.uv.now() - t0 >= 800, "pulls spaced by the rate limit: " .. (rock.uv.now() - t0) .. " ms")
    images.configure{ pulls_per_minute = 30, pull_rate_window = 60 }
    images.remove(name)
  end)
  images.remove(src) -- the tar
  T.ok(not exists(tar), "tar removed")
end)

T.test("warmup recipe: makes images present, reports failures", function()
  local name = make("warm")
  local tar = images.save(name)
  images.remove(name, { keep_tar = true })
  local list = require("rock.state").dir() .. "/images.txt"
  local f = assert(io.open(list, "w"))
  f:write("# images for the run\n", name, "\n", BASE, "\n")
  f:close()
  local recipe = arg[0]:match("(.*/)") .. "../../recipes/warmup.lua"
  local out, ok = T.sh(T.rock_exe() .. " " .. recipe .. " --pull never --file " .. list)
  T.ok(ok, out)
  T.match(out, "2 image%(s%), 2 ready, 0 failed")
  T.ok(present(name), "loaded by warmup")
  out, ok = T.sh(T.rock_exe() .. " " .. recipe .. " --pull never " .. T.tmp_image("absent"))
  T.ok(not ok, "exit status 1 when an image is missing")
  T.match(out, "1 failed")
  images.remove(name)
  os.remove(list)
  T.ok(not exists(tar), "tar removed")
end)

T.done()
