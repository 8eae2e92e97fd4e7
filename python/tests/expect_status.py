#!/usr/bin/python3
"""expect_status.py STATUS CMD...: run CMD, succeed iff it exits with STATUS.
Exits 77 (ctest: skipped) when CMD's executable does not exist (yet)."""
import os
import subprocess
import sys

want, cmd = int(sys.argv[1]), sys.argv[2:]
if not os.path.exists(cmd[0]):
    print("skipped: %s not built" % cmd[0])
    sys.exit(77)
got = subprocess.call(cmd)
print("%s exited %d, expected %d" % (os.path.basename(cmd[0]), got, want))
sys.exit(0 if got == want else 1)
