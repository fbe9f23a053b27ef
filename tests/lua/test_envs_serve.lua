-- test_envs_serve.lua: GEM's environment API of `rock serve`
-- (/apis/v1/envs/gem/, serve/gem.lua) over real HTTP: ROCK's SDK flow on
-- the shipped games solved through it, rock's vectorized step, 4xx
-- answers with a message for bad input, and the idle lease closing an
-- environment. On the local backend, or where ROCK_TEST_BACKEND says.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local S = dofile(here .. "serve_client.lua")
local solvers = dofile(here .. "envs/solvers.lua")
local json = rock.json

local backend = os.getenv("ROCK_TEST_BACKEND") or "local"
local image = os.getenv("ROCK_TEST_IMAGE") or "local"
-- GuessTheNumber-v0-easy played through the Lua API to max turns without
-- the target, its last guess in range: the seed, the guesses and what the
-- Lua API answered, whose last reward 1 - |G - T| / 9 needs more than
-- cjson's 14 digits (the HTTP answers must match it exactly)
local lua_sb = rock.sandbox.start(T.sandbox_opts()) -- the Lua API's side of the comparisons
local SOFT = (function()
  local e = rock.envs.make("game:GuessTheNumber-v0-easy", { sandbox = lua_sb })
  for seed = 1, 50 do
    local target = tonumber(solvers.guess(e, seed):match("correct number (%d+)"))
    local guesses = {}
    for g = 10, 1, -1 do if g ~= target and #guesses < 4 then guesses[#guesses + 1] = g end end
    e:reset(seed)
    local want = {}
    for i, g in ipairs(guesses) do want[i] = table.pack(e:step("\\boxed{" .. g .. "}")) end
    local r = want[4][2]
    if tonumber(string.format("%.14g", r)) ~= r then
      e:close()
      return { seed = seed, guesses = guesses, want = want }
    end
  end
  error("no seed in 1..50 gives a soft reward past 14 digits")
end)()

-- a node's budget as a small machine's, not serve_client's boundless one:
-- 64 games fit in it (0.05 CPU and 64 MB each), and one sandbox of ROCK's
-- default 2 CPUs and 8 GB
local srv = S.start{ backend = backend, args = { "--budget-cpu", "4", "--budget-memory-gb", "8" },
  env = "ROCK_ENVHUB_DEFAULT_DOCKER_IMAGE=" .. image }

-- POST /apis/v1/envs/gem/NAME: status, the decoded answer
local function gem(name, body, raw)
  local res = srv.raw{ method = "POST", path = "/apis/v1/envs/gem/" .. name,
    body = raw or json.encode(body or {}), headers = { ["Content-Type"] = "application/json" } }
  local ok, v = pcall(json.decode, res.body)
  return res.status, ok and v or res.body
end

-- an environment over HTTP with the Lua interface, for the solvers
local function remote(env_id)
  local st, r = gem("make", { env_id = env_id })
  T.eq(st, 200, "make " .. env_id .. ": " .. json.encode(r))
  local id = r.sandbox_id
  local e = { id = id }
  function e:reset(seed)
    local s, a = gem("reset", { sandbox_id = id, seed = seed })
    assert(s == 200, json.encode(a))
    return a.observation, a.info
  end
  function e:step(action)
    local s, a = gem("step", { sandbox_id = id, action = action })
    assert(s == 200, json.encode(a))
    return a.observation, a.reward, a.terminated, a.truncated, a.info
  end
  function e:close()
    local s, a = gem("close", { sandbox_id = id })
    T.eq(s, 200); T.eq(a.sandbox_id, id)
  end
  return e
end

