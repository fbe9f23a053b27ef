-- test_engine_serve_crash.lua: issue 15 item 10. `rock serve` killed with
-- -9 in the middle of its starts left containers in Created and dirs with
-- only their owner mark; the restarted server neither adopted nor removed
-- them, gc spared them (their owner, the service, lives again) and no
-- lease ever ended them. Here a server is killed at every point of a
-- start (ROCK_TEST_PAUSE_START holds the start there), and at random
-- times during many starts: the restarted server serves what runs and
-- removes the rest; once it stops, gc leaves nothing.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local S = dofile(here .. "serve_client.lua")
local state = require "rock.state"
local json = rock.json

local IMAGE = "rock-test/debian:12"
local ROCK = T.rock_exe()
local docker = rock.engine.connect("docker")
local home = os.getenv("ROCK_HOME")

local function containers(id) return docker:container_list("rock.sandbox=" .. id) end
local function dir_of(id) return state.sandboxes_dir() .. "/" .. id end

-- The containers whose rock.dir is under this test's ROCK_HOME.
local function ours()
  local out = {}
  for _, c in ipairs(docker:container_list("rock.sandbox")) do
    if ((c.Labels or {})["rock.dir"] or ""):sub(1, #home + 1) == home .. "/" then out[#out + 1] = c end
  end
  return out
end

local wait_until = T.wait_until

-- points of a start (backends/container.lua), what a kill there leaves,
-- and whether the restarted server serves the sandbox again
local POINTS = {
  { "dir", "a dir with only its owner mark" },
  { "record", "a record, no container (its create may land later)" },
  { "created", "a container Created, its id not recorded" },
  { "recorded", "a container Created, recorded" },
  { "started", "a running container, its rocklet's pid not recorded", true },
  { "pid", "a running container whose start never saw the rocklet answer", true },
  { "ready", "a started sandbox the server never marked running", true },
}

for _, p in ipairs(POINTS) do
  local point, what, served = p[1], p[2], p[3]
  T.test("issue15-10: kill -9 at '" .. point .. "' (" .. what .. "): the restarted server " ..
      (served and "serves it" or "removes it"), function()
    local srv = S.start{ backend = "docker", env = "ROCK_TEST_PAUSE_START=" .. point }
    local env = srv.post("start_async", { image = IMAGE })
    T.eq(env.status, "Success", json.encode(env))
    local id = env.result.sandbox_id
    local ok, err = pcall(wait_until, "the start pauses at " .. point, function()
      return srv.log():find("start paused at " .. point, 1, true) ~= nil
    end, 60)
    srv.kill("KILL")
    srv.wait(10)
    if not ok then error(err, 0) end
    T.ok(rock.uv.fs_stat(dir_of(id)), "the kill left its dir")
    local srv2 = S.start{ backend = "docker" }
    local done, err2 = pcall(function()
      if served then
        local st = srv2.get("get_status", { sandbox_id = id })
        T.eq(st.status, "Success", json.encode(st))
        T.eq(st.result.is_alive, true)
        local r = srv2.post("execute", { sandbox_id = id, command = { "echo", "adopted" } })
        T.eq(r.result.stdout, "adopted\n")
      else
        T.eq(srv2.get("get_status", { sandbox_id = id }).status, "Failed")
        wait_until("nothing of " .. id .. " is left", function()
          return #containers(id) == 0 and not rock.uv.fs_stat(dir_of(id))
        end, 45)
      end
      -- a gc pass meanwhile leaves what the server serves
      T.sh(ROCK .. " gc")
      T.eq(#containers(id), served and 1 or 0, "containers of " .. id .. " after gc")
    end)
    srv2.stop()
    local out = T.sh(ROCK .. " gc")
    T.eq(#containers(id), 0, "containers of " .. id .. " once the server stopped: " .. out)
    T.ok(not rock.uv.fs_stat(dir_of(id)), "no dir of " .. id)
    if not done then error(err2, 0) end
  end)
end

T.test("issue15-10: kill -9 during 6 starts, 3 times at random: nothing is left", function()
  math.randomseed(os.time())
  for round = 1, 3 do
    local srv = S.start{ backend = "docker" }
    local ids = {}
    for i = 1, 6 do
      local env = srv.post("start_async", { image = IMAGE })
      T.eq(env.status, "Success", json.encode(env))
      ids[i] = env.result.sandbox_id
    end
    local ms = math.random(50, 1500)
    rock.sleep(ms / 1000)
    srv.kill("KILL")
    srv.wait(10)
    local srv2 = S.start{ backend = "docker" }
    local done, err = pcall(function()
      for _, id in ipairs(ids) do -- each is served, or goes
        local st = srv2.get("get_status", { sandbox_id = id })
        if st.status == "Success" then
          T.eq(st.result.is_alive, true, "round " .. round .. " (" .. ms .. " ms): " .. id .. " adopted")
        end
      end
    end)
    srv2.stop()
    local out = T.sh(ROCK .. " gc")
    T.eq(#ours(), 0, "round " .. round .. " (killed after " .. ms .. " ms): containers left; gc: " .. out)
    T.eq(#T.listdir(state.sandboxes_dir()), 0, "round " .. round .. ": dirs left")
    if not done then error(err, 0) end
  end
end)

T.done()
