"""pexpect_baseline.py: drive bash the way SWE-ReX and ROCK do: pexpect,
a PS1 marker to find the end of a command, then a second round trip
(`echo $?`) for the exit status.
  python3 pexpect_baseline.py shipped|nodelay N  -> mean microseconds"""
import re
import sys
import time

import pexpect

PS1 = "SHELLPS1PREFIX"
mode, n = sys.argv[1], int(sys.argv[2])
child = pexpect.spawn("/bin/bash", ["--norc", "--noprofile"], encoding="utf-8",
                      echo=False, timeout=30)
if mode == "nodelay":
    child.delaybeforesend = None  # shipped default: 0.05 s before each send
child.sendline(f"export PS1='{PS1}'; export PS2=''; export PS0=''")
child.expect(PS1)


def run(cmd):
    child.sendline(cmd)
    child.expect(PS1)
    out = child.before
    child.sendline("echo $?")
    child.expect(PS1)
    status = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", child.before)  # as SWE-ReX strips ANSI
    return out, int(status.split()[-1])


for _ in range(min(n, 20)):
    run("true")
t0 = time.perf_counter()
for _ in range(n):
    out, code = run("true")
    assert code == 0
print("%.1f" % ((time.perf_counter() - t0) / n * 1e6))
child.sendline("exit")
