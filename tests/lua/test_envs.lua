-- test_envs.lua: rock.envs (the registry, the shipped GEM games, process
-- environments relayed by the rocklet) through the Lua API, on the local
-- backend, or in containers when ROCK_TEST_BACKEND/ROCK_TEST_IMAGE say so
-- (ctest's lua.test_envs.docker.busybox: the games need nothing in the image).
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local S = dofile(arg[0]:match("(.*/)") .. "envs/solvers.lua")
local envs = rock.envs

local sb = rock.sandbox.start(T.sandbox_opts())
local function make(id, extra)
  local o = { sandbox = sb }
  for k, v in pairs(extra or {}) do o[k] = v end
  return envs.make(id, o)
end

T.test("the registry lists the shipped ids; an unknown id is not_found", function()
  local l = envs.list()
  for _, id in ipairs(envs.SHIPPED) do
    local found = false
    for _, x in ipairs(l) do found = found or x == id end
    T.ok(found, id .. " listed")
  end
  T.raises("not_found", envs.make, "game:Nope-v0")
  T.raises("invalid_argument", envs.make, nil)
  envs.register("test:echo", { make = function(id) return { id = id } end })
  T.eq(envs.make("test:echo").id, "test:echo")
  T.raises("invalid_argument", envs.register, "x", { nothing = true })
end)

-- a seed where Sokoban's player stands next to a wall: moving into it
-- changes nothing, so max turns end the episode with the start's boxes
local function walled(e)
  for seed = 1, 200 do
    local _, info = e:reset(seed)
    local rows = S.board(info.suffix)
    for r, row in ipairs(rows) do
      for c, x in ipairs(row) do
        if x == "P" then
          for _, d in ipairs({ { "up", -1, 0 }, { "down", 1, 0 }, { "left", 0, -1 }, { "right", 0, 1 } }) do
            if rows[r + d[2]][c + d[3]] == "#" then return seed, d[1], rows end
          end
        end
      end
    end
  end
  error("no seed puts the player next to a wall")
end

for _, id in ipairs(envs.SHIPPED) do
  local guess = id:find("Guess") ~= nil
  local solve = guess and S.guess or S.sokoban
  T.test(id .. ": a seed gives the same episode, another seed another", function()
    local e = make(id)
    local a, ia = e:reset(7)
    local b, ib = e:reset(7)
    T.eq(b, a, "same seed, same observation")
    T.eq(ib.suffix, ia.suffix, "same seed, same suffix")
    -- GuessTheNumber's text names only the range: compare the targets won;
    -- Sokoban's room is in the suffix
    local function episode(seed)
      if guess then return (solve(e, seed)) end
      local _, info = e:reset(seed)
      return info.suffix
    end
    local first, differs = episode(7), false
    T.eq(episode(7), first, "same seed, same episode")
    for seed = 8, 20 do differs = differs or episode(seed) ~= first end
    T.ok(differs, "another seed, another episode")
    e:close()
  end)
  T.test(id .. ": the solver wins (reward 1.0, terminated, not truncated)", function()
    local e = make(id)
    for seed = 1, guess and 10 or 40 do
      local o, r, term, trunc, info, plan = solve(e, seed)
      if plan then -- solvable within its budget: the shortest plan fits max_turns
        local turns = tonumber(e:reset(seed):match("within (%d+) turns"))
        T.ok(#plan <= turns, "seed " .. seed .. ": plan of " .. #plan .. " in " .. turns .. " turns")
      end
      T.eq(r, 1.0, "reward, seed " .. seed)
      T.eq(term, true)
      T.eq(trunc, false)
      T.match(o, "^Congratulations!")
      T.eq(type(info.suffix), "string")
    end
    e:close()
  end)
  T.test(id .. ": a bad action is GEM's format error; max turns truncate with the soft reward", function()
    local e = make(id)
    e:reset(3)
    local o, r, term, trunc = e:step("no box here \\boxed{} \\boxed{sideways}")
    T.eq(r, -0.1)
    T.eq(term, true)
    T.eq(trunc, false)
    T.eq(o, guess and "At turn 1, you did not provide a valid guess."
      or "At turn 1, your submitted action is not valid.")
    -- a move that changes nothing, until max_turns
    local obs, move, want = nil, nil, 0.0
    if guess then
      obs, move = e:reset(3), "\\boxed{1000}" -- out of range: soft reward 0
    else
      local seed, d, rows = walled(e)
      obs, move = e:reset(seed), "\\boxed{" .. d:upper() .. "}"
      local on, all = 0, 0
      for _, row in ipairs(rows) do
        for _, x in ipairs(row) do
          if x == "√" then on = on + 1 end
          if x == "√" or x == "X" then all = all + 1 end
        end
      end
      want = on / all
    end
    local n = 0
    repeat
      n = n + 1
      o, r, term, trunc = e:step("thinking... \\boxed{up} then " .. move)
      if n == 1 and not guess then T.match(o, "^At turn 1, you cannot move %a+ %- you would collide with wall or other boxes!$") end
    until term or n > 100
    T.eq(o, "You have reached the maximum number of turns.")
    T.eq(term, true)
    T.eq(trunc, true)
    T.eq(r, want, "soft reward")
    T.ok(obs:find("within " .. n .. " turns", 1, true), "max_turns " .. n .. " in the text")
    e:close()
  end)
end

T.test("GEM's texts: the instructions, the suffixes", function()
  local e = make("game:GuessTheNumber-v0-easy")
  local o, info = e:reset(1)
  local ex = o:match("for example, \\boxed{(%d+)}%.\n")
  T.ok(ex and tonumber(ex) >= 1 and tonumber(ex) <= 10, "an example guess in range")
  T.eq(o, "You are playing Guess The Number.\n" ..
    "You have to guess the number between 1 and 10 (inclusive) within 4 turns.\n" ..
    "As you enter your guess, the game will provide you with hints such as the target number is 'higher' or 'lower'.\n" ..
    "You may provide your response in any manner. Only the number that is wrapped inside \\boxed{} will be " ..
    "considered as your guess, for example, \\boxed{" .. ex .. "}.\n" ..
    "As you play, the history of your guesses will be appended below. Use the information to complete " ..
    "the game before you run out of guesses.\nEnter your first guess to start the game.\n")
  T.eq(info.suffix, "Enter your next guess.")
  e:close()
  local s = make("game:Sokoban-v0-easy")
  local so, sinfo = s:reset(1)
  local d = so:match("For example: \\boxed{(%a+)} to move %a+%.\n")
  T.ok(d, "an example move")
  T.eq(so, "You are solving the Sokoban puzzle. You are the player and you need to push all boxes to targets.\n" ..
    "When you are right next to a box, you can push it by moving in the same direction.\n" ..
    "You cannot push a box through a wall or another box, and you cannot pull a box.\n" ..
    "you have to complete the puzzle within 20 turns.\n" ..
    "On the board, objects are represented as:\n" ..
    "- The player (you) appears as 'P'\n- Walls are represented with '#'\n- Boxes are marked as 'X'\n" ..
    "- Empty goals are shown with 'O'\n- Boxes on goals are visualized with '√'\n- Empty floor is shown as '_'\n\n" ..
    "To submit your move, type the command in \\boxed{}.\n" ..
    "For example: \\boxed{" .. d .. "} to move " .. d .. ".\n" ..
    "Use logic and deduction to push all boxes onto the target positions!")
  -- six rows of six cells, each row ending with a newline, as GEM renders
  T.match(sinfo.suffix, "^Here is the current board layout:\n" .. ("[#_OX√P]+ [^\n]+\n"):rep(6) .. "\nEnter your move%.$")
  s:close()
end)

T.test("GuessTheNumber: hints, repeats, out of range, and the soft reward 1 - |G - T| / (max - min)", function()
  local e = make("game:GuessTheNumber-v0-easy") -- 1..10 in 4 turns
  for seed = 1, 50 do
    local won = S.guess(e, seed)
    local target = tonumber(won:match("correct number (%d+)"))
    if target >= 5 then
      e:reset(seed)
      T.eq(e:step("\\boxed{1}"), "At turn 1, you guessed 1, and the target number is higher than 1.")
      T.eq(e:step("\\boxed{1}"), "At turn 2, you guessed 1, which has been already guessed before.")
      T.eq(e:step("\\boxed{11} \\boxed{99}"), "At turn 3, you guessed 99, which is outside the range specified.")
      local g = target == 10 and 9 or 10
      local o, r, term, trunc = e:step("\\boxed{" .. g .. "}")
      T.eq(o, "You have reached the maximum number of turns.")
      T.eq(term, true); T.eq(trunc, true)
      T.eq(r, 1 - math.abs(g - target) / 9)
      e:close()
      return
    end
  end
  error("no seed in 1..50 drew a target >= 5")
end)

T.test("GuessTheNumber: a guess is printed as GEM prints it, however long; 0 is no guess (issue 21)", function()
  local e = make("game:GuessTheNumber-v0-hard") -- 1..50 in 7 turns
  e:reset(1)
  T.eq(e:step("\\boxed{1000000000000}"), "At turn 1, you guessed 1000000000000, which is outside the range specified.")
  local long = ("9876543210"):rep(8)
  T.eq(e:step("\\boxed{3} then \\boxed{000" .. long .. "}"),
    "At turn 2, you guessed " .. long .. ", which is outside the range specified.", "80 digits, leading zeros dropped")
  T.match(e:step("\\boxed{007}"), "^At turn 3, you guessed 7, ")
  local o, r, term = e:step("\\boxed{0000}")
  T.eq(o, "At turn 4, you did not provide a valid guess."); T.eq(r, -0.1); T.eq(term, true)
  e:close()
end)

T.test("a step before any reset plays a fresh episode, as GEM's environments reset when made (issue 21)", function()
  for _, id in ipairs(envs.SHIPPED) do
    local e = make(id)
    if id:find("Guess") then -- out of every range: no luck involved
      local o, r, term, trunc, info = e:step("\\boxed{1000}")
      T.eq(o, "At turn 1, you guessed 1000, which is outside the range specified.", id)
      T.eq(r, 0); T.eq(term, false); T.eq(trunc, false); T.eq(info.suffix, "Enter your next guess.")
    else -- a room one move from solved is rare, not impossible
      local o, _, _, trunc, info = e:step("\\boxed{up}")
      T.ok(o:find("^At turn 1, you ") or o:find("^Congratulations!"), id .. ": " .. o)
      T.eq(trunc, false); T.match(info.suffix, "^Here is the current board layout:\n")
    end
    e:close()
  end
end)

T.test("Sokoban: a move says moved, a push says pushed, as the board changes", function()
  local e = make("game:Sokoban-v0-easy")
  local pushes = 0
  for seed = 1, 3 do
    local _, info = e:reset(seed)
    local plan = S.sokoban_plan(S.board(info.suffix))
    local function boxes(suffix) return (suffix:gsub("P", "_"):gsub("O", "_")) end
    for i, m in ipairs(plan) do
      local before = boxes(info.suffix)
      local o
      o, _, _, _, info = e:step("\\boxed{" .. m .. "}")
      if i < #plan then
        if boxes(info.suffix) ~= before then
          pushes = pushes + 1
          T.eq(o, "At turn " .. i .. ", you pushed a box while you moved " .. m .. ".")
        else
          T.eq(o, "At turn " .. i .. ", you moved " .. m .. ".")
        end
      else
        T.eq(o, "Congratulations! You have solved the Sokoban puzzle!")
      end
    end
  end
  T.ok(pushes > 0, "some pushes")
  e:close()
end)

-- process environments: any command speaking the JSON lines
-- (written by write_file: rock-test/busybox:1 links few applets, no mkdir)
local scratch = sb.backend == "local" and T.scratch(sb) or "/tmp"
-- the applets the scripts use, through busybox where they have no link
local APPLETS = [[
for a in head tr sleep grep; do command -v $a >/dev/null || eval "$a() { busybox $a \"\$@\"; }"; done
]]
local function sh_env(script, timeout, extra)
  T.ok(sb:write_file{ path = scratch .. "/env.sh", content = APPLETS .. script }.success ~= false)
  envs.register("test:sh", { command = { "sh", scratch .. "/env.sh" } })
  local o = { timeout = timeout }
  for k, v in pairs(extra or {}) do o[k] = v end
  return make("test:sh", o)
end

-- whether pid is gone from the sandbox (killed and reaped), within 2 s
local function gone(pid)
  local script = "for i in 1 2 3 4 5 6 7 8 9 10; do [ -e /proc/" .. pid .. " ] || { echo gone; exit; }; " ..
    APPLETS .. "sleep 0.2; done; echo there"
  return sb:execute{ command = { "sh", "-c", script } }.stdout == "gone\n"
end

T.test("a process environment in sh: reset, step (blank lines are fine), its own error", function()
  local e = sh_env([[
while read -r line; do
  case "$line" in
    *reset*) echo '{"observation":"hi","info":{"suffix":"s"}}' ;;
    *step*) echo; echo '{"observation":"o","reward":0.5,"terminated":true,"truncated":false,"info":{}}' ;;
    *) echo '{"error":"no such op"}' ;;
  esac
done]])
  local o, info = e:reset(1)
  T.eq(o, "hi"); T.eq(info.suffix, "s")
  local o2, r, term, trunc = e:step("x")
  T.eq(o2, "o"); T.eq(r, 0.5); T.eq(term, true); T.eq(trunc, false)
  T.raises("env_error", function() return e:_call_raw() end)
  e:close()
  e:close()
