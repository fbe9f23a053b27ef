#!/usr/bin/env bash
# test_perms.sh ROCKLET: issue 7 items 12 and 18 on the rocklet itself.
# Under `umask 000` its socket, dirs and files are owner-only (the commands
# it runs keep the caller's umask); a --dir that
# does not exist yet (nor its parents) and holds shell metacharacters works.
set -u
rocklet=$1
umask 000
top=$(mktemp -d /tmp/rock-perms.XXXXXX)
dir="$top/x'y \"z\$(id)/state/deep"
sock="$top/r.sock"
passed=0 failed=0
check() { # check WHAT GOT WANT
  if [ "$2" = "$3" ]; then passed=$((passed + 1))
  else failed=$((failed + 1)); echo "FAIL $1: got '$2', want '$3'" >&2; fi
}
post() { curl -s --max-time 20 --unix-socket "$sock" -X POST -d "$2" "http://rocklet$1"; }
mode() { stat -c %a "$1" 2>/dev/null || echo missing; }

"$rocklet" serve --socket "$sock" --dir "$dir" 2>"$top/log" &
pid=$!
for _ in $(seq 1 200); do [ -S "$sock" ] && break; sleep 0.05; done
check "socket mode" "$(mode "$sock")" 600
check "--dir mode" "$(mode "$dir")" 700
check "--dir parent mode" "$(mode "$top/x'y \"z\$(id)")" 700
check "create_session" "$(post /create_session '{"session":"s"}' | jq -r .exit_code)" 0
check "sessions dir mode" "$(mode "$dir/sessions")" 700
check "session dir mode" "$(mode "$dir/sessions/s1")" 700
check "command file mode" "$(mode "$dir/sessions/s1/cmd")" 600
check "run" "$(post /run_in_session '{"session":"s","command":"echo hi; pwd >/dev/null"}' | jq -r .output)" hi
out=$(post /run_in_session '{"session":"s","command":"seq 1 100000","max_output":100}')
file=$(jq -r .output_file <<<"$out")
check "spill file" "$(jq -r .truncated <<<"$out")" true
check "spill file mode" "$(mode "$file")" 600
# the commands' own files follow the caller's umask, as they would in a shell
check "file the command writes" \
  "$(post /run_in_session '{"session":"s","command":"echo x > made; stat -c %a made; rm made"}' | jq -r .output)" 666
check "file /execute writes" \
  "$(post /execute '{"command":"echo x > made; stat -c %a made; rm made","cwd":"'"$top"'"}' | jq -r .stdout)" 666
check "close" "$(post /close '{}' | jq -r .closed)" true
wait "$pid"
check "exit" "$?" 0
rm -rf "$top"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
