-- test_session.lua: the bash session through the real Lua API (DESIGN.md
-- "The bash session"); on the local backend, and again in a container
-- (ctest's lua.test_session.docker sets ROCK_TEST_BACKEND/ROCK_TEST_IMAGE).
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")

local sb = rock.sandbox.start(T.sandbox_opts())
sb:create_session{ session = "s" }
local function run(cmd, opts)
  opts = opts or {}
  opts.session = opts.session or "s"
  opts.command = cmd
  return sb:run_in_session(opts)
end

T.test("exit statuses are data", function()
  T.eq(run("true").exit_code, 0)
  local o = run("false")
  T.eq(o.exit_code, 1)
  T.eq(o.failure_reason, "")
  T.eq(run("(exit 42)").exit_code, 42)
  T.eq(run("ls /nonexistent-dir").exit_code, 2)
  T.eq(run("nonexistent-command-xyz").exit_code, 127)
end)

T.test("output, and stderr merged in order", function()
  local o = run("echo out; echo err >&2; printf 'no newline'")
  T.eq(o.output, "out\nerr\nno newline")
  T.eq(o.truncated, false)
end)

T.test("state is kept across calls", function()
  run("cd /tmp && export ROCK_X=hello && myfn() { echo \"fn:$1\"; } && alias ll='echo aliased'")
  T.eq(run("pwd").output, "/tmp\n")
  T.eq(run("echo $ROCK_X").output, "hello\n")
  T.eq(run("myfn 7").output, "fn:7\n")
  T.eq(run("Y=1").exit_code, 0)
  T.eq(run("echo ${Y}").output, "1\n")
end)

T.test("heredocs, quotes and multi-line scripts", function()
  local o = run("cat <<'EOF'\nline 1 $NOT_EXPANDED\n  'quoted' \"double\"\nEOF\nfor i in 1 2 3; do\n  echo \"i=$i\"\ndone")
  T.eq(o.output, "line 1 $NOT_EXPANDED\n  'quoted' \"double\"\ni=1\ni=2\ni=3\n")
  T.eq(run("if true\nthen\n echo yes\nfi").output, "yes\n")
  T.eq(run("echo 'a;b' \"c|d\" `echo e`").output, "a;b c|d e\n")
end)

T.test("syntax error: clear message, session still usable", function()
  local o = run("if then fi")
  T.eq(o.exit_code, 2)
  T.match(o.output, "syntax error")
  -- issue 7 (7): what bash says for typed input, not the command file's path
  T.match(o.output, "^bash: line 1: syntax error near unexpected token")
  T.ok(not o.output:find("/cmd", 1, true), "no internal path in: " .. o.output)
  T.eq(run("echo still-alive; pwd").output, "still-alive\n/tmp\n")
  o = run("echo 'unterminated")
  T.ok(o.exit_code ~= 0, "unterminated quote fails")
  T.eq(run("echo fine").output, "fine\n")
end)

T.test("binary and invalid UTF-8 output", function()
  local o = run("printf 'ok \\xff\\xfe end\\n'; printf 'caf\\xc3\\xa9\\n'")
  T.eq(o.output, "ok \u{FFFD}\u{FFFD} end\ncafé\n")
  o = run("head -c 4096 /dev/urandom")
  T.eq(o.exit_code, 0)
  T.ok(utf8.len(o.output) ~= nil, "output is valid UTF-8")
  o = run("printf '\\033[1;31mred\\033[0m\\r\\n'")
  T.eq(o.output, "red\n")
end)

T.test("huge output is capped quickly, full output kept", function()
  local t0 = rock.uv.hrtime()
  local o = run("seq 1 3000000")
  local ms = (rock.uv.hrtime() - t0) / 1e6
  T.eq(o.exit_code, 0)
  T.eq(o.truncated, true)
  T.ok(o.dropped_bytes > 20000000, "dropped count reported: " .. tostring(o.dropped_bytes))
  T.ok(#o.output <= 1024 * 1024 + 512, "capped to 1 MiB: " .. #o.output)
  T.eq(o.output:sub(1, 8), "1\n2\n3\n4\n")
  T.eq(o.output:sub(-16), "2999999\n3000000\n")
  T.match(o.output, "bytes dropped")
  T.ok(o.output_file and o.output_file ~= "", "output_file returned")
  T.eq(sb:execute{ command = { "wc", "-l", o.output_file } }.stdout, "3000000 " .. o.output_file .. "\n")
  local small = run("seq 1 100000", { max_output = 1000 })
  T.ok(#small.output < 1200, "max_output respected")
  print(string.format("     (seq 1 3000000: %.0f ms)", ms))
end)

-- The `sleep 1NN` processes of this sandbox: descendants of its rocklet
-- (the parent of this sh; orphans are reparented to it, a subreaper or PID
-- 1). Not every such process of the host: on the local backend `ps -e`
-- sees the other tests' sleeps too (a parallel ctest run counted 3, not 2).
local function session_children()
  local r = sb:execute{ command = { "sh", "-c", [[
ps -eo pid=,ppid=,args= | awk -v root="$PPID" '
  { up[$1] = $2; pid = $1; $1 = ""; $2 = ""; args[pid] = $0 }
  END {
    n = 0
    for (p in args) if (args[p] ~ /^ *sleep 1[0-9][0-9]( |$)/) {
      q = p
      while (q != root && q > 1 && (q in up)) q = up[q]
      if (q == root) n++
    }
    print n
  }']] } }
  return tonumber(r.stdout)
end

T.test("timeout of sleep 100 keeps the shell and its state", function()
  run("cd /usr && export KEEP=me")
  local t0 = rock.uv.hrtime()
  local o = run("echo before; sleep 100", { timeout = 1 })
  local s = (rock.uv.hrtime() - t0) / 1e9
  T.eq(o.failure_reason, "timeout")
  T.eq(o.output, "before\n")
  T.ok(s < 5, "returned after the timeout, not the sleep: " .. s)
  T.eq(run("echo $KEEP; pwd").output, "me\n/usr\n")
  T.eq(session_children(), 0)
end)

T.test("timeout of a builtin busy loop", function()
  local o = run("X=1; while true; do :; done", { timeout = 1 })
  T.eq(o.failure_reason, "timeout")
  local a = run("echo alive $X; pwd")
  T.eq(a.exit_code, 0)
  T.eq(a.output, "alive 1\n/usr\n")
end)

T.test("timeout of a job that forked children leaves none", function()
  local o = run("bash -c 'sleep 101 & sleep 102 & (sleep 103; echo) & wait'", { timeout = 1 })
  T.eq(o.failure_reason, "timeout")
  o = run("sleep 104 | sleep 105 | cat", { timeout = 1 })
  T.eq(o.failure_reason, "timeout")
  o = run("setsid sleep 106 & sleep 107", { timeout = 1 })
  T.eq(o.failure_reason, "timeout")
  rock.sleep(0.2)
  T.eq(run("echo ok").output, "ok\n")
  -- the setsid'd background job was started on purpose with &: it is a
  -- background job of the shell, not part of the timed-out foreground job
  run("kill %1 2>/dev/null; pkill -f 'sleep 106'; true")
  rock.sleep(0.1)
  T.eq(session_children(), 0)
end)

T.test("a program ignoring SIGINT is killed on timeout", function()
  local o = run("python3 -c 'import signal,time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(100)'", { timeout = 1 })
  T.eq(o.failure_reason, "timeout")
  T.eq(run("echo back").output, "back\n")
end)

T.test("bare cat and read do not block", function()
  local o = run("cat; echo after-cat", { timeout = 10 })
  T.eq(o.output, "after-cat\n")
  T.eq(o.failure_reason, "")
  o = run("read x; echo \"read:$? x=$x\"", { timeout = 10 })
  T.eq(o.output, "read:1 x=\n")
  o = run("python3 -c 'import sys; print(len(sys.stdin.read()))'", { timeout = 10 })
  T.eq(o.output, "0\n")
end)

T.test("user PS1 and PROMPT_COMMAND do not confuse the session", function()
  run("PS1='weird$ \\[\\e[1m\\] >>> '; PROMPT_COMMAND='echo prompt-noise'; PS2='> '")
  T.eq(run("echo one").output, "one\n")
  T.eq(run("echo two\necho three").output, "two\nthree\n")
  run("PROMPT_COMMAND=''")
end)

T.test("exit ends the session and says so", function()
  sb:create_session{ session = "ender" }
  local o = sb:run_in_session{ session = "ender", command = "echo bye; exit 3" }
  T.eq(o.exit_code, 3)
  T.eq(o.failure_reason, "session_ended")
  T.eq(o.output, "bye\n")
  T.raises("session_not_found", sb.run_in_session, sb, { session = "ender", command = "true" })
  sb:create_session{ session = "ender" } -- the name is free again
  T.eq(sb:run_in_session{ session = "ender", command = "echo again" }.output, "again\n")
  sb:close_session{ session = "ender" }
end)

T.test("two sessions run at once without waiting on each other", function()
  sb:create_session{ session = "a" }
  sb:create_session{ session = "b" }
  local t0 = rock.uv.hrtime()
  local ta = rock.spawn(function()
    return sb:run_in_session{ session = "a", command = "sleep 1; echo a" }
  end)
  local tb = rock.spawn(function()
    local r = sb:run_in_session{ session = "b", command = "echo b" }
    return r, (rock.uv.hrtime() - t0) / 1e6
  end)
  local rb, b_ms = rock.wait(tb)
  T.eq(rb.output, "b\n")
  T.ok(b_ms < 500, "session b answered while a slept: " .. b_ms .. " ms")
  T.ok(sb:is_alive(), "is_alive answers during a long command")
  T.eq(rock.wait(ta).output, "a\n")
  local total = (rock.uv.hrtime() - t0) / 1e9
  T.ok(total < 2, "ran in parallel")
  sb:close_session{ session = "a" }
  sb:close_session{ session = "b" }
end)

T.test("a busy session says so", function()
  sb:create_session{ session = "busy" }
  local t = rock.spawn(function()
    return sb:run_in_session{ session = "busy", command = "sleep 0.5; echo done" }
  end)
  rock.sleep(0.1)
  T.raises("session_busy", sb.run_in_session, sb, { session = "busy", command = "true" })
  T.eq(rock.wait(t).output, "done\n")
  sb:close_session{ session = "busy" }
end)

T.test("interrupt stops the running command", function()
  sb:create_session{ session = "int" }
  local t = rock.spawn(function()
    return sb:run_in_session{ session = "int", command = "sleep 100" }
  end)
  rock.sleep(0.2)
  T.eq(sb:interrupt{ session = "int" }.interrupted, true)
  local o = rock.wait(t)
  T.eq(o.failure_reason, "interrupted")
  T.eq(sb:run_in_session{ session = "int", command = "echo ok" }.output, "ok\n")
  sb:close_session{ session = "int" }
end)

T.test("startup_source, env and cwd at session start", function()
  local rc = T.scratch(sb) .. "/rc.sh"
  sb:write_file{ path = rc,
    content = "export FROM_RC=yes\nPS1='rc-prompt> '\nPROMPT_COMMAND='echo noisy'\necho sourced\n" }
  local r = sb:create_session{ session = "rc", startup_source = { rc },
    env = { MY_ENV = "v1" }, cwd = "/etc" }
  T.eq(r.output, "sourced\n")
  local o = sb:run_in_session{ session = "rc", command = "echo $FROM_RC $MY_ENV $PAGER $TERM; pwd" }
  T.eq(o.output, "yes v1 cat dumb\n/etc\n")
  sb:close_session{ session = "rc" }
end)

T.test("close_session ends its background jobs", function()
  sb:create_session{ session = "bg" }
  sb:run_in_session{ session = "bg", command = "sleep 150 & disown; nohup sleep 151 >/dev/null 2>&1 &" }
  -- the call returns once bash has forked them, maybe before each child has
  -- exec'd sleep (a loaded machine, a container): wait until both are sleeps
  local n, tries = session_children(), 0
  while n < 2 and tries < 200 do rock.sleep(0.05); tries = tries + 1; n = session_children() end
  T.eq(n, 2)
  sb:close_session{ session = "bg" }
  tries = 0
  repeat rock.sleep(0.05); tries = tries + 1; n = session_children() until n == 0 or tries >= 100
  T.eq(n, 0)
  T.raises("session_not_found", sb.close_session, sb, { session = "bg" })
end)

T.test("issue 7 (16): a command the host gave up on leaves the session usable at once", function()
  run("cd /tmp; export KEPT=yes")
  -- the host's deadline falls while the command runs: the call is cancelled,
  -- its connection closed, and the rocklet interrupts the command
  T.raises("timeout", rock.timeout, 0.3, run, "sleep 100")
  -- the next call is not session_busy: it waits for the interrupt, then runs
  local o = run("echo $KEPT $PWD")
  T.eq(o.output, "yes /tmp\n")
  T.eq(o.exit_code, 0)
  -- the same when the waiting task itself is cancelled by a timeout around it
  local t = rock.spawn(function() return rock.timeout(0.2, run, "sleep 100") end)
  T.raises("timeout", rock.wait, t)
  local a = rock.spawn(run, "echo first")
  local b = rock.spawn(run, "echo second")
  local values, errs = rock.wait({ a, b })
  -- one call waits behind the cancelled command; a second still finds it busy
  local ok = (values[1] and values[1].output == "first\n" and 1 or 0) +
    (values[2] and values[2].output == "second\n" and 1 or 0)
  T.ok(ok >= 1, "a call ran after the cancelled command")
  for i = 1, 2 do
    if errs[i] then T.eq(errs[i].code, "session_busy") end
  end
  T.eq(run("echo free").output, "free\n")
end)

T.test("bad arguments raise invalid_argument", function()
  T.raises("invalid_argument", sb.run_in_session, sb, { session = "s" })
  T.raises("invalid_argument", sb.run_in_session, sb, { session = "s", command = 5 })
  T.raises("invalid_argument", sb.run_in_session, sb, "echo")
  T.raises("session_not_found", sb.run_in_session, sb, { session = "nope", command = "true" })
  T.raises("session_exists", sb.create_session, sb, { session = "s" })
end)

sb:stop()
T.done()
