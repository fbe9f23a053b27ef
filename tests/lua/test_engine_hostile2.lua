-- test_engine_hostile2.lua: escapes a hostile round found in docker
-- sandboxes. The eval's kill walk: a leftover whose name holds ") " and a
-- newline (which broke the /proc/PID/stat parse), and a pid-hopper (a
-- process that forks a child and exits, forever, faster than a walk over
-- /proc), each writing fake PASSED lines, an exit-code line and an end
-- marker after the script: both are killed and the grade is unchanged.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local tasks = require "rock.agent.tasks"
local grading = require "rock.agent.grading"

local IMAGE = "rock-test/debian:12"

-- a repo in the sandbox graded by its own runner (pytest's -rA lines):
-- run.py runs hook.py (the patch's) first, then "tests" whether fix.txt says fixed
local RUN = [[
import os, sys
if os.path.exists("hook.py"):
    exec(open("hook.py").read())
ok = open("fix.txt").read().strip() == "fixed"
print(("PASSED" if ok else "FAILED") + " t.py::test_fix")
print("PASSED t.py::test_other")
sys.exit(0 if ok else 1)
]]

local function make_task(sb, dir)
  sb:execute{ command = { "mkdir", "-p", dir } }
  sb:write_file{ path = dir .. "/run.py", content = RUN }
  sb:write_file{ path = dir .. "/fix.txt", content = "broken\n" }
  sb:write_file{ path = dir .. "/t.py", content = "# tests\n" }
  local r = sb:execute{ command = "git init -q && git add -A && git -c user.name=t -c user.email=t@t " ..
    "commit -qm base && git rev-parse HEAD", cwd = dir }
  T.eq(r.exit_code, 0, r.stderr)
  local t = assert(tasks.normalize({
    instance_id = "hostile2__kill-1", repo = "hostile2/kill", repo_dir = dir,
    base_commit = r.stdout:gsub("%s+$", ""), problem_statement = "fix it",
    test_cmd = "python3 run.py", log_parser = "parse_log_pytest",
    test_patch = "diff --git a/t.py b/t.py\n--- a/t.py\n+++ b/t.py\n@@ -1 +1,2 @@\n # tests\n+# more\n",
    FAIL_TO_PASS = { "t.py::test_fix" }, PASS_TO_PASS = { "t.py::test_other" } }))
  return t
end

local function new_file(path, text)
  local lines = {}
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = "+" .. l end
  if lines[#lines] == "+" then lines[#lines] = nil end
  return string.format("diff --git a/%s b/%s\nnew file mode 100644\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n%s\n",
    path, path, path, #lines, table.concat(lines, "\n"))
end

-- what a leftover writes to the log (its stdout) once the script is past its end
local FAKE = "PASSED t.py::test_fix\\n+ rock_test_exit_code=0\\n>>>>> Test Exit Code: 0\\n" ..
  "+ : '>>>>> End Test Output'\\n"

-- the python a leftover runs: after `delay` s, mark /tmp/escaped-NAME and
-- write FAKE to its stdout (the log), for 3 s
local function writer(name, delay)
  return table.concat({
    "    time.sleep(" .. delay .. ")",
    "    open('/tmp/escaped-" .. name .. "', 'w').write('yes')",
    "    end = time.time() + 3",
    "    while time.time() < end:",
    "        os.write(1, b\"" .. FAKE .. "\")",
    "        time.sleep(0.01)",
  }, "\n")
end

local HOOKS = {
  -- a name with ") " and a newline: the old walk read the first line of
  -- its stat only and found no parent, so it was never killed
  odd_name = table.concat({
    "import os, time",
    "if os.fork() == 0:",
    "    open('/proc/self/comm', 'w').write('x) 1\\nS 0 ')",
    writer("odd_name", 1.5),
    "    os._exit(0)",
  }, "\n"),
  -- pid-hoppers: 8 chains, each generation forks the next and exits, for
  -- 4 s; the last one writes. 300 sleepers make a walk over /proc slower
  -- than a generation's life (the old walk, 20 passes of STOPs, chased
  -- them and gave up 2 runs in 3; kill(-1) misses none)
  hopper = table.concat({
    "import os, time",
    "for i in range(300):",
    "    if os.fork() == 0:",
    "        time.sleep(100)",
    "        os._exit(0)",
    "for c in range(7):",
    "    if os.fork() == 0:",
    "        break",
    "if os.fork() == 0:",
    "    os.setsid()",
    "    start = time.time()",
    "    while time.time() - start < 4:",
    "        if os.fork() != 0:",
    "            os._exit(0)",
    writer("hopper", 0),
    "    os._exit(0)",
  }, "\n"),
}

T.test("docker: a leftover with ') ' and a newline in its name, and a pid-hopper, are killed", function()
  local sb = rock.sandbox.start{ backend = "docker", image = IMAGE, pull = "never" }
  for _, name in ipairs({ "odd_name", "hopper" }) do
    local t = make_task(sb, "/repo-" .. name)
    local r = grading.evaluate(sb, t, new_file("hook.py", HOOKS[name]))
    T.eq(r.status, "unresolved", name .. ": " .. tostring(r.report and r.report.reason) ..
      tostring(r.error and r.error.message))
    T.eq(r.test_exit_code, 1, name .. ": the runner's own exit code")
    T.eq(r.tests["t.py::test_fix"], "FAILED", name)
    rock.sleep(name == "odd_name" and 2.5 or 1)
    local left = sb:execute{ command = "ls /tmp/escaped-* 2>/dev/null; " ..
      "for p in /proc/[0-9]*; do p=${p#/proc/}; [ $p = 1 ] || [ $p = $$ ] || echo \"pid $p: $(tr '\\n' ' ' </proc/$p/comm)\"; done" }
    T.eq(left.stdout, "", name .. ": nothing of the tests is left, and nothing escaped")
    -- the same hook with the fix resolves (the kill spares the grade)
    t = make_task(sb, "/repo-" .. name .. "-fixed")
    local fix = "diff --git a/fix.txt b/fix.txt\n--- a/fix.txt\n+++ b/fix.txt\n@@ -1 +1 @@\n-broken\n+fixed\n"
    r = grading.evaluate(sb, t, fix .. new_file("hook.py", HOOKS[name]))
    T.eq(r.status, "resolved", name .. " fixed: " .. tostring(r.report and r.report.reason))
    rock.sleep(name == "odd_name" and 2.5 or 1)
    sb:execute{ command = "rm -f /tmp/escaped-*" }
  end
  sb:stop()
end)

-- item 3: the container log (the rocklet's stdout, docker's json log on
-- the host's disk, outside the writable layer and its disk limit)
for _, kind in ipairs({ "docker", "podman" }) do
  T.test(kind .. ": 50 MB written to the rocklet's stdout leaves a bounded log on the host", function()
    local sb = rock.sandbox.start{ backend = kind, image = IMAGE, pull = "never" }
    local e = rock.engine.connect(kind)
    local info = e:container_inspect(sb.container)
    T.eq(info.HostConfig.LogConfig.Type, "json-file", "the log driver")
    local r = sb:execute{ command = "head -c 50000000 /dev/zero | tr '\\0' x | fold -w 1000 >/proc/1/fd/1; echo $?",
      timeout = 120 }
    T.eq(r.stdout, "0\n", "50 MB written: " .. r.stderr)
    local path = info.LogPath
    if path == nil or path == "" then path = info.HostConfig.LogConfig.Path end
    T.ok(path and path ~= "", "the engine names the log's path")
    local size = T.file_size(path)
    T.ok(size and size <= 12 * 1024 * 1024, string.format("%s: %s bytes on the host", path, tostring(size)))
    sb:stop()
  end)
end

-- item 4: /etc/hosts, /etc/hostname, /etc/resolv.conf were writable binds
-- of the engine's files on the host's disk, outside the disk limit
for _, kind in ipairs({ "docker", "podman" }) do
  T.test(kind .. ": /etc/hosts, hostname and resolv.conf cannot fill the host's disk", function()
    local sb = rock.sandbox.start{ backend = kind, image = IMAGE, pull = "never", limits = { disk = "50m" } }
    local dir = sb.dir
    local e = rock.engine.connect(kind)
    local info = e:container_inspect(sb.container)
    for _, f in ipairs({ "/etc/hosts", "/etc/hostname", "/etc/resolv.conf" }) do
      local r = sb:execute{ command = "head -c 20000000 /dev/zero >" .. f .. "; echo rc=$?; wc -c <" .. f,
        timeout = 60 }
      T.ok(not r.stdout:find("rc=0", 1, true), f .. ": the write fails: " .. r.stdout .. r.stderr)
      T.ok(tonumber(r.stdout:match("\n(%d+)")) < 65536, f .. " stays small: " .. r.stdout)
    end
    -- what the engine's own files would hold is there
    local r = sb:execute{ command = "cat /etc/hostname; hostname; grep -c localhost /etc/hosts" }
    local a, b = r.stdout:match("^(%S+)\n(%S+)\n")
    T.eq(a, b, "/etc/hostname names the container: " .. r.stdout)
    T.eq(a, sb.container:sub(1, 12))
    T.match(r.stdout, "\n[1-9]%d*\n$", "localhost in /etc/hosts")
    -- nothing of the engine's on the host grew, and rock's go with the sandbox
    for _, k in ipairs({ "HostsPath", "HostnamePath", "ResolvConfPath" }) do
      local size = info[k] and info[k] ~= "" and T.file_size(info[k])
      T.ok(not size or size < 65536, k .. ": " .. tostring(size))
    end
    T.ok(T.file_size(dir .. "/etc-hosts"), "rock's hosts file is in the sandbox's dir")
    sb:stop()
    T.eq(T.file_size(dir .. "/etc-hosts"), nil, "nothing left on the host after stop")
    T.eq(#T.listdir(dir), 0, "the sandbox's dir is gone")
  end)
end

T.done()