end)

T.test("close sends GEM's {\"op\":\"close\"} first; a close that hangs is cut at close_timeout (issue 21)", function()
  local marker = scratch .. "/closed.marker" -- a new sandbox's scratch: not there yet
  local e = sh_env([[
while read -r line; do
  case "$line" in
    *reset*) echo '{"observation":"hi","info":{}}' ;;
    *close*) echo "$line" > ']] .. marker .. [['; echo '{"closed":true}'; exit 0 ;;
  esac
done]])
  e:reset(1)
  local pid = e.pid
  e:close()
  T.eq(sb:read_file{ path = marker }.content, '{"op":"close"}\n', "the environment saw close")
  T.ok(gone(pid), "and it is gone")
  T.raises("invalid_argument", sh_env, "exit 0", 5, { close_timeout = 0 })
  local hung = sh_env([[
while read -r line; do
  case "$line" in
    *reset*) echo '{"observation":"hi","info":{}}' ;;
    *close*) sleep 1000 ;;
  esac
done]], 5, { close_timeout = 1 })
  hung:reset(1)
  local t0 = rock.uv.now()
  hung:close()
  local took = rock.uv.now() - t0
  T.ok(took >= 900 and took < 5000, "close waited its close_timeout, no more: " .. took .. " ms")
  T.ok(gone(hung.pid), "the hung environment is killed")
  local dead = sh_env("exit 0")
  t0 = rock.uv.now()
  dead:close() -- already dead: nothing to wait for
  T.ok(rock.uv.now() - t0 < 900, "a dead environment closes at once")
