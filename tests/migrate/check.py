#!/usr/bin/env python3
"""scripts/migrate-0.3.py on before.c must give after.c exactly, and a second
run must change nothing (CTest: unit.migrate_0_3). Usage: check.py ROOT TMPDIR"""
import os
import subprocess
import sys

root, tmp = sys.argv[1], sys.argv[2]
here = os.path.join(root, "tests", "migrate")
script = os.path.join(root, "scripts", "migrate-0.3.py")
os.makedirs(tmp, exist_ok=True)
work = os.path.join(tmp, "app.c")
with open(os.path.join(here, "before.c")) as f:  # without the keep mark
    text = f.read().replace("; migrate-0.3: keep", "")
with open(work, "w") as f:
    f.write(text)
for run in (1, 2):
    out = subprocess.run([sys.executable, script, work], capture_output=True, text=True)
    print(out.stdout, end="")
    if out.returncode != 0:
        sys.exit("run %d exited %d: %s" % (run, out.returncode, out.stderr))
    with open(work) as f, open(os.path.join(here, "after.c")) as g:
        got, want = f.read(), g.read().replace("; migrate-0.3: keep", "")
    if got != want:
        sys.exit("run %d: the result differs from tests/migrate/after.c:\n%s" % (run, got))
    if run == 2 and not out.stdout.strip().endswith("0 call(s) changed"):
        sys.exit("the second run changed something: not idempotent")
print("ok")