-- play SOFT through call(name, body) -> status, answer; compare exactly
local function play_soft(call, what)
  local st, m = call("make", { env_id = "game:GuessTheNumber-v0-easy" })
  T.eq(st, 200, what .. " make")
  T.eq((call("reset", { sandbox_id = m.sandbox_id, seed = SOFT.seed })), 200)
  for i, g in ipairs(SOFT.guesses) do
    local s, a = call("step", { sandbox_id = m.sandbox_id, action = "\\boxed{" .. g .. "}" })
    T.eq(s, 200)
    local w = SOFT.want[i]
    T.eq(a.observation, w[1], what .. " observation " .. i)
    T.ok(a.reward == w[2], string.format("%s reward %d exactly: got %.17g, want %.17g", what, i, a.reward, w[2]))
    T.eq(a.terminated, w[3]); T.eq(a.truncated, w[4])
  end
  T.eq(SOFT.want[4][1], "You have reached the maximum number of turns.")
  T.eq((call("close", { sandbox_id = m.sandbox_id })), 200)
end

T.test("list: the registered ids, with or without ROCK's {sandbox_id}", function()
  local st, r = gem("list", { sandbox_id = "whatever" })
  T.eq(st, 200)
  T.eq(#r.env_id >= 6, true)
  local seen = {}
  for _, id in ipairs(r.env_id) do seen[id] = true end
  T.ok(seen["game:Sokoban-v0-easy"] and seen["game:GuessTheNumber-v0-random"], "shipped ids listed")
  T.eq((gem("list", nil, "")), 200)
end)

T.test("ROCK's flow: make Sokoban-v0-easy, reset, step \\boxed{up}, close", function()
  local st, r = gem("make", { env_id = "game:Sokoban-v0-easy" })
  T.eq(st, 200)
  local id = r.sandbox_id
  T.eq(type(id), "string")
  local _, a = gem("reset", { sandbox_id = id, seed = 42 })
  local _, b = gem("reset", { sandbox_id = id, seed = 42 })
  T.eq(a.observation, b.observation, "same seed, same room")
  T.match(a.info.suffix, "^Here is the current board layout:\n")
  local s2, x = gem("step", { sandbox_id = id, action = "\\boxed{up}" })
  T.eq(s2, 200)
  T.match(x.observation, "^At turn 1, you ")
  T.eq(x.reward, 0); T.eq(x.terminated, false); T.eq(x.truncated, false)
  T.eq(type(x.info.suffix), "string")
  T.eq(select(2, gem("reset", { sandbox_id = id })).observation ~= nil, true, "a reset without a seed")
  local s3, c = gem("close", { sandbox_id = id })
  T.eq(s3, 200); T.eq(c.sandbox_id, id)
  local s4, d = gem("step", { sandbox_id = id, action = "\\boxed{up}" })
  T.eq(s4, 404); T.match(d.detail, "never made, or closed")
  T.eq((gem("close", { sandbox_id = id })), 404)
end)

-- An episode of id to max turns, played through the Lua API: the seed,
-- the actions and each step's results. GuessTheNumber: in-range guesses
-- from the top that miss the target; Sokoban: moves round the compass.
local function to_max_turns(id, seed)
  local e = rock.envs.make(id, { sandbox = lua_sb })
  local actions = {}
  if id:find("Guess") then
    local target = tonumber(solvers.guess(e, seed):match("correct number (%d+)"))
    local lo, hi = e:reset(seed):match("between (%d+) and (%d+)")
    for g = tonumber(hi), tonumber(lo), -1 do
      if g ~= target then actions[#actions + 1] = "\\boxed{" .. g .. "}" end
    end
  else
    for i = 1, 60 do actions[i] = "\\boxed{" .. ({ "up", "left", "down", "right" })[i % 4 + 1] .. "}" end
  end
  local obs, info = e:reset(seed)
  local want = {}
  for i, a in ipairs(actions) do
    want[i] = table.pack(e:step(a))
    if want[i][3] then break end
  end
  e:close()
  return { seed = seed, obs = obs, info = info, actions = actions, want = want }
end

-- the episode of an id: GuessTheNumber's target (its text names only the range), Sokoban's room
local function episode(e, id, seed)
  if id:find("Guess") then return (solvers.guess(e, seed)) end
  return select(2, e:reset(seed)).suffix
end

for _, id in ipairs(rock.envs.SHIPPED) do
  T.test(id .. " over HTTP: seeds, the solver wins, GEM's format error, max turns as the Lua API's", function()
    local e = remote(id)
    local a, ia = e:reset(3)
    local b, ib = e:reset(3)
    T.eq(b, a); T.eq(ib.suffix, ia.suffix)
    local first, differs = episode(e, id, 3), false
    T.eq(episode(e, id, 3), first, "same seed, same episode")
    for seed = 4, 20 do differs = differs or episode(e, id, seed) ~= first end
    T.ok(differs, "another seed, another episode")
    local o, r, term, trunc = (id:find("Guess") and solvers.guess or solvers.sokoban)(e, 9)
    T.match(o, "^Congratulations!"); T.eq(r, 1.0); T.eq(term, true); T.eq(trunc, false)
    e:reset(9)
    local o2, r2, term2, trunc2, info2 = e:step("no box \\boxed{} \\boxed{sideways}")
    T.eq(o2, id:find("Guess") and "At turn 1, you did not provide a valid guess."
      or "At turn 1, your submitted action is not valid.")
    T.eq(r2, -0.1); T.eq(term2, true); T.eq(trunc2, false); T.eq(type(info2.suffix), "string")
    -- max turns: the same episode as the Lua API's, step for step, numbers exact
    local ep = to_max_turns(id, 11)
    local obs, info = e:reset(ep.seed)
    T.eq(obs, ep.obs); T.eq(info.suffix, ep.info.suffix)
    for i, w in ipairs(ep.want) do
      local o3, r3, term3, trunc3, info3 = e:step(ep.actions[i])
      T.eq(o3, w[1], "step " .. i); T.ok(r3 == w[2], string.format("reward %d: %.17g, want %.17g", i, r3, w[2]))
      T.eq(term3, w[3]); T.eq(trunc3, w[4]); T.eq(info3.suffix, w[5].suffix)
    end
    local last = ep.want[#ep.want]
    if not last[1]:find("^Congratulations!") then -- the compass walk may solve a room, rarely
      T.eq(last[1], "You have reached the maximum number of turns.")
      T.eq(last[3], true); T.eq(last[4], true, "truncated")
    end
    e:close()
  end)
end

T.test("max turns over HTTP: GEM's truncation, the soft reward exactly the Lua API's (issue 21)", function()
  play_soft(gem, "direct")
end)

T.test("bad input: 4xx with a message, never a traceback", function()
  local cases = {
    { "make", { env_id = "game:Nope-v0" }, 404, "no environment 'game:Nope%-v0'" },
    { "make", {}, 400, "field 'env_id' must be a non%-empty string" },
    { "make", { env_id = 7 }, 400, "env_id" },
    { "reset", { sandbox_id = "rk-nope" }, 404, "no environment in sandbox 'rk%-nope'" },
    { "step", { sandbox_id = "rk-nope", action = "x" }, 404, "rk%-nope" },
    { "close", { sandbox_id = "rk-nope" }, 404, "rk%-nope" },
    { "step", { action = "x" }, 400, "sandbox_id" },
    { "step", { steps = "x" }, 400, "steps" },
  }
  for _, c in ipairs(cases) do
    local st, r = gem(c[1], c[2])
    T.eq(st, c[3], c[1] .. " " .. json.encode(c[2]))
    T.match(r.detail, c[4])
  end
  local st, r = gem("step", nil, "{not json")
  T.eq(st, 400); T.match(r.detail, "JSON")
  T.eq((gem("nope", {})), 404)
  T.eq(srv.raw{ path = "/apis/v1/envs/gem/list" }.status, 405)
  local e = remote("game:GuessTheNumber-v0-easy")
  local s1, a = gem("step", { sandbox_id = e.id, action = 5 })
  T.eq(s1, 400); T.match(a.detail, "action")
  local s2, b = gem("reset", { sandbox_id = e.id, seed = "x" })
  T.eq(s2, 400); T.match(b.detail, "seed")
  local s3, c = gem("step", { sandbox_id = e.id, action = "\\boxed{11}" })
  T.eq(s3, 200, "a step before reset plays the episode made with the environment, as GEM's")
  T.eq(c.observation, "At turn 1, you guessed 11, which is outside the range specified.")
  e:close()
end)

T.test("a vectorized step with a bad item steps nothing, holds nothing (issue 21)", function()
  local e = remote("game:GuessTheNumber-v0-hard")
  e:reset(5)
  local ok_item = { sandbox_id = e.id, action = "\\boxed{1}" }
  local cases = {
    { { ok_item, 7 }, "steps%[2%] must be an object" },
    { { ok_item, { sandbox_id = e.id } }, "steps%[2%]: field 'action' must be a string" },
    { { ok_item, { action = "x" } }, "steps%[2%]: field 'sandbox_id'" },
    { { ok_item, { ok_item } }, "steps%[2%] must be an object" },
    { { ok_item, ok_item }, "steps%[2%]: sandbox '" .. e.id:gsub("%p", "%%%0") .. "' is stepped already by steps%[1%]" },
  }
  for _, c in ipairs(cases) do
    local st, r = gem("step", { steps = c[1] })
    T.eq(st, 400, json.encode(c[1]))
    T.match(r.detail, c[2])
  end
  rock.sleep(0.2) -- a step spawned before the refusal would have landed by now
  local o = e:step("\\boxed{1}")
  T.match(o, "^At turn 1, ", "nothing was stepped by the refused calls")
  e:close()
end)

T.test("64 environments made at once on a 4-CPU 8 GB node, stepped concurrently, vectorized, none left after close", function()
  local N = 64
  local list, tasks = {}, {}
  for i = 1, N do tasks[i] = rock.spawn(remote, "game:GuessTheNumber-v0-random") end
  list = rock.wait(tasks)
  local held = srv.get("node", {}).result.reserved
  T.ok(math.abs(held.cpus - N * rock.envs.SHIPPED_CPUS) < 1e-9 and held.memory == N * 64 * 2 ^ 20,
    "all 64 held at once, 0.05 CPU and 64 MB each: " .. json.encode(held))
  tasks = {}
  for i, e in ipairs(list) do tasks[i] = rock.spawn(function() return select(2, solvers.guess(e, i)) end) end
  local rewards, errs = rock.wait(tasks)
  for i = 1, N do T.eq(errs[i], nil); T.eq(rewards[i], 1.0) end
  local steps = {}
  for i, e in ipairs(list) do
    e:reset(i)
    steps[i] = { sandbox_id = e.id, action = "\\boxed{" .. i .. "}" }
  end
  steps[N + 1] = { sandbox_id = "rk-nope", action = "x" }
  local st, r = gem("step", { steps = steps })
  T.eq(st, 200)
  T.eq(#r.results, N + 1)
  for i = 1, N do
    local o = r.results[i].observation
    T.ok(o:find("At turn 1, you guessed " .. i .. ",", 1, true) == 1 or o:find("^Congratulations"), o)
  end
  T.eq(r.results[N + 1].code, "not_found")
  for _, e in ipairs(list) do e:close() end
  local left = srv.get("sandboxes", {})
  T.eq(left.status, "Success")
  T.eq(left.result.total, 0, "no sandbox left: " .. rock.json.encode(left.result))
end)

T.test("make asks the node for little, or what its body says; what a node can never hold is refused (issue 21)", function()
  local home = T.sh("mktemp -d"):gsub("%s+$", "")
  local small = S.start{ backend = backend, args = { "--budget-cpu", "2", "--budget-memory-gb", "4" }, home = home,
    env = "ROCK_ENVHUB_DEFAULT_DOCKER_IMAGE=" .. image }
  local ok, err = pcall(function()
    local function call(name, body)
      local res = small.raw{ method = "POST", path = "/apis/v1/envs/gem/" .. name, body = json.encode(body),
        headers = { ["Content-Type"] = "application/json" } }
      return res.status, json.decode(res.body)
    end
    local function reserved() return small.get("node", {}).result.reserved end
    local N, tasks = 4, {}
    for i = 1, N do tasks[i] = rock.spawn(call, "make", { env_id = "game:GuessTheNumber-v0-hard" }) end
    local ids = {}
    for i, t in ipairs(tasks) do
      local st, m = rock.wait(t)
      T.eq(st, 200, "make " .. i .. ": " .. json.encode(m))
      ids[i] = m.sandbox_id
    end
    local r = reserved()
    T.ok(math.abs(r.cpus - N * rock.envs.SHIPPED_CPUS) < 1e-9, "each game reserves its 0.05 CPU: " .. r.cpus)
    T.eq(r.memory, N * 64 * 2 ^ 20, "and its 64 MB")
    local tasks2 = {}
    for i, id in ipairs(ids) do
      tasks2[i] = rock.spawn(function()
        return select(2, solvers.guess({
          reset = function(_, seed) return select(2, call("reset", { sandbox_id = id, seed = seed })).observation end,
          step = function(_, a)
            local _, x = call("step", { sandbox_id = id, action = a })
            return x.observation, x.reward, x.terminated, x.truncated, x.info
          end }, i))
      end)
    end
    for i, t in ipairs(tasks2) do T.eq(rock.wait(t), 1.0, "env " .. i .. " solved") end
    -- make's own request: reserved as asked; what the node can never hold is refused at once
    local st, m = call("make", { env_id = "game:Sokoban-v0-easy", cpus = 0.25, memory = "256m" })
    T.eq(st, 200, json.encode(m))
    r = reserved()
    T.ok(math.abs(r.cpus - (N * rock.envs.SHIPPED_CPUS + 0.25)) < 1e-9, "cpus as asked: " .. r.cpus)
    T.eq(r.memory, N * 64 * 2 ^ 20 + 256 * 2 ^ 20, "memory as asked")
    T.eq((call("close", { sandbox_id = m.sandbox_id })), 200)
    local s8, big = call("make", { env_id = "game:Sokoban-v0-easy", cpus = 2, memory = "8g" }) -- ROCK's sandbox defaults
    T.eq(s8, 503); T.eq(big.code, "insufficient_resources"); T.match(big.detail, "needs 8 GB, 4 free of 4")
    for _, c in ipairs({ { cpus = 0 }, { cpus = "1" }, { cpus = -1 }, { cpus = 1e9 }, { memory = "lots" },
      { memory = 0 }, { memory = -5 }, { memory = true } }) do
      c.env_id = "game:Sokoban-v0-easy"
      local sb, b = call("make", c)
      T.eq(sb, 400, json.encode(c)); T.match(b.detail, c.cpus and "field 'cpus'" or "field 'memory'")
    end
    for _, id in ipairs(ids) do T.eq((call("close", { sandbox_id = id })), 200) end
    r = reserved()
    T.ok(math.abs(r.cpus) < 1e-9, "no CPU held: " .. r.cpus); T.eq(r.memory, 0)
    T.eq(small.get("sandboxes", {}).result.total, 0, "none left")
  end)
  small.stop()
  os.execute("rm -rf '" .. home .. "'")
  if not ok then error(err, 0) end
end)

T.test("error codes map to clear statuses: a failed start 503 and nothing kept, a cancelled call 410 (issue 21)", function()
  local G = require "rock.serve.gem"
  local kept
  local function fake(start_error, env)
    kept = {}
    local entry = { id = "rk-fake", state = start_error and "stopped" or "running", start_error = start_error, sb = {} }
    local reg = {
      start = function() kept[entry.id] = true; return entry end,
      wait_started = function() return true end,
      stop = function() end, delete = function() kept[entry.id] = nil end,
      get = function(_, id) return kept[id] and entry or nil end,
      live = function() return entry.sb end, release = function() end,
    }
    if env then kept[entry.id] = true end
    return { registry = reg, gem_envs = env and { [entry.id] = env } or {} }
  end
  local req = { method = "POST" }
  local function body(t) return function() return t end end
  for _, c in ipairs({
    { rock.errors.new("sandbox_start_failed", "the engine said no"), 503, "sandbox_start_failed", "the engine said no" },
    { "a string from a backend", 503, "sandbox_start_failed", "a string from a backend" },
    { rock.errors.new("engine_unavailable", "no docker"), 503, "engine_unavailable", "no docker" },
    { rock.errors.new("timeout", "startup_timeout passed"), 504, "timeout", "startup_timeout" },
  }) do
    local st, b = G.handle(fake(c[1]), "make", req, body({ env_id = "game:Sokoban-v0-easy" }))
    T.eq(st, c[2], tostring(c[1])); T.eq(b.code, c[3]); T.match(b.detail, c[4])
    T.eq(next(kept), nil, "the failed make's entry is deleted")
  end
  local function env_raising(err) return { step = function() error(err, 0) end } end
  local st, b = G.handle(fake(nil, env_raising(rock.errors.new("cancelled", "stopped"))), "step", req,
    body({ sandbox_id = "rk-fake", action = "x" }))
  T.eq(st, 410); T.eq(b.code, "cancelled")
  st, b = G.handle(fake(nil, env_raising(rock.errors.new("git_failed", "?"))), "step", req,
    body({ sandbox_id = "rk-fake", action = "x" }))
  T.eq(st, 500, "a code nobody mapped is still a 500"); T.eq(b.code, "git_failed")
end)

T.test("a gem adapter environment over HTTP: its error 409; a step under way when it is closed 410, at once (issue 21)", function()
  if backend ~= "local" or not T.sh("command -v python3"):find("python3") then
    print("skip: a gem adapter environment in rock serve needs the local backend and python3 on the host")
    return
  end
  -- a stand-in gem module whose step takes long; ROCK_GEM_ENVS registers it at load
  local dir = T.sh("mktemp -d"):gsub("%s+$", "")
  local f = assert(io.open(dir .. "/gem.py", "w"))
  f:write([[
import time
class Slow:
    def reset(self, seed=None):
        return "ready", {}
    def step(self, action):
        if action == "boom":
            raise ValueError("bad action")
        time.sleep(1000)
    def close(self):
        pass
def make(env_id):
    return Slow()
]])
  f:close()
  local home = T.sh("mktemp -d"):gsub("%s+$", "")
  local s2 = S.start{ backend = backend, home = home,
    env = "ROCK_GEM_ENVS=test:Slow-v0 PYTHONPATH=" .. dir .. " ROCK_ENVHUB_DEFAULT_DOCKER_IMAGE=" .. image }
  local ok, err = pcall(function()
    local function call(name, body)
      local res = s2.raw{ method = "POST", path = "/apis/v1/envs/gem/" .. name, body = json.encode(body),
        headers = { ["Content-Type"] = "application/json" } }
      return res.status, json.decode(res.body)
    end
    local st, m = call("make", { env_id = "test:Slow-v0" })
    T.eq(st, 200, json.encode(m))
    T.eq(select(2, call("reset", { sandbox_id = m.sandbox_id })).observation, "ready")
    local s1, b = call("step", { sandbox_id = m.sandbox_id, action = "boom" })
    T.eq(s1, 409, "the environment's own error"); T.eq(b.code, "env_error"); T.match(b.detail, "ValueError: bad action")
    local stepping = rock.spawn(call, "step", { sandbox_id = m.sandbox_id, action = "go" })
    rock.sleep(0.5)
    local t0 = rock.uv.now()
    T.eq((call("close", { sandbox_id = m.sandbox_id })), 200)
    local s3, r = rock.wait(stepping)
    T.ok(rock.uv.now() - t0 < 4000, "the close did not wait for the step")
    T.eq(s3, 410, json.encode(r)); T.eq(r.code, "cancelled")
    T.match(r.detail, "was closed while this step ran")
    T.eq(s2.get("sandboxes", {}).result.total, 0, "none left")
  end)
  s2.stop()
  os.execute("rm -rf '" .. home .. "' '" .. dir .. "'")
  if not ok then error(err, 0) end
end)

T.test("rock.envs on a remote sandbox (as a fleet front places them): /env/* pass through", function()
  local sb = rock.sandbox.start{ base_url = srv.url, image = image }
  local e = rock.envs.make("game:GuessTheNumber-v0-easy", { sandbox = sb })
  local o, r, term = solvers.guess(e, 5)
  T.match(o, "^Congratulations!"); T.eq(r, 1.0); T.eq(term, true)
  local ok, err = pcall(e._call_raw, e, { op = "dance" })
  T.ok(not ok and err.code == "env_error", tostring(err))
  e:close()
  sb:stop()
end)

T.test("on a fleet front, make places the environment's sandbox on a node like any sandbox", function()
  local home = T.sh("mktemp -d"):gsub("%s+$", "")
  local front = S.start{ args = { "--nodes", srv.url }, home = home,
    env = "ROCK_ENVHUB_DEFAULT_DOCKER_IMAGE=" .. image }
  local ok, err = pcall(function()
    local function call(name, body)
      local res = front.raw{ method = "POST", path = "/apis/v1/envs/gem/" .. name, body = json.encode(body),
        headers = { ["Content-Type"] = "application/json" } }
      return res.status, json.decode(res.body)
    end
    local st, m = call("make", { env_id = "game:Sokoban-v0-easy" })
    T.eq(st, 200, json.encode(m))
    local node = srv.get("sandboxes", {})
    T.eq(node.result.total, 1, "the node holds the sandbox")
    local s2, r = call("reset", { sandbox_id = m.sandbox_id, seed = 4 })
    T.eq(s2, 200)
    local _, direct = gem("list", {})
    T.ok(#direct.env_id >= 6)
    local s3, x = call("step", { sandbox_id = m.sandbox_id, action = "\\boxed{left}" })
    T.eq(s3, 200); T.match(x.observation, "^At turn 1, you ")
    T.match(r.info.suffix, "^Here is the current board layout")
    T.eq((call("close", { sandbox_id = m.sandbox_id })), 200)
    play_soft(call, "through the front") -- the node's /env/call envelope keeps the reward exact too
    T.eq(srv.get("sandboxes", {}).result.total, 0, "stopped and deleted on the node")
  end)
  front.stop()
  os.execute("rm -rf '" .. home .. "'")
  if not ok then error(err, 0) end
end)

T.test("an environment idle past its lease is closed with its sandbox", function()
  local home = T.sh("mktemp -d"):gsub("%s+$", "")
  local short = S.start{ backend = backend, args = { "--lease", "1" }, home = home,
    env = "ROCK_ENVHUB_DEFAULT_DOCKER_IMAGE=" .. image }
  local function call(name, body)
    local res = short.raw{ method = "POST", path = "/apis/v1/envs/gem/" .. name, body = json.encode(body),
      headers = { ["Content-Type"] = "application/json" } }
    return res.status, json.decode(res.body)
  end
  local _, m = call("make", { env_id = "game:GuessTheNumber-v0-easy" })
  T.eq((call("reset", { sandbox_id = m.sandbox_id, seed = 1 })), 200)
  -- a refused vectorized step holds nothing: the lease still lapses (issue 21)
  T.eq((call("step", { steps = { { sandbox_id = m.sandbox_id, action = "\\boxed{1}" }, 7 } })), 400)
  rock.sleep(7) -- idle past the lease, and the reaper looks every 5 s
  local st, r = call("step", { sandbox_id = m.sandbox_id, action = "\\boxed{1}" })
  T.eq(st, 410, "closed")
  short.stop()
  T.match(r.detail, "is gone")
  T.ok(r.detail:find(m.sandbox_id, 1, true), "names the sandbox")
  os.execute("rm -rf '" .. home .. "'")
end)

lua_sb:stop()
srv.stop()
T.done()