end)

T.test("/env/call refuses a timeout of 0 or less: a call always has one (issue 21)", function()
  local e = make("game:GuessTheNumber-v0-easy")
  for _, t in ipairs({ 0, -1, 86401, "5" }) do
    local ok, err = pcall(sb._op, sb, "env/call", { env = e.handle, request = { op = "reset", seed = 1 }, timeout = t }, 30)
    T.ok(not ok and err.code == "invalid_argument", "timeout " .. tostring(t) .. ": " .. tostring(err))
    T.match(err.message, "timeout")
  end
  T.match(e:reset(1), "^You are playing Guess The Number", "the environment is untouched")
  T.raises("invalid_argument", make, "game:GuessTheNumber-v0-easy", { timeout = 0 })
  e:close()
end)

T.test("a process environment that crashes: exit status and stderr's tail", function()
  local e = sh_env([[read -r line
i=0; while [ $i -lt 300 ]; do echo "noise line $i" >&2; i=$((i + 1)); done
printf 'bad bytes \377\376 then ' >&2; echo "going down: bad state" >&2; exit 3]])
  local ok, err = pcall(e.reset, e, 1)
  T.ok(not ok, "reset fails")
  T.eq(err.code, "sandbox_not_alive")
  T.match(err.message, "exited with status 3")
  T.match(err.message, "going down: bad state%s*$", "its last words, whole")
  T.ok(not err.message:find("noise line 0\n", 1, true), "only the end of stderr")
  T.match(err.message, "bad bytes %?%? then going down", "invalid UTF-8 shown as ?")
  T.ok(#err.message < 4096, "bounded: " .. #err.message)
  local ok2, err2 = pcall(e.step, e, "x")
  T.ok(not ok2 and err2.code == "sandbox_not_alive", "and every later call says so")
  e:close()
end)

T.test("a process environment that hangs: the call times out, the rocklet answers", function()
  local e = sh_env([[read -r line; sleep 1000]], 1)
  local t0 = rock.uv.now()
  local ok, err = pcall(e.reset, e, 1)
  T.ok(not ok and err.code == "timeout", "timeout: " .. tostring(err))
  T.ok(rock.uv.now() - t0 < 10000, "within its timeout")
  T.eq(sb:execute{ command = "echo alive" }.stdout, "alive\n")
  local ok2, err2 = pcall(e.reset, e, 1)
  T.ok(not ok2 and err2.code == "sandbox_not_alive", "killed after its timeout")
  e:close()
end)

T.test("a step that hangs times out; meanwhile the rocklet and the other environments answer (issue 21)", function()
  local e = sh_env([[
while read -r line; do
  case "$line" in
    *reset*) echo '{"observation":"ready","info":{}}' ;;
    *step*) sleep 1000 ;;
  esac
done]], 3)
  T.eq(e:reset(1), "ready")
  local other = make("game:GuessTheNumber-v0-easy")
  local t0 = rock.uv.now()
  local stepping = rock.spawn(function()
    local ok, err = pcall(e.step, e, "x")
    return ok, err, rock.uv.now() - t0
  end)
  rock.sleep(0.3) -- the step is under way, its environment asleep
  local answered = {}
  for i = 1, 5 do -- the rocklet serves its routes and the other environment during the hang
    T.eq(sb:execute{ command = { "echo", "alive" } }.stdout, "alive\n")
    T.match(other:reset(i), "^You are playing Guess The Number")
    T.match((other:step("\\boxed{1000}")), "^At turn 1, you guessed 1000")
    answered[i] = rock.uv.now() - t0
  end
  local ok, err, at = rock.wait(stepping)
  T.ok(not ok and err.code == "timeout", "the step timed out: " .. tostring(err))
  T.ok(at >= 2900 and at < 10000, "at its timeout: " .. at .. " ms")
  T.ok(at > answered[5], "the other calls were all answered during the hang: " .. answered[5] .. " ms")
  T.raises("sandbox_not_alive", e.step, e, "x")
  T.ok(gone(e.pid), "killed")
  other:close()
  e:close()
