-- test_engine_root.lua: an image whose USER is not root starts and works on
-- docker: the rocklet (the container's init) always runs as root (User
-- "0"), commands default to root as in ROCK, and a session may still run
-- as the image's user through remote_user. The image is rock-test/debian:12
-- committed with USER nobody, named by T.tmp_image (the leak check sees
-- it if left behind) and removed at the end.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")

local docker = rock.engine.connect("docker")
local image = T.tmp_image("user-nobody")

-- docker commit --change 'USER nobody' of a container of the base image
local out, ok = T.sh("cid=$(docker create rock-test/debian:12 true) && " ..
  "docker commit --change 'USER nobody' $cid " .. image .. " >/dev/null; rc=$?; " ..
  "docker rm $cid >/dev/null; exit $rc")
assert(ok, "making " .. image .. ": " .. out)

T.test("the image's USER is nobody", function()
  T.eq(docker:image_inspect(image).Config.User, "nobody")
end)

T.test("a USER nobody image starts; the rocklet and commands are root", function()
  local sb = rock.sandbox.start{ backend = "docker", image = image }
  local ok2, err = pcall(function()
    T.eq(sb:execute{ command = { "id", "-u" } }.stdout, "0\n")
    sb:create_session{}
    T.eq(sb:run_in_session{ command = "id -un" }.output, "root\n")
    sb:write_file{ path = "/root/f", content = "written" }
    T.eq(sb:read_file{ path = "/root/f" }.content, "written")
    -- the image's user is still there for a session that asks for it
    sb:create_session{ session = "nb", remote_user = "nobody" }
    T.eq(sb:run_in_session{ session = "nb", command = "id -un; id -u" }.output, "nobody\n65534\n")
    local r = sb:arun{ command = "echo job; exit 2", mode = "nohup" }
    T.eq(r.exit_code, 2)
    T.eq(r.output, "job\n")
  end)
  sb:stop()
  if not ok2 then error(err, 0) end
end)

docker:image_remove(image, true)
T.done()
