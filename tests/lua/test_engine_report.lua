-- test_engine_report.lua: the report of a real demo run (issue 22). The
-- agent recipe works the demo tasks in docker (a replay that solves two
-- and fails one, graded by pytest as SWE-bench grades) and writes
-- DIR/report/ itself; that site, opened from file:// in headless
-- Chromium, holds every task with its summary.json status, its
-- provenance, a page per trajectory with every step, the patch diff
-- beside the gold patch, each FAIL_TO_PASS / PASS_TO_PASS test, the eval
-- log's test section and the sandbox's start phases; no page fetches
-- anything but itself, and none renders blank.
-- Needs the engines fixture and the demo images (recipes/demo/build-image).
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local B = dofile(here .. "browser.lua")
local json = rock.json

local demo = here .. "../../recipes/demo/"
local root = T.sh("mktemp -d " .. (os.getenv("TMPDIR") or "/tmp") .. "/rock-report-engine.XXXXXX"):gsub("%s+$", "")
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- the replay: the solving actions for calc and pager, the failing ones for textutil
local function by_id(path)
  local m = {}
  for l in io.lines(path) do
    local r = json.decode(l)
    m[r.instance_id] = l
  end
  return m
end
local solve, fail = by_id(demo .. "replay-solve.jsonl"), by_id(demo .. "replay-fail.jsonl")
T.write(root .. "/replay.jsonl", table.concat({ solve["demo__calc-1"], fail["demo__textutil-1"], solve["demo__pager-1"] }, "\n") .. "\n")

local out = root .. "/run"
local log, ok = T.sh(string.format("%s %s --instances %s --policy replay --replay %s --out %s --backend docker --workers 3",
  q(T.rock_exe()), q(here .. "../../recipes/swe_agent.lua"), q(demo .. "tasks.jsonl"), q(root .. "/replay.jsonl"), q(out)))
local site = out .. "/report"

local trajs, gold = {}, {}
for l in io.lines(demo .. "tasks.jsonl") do
  local t = json.decode(l)
  gold[t.instance_id] = t
end

T.test("the demo run wrote its report", function()
  T.ok(ok, "swe_agent ran: " .. log)
  for l in io.lines(out .. "/trajectories.jsonl") do
    local tr = json.decode(l)
    trajs[#trajs + 1] = tr
  end
  table.sort(trajs, function(a, b) return a.instance_id < b.instance_id end)
  T.eq(#trajs, 3)
  T.ok(T.read(site .. "/index.html"), "index.html")
  for _, tr in ipairs(trajs) do T.ok(T.read(site .. "/t/" .. tr.instance_id .. ".html"), tr.instance_id .. "'s page") end
  local info = json.decode(T.read(out .. "/run.json"))
  T.eq(info.recipe, "swe_agent.lua")
  T.ok(info.started and info.finished and info.finished >= info.started, "started and finished")
end)

T.test("the index: every task with its status, the provenance, filters, nothing fetched", function()
  local summary = json.decode(T.read(out .. "/summary.json"))
  local resolved = {}
  for _, id in ipairs(summary.resolved_ids) do resolved[id] = true end
  T.eq(#summary.resolved_ids, 2, "two solved: " .. json.encode(summary.resolved_ids))
  local r = B.run{
    { ["goto"] = B.url(site .. "/index.html") },
    { requests = true },
    { eval = "Array.from(document.querySelectorAll('#tasks tbody tr')).map(function(r){return [r.dataset.id, r.dataset.status, " ..
             "r.cells[1].innerText, r.dataset.reason, r.dataset.node]})" },
    { eval = "document.querySelector('dl.kv').innerText" },
    { eval = "[document.getElementById('n-resolved').textContent, document.getElementById('n-unresolved').textContent]" },
    { screenshot = root .. "/index.png" },
    { ["goto"] = B.url(site .. "/index.html", "#status=unresolved") },
    { eval = "Array.from(document.querySelectorAll('#tasks tbody tr:not([hidden])')).map(function(r){return r.dataset.id}).join(' ')" },
  }
  T.eq(json.encode(r[2]), json.encode({ B.url(site .. "/index.html") }), "fetched nothing")
  T.eq(#r[3], 3, "every task")
  for _, row in ipairs(r[3]) do
    local want = resolved[row[1]] and "resolved" or "unresolved"
    T.eq(row[2], want, row[1])
    T.eq(row[3], (want == "resolved" and "✓ " or "✗ ") .. want)
    T.eq(row[4], "finish")
    T.eq(row[5], "docker", "the node column says the backend on one machine")
  end
  T.match(r[4], "recipe\nswe_agent%.lua")
  T.match(r[4], "policy\nreplay")
  T.match(r[4], "backend\ndocker")
  T.match(r[4], "%-%-workers=3")
  T.match(r[4], "wall time\n[%d.]+s")
  T.match(r[4], "rock\n%d+%.%d+")
  T.match(r[4], "report written\n%d+%-%d+%-%d+ [%d:]+ UTC by rock %d+%.%d+")
  T.eq(r[5][1], "2")
  T.eq(r[5][2], "1")
  T.ok(r[6].colors >= 8 and r[6].nonwhite > 0.03, "not blank: " .. json.encode(r[6]))
  T.eq(r[8], "demo__textutil-1")
end)

T.test("each trajectory page: steps, diff beside gold, tests, eval log, phases", function()
  for _, tr in ipairs(trajs) do
    local page = site .. "/t/" .. tr.instance_id .. ".html"
    local r = B.run{
      { ["goto"] = B.url(page) },
      { requests = true },
      { eval = "[document.querySelectorAll('.step').length, document.querySelectorAll('#patch .a').length, " ..
               "document.querySelectorAll('#gold .a').length, document.querySelectorAll('#tests tbody tr').length, " ..
               "!!document.getElementById('test-log'), document.querySelector('dl.kv').innerText, " ..
               "document.querySelectorAll('.step > pre.act').length]" },
      { key = "j" }, { key = "j" }, { eval = "location.hash" },
      { screenshot = root .. "/t.png" },
    }
    T.eq(json.encode(r[2]), json.encode({ B.url(page) }), tr.instance_id .. " fetched nothing")
    local v = r[3]
    T.eq(v[1], #tr.steps, "every step of " .. tr.instance_id)
    T.eq(v[7], #tr.steps, "every step's action")
    T.ok(v[2] > 0, "the patch's added lines")
    T.ok(v[3] > 0, "the gold patch's added lines")
    local g = gold[tr.instance_id]
    T.eq(v[4], #g.FAIL_TO_PASS + #g.PASS_TO_PASS, "a row a test")
    T.eq(v[5], true, "the eval log's test section")
    T.match(v[6], "image rock%-demo/")
    T.match(v[6], "backend docker")
    T.match(v[6], "rocklet_ready success %d+s")
    T.eq(r[6], #tr.steps >= 2 and "#step-2" or "#step-1")
    T.ok(r[7].colors >= 8 and r[7].nonwhite > 0.03, "not blank: " .. json.encode(r[7]))
  end
end)

os.execute("rm -rf " .. q(root))
T.done()
