-- stock_lua.lua: require "rock" from Debian's lua5.4 (rock.core on
-- LUA_CPATH): the same loop and API, with calls outside a task driving the
-- loop themselves, and tasks through rock.run.
local rock = require "rock"
local uv = require "luv"
assert(rock.uv == uv, "rock.uv is the luv module")

-- outside any task: calls wait by running the loop
local sb = rock.sandbox.start{ backend = "local" }
sb:create_session{ session = "s" }
local obs = sb:run_in_session{ session = "s", command = "echo stock $((1+1))" }
assert(obs.output == "stock 2\n", obs.output)

-- luv timers and rock calls share the loop
local fired = false
local timer = uv.new_timer()
timer:start(5, 0, function() fired = true; timer:close() end)
rock.sleep(0.05)
assert(fired, "luv timer fired during rock.sleep")

-- tasks through rock.run
local status = rock.run(function()
  local a = rock.spawn(function() return sb:run_in_session{ session = "s", command = "echo a" }.output end)
  assert(rock.wait(a) == "a\n")
end)
assert(status == 0)
sb:stop()
-- the last call closes a timer in its own callback: the process must still
-- exit cleanly (luv 1.44 crashed at lua_close on the pending close)
rock.sleep(0.01)
print("4 passed, 0 failed")
