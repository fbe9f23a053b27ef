-- Run by tests/embed/embed.c: the embedder's own C function and rock's
-- sandbox API side by side in one host.
local rock = require "rock"
assert(embedder_answer() == 42, "the embedder's C function is visible")
local sb = rock.sandbox.start{ backend = "local" }
sb:create_session{ session = "s" }
local obs = sb:run_in_session{ session = "s", command = "echo embedded $((6*7))" }
assert(obs.output == "embedded 42\n", obs.output)
sb:stop()
print("1 passed, 0 failed")
