-- test_pool.lua: rock.pool (issue 23, item 4), warm sandboxes on the
-- backend ctest names (ROCK_TEST_BACKEND: local by default;
-- lua.test_pool.docker and .runc run it in containers; run.sh fails a
-- run that leaves a container or a runc mount). Real starts throughout: claims
-- under concurrency (never one sandbox twice), refill, failing starts
-- (the local rocklet /bin/false, as test_group does), an idle member that
-- dies (found by a look; killed right before its claim: never handed
-- out), a caller's deadline during a claim, close, and a pool whose host
-- is killed with -9 (rock gc leaves nothing).
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local state = require "rock.state"
local uv = rock.uv

local OPTS = T.sandbox_opts()
local ROCKLET = rock.core.rocklet_path()
local ROCK = T.rock_exe()

local function opts(extra)
  local o = T.sandbox_opts(extra)
  o.check_every = o.check_every or 0.2
  return o
end

local function sandbox_dirs()
  local n = 0
  for _ in pairs(T.listdir(state.sandboxes_dir())) do n = n + 1 end
  return n
end

local function settled(pool, idle)
  T.wait_until("the pool holds " .. idle .. " idle", function()
    local s = pool:stats()
    return s.idle == idle and s.starting == 0
  end, 60)
end

T.test("a pool fills, claims hand over idle sandboxes at once, and it refills", function()
  local pool = rock.pool(opts{ size = 3 })
  settled(pool, 3)
  T.eq(rock.sandbox.live_count(), 3)
  local a = pool:try_claim()
  T.ok(a and a.state == "running", "an idle one at once")
  local r = a:execute{ command = { "echo", "claimed" } }
  T.eq(r.stdout, "claimed\n")
  local b = pool:claim{ timeout = 0 }
  T.ok(b.id ~= a.id, "two claims, two sandboxes")
  settled(pool, 3) -- refilled behind the claims
  T.eq(pool:stats().claimed, 2)
  pool:close()
  T.eq(rock.sandbox.live_count(), 2, "close stops the idle ones, not the claimed")
  a:stop(); b:stop()
  T.raises("invalid_argument", pool.claim, pool)
  pool:close() -- safe twice
  T.eq(rock.sandbox.live_count(), 0)
end)

T.test("40 claims at once on a pool of 4: each sandbox handed out once, every claim served", function()
  local pool = rock.pool(opts{ size = 4 })
  settled(pool, 4)
  local got, ts = {}, {}
  for i = 1, 40 do ts[i] = rock.spawn(function() got[i] = pool:claim{ timeout = 120 } end) end
  rock.wait(ts)
  local seen = {}
  for i = 1, 40 do
    T.ok(got[i] and got[i].state == "running", "claim " .. i .. " served")
    T.ok(not seen[got[i].id], "sandbox " .. got[i].id .. " handed out once")
    seen[got[i].id] = true
  end
  local stops = {}
  for i = 1, 40 do stops[i] = rock.spawn(function() got[i]:stop() end) end
  rock.wait(stops)
  settled(pool, 4)
  pool:close()
  T.eq(rock.sandbox.live_count(), 0)
end)

-- a start that fails for real: the local rocklet is /bin/false; in a
-- container the image does not exist
local function failing_opts(extra)
  if OPTS.backend == "local" then
    uv.os_setenv("ROCK_ROCKLET", "/bin/false")
    return opts(extra)
  end
  local o = { image = "rock-test-tmp/no-such-image:1", pull = "never" }
  for k, v in pairs(extra) do o[k] = v end
  return opts(o)
end

T.test("starts that fail: a claim times out naming the error, nothing is left; a pool recovers", function()
  local before = sandbox_dirs()
  local pool = rock.pool(failing_opts{ size = 2 })
  local err = T.raises("timeout", pool.claim, pool, { timeout = 1.5 })
  T.match(err.message, "the last start failed")
  T.ok(pool:stats().failures >= 1, "failures counted")
  uv.os_setenv("ROCK_ROCKLET", ROCKLET)
  pool:close()
  T.wait_until("failed starts removed what they made", function() return sandbox_dirs() == before end, 30)
  -- a pool whose first starts fail and later succeed serves its claims
  if OPTS.backend == "local" then
    uv.os_setenv("ROCK_ROCKLET", "/bin/false")
    local p2 = rock.pool(opts{ size = 1 })
    rock.sleep(0.3)
    uv.os_setenv("ROCK_ROCKLET", ROCKLET) -- the next try (after its backoff) starts
    local sb = p2:claim{ timeout = 30 }
    T.eq(sb.state, "running")
    sb:stop()
    p2:close()
  end
  T.eq(rock.sandbox.live_count(), 0)
end)

