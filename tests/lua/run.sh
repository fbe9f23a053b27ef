#!/usr/bin/env bash
# run.sh PROGRAM ARGS...: run one test in its own $ROCK_HOME and fail it if
# it leaves anything behind: a process it started (rocklet, bash, a command:
# found by a tag in their environment), a sandbox directory, a container
# whose rock.dir label is under its $ROCK_HOME (or a runc container, a
# mount there: the runc backend's), or an image whose name
# carries its tag (tests name the images they make rock-test-tmp/<tag>-...).
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
engine_get() { # socket path -> JSON, or nothing if the engine is not there
  [ -S "$1" ] && curl -sf --max-time 5 --unix-socket "$1" "http://engine/v1.41$2" 2>/dev/null
}
for sock in /var/run/docker.sock "${ROCK_PODMAN_SOCKET:-/run/rock-test/podman.sock}"; do
  ids=$(engine_get "$sock" "/containers/json?all=1" | python3 -c '
import json, sys
home = sys.argv[1] + "/"
for c in json.load(sys.stdin) if not sys.stdin.isatty() else []:
    if ((c.get("Labels") or {}).get("rock.dir") or "").startswith(home):
        print(c["Id"])' "$home" 2>/dev/null)
  if [ -n "$ids" ]; then
    echo "LEAK: containers left behind on $sock: $ids" >&2
    for id in $ids; do curl -sf -X DELETE --unix-socket "$sock" "http://engine/v1.41/containers/$id?force=1" >/dev/null; done
    rc=1
  fi
  if engine_get "$sock" "/images/json" | grep -q "rock-test-tmp/$tag"; then
    echo "LEAK: images named rock-test-tmp/$tag-* left behind on $sock" >&2
    rc=1
  fi
done
# the runc backend's: containers in its runc root, overlay mounts under $home
for rt in runc runsc; do
  if [ -d "$home/runc" ] && command -v $rt >/dev/null; then
    ids=$($rt --root "$home/runc" list 2>/dev/null | tail -n +2 | awk '{ print $1 }')
    if [ -n "$ids" ]; then
      echo "LEAK: $rt containers left behind: $ids" >&2
      for id in $ids; do $rt --root "$home/runc" delete --force "$id" >/dev/null 2>&1; done
      rc=1
    fi
  fi
done
mounts=$(awk -v h="$home/" 'index($2, h) == 1 { print $2 }' /proc/self/mounts)
if [ -n "$mounts" ]; then
  echo "LEAK: mounts left behind: $mounts" >&2
  for m in $mounts; do umount -l "$m"; done
  rc=1
fi
rm -rf "$home"
exit $rc
