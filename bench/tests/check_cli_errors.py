#!/usr/bin/python3
"""ctest: xattn-bench refuses bad flags and malformed suite files with one
clear line (naming the file/flag, the field and the reason) and a non-zero
exit, never a crash, and writes no results."""
import os, subprocess, sys, tempfile

bench = sys.argv[1]
failures = []
with tempfile.TemporaryDirectory() as tmp:
    bad_suite = os.path.join(tmp, "broken.json")
    with open(bad_suite, "w") as f:
        f.write('{"workloads": [{"name": "x", "batch": [[0, -3]]}]}')
    typo_suite = os.path.join(tmp, "typo.json")
    with open(typo_suite, "w") as f:
        f.write('{"workloads": [{"name": "x", "extend_len": 4, "batch": [[0, 4]]}]}')
    cases = [
        (["--suite", bad_suite], ["broken.json", "batch[0]", "out of range"]),
        (["--suite", typo_suite], ["typo.json", "unknown field \"extend_len\""]),
        (["--suite", os.path.join(tmp, "missing.json")], ["missing.json", "cannot open"]),
        (["--suite", "no-such-suite"], ["no-such-suite", "no suite of that name"]),
        (["--suite", "smoke", "--placement", "cores=0,4096"], ["cores=0,4096", "out of range"]),
        (["--suite", "smoke", "--placement", "spread"], ["spread", "unknown policy"]),
        (["--suite", "smoke", "--threads", "0"], ["threads", "0"]),
        (["--suite", "smoke", "--dtypes", "f64"], ["--dtypes", "f64"]),
        (["--suite", "smoke", "--frobnicate", "1"], ["--frobnicate", "unknown flag"]),
    ]
    for args, expect in cases:
        run = subprocess.run([bench, "--results-dir", tmp] + args, capture_output=True, text=True, timeout=60)
        lines = [l for l in run.stderr.splitlines() if l.strip()]
        ok = run.returncode not in (0,) and run.returncode > 0 and len(lines) == 1 and all(e in lines[0] for e in expect)
        print(("ok  " if ok else "FAIL"), args, "->", run.returncode, lines)
        if not ok:
            failures.append(args)
    written = [n for _, _, names in os.walk(tmp) for n in names if n.endswith(".json") and n not in ("broken.json", "typo.json")]
    if written:
        print("FAIL: results written on error:", written)
        failures.append("written")
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
