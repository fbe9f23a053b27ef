-- start.lua: sandbox start latency on docker, rock against the raw Engine
-- API floor, in one run.   rock start.lua N IMAGE  -> a report on stdout
--   floor:  container create + start of IMAGE through the Engine API, with
--           the same binds and limits rock uses, no waiting on anything
--   rock:   rock.sandbox.start to rocklet ready (create, start, the rocklet
--           answering on its socket)
--   fleet:  20 sandboxes started with concurrency 1, 4 and 8
--   round trip: run_in_session("true") in a container and on local, on
--           runc (and runsc with RUNSC=1) too
--   runc:   the runc backend (RUNC=0 skips it): raw `runc run --detach` of
--           the same bundle rock writes (its overlay mounted, the rocklet
--           --version as command: runc's own work), rock.sandbox.start to
--           rocklet ready, and starts per second at concurrency 4 and 16
--           next to docker's (32 sandboxes each); runsc too when installed
--           (RUNSC=1)
--   pools:  pool:claim() of an idle sandbox (rock.pool of 4, refilled
--           between claims) on docker, runc (and runsc)
local rock = require "rock"
local engine = require "rock.engine"
local container = require "rock.backends.container"
local state = require "rock.state"

local n = tonumber(arg[1]) or 20
local image = arg[2] or "rock-test/debian:12"
local hr = rock.uv.hrtime
local e = engine.connect("docker")

local here = arg[0]:match("(.*/)")
local B = dofile(here .. "stats.lua")
local stats = B.stats
local function line(name, st, extra) B.line(name, st, extra, 46) end

-- warm everything once (image cache in the page cache, gc.once, detect)
rock.sandbox.start{ backend = "docker", image = image }:stop()

-- the floor: the same ContainerConfig rock sends, create + start only
local floor = {}
for i = 1, n do
  local fake = { id = state.new_id(), image = image }
  fake.dir = state.sandboxes_dir() .. "/" .. fake.id
  state.mkdir_p(fake.dir .. "/run")
  container.write_etc(fake, {})
  local config = container.config(fake, {})
  config.Entrypoint, config.Cmd = { "/.rock/rocklet" }, { "--version" }
  local t = hr()
  local id = e:container_create(nil, config)
  e:container_start(id)
  floor[i] = (hr() - t) / 1e6
  e:container_remove(id, true)
  state.remove_dir(fake.dir)
end

local single = {}
for i = 1, n do
  local t = hr()
  local sb = rock.sandbox.start{ backend = "docker", image = image }
  single[i] = (hr() - t) / 1e6
  sb:stop()
end

local cli = {}
for i = 1, math.min(n, 10) do
  local t = hr()
  assert(os.execute("docker run --rm --network none " .. image .. " true >/dev/null"))
  cli[i] = (hr() - t) / 1e6
end

local fs, ss = stats(floor), stats(single)
print(string.format("sandbox start on docker, %s, milliseconds (n=%d)", image, n))
line("Engine API create+start (floor)", fs)
line("rock.sandbox.start to rocklet ready", ss)
line("docker run --rm image true (CLI)", stats(cli))
print(string.format("rock start p50 is %.2fx the floor (target <= 1.3x)\n", ss.p50 / fs.p50))

-- count starts on backend at concurrency conc: the latencies of those
-- that started, starts per second, the wall time, and how many failed
-- (with the first error): a start that fails on a loaded machine is
-- said, not lost
local function fleet(backend, conc, count, extra)
  local lat, sbs = {}, {}
  local sem = rock.semaphore(conc)
  local t0 = hr()
  local tasks = {}
  for i = 1, count do
    tasks[i] = rock.spawn(function()
      sem:with(function()
        local t = hr()
        local opts = { backend = backend, image = image }
        for k, v in pairs(extra or {}) do opts[k] = v end
        sbs[i] = rock.sandbox.start(opts)
        lat[#lat + 1] = (hr() - t) / 1e6
      end)
    end)
  end
  local _, errs = rock.wait(tasks)
  local wall = (hr() - t0) / 1e6
  local stops = {}
  for _, sb in pairs(sbs) do stops[#stops + 1] = rock.spawn(function() sb:stop() end) end
  rock.wait(stops)
  local failed, first = 0, nil
  for i = 1, count do if errs[i] ~= nil then failed = failed + 1; first = first or errs[i] end end
  local note = failed > 0 and string.format("  (%d failed: %s)", failed, tostring(first):sub(1, 120)) or ""
  return stats(#lat > 0 and lat or { 0 / 0 }), #lat / wall * 1000, wall, note -- none started: nan
end

for _, conc in ipairs({ 1, 4, 8 }) do
  local st, _, wall, note = fleet("docker", conc, 20)
  line(string.format("fleet of 20, concurrency %d", conc), st, string.format("  wall %7.0f%s", wall, note))
end

-- raw runc run --detach of rock's own bundle (overlay mounted), n times
local function raw_runc(rt_name)
  local runc = require "rock.backends.runc"
  local layers = require "rock.layers"
  local core = require "rock.core"
  local json = require "rock.json"
  local img = layers.ensure(image, { engine = e })
  local sb = { id = state.new_id() }
  sb.dir = state.sandboxes_dir() .. "/" .. sb.id
  for _, d in ipairs({ "", "/upper", "/work", "/bundle", "/bundle/rootfs" }) do state.mkdir_p(sb.dir .. d) end
  rock.uv.fs_chmod(sb.dir .. "/upper", tonumber("755", 8))
  container.write_etc(sb, {})
  sb.nonce = "bench"
  local config = runc.config(sb, img.config, {})
  config.process.args = json.array{ "/.rock/rocklet", "--version" }
  local f = assert(io.open(sb.dir .. "/bundle/config.json", "w"))
  f:write(json.encode(config))
  f:close()
  core.overlay_mount(img.layers, sb.dir .. "/upper", sb.dir .. "/work", sb.dir .. "/bundle/rootfs")
  local root = state.dir() .. "/raw-" .. rt_name
  local bin = rt_name == "runsc" and { "runsc", "--root", root, "--network", "none" } or { "runc", "--root", root }
  local proc = require "rock.proc"
  local out = {}
  for i = 1, n do
    local argv = {}
    for _, a in ipairs(bin) do argv[#argv + 1] = a end
    for _, a in ipairs({ "run", "--detach", "--bundle", sb.dir .. "/bundle", "raw" .. i }) do argv[#argv + 1] = a end
    local t = hr()
    local _, err, code = proc.run(argv, { null_stdio = true })
    out[i] = (hr() - t) / 1e6
    assert(code == 0, "raw " .. rt_name .. " run failed: " .. tostring(err))
    local del = {}
    for _, a in ipairs(bin) do del[#del + 1] = a end
    for _, a in ipairs({ "delete", "--force", "raw" .. i }) do del[#del + 1] = a end
    proc.run(del)
  end
  core.overlay_umount(sb.dir .. "/bundle/rootfs")
  state.remove_dir(sb.dir)
  state.remove_dir(root)
  return stats(out)
end

if os.getenv("RUNC") ~= "0" then
  local runtimes = { "runc" }
  if os.getenv("RUNSC") == "1" then runtimes[2] = "runsc" end
  for _, rt in ipairs(runtimes) do
    local extra = { runtime = rt }
    rock.sandbox.start{ backend = "runc", image = image, runtime = rt }:stop() -- the layers unpacked
    local raw = raw_runc(rt)
    local lat = {}
    for i = 1, n do
      local t = hr()
      local sb = rock.sandbox.start{ backend = "runc", image = image, runtime = rt }
      lat[i] = (hr() - t) / 1e6
      sb:stop()
    end
    local rs = stats(lat)
    print(string.format("\nsandbox start on %s (no daemon), %s, milliseconds (n=%d), docker's above", rt, image, n))
    line("raw " .. rt .. " run --detach of rock's bundle", raw)
    line("rock.sandbox.start to rocklet ready (" .. rt .. ")", rs)
    line("rock.sandbox.start to rocklet ready (docker)", ss)
    print(string.format("%s start p50 is %.1f ms (target <= 50) and %.2fx raw %s run (target <= 1.5x), " ..
      "docker's is %.1fx %s's", rt, rs.p50, rs.p50 / raw.p50, rt, ss.p50 / rs.p50, rt))
    for _, conc in ipairs({ 4, 16 }) do
      local dl, dps, _, dnote = fleet("docker", conc, 32)
      local rl, rps, _, rnote = fleet("runc", conc, 32, extra)
      line(string.format("32 starts, concurrency %2d, docker", conc), dl, string.format("  %6.1f starts/s%s", dps,
        dnote))
      line(string.format("32 starts, concurrency %2d, %s", conc, rt), rl, string.format("  %6.1f starts/s  (%.1fx)%s",
        rps, rps / dps, rnote))
    end
  end
  print()
end

local function roundtrip(sb, count)
  sb:create_session{ session = "b" }
  for _ = 1, 100 do sb:run_in_session{ session = "b", command = "true" } end
  local lat = {}
  for i = 1, count do
    local t = hr()
    sb:run_in_session{ session = "b", command = "true" }
    lat[i] = (hr() - t) / 1e3
  end
  sb:stop()
  return stats(lat)
end
local rl = roundtrip(rock.sandbox.start{ backend = "local" }, 2000)
local rd = roundtrip(rock.sandbox.start{ backend = "docker", image = image }, 2000)
local rr = os.getenv("RUNC") ~= "0" and roundtrip(rock.sandbox.start{ backend = "runc", image = image }, 2000)
local rg = os.getenv("RUNC") ~= "0" and os.getenv("RUNSC") == "1" and
  roundtrip(rock.sandbox.start{ backend = "runc", runtime = "runsc", image = image }, 2000)
print("\ncommand round trip, run_in_session(\"true\"), microseconds (n=2000)")
line("local backend", rl)
line("docker container", rd)
if rr then line("runc container", rr) end
if rg then line("runsc (gVisor) container", rg) end
print(string.format("container round trip p50 is %.2fx the local one (target <= 1.5x)", rd.p50 / rl.p50))

-- warm pools (rock.pool): a claim of an idle sandbox (its rocklet asked
-- whether it answers), the pool refilled between claims (what a run sees
-- while its pool keeps up)
local function pool_claims(opts)
  opts.image, opts.size = image, 4
  local pool = rock.pool(opts)
  local function idle4() while pool:stats().idle < 4 or pool:stats().starting > 0 do rock.sleep(0.01) end end
  local claims = {}
  for i = 1, n do
    idle4()
    local t = hr()
    local sb = pool:claim()
    claims[i] = (hr() - t) / 1e6
    sb:execute{ command = { "true" } } -- it answers
    sb:stop()
  end
  pool:close()
  return stats(claims)
end
local pools = { { "docker", { backend = "docker" } } }
if os.getenv("RUNC") ~= "0" then
  pools[#pools + 1] = { "runc", { backend = "runc" } }
  if os.getenv("RUNSC") == "1" then pools[#pools + 1] = { "runsc", { backend = "runc", runtime = "runsc" } } end
end
print(string.format("\nwarm pool (size 4), pool:claim() of an idle sandbox, milliseconds (n=%d)", n))
for _, p in ipairs(pools) do
  local st = pool_claims(p[2])
  line("pool:claim() on " .. p[1], st, string.format("  (target p50 <= 5 ms)"))
end
line("rock.sandbox.start to rocklet ready (docker)", ss)
