-- test_engine_fleet_agent.lua: the SWE agent recipe across a fleet of
-- three `rock serve --backend docker` nodes (issue 17: "the agent recipe
-- across three nodes resolves the demo tasks"): recipes/swe_agent.lua
-- --nodes, run as a user runs it, places every sandbox (the agent's and the
-- grader's) through one rock.fleet pool; the oracle resolves every demo
-- task, the trajectories name the nodes they ran on (spread: all three),
-- and nothing is left on the nodes after. Also --nodes @FILE with a token
-- per node. Needs the engines fixture and the demo images.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local S = dofile(here .. "serve_client.lua")
local json = rock.json

local demo = here .. "../../recipes/demo/"
local rock_exe = T.rock_exe()
local root = T.sh("mktemp -d /tmp/rock-fleet-agent.XXXXXX"):gsub("%s+$", "")
local TOKEN = "fleet-agent-test-token"

-- three docker nodes, each its own ROCK_HOME, all with one token
local nodes = {}
for i = 1, 3 do
  T.must("mkdir -p " .. T.q(root .. "/n" .. i))
  nodes[i] = S.start{ backend = "docker", home = root .. "/n" .. i, token = TOKEN, args = { "--token", TOKEN } }
end

local function recipe(args, env)
  return T.sh(string.format("%s %s %s %s", env or "", rock_exe, T.q(here .. "../../recipes/swe_agent.lua"), args))
end

local function trajectories(dir)
  local list = {}
  for l in io.lines(dir .. "/trajectories.jsonl") do list[#list + 1] = json.decode(l) end
  return list
end

-- every node holds nothing: its registry lists no live sandbox, its report reserves nothing
local function nodes_empty()
  for i, srv in ipairs(nodes) do
    T.wait_until("node " .. i .. " holds nothing", function()
      local env = srv.get("node")
      return env.status == "Success" and env.result.running == 0 and env.result.reserved.cpus == 0
    end, 30)
  end
end

T.test("--nodes URL,URL,URL: the oracle resolves every demo task, spread over the three nodes", function()
  local out = root .. "/out-list"
  local urls = nodes[1].url .. "," .. nodes[2].url .. "," .. nodes[3].url
  local log, ok = recipe(string.format("--instances %s --policy oracle --out %s --workers 3 --nodes %s",
    T.q(demo .. "tasks.jsonl"), T.q(out), urls), "ROCK_API_TOKEN=" .. TOKEN)
  T.ok(ok, log)
  local summary = json.decode(T.read(out .. "/summary.json"))
  local trajs = trajectories(out)
  T.ok(#trajs >= 3, "a trajectory per task")
  T.eq(summary.resolved, #trajs, "every task resolved: " .. log)
  local on = {}
  for _, tr in ipairs(trajs) do
    T.eq(tr.sandbox.backend, "fleet", tr.instance_id)
    T.ok(type(tr.sandbox.node) == "string" and tr.sandbox.node:match("^http://127%.0%.0%.1:%d+$"),
      tr.instance_id .. " names its node: " .. tostring(tr.sandbox.node))
    on[tr.sandbox.node] = true
  end
  local distinct = 0
  for _ in pairs(on) do distinct = distinct + 1 end
  T.eq(distinct, 3, "spread: three tasks at once land on three nodes")
  nodes_empty()
end)

T.test("--nodes @FILE with a token per line (and ROCK_NODES), nothing left after", function()
  local file = root .. "/nodes.txt"
  T.write(file, "# the fleet\n" .. nodes[1].url .. " " .. TOKEN .. "\n\n" ..
    nodes[2].url .. " " .. TOKEN .. "  # second\n" .. nodes[3].url .. " " .. TOKEN .. "\n")
  local out = root .. "/out-file"
  local log, ok = recipe(string.format("--instances %s --policy oracle --out %s --workers 2 --strategy pack",
    T.q(demo .. "tasks.jsonl"), T.q(out)), "ROCK_NODES=@" .. T.q(file))
  T.ok(ok, log)
  local summary = json.decode(T.read(out .. "/summary.json"))
  T.eq(summary.resolved, #trajectories(out), log)
  nodes_empty()
  -- a wrong token: every start refused, a clear error per task, nothing started
  out = root .. "/out-bad"
  log = recipe(string.format("--instances %s --policy oracle --out %s --nodes %s",
    T.q(demo .. "tasks.jsonl"), T.q(out), nodes[1].url), "ROCK_API_TOKEN=wrong")
  local bad = trajectories(out)
  T.ok(#bad >= 3, "every task kept: " .. log)
  for _, tr in ipairs(bad) do
    T.eq(tr.termination_reason, "aborted", tr.instance_id)
    T.eq(tr.exit_status, "unauthorized", tr.instance_id)
    T.match(tr.error.message, "every node refuses the token", tr.instance_id)
  end
  nodes_empty()
end)

for _, srv in ipairs(nodes) do srv.stop() end
T.must("rm -rf " .. T.q(root))
T.done()