end)

T.test("a line that is not JSON is a clear error naming it; the environment is killed", function()
  local e = sh_env([[read -r line; echo 'Loading model weights...'; echo '{"observation":"late","info":{}}'; sleep 1000]])
  local ok, err = pcall(e.reset, e, 1)
  T.ok(not ok and err.code == "env_error", "env_error: " .. tostring(err))
  T.match(err.message, "not a JSON object")
  T.match(err.message, '"Loading model weights..."', "quotes the line")
  local ok2, err2 = pcall(e.reset, e, 1)
  T.ok(not ok2 and err2.code == "sandbox_not_alive", "then dead")
  T.match(err2.message, "broke the protocol")
  e:close()
end)

-- the rocklet's peak memory (kB): /execute's children are its own
local function rocklet_hwm()
  local r = sb:execute{ command = { "sh", "-c", APPLETS .. "grep VmHWM /proc/$PPID/status" } }
  return tonumber(r.stdout:match("(%d+)"))
end

T.test("100 MB of stdout: blank lines are read through, one long line is cut at 8 MiB; memory bounded", function()
  local e = sh_env([[read -r line
head -c 100000000 /dev/zero | tr '\0' '\n'
echo '{"observation":"after","info":{}}'
read -r line
head -c 100000000 /dev/zero | tr '\0' 'x'
]], 120)
  T.eq((e:reset(1)), "after")
  local ok, err = pcall(e.step, e, "x")
  T.ok(not ok and err.code == "env_error", "env_error: " .. tostring(err))
  T.match(err.message, "a line longer than 8 MiB")
  T.eq(sb:execute{ command = { "echo", "alive" } }.stdout, "alive\n")
  local hwm = rocklet_hwm()
  T.ok(hwm, "the rocklet's VmHWM read")
  if not os.getenv("ROCK_TEST_SANITIZED") then
    T.ok(hwm < 64 * 1024, "the rocklet's peak RSS stays small: " .. hwm .. " kB")
  end
  e:close()
end)

