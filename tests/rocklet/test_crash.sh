#!/usr/bin/env bash
# test_crash.sh ROCKLET: a rocklet killed with SIGKILL (no cleanup runs)
# leaves none of its direct work behind: a session's command goes with the
# PTY's hangup, an /execute child with PR_SET_PDEATHSIG (hostile round of
# issue 7). Background grandchildren still outlive it outside a container
# (PID 1 there takes them all): that needs the host's sweep.
set -u
rocklet=$1
top=$(mktemp -d /tmp/rock-crash.XXXXXX)
sock="$top/r.sock"
post() { curl -s --max-time "$3" --unix-socket "$sock" -X POST -d "$2" "http://rocklet$1"; }
"$rocklet" serve --socket "$sock" --dir "$top/state" 2>/dev/null &
pid=$!
for _ in $(seq 1 200); do [ -S "$sock" ] && break; sleep 0.05; done
post /create_session '{"session":"s"}' 10 >/dev/null
post /run_in_session '{"session":"s","command":"sleep 3141.5"}' 3 >/dev/null &
post /execute '{"command":["sleep","3143.5"]}' 3 >/dev/null &
for _ in $(seq 1 100); do # until both are running
  [ "$(pgrep -c -f '^sleep 314[13]\.5$')" -ge 2 ] && break
  sleep 0.05
done
kill -9 "$pid"
wait 2>/dev/null
left=""
for _ in $(seq 1 100); do
  left=$(pgrep -f '^sleep 314[13]\.5$')
  [ -z "$left" ] && break
  sleep 0.05
done
rc=0
if [ -n "$left" ]; then
  echo "FAIL: left after kill -9 of the rocklet:" >&2
  ps -o pid,ppid,args -p $left >&2
  kill -9 $left
  rc=1
fi
rm -rf "$top"
echo "$((1 - rc)) passed, $rc failed"
exit $rc
