-- test_engine_api.lua: the Engine API client (c/engine, rock.engine) on
-- docker and on podman's compatible socket, call by call.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")

local BASE = "rock-test/busybox:1"

for _, kind in ipairs({ "docker", "podman" }) do
  local e = rock.engine.connect(kind)
  local label = "rock.test=" .. (os.getenv("ROCK_TEST_TAG") or "t")

  local function create(cmd)
    return e:container_create(nil, { Image = BASE, Cmd = cmd,
      Labels = { ["rock.test"] = os.getenv("ROCK_TEST_TAG") or "t" },
      HostConfig = { NetworkMode = "none" } })
  end

  T.test(kind .. ": ping, version, image inspect and list", function()
    T.ok(e:ping(), "ping")
    local v = e:version()
    T.ok(v.ApiVersion, "version has ApiVersion")
    local info = e:image_inspect(BASE)
    T.match(info.Id, "sha256:")
    local found = false
    for _, im in ipairs(e:image_list({ reference = { "rock-test/busybox" } })) do
      for _, tag in ipairs(im.RepoTags or {}) do found = found or tag:find("rock-test/busybox", 1, true) end
    end
    T.ok(found, "image_list filtered by reference")
    T.raises("image_not_found", e.image_inspect, e, "rock-test-tmp/none:1")
  end)

  T.test(kind .. ": create, start, wait, logs, remove", function()
    local id = create({ "sh", "-c", "echo out; echo err >&2; exit 7" })
    e:container_start(id)
    T.eq(math.tointeger(e:container_wait(id, 30)), 7, "exit code from wait")
    local logs = e:container_logs(id, 10) -- two streams: their order is the engine's
    T.ok(logs == "out\nerr\n" or logs == "err\nout\n", "logs: " .. logs)
    local listed = e:container_list(label)
    T.eq(#listed, 1, "listed by label")
    e:container_remove(id)
    T.eq(#e:container_list(label), 0, "removed")
    e:container_remove(id) -- already gone: fine
  end)

  T.test(kind .. ": stop and kill a running container", function()
    local a, b = create({ "sleep", "300" }), create({ "sleep", "300" })
    e:container_start(a)
    e:container_start(b)
    T.eq(e:container_inspect(a).State.Running, true)
    e:container_stop(a, 1)
    T.eq(e:container_inspect(a).State.Running, false, "stopped")
    e:container_kill(b, "KILL")
    e:container_wait(b, 30)
    T.eq(e:container_inspect(b).State.Running, false, "killed")
    e:container_remove(a, true)
    e:container_remove(b, true)
  end)

  T.test(kind .. ": errors carry the engine's words", function()
    local err = T.raises("not_found", e.container_inspect, e, "rock-test-no-such-container")
    T.match(err.message:lower(), "no such container")
    T.raises("invalid_argument", e.call, e, "container_inspect", {})
    T.match(T.raises("invalid_argument", e.call, e, "no_such_op").message, "unknown engine operation")
  end)
end

T.done()
