-- test_jobs.lua: background jobs (sb:arun{mode="nohup"}, rock.job, the
-- rocklet's /jobs/*) and create_session's remote_user, through the Lua
-- API; on the local backend, and again in containers (ctest's
-- lua.test_jobs.docker / .podman set ROCK_TEST_BACKEND/ROCK_TEST_IMAGE).
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")

local sb = rock.sandbox.start(T.sandbox_opts())
local scratch = T.scratch(sb)

local function nohup(cmd, extra)
  local o = { command = cmd, mode = "nohup" }
  for k, v in pairs(extra or {}) do o[k] = v end
  return sb:arun(o)
end

-- the pids of the processes in session sid, in the sandbox
local function in_session(sid)
  local r = sb:execute{ command = "ps -eo sid=,pid= | awk '$1 == " .. sid .. " {print $2}'" }
  local pids = {}
  for p in r.stdout:gmatch("%d+") do pids[#pids + 1] = p end
  return pids
end

T.test("a job's real exit code, its output and its file", function()
  local r = nohup("echo out; echo err >&2; exit 3")
  T.eq(r.exit_code, 3) -- ROCK says 0 (its issue #685)
  T.eq(r.failure_reason, "")
  T.eq(r.running, false)
  T.eq(r.output, "out\nerr\n")
  T.ok(type(r.job_id) == "number" and type(r.pid) == "number", "job_id and pid")
  T.match(r.output_file, "/jobs/" .. r.job_id .. "%.out$")
  T.eq(sb:read_file{ path = r.output_file }.content, "out\nerr\n")
  T.ok(r.started_at <= r.ended_at, "started before it ended")
  T.eq(nohup("exit 0").exit_code, 0)
  T.eq(nohup("kill -9 $$").exit_code, 137) -- 128 + signal
end)

T.test("output_file given: made with its parents, relative to cwd", function()
  local path = scratch .. "/jobs-out/a/b/log.txt"
  local r = nohup("pwd; echo hi", { output_file = path, cwd = scratch })
  T.eq(r.output_file, path)
  T.eq(r.output, scratch .. "\nhi\n")
  T.eq(sb:read_file{ path = path }.content, scratch .. "\nhi\n")
  r = nohup("echo rel", { output_file = "jobs-out/rel.txt", cwd = scratch })
  T.eq(r.output_file, scratch .. "/jobs-out/rel.txt")
  T.eq(sb:read_file{ path = scratch .. "/jobs-out/rel.txt" }.content, "rel\n")
  r = nohup("echo $ROCK_JOB_X", { env = { ROCK_JOB_X = "from-env" } })
  T.eq(r.output, "from-env\n")
end)

T.test("wait=false returns a handle; wait_timeout leaves the job running", function()
  local flag = scratch .. "/job-flag"
  local job = nohup("echo started; while [ ! -e " .. flag .. " ]; do sleep 0.02; done; echo late; exit 4",
    { wait = false })
  T.ok(getmetatable(job) == rock.job.Job, "a rock.Job")
  T.ok(type(job.id) == "number" and type(job.pid) == "number", "id and pid")
  T.match(job.output_file, "%.out$")
  local r = job:wait(0.2)
  T.eq(r.failure_reason, "timeout")
  T.eq(r.running, true)
  T.eq(r.exit_code, nil)
  local st = job:status() -- not killed by the timeout
  T.eq(st.running, true)
  -- a waiter that gives up (its task's deadline) stops waiting; the job goes on
  T.raises("timeout", rock.timeout, 0.2, function() return job:wait() end)
  T.eq(job:status().running, true)
  sb:write_file{ path = flag, content = "" }
  r = job:wait()
  T.eq(r.running, false)
  T.eq(r.exit_code, 4)
  T.eq(r.failure_reason, "")
  T.eq(r.output, "started\nlate\n")
  -- arun waiting with a wait_timeout: the same result shape
  sb:execute{ command = { "rm", "-f", flag } }
  r = nohup("while [ ! -e " .. flag .. " ]; do sleep 0.02; done", { wait_timeout = 0.1 })
  T.eq(r.failure_reason, "timeout")
  T.ok(r.job_id and r.pid and r.output_file, "job_id, pid and output_file to come back to")
  sb:write_file{ path = flag, content = "" }
  T.eq(sb:_op("jobs/wait", { job_id = r.job_id }).exit_code, 0)
end)

T.test("kill: the whole job, whatever its children", function()
  local job = nohup("sleep 1000 & sleep 1000 & wait", { wait = false })
  T.ok(#in_session(job.pid) >= 1, "the job's processes run")
  local k = job:kill("KILL")
  T.eq(k.signalled, true)
  local r = job:wait()
  T.eq(r.exit_code, 137)
  T.eq(#in_session(job.pid), 0) -- its background children went too
  T.eq(job:kill().signalled, false) -- ended: nothing to signal, no error
  job = nohup("sleep 1000", { wait = false })
  job:kill() -- TERM by default
  T.eq(job:wait().exit_code, 143)
  job = nohup("trap 'echo got-int; exit 9' INT; echo ready; while :; do sleep 0.02; done",
    { wait = false })
  while not job:status().output:find("ready", 1, true) do rock.sleep(0.01) end
  job:kill(2)
  local r2 = job:wait()
  T.eq(r2.exit_code, 9)
  T.match(r2.output, "got%-int")
end)

T.test("jobs() lists records; a job outlives its session", function()
  sb:create_session{ session = "j" }
  local flag = scratch .. "/job-flag2"
  local job = nohup("while [ ! -e " .. flag .. " ]; do sleep 0.02; done; echo survived",
    { wait = false })
  sb:close_session{ session = "j" }
  local found
  for _, r in ipairs(sb:jobs()) do
    if r.job_id == job.id then found = r end
  end
  T.ok(found, "listed")
  T.eq(found.running, true)
  T.eq(found.pid, job.pid)
  T.eq(found.exit_code, nil)
  T.eq(found.output, nil) -- records without output
  local running = sb:jobs{ running = true }
  for _, r in ipairs(running) do T.eq(r.running, true) end
  T.ok(#running >= 1 and #running < #sb:jobs(), "running = true keeps the running")
  sb:write_file{ path = flag, content = "" }
  local r = job:wait()
  T.eq(r.exit_code, 0)
  T.eq(r.output, "survived\n")
end)

T.test("bad input: clear errors", function()
  T.raises("invalid_argument", sb.arun, sb, { mode = "background", command = "true" })
  T.raises("invalid_argument", sb.arun, sb, { mode = "nohup" })
  T.raises("invalid_argument", sb.arun, sb, { mode = "nohup", command = "true", wait = "no" })
  T.raises("invalid_argument", sb.arun, sb, { mode = "nohup", command = "true", wait_timeout = -1 })
  T.raises("spawn_failed", sb.arun, sb, { mode = "nohup", command = "true", cwd = "/nonexistent-dir" })
  T.raises("not_found", sb._op, sb, "jobs/wait", { job_id = 999999 })
  T.raises("invalid_argument", sb._op, sb, "jobs/wait", { job_id = "1" })
  T.raises("invalid_argument", sb._op, sb, "jobs/kill", { job_id = 1, signal = "NOPE" })
  local job = nohup("true", { wait = false })
  T.raises("invalid_argument", job.kill, job, {})
  -- mode "normal" is run_in_session, as before
  sb:create_session{}
  T.eq(sb:arun{ command = "echo normal" }.output, "normal\n")
  sb:close_session{}
end)

T.test("200 jobs at once", function()
  local tasks, results = {}, {}
  for i = 1, 200 do
    tasks[#tasks + 1] = rock.spawn(function()
      results[i] = nohup("echo job-" .. i .. "; exit " .. (i % 7))
    end)
  end
  rock.wait(tasks)
  for i = 1, 200 do
    T.eq(results[i].exit_code, i % 7, "job " .. i)
    T.eq(results[i].output, "job-" .. i .. "\n")
  end
end)

T.test("a job printing 100 MB: head, tail, the file", function()
  local r = nohup("head -c 100000000 /dev/zero | tr '\\0' a; echo; echo END")
  T.eq(r.exit_code, 0)
  T.eq(r.output_bytes, 100000000 + 5)
  T.eq(r.truncated, true)
  T.eq(r.dropped_bytes, 100000005 - (1 << 20))
  T.match(r.output, "^aaaa")
  T.match(r.output, "\naaaa+\nEND\n$")
  T.ok(r.output:find("bytes dropped; full output: " .. r.output_file, 1, true), "the note names the file")
  T.ok(#r.output < (1 << 20) + 200, "capped")
  local small = sb:_op("jobs/wait", { job_id = r.job_id, max_output = 100 })
  T.ok(#small.output < 300, "max_output caps it")
  -- the rocklet kept none of it in memory
  local f = io.open("/proc/" .. sb.rocklet_pid .. "/status")
  local rss = tonumber(f:read("a"):match("VmRSS:%s*(%d+)"))
  f:close()
  T.rss_under(rss, 64 * 1024, "rocklet RSS " .. rss .. " KiB")
  sb:execute{ command = { "rm", "-f", r.output_file } }
end)

-- ---- remote_user -----------------------------------------------------------

-- needs a rocklet running as root (every container; local only as root)
local root = sb:execute{ command = { "id", "-u" } }.stdout == "0\n"

T.test("remote_user: the session's shell runs as that user", function()
  if not root then print("     (skipped: the rocklet is not root)") return end
  -- a dir nobody may write to (scratch's parents are not open to it on local)
  local dir = sb:execute{ command = "d=$(mktemp -d /tmp/rock-nobody.XXXXXX) && chmod 777 $d && echo $d" }
    .stdout:gsub("\n$", "")
  sb:create_session{ session = "nb", remote_user = "nobody" }
  local function run(cmd) return sb:run_in_session{ session = "nb", command = cmd } end
  T.eq(run("id -u").output, "65534\n")
  T.eq(run("id -g").output, "65534\n")
  T.eq(run("echo $USER $LOGNAME").output, "nobody nobody\n")
  T.eq(run("echo $HOME").output, "/nonexistent\n")
  local o = run("touch " .. dir .. "/made; stat -c %u:%g " .. dir .. "/made")
  T.eq(o.output, "65534:65534\n")
  T.ok(run("touch /root/x 2>/dev/null").exit_code ~= 0, "not root")
  -- the session's machinery still works: state, a big output, a timeout
  run("cd " .. dir .. " && X=kept")
  T.eq(run("pwd; echo $X").output, dir .. "\nkept\n")
  o = sb:run_in_session{ session = "nb", command = "seq 1 300000", max_output = 1000 }
  T.eq(o.truncated, true)
  o = sb:run_in_session{ session = "nb", command = "sleep 100", timeout = 0.3 }
  T.eq(o.failure_reason, "timeout")
  T.eq(run("echo back; : </dev/tty && echo tty").output, "back\ntty\n") -- its terminal is its own
  sb:close_session{ session = "nb" }
  sb:create_session{ session = "r" } -- the default stays root
  T.eq(sb:run_in_session{ session = "r", command = "id -u" }.output, "0\n")
  sb:close_session{ session = "r" }
  sb:execute{ command = { "rm", "-rf", dir } }
end)

T.test("remote_user: an unknown user is a clear error", function()
  local err = T.raises("invalid_argument", sb.create_session, sb,
    { session = "x", remote_user = "no-such-user-xyz" })
  T.match(err.message, "no%-such%-user%-xyz")
  T.raises("invalid_argument", sb.create_session, sb, { session = "x", remote_user = "" })
  T.raises("invalid_argument", sb.create_session, sb, { session = "x", remote_user = 7 })
  sb:create_session{ session = "x" } -- the name is free: nothing was made
  sb:close_session{ session = "x" }
end)

T.test("stopping the sandbox ends its jobs", function()
  local sb2 = rock.sandbox.start(T.sandbox_opts())
  local job = sb2:arun{ command = "sleep 1000 & sleep 1000", mode = "nohup", wait = false }
  -- the job as the host sees it: a child of the rocklet (pid namespaces aside)
  local f = io.open(string.format("/proc/%d/task/%d/children", sb2.rocklet_pid, sb2.rocklet_pid))
  local kids = {}
  for p in f:read("a"):gmatch("%d+") do kids[#kids + 1] = tonumber(p) end
  f:close()
  T.ok(#kids >= 1, "the job runs under the rocklet")
  T.ok(job.pid > 0, "a pid")
  sb2:stop()
  for _, p in ipairs(kids) do -- gone, or a zombie on its way to be reaped
    local st = io.open("/proc/" .. p .. "/stat")
    local state = st and st:read("a"):match("%) (%a)")
    if st then st:close() end
    T.ok(state == nil or state == "Z", "process " .. p .. " is gone: " .. tostring(state))
  end
end)

sb:stop()
T.done()
