#!/usr/bin/python3
"""The release check's verdict, held: release.sh step 5 measures the tuned
header against the default one (xattn-tune compare --json); a tuned class that
this check finds SLOWER beyond the noise (95% CI of default/tuned entirely
below 1) must not ship as it is.

  release_check.py COMPARE_JSON HEADER [--on-slower drop|fail]

drop (default): the header's rows of those classes are removed (their calls
fall back to the base rows below them, i.e. the defaults), each named on
stderr, and the exit status is 10 so that release.sh rebuilds and checks again.
fail: exit 1 naming the classes. Exit 0 when no tuned class is slower; 2 on
unreadable input or a slower class whose row is not in the header."""
import argparse
import json
import re
import sys

KEY = re.compile(r"^([^/]+)/([^/]+)/d(-?\d+)/dv(-?\d+)/([^/]+)/e(-?\d+)/p(-?\d+)(#.*)?$")


def row_pattern(cls):
    """The X(...) row of a class key 'isa/dtype/dD/dvDV/mode/eE/pP#digest'."""
    m = KEY.match(cls)
    if not m:
        return None
    isa, dtype, d, dv, mode, e, p = m.groups()[:7]
    return re.compile(r'^\s*X\("%s", "%s", %s, %s, "%s", %s, %s,' % (re.escape(isa), re.escape(dtype), d, dv,
                                                                    re.escape(mode), e, p))


def slower_classes(cmp):
    out = []
    for c in cmp.get("classes", []):
        if not isinstance(c, dict) or c.get("identical"):
            continue
        hi = c.get("ci_hi")
        if isinstance(hi, (int, float)) and hi < 1.0:
            out.append(c)
    return out


def drop_rows(lines, classes):
    """lines without the rows (and their comment lines) of classes; (lines, missing)."""
    missing, drop = [], set()
    for c in classes:
        pat = row_pattern(c["class"])
        hit = [i for i, l in enumerate(lines) if pat and pat.match(l)]
        if not hit:
            missing.append(c["class"])
            continue
        for i in hit:
            drop.add(i)
            if i > 0 and lines[i - 1].lstrip().startswith("/*"):
                drop.add(i - 1)
    return [l for i, l in enumerate(lines) if i not in drop], missing


# the provenance's count, as tune_report.c writes it and as a previous round of
# this check rewrote it: "(geomean, A of B classes tuned)" or
# "(geomean before the release check, A of B classes tuned, dropped by the release check: X Y)"
TUNED_COUNT = re.compile(r"\(geomean[^,()]*, (\d+) of (\d+) classes tuned(?:, dropped by the release check: ([^()]*))?\)")


def restate_provenance(lines, dropped):
    """The XATTN_CONFIG_PROVENANCE string rewritten to state the classes actually
    shipped: the tuner's count less the dropped ones, which are named (no ';' in
    it: tools split the provenance at '; ')."""
    for i, l in enumerate(lines):
        m = TUNED_COUNT.search(l)
        if not m or not any("XATTN_CONFIG_PROVENANCE" in p for p in lines[max(0, i - 1):i + 1]):
            continue
        names = (m.group(3).split() if m.group(3) else []) + dropped
        text = "(geomean before the release check, %d of %s classes tuned, dropped by the release check: %s)" % (
            max(0, int(m.group(1)) - len(dropped)), m.group(2), " ".join(names))
        lines[i] = l[:m.start()] + text + l[m.end():]
        return lines
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("compare_json")
    ap.add_argument("header")
    ap.add_argument("--on-slower", choices=["drop", "fail"], default="drop")
    a = ap.parse_args(argv)
    try:
        with open(a.compare_json) as f:
            cmp = json.load(f)
        with open(a.header) as f:
            lines = f.read().split("\n")
    except (OSError, ValueError) as e:
        print("release_check: %s" % e, file=sys.stderr)
        return 2
    slow = slower_classes(cmp)
    if not slow:
        print("[release] check: no tuned class is slower than the defaults beyond the noise", file=sys.stderr)
        return 0
    for c in slow:
        print("[release] check: %s is SLOWER tuned (%s) than default (%s): %.3fx [%.3f, %.3f]"
              % (c["class"], c.get("tuned"), c.get("default"), c.get("speedup", float("nan")),
                 c.get("ci_lo", float("nan")), c.get("ci_hi", float("nan"))), file=sys.stderr)
    if a.on_slower == "fail":
        print("release_check: %d tuned class(es) slower than the defaults; failing (--on-slower fail)" % len(slow),
              file=sys.stderr)
        return 1
    kept, missing = drop_rows(lines, slow)
    if missing:
        print("release_check: no header row for %s in %s" % (", ".join(missing), a.header), file=sys.stderr)
        return 2
    # the rows that remain are still terminated correctly: the last X(...) has no
    # trailing backslash, every other one has
    start = next(i for i, l in enumerate(kept) if l.startswith("#define XATTN_CONFIG_CLASSES"))
    rows = []
    for i in range(start + 1, len(kept)):
        if not (kept[i].lstrip().startswith("X(") or kept[i].lstrip().startswith("/*")):
            break
        rows.append(i)
    for i in rows:
        kept[i] = kept[i].rstrip(" \\") + (" \\" if i != rows[-1] else "")
    kept = restate_provenance(kept, [c["class"] for c in slow])
    with open(a.header, "w") as f:
        f.write("\n".join(kept))
    print("[release] check: dropped %d slower row(s) from %s; they fall back to the defaults"
          % (len(slow), a.header), file=sys.stderr)
    return 10


if __name__ == "__main__":
    sys.exit(main())
