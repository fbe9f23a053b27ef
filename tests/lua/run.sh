#!/usr/bin/env bash
# run.sh PROGRAM ARGS...: run one test in its own $ROCK_HOME and fail it if
# it leaves anything behind: a process it started (rocklet, bash, a command:
# found by a tag in their environment) or a sandbox directory.
set -u
home=$(mktemp -d /tmp/rock-test.XXXXXX)
tag="rock-test-$$-$RANDOM$RANDOM"
export ROCK_HOME=$home ROCK_TEST_TAG=$tag
"$@"
rc=$?
unset ROCK_TEST_TAG # the checks below must not carry the tag

leftovers() {
  local f pid
  for f in /proc/[0-9]*/environ; do
    pid=${f#/proc/}; pid=${pid%/environ}
    [ "$pid" = "$$" ] && continue
    if tr '\0' '\n' 2>/dev/null < "$f" | grep -qx "ROCK_TEST_TAG=$tag"; then
      echo "$pid"
    fi
  done
}

left=""
for _ in $(seq 1 40); do # processes may take a moment to be reaped
  left=$(leftovers)
  [ -z "$left" ] && break
  sleep 0.05
done
if [ -n "$left" ]; then
  echo "LEAK: processes left behind by the test:" >&2
  for p in $left; do ps -o pid,ppid,pgid,args -p "$p" 2>/dev/null | tail -n +2 >&2; done
  for p in $left; do kill -9 "$p" 2>/dev/null; done
  rc=1
fi
if [ -d "$home/sandboxes" ] && [ -n "$(ls -A "$home/sandboxes")" ]; then
  echo "LEAK: sandbox dirs left behind: $(ls "$home/sandboxes")" >&2
  rc=1
fi
rm -rf "$home"
exit $rc
