-- test_engine_dagger.lua: recipes/dagger_eval.lua on the demo tasks
-- (recipes/demo: three Python repos with a real bug each) in docker,
-- every trajectory graded as SWE-bench grades it: the failing replay
-- student (recipes/demo/replay-fail.jsonl) and the oracle teacher, two
-- rounds, beta0 1, exp decay 0.5, seed 19. Round 1 (beta 1) is the
-- teacher's: all three resolved. Round 2 (beta 0.5) draws, for seed 19,
-- textutil the student's alone (finish, not resolved), pager the
-- teacher's alone (resolved) and calc teacher, student, then the
-- teacher's script run out (budget: dropped by finish-only). Needs the
-- engines fixture (tests/engines/up builds the demo images).
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local json = rock.json

local repo = T.sh("cd " .. here .. "../.. && pwd"):gsub("%s+$", "")
local demo = repo .. "/recipes/demo/"
local out = T.sh("mktemp -d " .. (os.getenv("TMPDIR") or "/tmp") .. "/rock-dagger-engine.XXXXXX"):gsub("%s+$", "") .. "/out"

local function jsonl(path)
  local list = {}
  for l in io.lines(path) do list[#list + 1] = json.decode(l) end
  return list
end

T.test("docker: two graded rounds on the demo tasks, exact executed-by, resolved and finish-only", function()
  local log, ok = T.sh(string.format("%s %s/recipes/dagger_eval.lua --instances %stasks.jsonl --out %s "
    .. "--student replay --student-replay %sreplay-fail.jsonl --teacher oracle --rounds 2 --seed 19 "
    .. "--backend docker --workers 3 2>&1", T.rock_exe(), repo, demo, out, demo))
  T.ok(ok, log)
  T.match(log, "round 1 %(beta 1%)")
  T.match(log, "resolved +3 %(100.0%%%)")
  T.match(log, "round 2 %(beta 0.5%)")
  local want = {
    { ["demo__calc-1"] = "teacher,teacher#finish#true", ["demo__textutil-1"] = "teacher,teacher#finish#true",
      ["demo__pager-1"] = "teacher,teacher#finish#true" },
    { ["demo__calc-1"] = "teacher,student#budget", ["demo__textutil-1"] = "student,student#finish#false",
      ["demo__pager-1"] = "teacher,teacher#finish#true" },
  }
  for r = 1, 2 do
    local s = json.decode(T.read(string.format("%s/rounds/%d/summary.json", out, r)))
    local resolved = 0
    for _, tr in ipairs(jsonl(string.format("%s/rounds/%d/trajectories.jsonl", out, r))) do
      T.eq(tr.sandbox.backend, "docker")
      local by = {}
      for i, rec in ipairs(tr.dagger.turns) do by[i] = rec.executed_by end
      local got = table.concat(by, ",") .. "#" .. tr.termination_reason
      if tr.termination_reason == "finish" then got = got .. "#" .. tostring(tr.eval.resolved) end
      T.eq(got, want[r][tr.instance_id], tr.instance_id .. " round " .. r)
      if tr.eval.resolved then resolved = resolved + 1 end
    end
    T.eq(s.resolved, resolved)
    T.ok(math.abs(s.resolved_rate - resolved / 3) < 1e-12, "resolved rate")
    -- a record says how its trajectory ended and whether it was resolved
    local by_ep = {}
    for _, tr in ipairs(jsonl(string.format("%s/rounds/%d/trajectories.jsonl", out, r))) do by_ep[tr.episode_id] = tr end
    for _, line in ipairs(jsonl(string.format("%s/rounds/%d/dataset.jsonl", out, r))) do
      T.eq(line.resolved, by_ep[line.episode_id].eval.resolved == true, line.episode_id)
      T.eq(line.termination_reason, by_ep[line.episode_id].termination_reason)
    end
  end
  local s2 = json.decode(T.read(out .. "/rounds/2/summary.json"))
  T.eq(s2.records.dropped_trajectories.budget, 1)
  T.eq(s2.records.added, 4); T.eq(s2.records.dropped, 2)
  T.eq(#jsonl(out .. "/dataset.jsonl"), 6 + 4, "round 1's six records and round 2's four finish ones")
  T.eq(rock.sandbox.live_count(), 0)
end)

T.sh("rm -rf " .. out:match("(.*)/out"))
T.done()