T.test("the gem adapter serves an installed gem's environment (a stand-in gem module here)", function()
  if sb:execute{ command = { "sh", "-c", "command -v python3" } }.exit_code ~= 0 then
    print("skip: no python3 in this image (the adapter needs python3 and gem)")
    return
  end
  -- the real gem package is not installable offline: a module with its API
  T.ok(sb:write_file{ path = scratch .. "/gem.py", content = [[
class Counter:
    def reset(self, seed=None):
        print("chatter from the environment")  # the adapter sends it to stderr
        self.n = seed or 0
        return "start %d" % self.n, {"suffix": "go"}
    def step(self, action):
        if action == "boom":
            raise ValueError("bad action")
        self.n += 1
        return "n=%d" % self.n, 0.5, self.n >= 3, False, {}
    def close(self):
        pass
def make(env_id):
    if env_id != "test:Counter-v0":
        raise KeyError(env_id)
    return Counter()
]] }.success ~= false)
  envs.register("test:Counter-v0", envs.gem_spec("test:Counter-v0", { env = { PYTHONPATH = scratch } }))
  local e = make("test:Counter-v0")
  local o, info = e:reset(2)
  T.eq(o, "start 2"); T.eq(info.suffix, "go")
  local o2, r, term, trunc = e:step("x")
  T.eq(o2, "n=3"); T.eq(r, 0.5); T.eq(term, true); T.eq(trunc, false)
  local ok, err = pcall(e.step, e, "boom")
  T.ok(not ok and err.code == "env_error", tostring(err))
  T.match(err.message, "ValueError: bad action")
  e:close()
  envs.register("test:Nope-v0", envs.gem_spec("test:Nope-v0", { env = { PYTHONPATH = scratch } }))
  local bad = make("test:Nope-v0")
  local ok2, err2 = pcall(bad.reset, bad, 1)
  T.ok(not ok2 and err2.code == "sandbox_not_alive", tostring(err2))
  T.match(err2.message, "exited with status 3")
  T.match(err2.message, "cannot make")
  bad:close()
end)

