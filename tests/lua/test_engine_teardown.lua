-- test_engine_teardown.lua: rock.teardown's policies on docker: stop and
-- delete; keep a failed task's sandbox (gc spares it); remove the per-task
-- image after use, unless ROCK_KEEP_IMAGES=1; all applied on errors too.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")

local docker = rock.engine.connect("docker")
local BASE = "rock-test/busybox:1"

local function per_task_image(what) return T.tag_image(docker, BASE, what) end

local function present(name) return (pcall(docker.image_inspect, docker, name)) end

T.test("default: stop and delete, the task's results returned", function()
  local container
  local a, b = rock.teardown.run({}, { backend = "docker", image = BASE }, function(sb)
    container = sb.container
    return sb:execute{ command = { "echo", "hi" } }.stdout, 7
  end)
  T.eq(a, "hi\n")
  T.eq(b, 7)
  T.raises("not_found", docker.container_inspect, docker, container)
end)

T.test("on error: stopped, the error re-raised with what teardown did", function()
  local container
  local ok, err = pcall(rock.teardown.run, {}, { backend = "docker", image = BASE }, function(sb)
    container = sb.container
    error({ code = "task_failed", message = "agent gave up" })
  end)
  T.ok(not ok)
  T.eq(err.code, "task_failed")
  T.eq(err.teardown.stopped, true)
  T.raises("not_found", docker.container_inspect, docker, container)
end)

T.test("keep_on_failure keeps the sandbox; gc spares it; the success case still deletes", function()
  local kept
  local ok, err = pcall(rock.teardown.run, { keep_on_failure = true },
    { backend = "docker", image = BASE, auto_clear_seconds = 120 }, function(sb)
      kept = sb
      error("boom")
    end)
  T.ok(not ok and tostring(err):find("boom"), "error re-raised")
  T.eq(kept:is_alive(), true)
  T.eq(kept.kept, true)
  T.eq(#rock.gc.run().removed, 0)
  T.eq(rock.sandbox.live_count(), 0, "not in the exit sweep")
  kept:stop()
  local other
  rock.teardown.run({ keep_on_failure = true }, { backend = "docker", image = BASE }, function(sb) other = sb end)
  T.eq(other.state, "stopped")
end)

T.test("remove_image removes the per-task image after use, also on failure", function()
  local img = per_task_image("task1")
  rock.teardown.run({ remove_image = true }, { backend = "docker", image = img }, function(sb)
    T.eq(sb:execute{ command = { "true" } }.exit_code, 0)
  end)
  T.ok(not present(img), "image removed")
  img = per_task_image("task2")
  pcall(rock.teardown.run, { remove_image = true }, { backend = "docker", image = img },
    function() error("x") end)
  T.ok(not present(img), "image removed after a failure")
end)

T.test("ROCK_KEEP_IMAGES=1 keeps the image", function()
  local img = per_task_image("kept")
  local out, ok = T.sh("ROCK_KEEP_IMAGES=1 " .. T.rock_exe() .. " -e '" ..
    "local r = require(\"rock\").teardown.run({ remove_image = true }, " ..
    "{ backend = \"docker\", image = \"" .. img .. "\" }, function() end)'")
  T.ok(ok, out)
  T.ok(present(img), "image kept")
  docker:image_remove(img)
end)

T.test("bad use raises invalid_argument", function()
  T.raises("invalid_argument", rock.teardown.run, {}, { backend = "docker", image = BASE })
end)

-- issue 7 item 17: SIGTERM to a host stops its containers before it exits
-- (the local backend's cases are in test_signals.lua)
T.test("issue7-17: SIGTERM to a host removes its containers", function()
  local path = os.getenv("ROCK_HOME") .. "/recipe-term.lua"
  local f = assert(io.open(path, "w"))
  f:write("local rock = require 'rock'\n",
    "local sb = rock.sandbox.start{ backend = 'docker', image = '", BASE, "' }\n",
    "print(sb.container, sb.dir) io.stdout:flush()\nrock.sleep(600)\n")
  f:close()
  local p = assert(io.popen("exec " .. rock.uv.exepath() .. " " .. path .. " & echo $!; wait $!; echo rc=$?"))
  local pid = tonumber(p:read("l"))
  local container, dir = (p:read("l") or ""):match("^(%S+)%s+(%S+)$")
  local ok, err = pcall(function()
    T.ok(container, "the host started a container")
    T.eq(docker:container_inspect(container).State.Running, true)
    rock.uv.kill(pid, "sigterm")
    T.eq(p:read("l"), "rc=143", "exit status")
    T.raises("not_found", docker.container_inspect, docker, container)
    T.ok(not rock.uv.fs_stat(dir), "sandbox dir removed")
  end)
  rock.uv.kill(pid, "sigkill")
  p:close()
  os.remove(path)
  if container then pcall(docker.container_remove, docker, container, true) end
  if not ok then error(err, 0) end
end)

T.done()
