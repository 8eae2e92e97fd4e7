#!/usr/bin/env bash
# tune.flush_caches: `xattn-tune run --flush-caches` times every call from
# flushed caches (bench's xb_problem_flush before each timed call) and says so
# everywhere the measurements go: the cache's identity line ("timing":
# "flushed"), the header's provenance and the report ("timing: flushed"), and
# one progress line counting the flushes (counted inside xb_problem_flush, so
# a tuner that stops calling it reports 0 and fails here). A warm run on the
# flushed cache is refused with one line naming the field (warm and flushed
# timings are different measurements); `compare --flush-caches` flushes too
# and says so in its report. What this cannot show: that the lines left the
# caches (bench.problem_builder checks the flush changes no byte; the
# evidence of eviction is the cold / warm time difference in bench/README.md).
# usage: check_flush.sh XATTN_TUNE SUITE_JSON DEFAULT_HEADER
set -u
TUNE="$1"
SUITE="$2"
DEFAULT_HEADER="$3"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }
if ! "$TUNE" run --suite "$SUITE" --header "$T/h.h" --report "$T/r.md" --cache "$T/c.jsonl" --flush-caches \
    --strategy random --random-count 3 --reps 2 --final-reps 3 --finalists 1 --budget 60s --quiet >"$T/out" 2>&1; then
  echo "FAIL: xattn-tune run --flush-caches failed:" >&2; cat "$T/out" >&2; exit 1
fi
head -1 "$T/c.jsonl" | grep -q '"timing":"flushed"' || bad "the cache's identity line does not say flushed: $(head -1 "$T/c.jsonl")"
grep -q 'timing: flushed' "$T/h.h" || bad "the header's provenance does not say flushed"
grep -q '^- timing: flushed' "$T/r.md" || bad "the report does not say flushed"
n=$(sed -n 's/^\[tune\] caches flushed before \([0-9]*\) timed calls$/\1/p' "$T/out")
nm=$(grep -c '"t":"m"' "$T/c.jsonl")
if [ -z "$n" ] || [ "$n" -lt "$nm" ]; then
  bad "flushes counted: '${n:-none}', fewer than the $nm timed repetitions recorded"
fi
# a warm run must not reuse flushed measurements
if "$TUNE" run --suite "$SUITE" --header "$T/h2.h" --cache "$T/c.jsonl" --strategy random --random-count 3 \
    --reps 2 --quiet >"$T/out2" 2>&1; then
  bad "a warm run reused the flushed cache"
else
  lines=$(grep -c 'timing' "$T/out2")
  grep -q "different timing ('flushed', this run: 'warm')" "$T/out2" && [ "$lines" -eq 1 ] ||
    bad "the refusal does not name the timing in one line: $(cat "$T/out2")"
fi
# compare flushes too and says so: against a baseline whose E = 1 rows differ
# from the built-in header's (the schedule), so that both sides are timed.
# Every ISA's E = 1 row changes, not only the catch-all: the first matching
# row wins, and on an AVX2-only machine (Zen 3) that is avx2's own row.
sed 's/, 0, -1, "64x64", "decode", "static",/, 0, -1, "64x64", "decode", "dynamic",/' \
  "$DEFAULT_HEADER" >"$T/base.h"
cmp -s "$T/base.h" "$DEFAULT_HEADER" && bad "the baseline header is the default one: the E = 1 rows to change are gone"
if ! "$TUNE" compare --suite "$SUITE" --baseline "$T/base.h" --reps 3 --report "$T/cmp.md" --flush-caches >"$T/out3" 2>&1; then
  bad "xattn-tune compare --flush-caches failed: $(tail -3 "$T/out3")"
fi
grep -q '^- timing: flushed' "$T/cmp.md" 2>/dev/null || bad "the compare report does not say flushed"
nc=$(sed -n 's/^\[compare\] caches flushed before \([0-9]*\) timed calls$/\1/p' "$T/out3")
[ -n "$nc" ] && [ "$nc" -ge 6 ] || bad "compare counted '${nc:-no}' flushes (at least 3 repetitions per side)"
[ $fail = 0 ] && echo "ok: $n flushes for $nm recorded repetitions, compare $nc; warm reuse refused"
exit $fail