T.test("ROCK_GEM_ENVS registers gem adapter ids at load", function()
  local out, ok = T.sh("ROCK_GEM_ENVS='game:Sudoku-v0-easy, rg:Wordle-v0' " .. T.q(T.rock_exe()) ..
    [[ -e 'local e = require("rock").envs; for _, id in ipairs(e.list()) do print(id, (e.spec(id).command or {})[1]) end']])
  T.ok(ok, out)
  T.match(out, "game:Sudoku%-v0%-easy\tpython3\n")
  T.match(out, "rg:Wordle%-v0\tpython3\n")
  T.match(out, "game:Sokoban%-v0%-easy\tnil\n")
end)

T.test("64 environments open at once, stepped concurrently, none left after close", function()
  local list = {}
  for i = 1, 64 do list[i] = make("game:GuessTheNumber-v0-hard") end
  local tasks = {}
  for i, e in ipairs(list) do
    tasks[i] = rock.spawn(function() return select(2, S.guess(e, i)) end)
  end
  local values, errs = rock.wait(tasks)
  for i = 1, 64 do
    T.eq(errs[i], nil)
    T.eq(values[i], 1.0)
  end
  local pids = {}
  for i, e in ipairs(list) do
    pids[i] = e.pid
    e:close()
  end
  -- killed and reaped: no /proc entry left (a zombie keeps one)
  local script = "for i in 1 2 3 4 5 6 7 8 9 10; do left=; for p in " .. table.concat(pids, " ") ..
    "; do [ -e /proc/$p ] && left=\"$left $p\"; done; [ -z \"$left\" ] && break; " ..
    APPLETS .. "sleep 0.2; done; echo \"left:$left\""
  T.eq(sb:execute{ command = { "sh", "-c", script } }.stdout, "left:\n")
end)

sb:stop()
T.done()
