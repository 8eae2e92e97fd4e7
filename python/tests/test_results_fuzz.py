#!/usr/bin/python3
"""ctest (label python): the results-file loader under random mutation.

The results-file loader is Python (xattn.results), so instead of a libFuzzer
target (fuzz/ covers the C loaders) it gets a bounded, seeded random-mutation
run here: byte flips, insertions, deletions, truncations and splices of a valid
results file, and JSON-level edits (wrong types, NaN, negative and zero times,
duplicate rows, deep nesting). Every mutant must either load and compare, or be
refused with one ResultsError line; any other exception is a finding. Time
bound: XATTN_FUZZ_SECONDS (default 10) seconds."""
import json
import math
import os
import random
import time
import unittest

import synth
from xattn import results
from xattn.perf import comparison

SECONDS = float(os.environ.get("XATTN_FUZZ_SECONDS", "10"))


def mutate_bytes(rnd, data):
    b = bytearray(data)
    for _ in range(rnd.randint(1, 8)):
        op = rnd.randrange(5)
        at = rnd.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(at, len(b) - 1)] = rnd.randrange(256)
        elif op == 1:
            b[at:at] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 8)))
        elif op == 2 and b:
            del b[at:at + rnd.randint(1, 64)]
        elif op == 3:
            del b[at:]
        else:
            j = rnd.randrange(len(b) + 1)
            b[at:at] = b[j:j + rnd.randint(1, 128)]
    return bytes(b)


WEIRD = [None, True, 0, -1, 1e308, float("nan"), float("inf"), -0.0, "", "x", [], {}, [1, 2], {"a": 1}]


def mutate_json(rnd, doc):
    doc = json.loads(json.dumps(doc))
    for _ in range(rnd.randint(1, 4)):
        op = rnd.randrange(6)
        rows = doc.get("benchmarks") if isinstance(doc, dict) else None
        rows = rows if isinstance(rows, list) else None
        if op == 0 and rows:
            row = rnd.choice(rows)
            if isinstance(row, dict) and row:
                row[rnd.choice(list(row))] = rnd.choice(WEIRD)
        elif op == 1 and rows:
            rows.append(json.loads(json.dumps(rnd.choice(rows))))
        elif op == 2 and isinstance(doc, dict):
            doc[rnd.choice(["context", "benchmarks", "schema"])] = rnd.choice(WEIRD)
        elif op == 3 and isinstance(doc, dict) and isinstance(doc.get("context"), dict) and doc["context"]:
            doc["context"][rnd.choice(list(doc["context"]))] = rnd.choice(WEIRD)
        elif op == 4:
            nest = rnd.choice(WEIRD)
            for _ in range(rnd.randint(1, 3000)):
                nest = [nest]
            if isinstance(doc, dict):
                doc["context"] = nest
        elif op == 5 and rows:
            row = rnd.choice(rows)
            if isinstance(row, dict):
                row["real_time"] = rnd.choice([float("nan"), -1.0, 0.0, float("inf"), 1e-300])
    try:
        return json.dumps(doc).encode()
    except (ValueError, RecursionError):
        return b"{}"


class ResultsFuzzTest(unittest.TestCase):
    def test_mutants_load_or_are_refused_in_one_line(self):
        import tempfile
        rnd = random.Random(12)
        base_doc = synth.make_results(3, reps=3)
        base = json.dumps(base_doc).encode()
        good = results.ResultFile("base.json", base_doc)
        deadline = time.time() + SECONDS
        n = refused = compared = 0
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "mutant.json")
            while time.time() < deadline:
                data = mutate_bytes(rnd, base) if rnd.random() < 0.5 else mutate_json(rnd, base_doc)
                with open(path, "wb") as f:
                    f.write(data)
                n += 1
                try:
                    rf = results.load_results(path)
                except results.ResultsError as e:
                    msg = str(e)
                    self.assertTrue(msg and "\n" not in msg, "refusal is not one line: %r" % msg)
                    refused += 1
                    continue
                except Exception as e:  # noqa: BLE001 - any other exception is the finding
                    self.fail("mutant %d (%d bytes) raised %s: %s; input: %r"
                              % (n, len(data), type(e).__name__, e, data[:300]))
                for row in rf.rows:  # what was accepted is comparable
                    t = results.row_seconds(row)
                    self.assertTrue(math.isfinite(t) and t > 0, "accepted a row with time %r" % t)
                try:
                    comparison.compare(good, rf, allow_mixed_machines=True)
                    compared += 1
                except results.ResultsError as e:
                    self.assertNotIn("\n", str(e))
        print("results fuzz: %d mutants in %.0fs, %d refused, %d compared" % (n, SECONDS, refused, compared))
        self.assertGreater(n, 50)


if __name__ == "__main__":
    unittest.main()
