#!/usr/bin/env bash
# tune.picks_decode: a real tuning run (no fake evaluator) on one decode-step
# class (tune/testdata/decode_pick.json: E = 1, B 8, P 2048, f32) must find the
# few-rows `decode` layout fastest on this machine (the report's best
# candidate, whatever the defaults are), and the header it writes must give
# that class a decode row. The margin is 1.3-1.5x (bench/README.md), but a
# tuning run shares the cores with whatever else runs: under load one run
# failed (best gqa 16x64 at 0.748x [0.460, 1.634], a CI that says "noise").
# So up to 3 tuning runs: the test passes at the first run that measures
# decode fastest and writes it, and fails when none does. A tuner or dispatch
# that can no longer select decode for E = 1, or a decode path that is no
# longer the fastest, fails all 3 (mutation-checked: decode pruned -> FAIL).
# usage: check_picks_decode.sh XATTN_TUNE SUITE_JSON
set -u
TUNE="$1"
SUITE="$2"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
attempt() {
  # exhaustive: every candidate 3 times (90 candidates of a few ms), so one noisy
  # repetition cannot drop the decode candidates the way a 1-rep halving round can
  if ! "$TUNE" run --suite "$SUITE" --header "$T/h.h" --report "$T/r.md" --cache "$T/c.jsonl" \
      --strategy exhaustive --reps 3 --final-reps 7 --budget 60s --quiet >"$T/out" 2>&1; then
    echo "FAIL: xattn-tune run failed:" >&2; cat "$T/out" >&2; return 2
  fi
  # The tuner must itself offer and measure decode candidates: the defaults'
  # row says decode too, so a tuner that pruned every decode candidate would
  # still pass the checks below through "the defaults beat the finalists"
  # (mutation-checked: all decode candidates pruned in tune_prune.c -> FAIL here).
  # Deterministic, so no retry: the cache's search-phase repetitions of decode candidates.
  n_dec=$(grep '"t":"m"' "$T/c.jsonl" | grep '"phase":"search"' | grep -c '"cand":"[^"]*/decode/')
  if [ "$n_dec" -eq 0 ]; then
    echo "FAIL: the tuner measured no decode candidate for the E = 1 class (no search-phase decode line in its cache); the candidates it measured:" >&2
    grep '"t":"m"' "$T/c.jsonl" | sed 's/.*"cand":"\([^"]*\)".*/\1/' | sort -u | head -20 >&2
    return 2
  fi
  fail=0
  # the report's table row of the class: | `class` | workloads | candidates | considered | rejected | default | best | ...
  # columns: | class | workloads | candidates | considered | rejected | default | best | ... | decision |;
  # the fastest measured is the best candidate, or the defaults when they beat the finalists
  row=$(grep -E '^\| `[^`]*/f32/d128/dv128/causal/e0/' "$T/r.md" | head -1)
  best=$(awk -F'|' '{gsub(/ /, "", $8); print $8}' <<<"$row")
  if grep -q "the defaults beat" <<<"$row"; then
    best=$(awk -F'|' '{gsub(/ /, "", $7); print $7}' <<<"$row")
  fi
  if [[ "$best" != */decode/* ]]; then
    echo "FAIL: the fastest config the tuner measured for the E = 1 class is '$best', not a decode one (report row: $row)" >&2
    fail=1
  fi
  # the header: the first row matching (isa, f32, 128, 128, causal, extend bucket 0, prefix bucket 2)
  isa=$(sed -n 's/^| `\([^/]*\)\/f32.*/\1/p' <<<"$row")
  layout=$(grep -E '^ *X\(' "$T/h.h" | tr -d '"\\ ' | sed 's/^X(//; s/)$//' | awk -F, -v isa="$isa" '
    function m(p, v) { return p == "*" || p == "-1" || p == v }
    m($1, isa) && m($2, "f32") && m($3, 128) && m($4, 128) && m($5, "causal") && m($6, 0) && m($7, 2) { print $9; exit }')
  if [ "$layout" != decode ]; then
    echo "FAIL: the written header gives the E = 1 class layout '$layout', not decode ($T/h.h):" >&2
    grep -E '^ *X\(' "$T/h.h" >&2
    fail=1
  fi
  [ $fail = 0 ] && echo "ok: best '$best', header layout '$layout' for isa $isa, $n_dec decode repetitions measured"
  return $fail
}
for n in 1 2 3; do
  rm -rf "$T"/*
  attempt; rc=$?
  [ $rc = 0 ] && { [ $n -gt 1 ] && echo "(run $n of 3; the earlier ones are above)"; exit 0; }
  [ $rc = 2 ] && exit 1 # the tuner failed or offered no decode candidate: no retry
  echo "run $n of 3: decode not measured fastest (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
done
exit 1
