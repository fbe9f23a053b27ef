-- fleet.lua: starts and commands through a rock.fleet pool, in one run.
--   rock fleet.lua TMP N IMAGE   -> a report on stdout (tests/bench/fleet)
--   floor:  N containers created + started through the Engine API at
--           concurrency 4, with the binds and limits rock uses
--   pool:   N sandboxes through a pool of 3 `rock serve --backend docker`
--           nodes at concurrency 4, to rocklet ready (each start is a
--           placement, an HTTP start on the node, its container start)
--   node:   the same N on one node (a pool of that node alone)
--   commands/s: run_in_session("true") from N tasks at once, one per
--           sandbox, across the pool's N and across one node's N
-- Rounds interleave pool and node so the machine's drift hits both.
local rock = require "rock"
local engine = require "rock.engine"
local container = require "rock.backends.container"
local state = require "rock.state"
local here = arg[0]:match("(.*/)")
local S = dofile(here .. "../lua/serve_client.lua")

local tmp, n, image = arg[1], tonumber(arg[2]) or 20, arg[3] or "rock-test/debian:12"
local CONC, ROUNDS, CMDS = 4, tonumber(os.getenv("ROUNDS") or "") or 3, 200
local hr = rock.uv.hrtime
local e = engine.connect("docker")

local B = dofile(here .. "stats.lua")
local stats = B.stats
local function line(name, st, extra) B.line(name, st, extra, 44) end

-- n jobs at concurrency CONC: per-job milliseconds and the wall
local function wave(job)
  local lat, ts, sem = {}, {}, rock.semaphore(CONC)
  local t0 = hr()
  for i = 1, n do
    ts[i] = rock.spawn(function()
      sem:with(function()
        local t = hr()
        job(i)
        lat[i] = (hr() - t) / 1e6
      end)
    end)
  end
  rock.wait(ts)
  return lat, (hr() - t0) / 1e6
end

local nodes = {}
for i = 1, 3 do
  os.execute("mkdir -p " .. tmp .. "/n" .. i)
  nodes[i] = S.start{ backend = "docker", home = tmp .. "/n" .. i }
end
local fleet3 = rock.fleet.pool{ nodes = { nodes[1].url, nodes[2].url, nodes[3].url } }
local fleet1 = rock.fleet.pool{ nodes = { nodes[1].url } }
local SB = { image = image, cpus = 1, memory = "1g" }

-- warm: the image in the page cache, each node's engine detected
for _, nd in ipairs(nodes) do
  local p = rock.fleet.pool{ nodes = { nd.url } }
  p:start(SB):stop()
  p:close()
end

local floor_lat, pool_lat, node_lat = {}, {}, {}
local floor_wall, pool_wall, node_wall = {}, {}, {}
local function add(to, xs) for _, v in ipairs(xs) do to[#to + 1] = v end end

local function floor_round()
  local fakes, ids = {}, {}
  for i = 1, n do
    local fake = { id = state.new_id(), image = image }
    fake.dir = state.sandboxes_dir() .. "/" .. fake.id
    state.mkdir_p(fake.dir .. "/run")
    container.write_etc(fake, {})
    fakes[i] = fake
  end
  local lat, wall = wave(function(i)
    local config = container.config(fakes[i], { memory = 1 << 30 })
    config.Entrypoint, config.Cmd = { "/.rock/rocklet" }, { "--version" }
    ids[i] = e:container_create(nil, config)
    e:container_start(ids[i])
  end)
  local rm = {}
  for i = 1, n do rm[i] = rock.spawn(function() e:container_remove(ids[i], true); state.remove_dir(fakes[i].dir) end) end
  rock.wait(rm)
  return lat, wall
end

local function pool_round(pool)
  local sbs = {}
  local lat, wall = wave(function(i) sbs[i] = pool:start(SB) end)
  return lat, wall, sbs
end

local function stop_all(sbs)
  local ts = {}
  for i, sb in ipairs(sbs) do ts[i] = rock.spawn(function() sb:stop() end) end
  rock.wait(ts)
end

-- commands/s: one task per sandbox, CMDS calls each, all at once
local function commands(sbs)
  for _, sb in ipairs(sbs) do sb:create_session{ session = "b" } end
  local ts = {}
  local t0 = hr()
  for i, sb in ipairs(sbs) do
    ts[i] = rock.spawn(function()
      for _ = 1, CMDS do sb:run_in_session{ session = "b", command = "true" } end
    end)
  end
  rock.wait(ts)
  return #sbs * CMDS / ((hr() - t0) / 1e9)
end

local cps3, cps1 = {}, {}
local spread = {}
for _ = 1, ROUNDS do
  local l, w = floor_round()
  add(floor_lat, l); floor_wall[#floor_wall + 1] = w
  local sbs
  l, w, sbs = pool_round(fleet3)
  add(pool_lat, l); pool_wall[#pool_wall + 1] = w
  for _, sb in ipairs(sbs) do spread[sb.node_url] = (spread[sb.node_url] or 0) + 1 end
  cps3[#cps3 + 1] = commands(sbs)
  stop_all(sbs)
  l, w, sbs = pool_round(fleet1)
  add(node_lat, l); node_wall[#node_wall + 1] = w
  cps1[#cps1 + 1] = commands(sbs)
  stop_all(sbs)
end

local fw, pw, nw = stats(floor_wall), stats(pool_wall), stats(node_wall)
print(string.format("%d sandboxes at concurrency %d on docker, %s, milliseconds per start (%d rounds)", n, CONC, image, ROUNDS))
line("Engine API create+start (floor)", stats(floor_lat), string.format("  wall %7.0f", fw.p50))
line("pool of 3 rock serve nodes, to ready", stats(pool_lat), string.format("  wall %7.0f", pw.p50))
line("one rock serve node, to ready", stats(node_lat), string.format("  wall %7.0f", nw.p50))
local parts = {}
for url, c in pairs(spread) do parts[#parts + 1] = url:match(":(%d+)$") .. "=" .. c end
table.sort(parts)
print(string.format("pool wall (p50 of rounds) is %.2fx the floor's (target <= 1.1x); placed per node port: %s",
  pw.p50 / fw.p50, table.concat(parts, " ")))
local c3, c1 = stats(cps3), stats(cps1)
print(string.format("\nrun_in_session(\"true\") from %d sandboxes at once, %d each: commands/s (p50 of rounds)", n, CMDS))
print(string.format("%-44s %10.0f", "across the pool's 3 nodes", c3.p50))
print(string.format("%-44s %10.0f", "all on one node", c1.p50))

fleet3:close(); fleet1:close()
for _, nd in ipairs(nodes) do nd.stop() end
