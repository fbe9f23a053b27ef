-- test_serve_hostile2.lua: `rock serve` under a hostile round after issues
-- 15/16. A failed start's log line quotes client-supplied fields (the
-- image name): every message is escaped at the log's sink (c/core/log.c),
-- so no newline or terminal escape a client sends reaches the log raw.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local S = dofile(here .. "serve_client.lua")

T.test("hostile start fields forge no log line and send no terminal escape", function()
  local srv = S.start{ backend = "docker" }
  local ok, err = pcall(function()
    local evil = "x\nrock warn serve: FORGED line\r\27[31mred\27]0;title\7\194\155x"
    -- a start whose failure quotes a field (the memory size, the image name)
    for _, body in ipairs({ { image = "rock-test/debian:12", memory = evil },
                            { image = "rock-test-tmp/none:1\n\27[31m", memory = "1g" } }) do
      local env = srv.post("start_async", body)
      T.eq(env.status, "Success", "the start is taken: " .. rock.json.encode(env))
    end
    T.wait_until("the failure is logged", function() return srv.log():find("FORGED", 1, true) end, 30)
  end)
  local log = srv.log()
  srv.kill("TERM"); srv.wait() -- (removes the log)
  if not ok then error(err, 0) end
  for line in log:gmatch("[^\n]+") do
    T.ok(line:match("^rock %a+ [%w_]+: ") or line:match("^rock serve: "), "a line of rock's: " .. line)
  end
  T.ok(not log:find("\nrock warn serve: FORGED", 1, true), "no forged line: " .. log)
  T.ok(not log:find("\27", 1, true), "no ESC")
  T.ok(not log:find("\r", 1, true), "no CR")
  T.ok(not log:find("\7", 1, true), "no BEL")
  T.ok(not log:find("\194\155", 1, true), "no C1 CSI")
  T.ok(log:find("x\\nrock warn serve: FORGED line\\r\\x1b[31mred\\x1b]0;title\\x07\\xc2\\x9bx", 1, true),
    "escaped, readable: " .. log)
end)

T.test("the sink escapes every message, whoever logs it", function()
  -- a recipe's own rock.log line goes through the same sink
  local out = T.sh("ROCK_LOG=info " .. T.rock_exe() .. " -e 'require(\"rock\").log(\"warn\", \"a\\nrock error x: forged\\27[0m caf\\195\\169 \\\\ ok\")' 2>&1")
  T.eq(out, "rock warn lua: a\\nrock error x: forged\\x1b[0m caf\195\169 \\ ok\n", "one line, UTF-8 and backslashes kept")
end)

T.done()