T.test("an idle sandbox that dies is dropped and replaced, never claimed", function()
  local pool = rock.pool(opts{ size = 2 })
  settled(pool, 2)
  local victim = pool.idle[1]
  -- killed from outside: its rocklet (local), its container (an engine's)
  if victim.backend == "local" then
    uv.kill(victim.pid, "sigkill")
  elseif victim.backend == "runc" then
    uv.kill(victim.init_pid, "sigkill") -- the container's PID 1, from the host
  else
    rock.engine.connect(victim.backend):container_remove(victim.container, true)
  end
  T.wait_until("the dead one replaced", function()
    local s = pool:stats()
    local still = false
    for _, m in ipairs(pool.idle) do if m == victim then still = true end end
    return not still and s.idle == 2
  end, 30)
  local a, b = pool:claim(), pool:claim()
  T.ok(a ~= victim and b ~= victim, "the dead one is not handed out")
  T.eq(a:execute{ command = { "true" } }.exit_code, 0)
  a:stop(); b:stop()
  pool:close()
  T.eq(rock.sandbox.live_count(), 0)
end)

-- Kill member m from the host: its rocklet (local), its container's PID 1
-- (runc), its container (an engine's). Nothing in this process notices.
local function kill_member(m)
  if m.backend == "local" then
    uv.kill(m.pid, "sigkill")
  elseif m.backend == "runc" then
    uv.kill(m.init_pid, "sigkill")
  else
    rock.engine.connect(m.backend):container_remove(m.container, true)
  end
end

T.test("a member killed from the host right before its claim is not handed out; the next is", function()
  local pool = rock.pool(opts{ size = 2, check_every = 600 }) -- no look between the kill and the claim
  settled(pool, 2)
  local victim, other = pool.idle[1], pool.idle[2]
  kill_member(victim)
  T.eq(victim.state, "running", "nothing has noticed yet")
  local t0 = uv.hrtime()
  local a = pool:try_claim()
  local took = (uv.hrtime() - t0) / 1e9
  T.ok(a == other, "the next idle one is handed out, not the dead one")
  T.ok(took < rock.pool.CLAIM_CHECK + 1, "within the claim's bound: " .. took .. " s")
  T.eq(a:execute{ command = { "echo", "alive" } }.stdout, "alive\n")
  T.eq(pool:stats().dropped, 1, "the dead one counted dropped")
  -- both idle ones dead: claim waits for a fresh start instead
  settled(pool, 2)
  for _, m in ipairs({ pool.idle[1], pool.idle[2] }) do kill_member(m) end
  local dead = { [pool.idle[1]] = true, [pool.idle[2]] = true }
  local b = pool:claim{ timeout = 60 }
  T.ok(not dead[b], "a fresh one, not a dead one")
  T.eq(b:execute{ command = { "true" } }.exit_code, 0)
  T.eq(pool:stats().dropped, 3)
  a:stop(); b:stop()
  pool:close()
  T.wait_until("the dead ones stopped", function() return rock.sandbox.live_count() == 0 end, 30)
end)

T.test("a caller's deadline during a claim's check is the caller's: the member stays idle", function()
  local pool = rock.pool(opts{ size = 1, check_every = 600 })
  settled(pool, 1)
  local m = pool.idle[1]
  local slow = pool.answers
  pool.answers = function(x) rock.sleep(0.5); return slow(x) end -- an answer slower than the deadline
  local ok, err = pcall(rock.timeout, 0.1, function() return pool:try_claim() end)
  T.ok(not ok and rock.errors.is(err, "timeout"), "the caller's timeout: " .. tostring(err))
  T.eq(pool.idle[1], m, "the member is idle again, not dropped")
  T.eq(pool:stats().dropped, 0)
  pool.answers = slow
  local got = pool:try_claim()
  T.eq(got, m, "and claimed next")
  got:stop()
  pool:close()
  T.eq(rock.sandbox.live_count(), 0)
end)

T.test("a claim cancelled (rock.task.cancel) during its check raises the cancel: the member stays idle", function()
  local task = require "rock.task"
  local pool = rock.pool(opts{ size = 1, check_every = 600 })
  settled(pool, 1)
  local m = pool.idle[1]
  local slow = pool.answers
  pool.answers = function(x) rock.sleep(0.5); return slow(x) end
  local why = rock.errors.new("aborted", "cancelled by the test")
  local claimer = rock.spawn(function() return pool:try_claim() end)
  rock.sleep(0.1) -- the claimer waits in the member's check
  task.cancel(claimer, why)
  local ok, err = pcall(rock.wait, claimer)
  T.ok(not ok and rawequal(err, why), "the cancel's own error, not a dead member: " .. tostring(ok) .. " " .. tostring(err))
  T.eq(pool.idle[1], m, "the member is idle again, not dropped")
  T.eq(pool:stats().dropped, 0)
  pool.answers = slow
  local got = pool:try_claim()
  T.eq(got, m, "and claimed next")
  got:stop()
  pool:close()
  T.eq(rock.sandbox.live_count(), 0)
end)

T.test("a claim cancelled by rock.timeout leaves the line; close fails the waiting claims", function()
  local pool = rock.pool(failing_opts{ size = 1 }) -- nothing ever starts
  local t = rock.spawn(function() return pcall(pool.claim, pool, { timeout = 60 }) end)
  rock.sleep(0.05)
  T.eq(pool:stats().waiting, 1)
  local ok, err = pcall(rock.timeout, 0.1, function() return pool:claim{ timeout = 60 } end)
  T.ok(not ok and rock.errors.is(err, "timeout"), "the cancelled claim raised timeout: " .. tostring(err))
  T.eq(pool:stats().waiting, 1, "and left the line")
  pool:close()
  local claimed, why = rock.wait(t)
  T.eq(claimed, false, "the waiting claim failed")
  T.match(tostring(why), "closed while the claim waited")
  T.eq(pool:stats().waiting, 0)
  uv.os_setenv("ROCK_ROCKLET", ROCKLET)
  T.wait_until("nothing left", function() return rock.sandbox.live_count() == 0 end, 30)
end)

T.test("kill -9 of a host holding a pool, then rock gc: nothing left", function()
  local path = state.dir() .. "/pool-host-" .. tostring(uv.hrtime()) .. ".lua"
  local o = opts{ size = 3 }
  T.write(path, string.format([[
local rock = require 'rock'
local pool = rock.pool{ size = 3, backend = %q, image = %s }
while pool:stats().idle < 3 do rock.sleep(0.05) end
for _, sb in ipairs(pool.idle) do print(sb.id) end
print('READY')
io.stdout:flush()
rock.sleep(600)
]], o.backend, o.image and string.format("%q", o.image) or "nil"))
  local p = assert(io.popen("echo $$; exec " .. ROCK .. " " .. path))
  local pid = tonumber(p:read("l"))
  local ids = {}
  for line in p:lines() do
    if line == "READY" then break end
    ids[#ids + 1] = line
  end
  T.eq(#ids, 3, "the host's pool filled")
  uv.kill(pid, "sigkill")
  p:close()
  os.remove(path)
  local out, ok = T.sh(ROCK .. " gc")
  T.ok(ok, out)
  for _, id in ipairs(ids) do
    T.wait_until("sandbox " .. id .. "'s dir gone", function()
      return not uv.fs_stat(state.sandboxes_dir() .. "/" .. id)
    end, 30)
  end
  if OPTS.backend == "docker" then
    local e = rock.engine.connect(OPTS.backend)
    for _, id in ipairs(ids) do
      local list = e:container_list("rock.sandbox=" .. id)
      T.eq(#list, 0, "no container of " .. id)
    end
  end
end)

T.test("bad options fail at once", function()
  T.raises("invalid_argument", rock.pool, { size = -1 })
  T.raises("invalid_argument", rock.pool, { size = 1.5 })
  T.raises("invalid_argument", rock.pool, opts{ size = 1, memory = "lots" })
  T.raises("invalid_argument", rock.pool, "x")
end)

T.done()
