-- test_grading_forged.lua: patches that try to forge a grade, on the local
-- backend against the demo calc task (recipes/demo/make-repo) with its bug
-- left in: every attempt must be graded unresolved. A C-quoted .git hook
-- (GNU patch would install it, the eval's git checkout run it), a hook
-- already in .git, a symlink into .git, a process the tests leave that
-- writes fake results, an exit-code line and an end marker after the
-- script's end, a test that rewrites the running eval script, a conftest
-- printing the markers, fake PASSED lines with a non-zero exit.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local tasks = require "rock.agent.tasks"
local grading = require "rock.agent.grading"
local spatch = require "rock.agent.swebench.patch"

local here = arg[0]:match("(.*/)")
local demo = here .. "../../recipes/demo/"
local tmp = T.sh("mktemp -d /tmp/rock-grading-forged.XXXXXX"):gsub("%s+$", "")
T.ok(tmp:match("^/tmp/rock%-grading%-forged%."), "temp dir made")

local q = T.q
local sh = T.must

local calc
for _, t in ipairs(tasks.load(demo .. "tasks.jsonl")) do
  if t.repo == "demo/calc" then calc = t end
end

local n_repos = 0
local function local_task(extra)
  n_repos = n_repos + 1
  local dir = string.format("%s/calc-%d", tmp, n_repos)
  sh(q(demo .. "make-repo") .. " calc " .. q(dir))
  local t = {}
  for k, v in pairs(calc) do t[k] = v end
  t.repo_dir = dir
  for k, v in pairs(extra or {}) do t[k] = v end
  return t
end

-- a patch adding one file (path as written in the headers)
local function new_file(path, text, mode)
  local lines = {}
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = "+" .. l end
  if lines[#lines] == "+" then lines[#lines] = nil end
  local a, b = path:gsub("^b/", "a/", 1), path
  if path:sub(1, 1) == '"' then a = path:gsub('^"b/', '"a/', 1) end
  return string.format("diff --git %s %s\nnew file mode %s\n--- /dev/null\n+++ %s\n@@ -0,0 +1,%d @@\n%s\n",
    a, b, mode or "100644", b, #lines, table.concat(lines, "\n"))
end

local F2P = { "tests/test_calc.py::test_decimals", "tests/test_calc.py::test_malformed_decimal" }
local FAKE = "PASSED " .. F2P[1] .. "\\nPASSED " .. F2P[2] .. "\\n+ rock_test_exit_code=0\\n" ..
  ">>>>> Test Exit Code: 0\\n+ : '>>>>> End Test Output'\\n"

local sb = rock.sandbox.start{ backend = "local" }

local function unresolved(r, what)
  T.eq(r.status, "unresolved", what .. ": " .. tostring(r.report and r.report.reason) ..
    tostring(r.error and r.error.message))
  T.ok(not r.resolved, what)
end

T.test("git's quoted names are decoded before the .git check", function()
  T.eq(spatch.unquote('"b/\\056git/x"'), "b/.git/x")
  T.eq(spatch.unquote('"a/caf\\303\\251 \\"q\\"\\t\\\\"'), 'a/caf\195\169 "q"\t\\')
  T.eq(spatch.unquote("plain"), "plain")
  T.eq(spatch.unquote('"unterminated'), nil)
  T.eq(spatch.unquote('"bad \\q"'), nil)
  for _, p in ipairs({
    'diff --git "a/\\056git/hooks/post-checkout" "b/\\056git/hooks/post-checkout"\n',
    '--- /dev/null\n+++ "b/.gi\\164/config"\n@@ -0,0 +1 @@\n+x\n',
    '+++ "b/\\056GIT/config"\n',
    'rename to "sub/\\056\\056/\\056\\056/y"\n',
    'diff --git a/x "b/\\056git/info/attributes"\n',
    '--- a/ok.py\n+++ "b/broken\\q"\n',
    'diff --git a/docs .git/x b/docs .git/x\n',
  }) do
    T.ok(spatch.unsafe_path(p), "unsafe: " .. p)
  end
  T.eq(spatch.unsafe_path('diff --git "a/caf\\303\\251.py" "b/caf\\303\\251.py"\n'), nil)
  T.eq(spatch.unsafe_path(calc.patch), nil)
  -- linear: a 1 MB header line of quotes and escapes
  local t0 = os.clock()
  spatch.unsafe_path('+++ "' .. string.rep("\\056", 250000) .. '"\n')
  spatch.unsafe_path("diff --git " .. string.rep("a/ b/", 200000) .. "\n")
  spatch.unsafe_path(string.rep("--- " .. string.rep(" ", 1000) .. "x\n", 1000))
  T.ok(os.clock() - t0 < 2, "1 MB headers checked in " .. (os.clock() - t0) .. " s")
end)

T.test("a C-quoted .git hook is not applied, and the eval runs no hook", function()
  local t = local_task()
  local ran = tmp .. "/hook-ran"
  local hook = "#!/bin/sh\ntouch " .. ran .. "\nprintf '" .. FAKE .. "'\n"
  local evil = new_file('"b/\\056git/hooks/post-checkout"', hook, "100755")
  local r = grading.evaluate(sb, t, evil)
  unresolved(r, "quoted hook")
  T.ok(not r.applied, "not applied")
  T.match(r.apply_output, "a path inside %.git")
  T.eq(T.read(t.repo_dir .. "/.git/hooks/post-checkout"), nil, "no hook installed")
  T.eq(T.read(ran), nil, "no hook ran")
  -- a hook already in .git (the tests could write one) never runs in the eval
  T.write(t.repo_dir .. "/.git/hooks/post-checkout", hook)
  sh("chmod +x " .. q(t.repo_dir .. "/.git/hooks/post-checkout"))
  r = grading.evaluate(sb, t, "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n" ..
    "@@ -1,3 +1,3 @@\n # calc\n \n-A small arithmetic evaluator: `calc.evaluate(\"2 + 3 * 4\") == 14`.\n" ..
    "+A small evaluator: `calc.evaluate(\"2 + 3 * 4\") == 14`.\n")
  unresolved(r, "hook in .git")
  T.ok(r.applied, "the README patch applied")
  T.eq(T.read(ran), nil, "the planted hook never ran")
  T.match(r.log, "%+ git checkout ")
end)

T.test("a symlink into .git is never given to GNU patch", function()
  local t = local_task()
  local p = "diff --git a/hooks b/hooks\nnew file mode 120000\n--- /dev/null\n+++ b/hooks\n@@ -0,0 +1 @@\n" ..
    "+.git/hooks\n\\ No newline at end of file\n" ..
    new_file("b/hooks/post-checkout", "#!/bin/sh\ntouch " .. tmp .. "/symlink-hook-ran\n", "100755")
  T.ok(spatch.has_symlink(p))
  T.ok(not spatch.has_symlink(calc.patch))
  local r = grading.evaluate(sb, t, p)
  unresolved(r, "symlink")
  T.match(r.apply_output, "patch %-%-fuzz not tried")
  T.eq(T.read(t.repo_dir .. "/.git/hooks/post-checkout"), nil, "no hook written through the link")
  T.eq(T.read(tmp .. "/symlink-hook-ran"), nil)
end)

T.test("a process the tests leave cannot write results after the script's end", function()
  local t = local_task()
  local conftest = table.concat({
    "import os, signal, time",
    -- the eval's log and script: the nearest ancestor whose stdout is rock-eval.*/eval.log
    "log, pid, script = None, os.getppid(), None",
    "while pid > 1 and not log:",
    "    try:",
    "        out = os.readlink('/proc/%d/fd/1' % pid)",
    "        if '/rock-eval.' in out and out.endswith('/eval.log'):",
    "            log, script = out, pid",
    "        pid = int(open('/proc/%d/stat' % pid).read().rsplit(')', 1)[1].split()[1])",
    "    except OSError:",
    "        break",
    "if log and os.fork() == 0:",
    "    os.setsid()",
    "    if os.fork() == 0:",
    "        deadline = time.time() + 30",
    "        while time.time() < deadline:",
    "            try:",
    "                with open(log, 'rb') as f:",
    "                    if b\"+ : '>>>>> End Test Output'\" in f.read():",
    "                        break",
    "            except OSError:",
    "                pass",
    "            time.sleep(0.001)",
    "        with open('" .. tmp .. "/daemon-wrote', 'w') as f:",
    "            f.write('yes')",
    "        fd = None",  -- an inherited copy of the log's descriptor shares the script's offset
    "        for f in os.listdir('/proc/self/fd'):",
    "            try:",
    "                if os.readlink('/proc/self/fd/' + f) == log:",
    "                    fd = int(f)",
    "            except OSError:",
    "                pass",
    "        if fd is None:",
    "            fd = os.open(log, os.O_WRONLY | os.O_APPEND)",
    "        try:",  -- hold the script while writing, so the fake lines come after its end marker
    "            os.kill(script, signal.SIGSTOP)",
    "        except OSError:",
    "            pass",
    "        os.write(fd, b\"" .. FAKE .. "\")",
    "        try:",
    "            os.kill(script, signal.SIGCONT)",
    "        except OSError:",
    "            pass",
    "        end = time.time() + 3",
    "        while time.time() < end:",
    "            os.write(fd, b\"" .. FAKE .. "\")",
    "            time.sleep(0.002)",
    "    os._exit(0)",
    "if log:",
    "    os.wait()",
  }, "\n")
  local r = grading.evaluate(sb, t, new_file("b/conftest.py", conftest))
  unresolved(r, "leftover writer")
  T.eq(r.test_exit_code, 1, "the real pytest's exit code")
  T.eq(r.tests[F2P[1]], "FAILED")
  T.eq(T.read(tmp .. "/daemon-wrote"), nil, "the leftover was killed before the end marker")
  rock.sleep(0.2)
  local left = T.sh("ps -eo args= | grep -c '^python3.*pytest' || true")
  T.eq(left, "0\n", "nothing of the tests is left running")
end)

T.test("a test that rewrites the running eval script changes nothing", function()
  local t = local_task()
  -- `bash eval.sh` reads its file as it goes: a test that rewrites the rest
  -- of it (after the test command) would run its own lines; rock runs the
  -- script from memory
  local conftest = table.concat({
    "import os",
    "def pytest_unconfigure(config):",
    "    pid = os.getppid()",
    "    while pid > 1:",
    "        args = open('/proc/%d/cmdline' % pid, 'rb').read().split(b'\\0')",
    "        for a in args:",
    "            if a.endswith(b'/eval.sh') and b'/rock-eval.' in a and os.path.isfile(a):",
    "                text = open(a, 'rb').read()",
    "                i = text.find(b'\\n', text.find(b'pytest -rA'))",
    "                tail = b\"\\nrock_test_exit_code=0\\necho 'PASSED " .. F2P[1] .. "'\\necho 'PASSED " .. F2P[2] ..
      "'\\n: '>>>>> End Test Output'\\nexit 0\\n\"",
    "                open(a, 'wb').write(text[:i] + tail)",
    "                open('" .. tmp .. "/rewrote', 'w').write('yes')",
    "        pid = int(open('/proc/%d/stat' % pid).read().rsplit(')', 1)[1].split()[1])",
  }, "\n")
  local r = grading.evaluate(sb, t, new_file("b/conftest.py", conftest))
  unresolved(r, "script rewrite")
  T.eq(r.test_exit_code, 1)
  T.eq(T.read(tmp .. "/rewrote"), nil, "no script file to rewrite")
end)

T.test("a conftest printing the markers, fake PASSED lines and a non-zero exit", function()
  local t = local_task()
  -- markers and fake results before the real ones
  local early = "print(\"+ : '>>>>> End Test Output'\\nPASSED " .. F2P[1] .. "\\nPASSED " .. F2P[2] ..
    "\\n+ : '>>>>> Start Test Output'\")\n"
  local r = grading.evaluate(sb, t, new_file("b/conftest.py", early))
  unresolved(r, "early markers")
  T.eq(r.tests[F2P[1]], "FAILED", "the real result, after the fake one")
  -- fake PASSED lines after the real results: the test command exits 1
  t = local_task()
  local late = "def pytest_unconfigure(config):\n    print('PASSED " .. F2P[1] .. "')\n    print('PASSED " ..
    F2P[2] .. "')\n"
  r = grading.evaluate(sb, t, new_file("b/conftest.py", late))
  unresolved(r, "fake PASSED, exit 1")
  T.eq(r.test_exit_code, 1)
  T.match(r.report.reason, "exited 1 but no test FAILED or ERROR")
  -- the same conftest with the fix: resolved (the check is not too strict)
  t = local_task()
  r = grading.evaluate(sb, t, calc.patch .. new_file("b/conftest.py", late))
  T.eq(r.status, "resolved", tostring(r.report and r.report.reason))
end)

sb:stop()
sh("rm -rf " .. q(tmp))
T.done()
