#!/usr/bin/env bash
# The fleet test (scripts/test.sh runs it; needs root): a real one-node SLURM
# on localhost (scripts/slurm-local.sh), then scripts/fleet.sh submits two
# sweep jobs that present themselves as two machines of two CPU classes
# (XATTN_MACHINE_ID / XATTN_CPU_CLASS), the smoke suite with a budget of
# seconds, and the dependent merge job. One job is requeued mid-tune with
# `scontrol requeue` and must finish from its tune cache. Then:
#   - both machines' results (tuned header, tuned-vs-default, bench) exist;
#   - the merged header holds both CPU classes, lists both machines;
#   - a build with it passes differential tests (a fast subset) under each class;
#   - `xattn info` of that build names this machine's class (exact match), the
#     other machine's class under its override, the nearest class for an unknown
#     CPU of the same ISA, and the hand default for another ISA;
#   - a merged header whose kernel digest differs is refused by the build;
#   - fleet.sh status reports both done and the requeue; merge refuses a fleet
#     with a machine missing unless --allow-partial.
# The daemons are stopped at the end, also on failure. If SLURM cannot start,
# the test says so in one line and fails.
#   tests/fleet/test_fleet.sh [--keep]    (--keep: leave the temp folder)
# (all in main: bash reads the whole function first, so editing this file
# while it runs does not change what runs)
set -euo pipefail
main() {
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
keep=0
[ "${1:-}" = --keep ] && keep=1
T0=$(date +%s)
TMP=$(mktemp -d /tmp/xattn-fleet-test.XXXXXX)
export XATTN_SLURM_DIR="$TMP/slurm"
# a port of our own, so that parallel test runs on one host do not meet
export XATTN_SLURM_PORT=$(( 20000 + (RANDOM % 2000) * 2 ))
fails=0
say() { echo "[fleet-test +$(( $(date +%s) - T0 ))s] $*" >&2; }
check() { # check "what" command...
  local what=$1; shift
  if "$@"; then say "ok: $what"; else say "FAIL: $what"; fails=$((fails + 1)); fi
}
cleanup() {
  local rc=$?
  "$ROOT/scripts/slurm-local.sh" stop 2>/dev/null || true
  if [ "$keep" = 1 ] || [ $rc -ne 0 ] || [ $fails -ne 0 ]; then say "left $TMP for inspection"
  else rm -rf "$TMP"; fi
  exit $rc
}
trap cleanup EXIT

if ! out=$("$ROOT/scripts/slurm-local.sh" start 2>&1); then
  echo "fleet test: SLURM cannot start on this machine: $(echo "$out" | tail -1)" >&2
  exit 1
fi
export SLURM_CONF="$XATTN_SLURM_DIR/slurm.conf"
say "SLURM up ($(sinfo -h -o '%N %t %c cpus'))"

# machine A: this host's real CPU class; machine B: same ISA, other model and L2
B_CLASS="GenuineIntel:6:143:1024:2"
FLEET="$TMP/fleet"
"$ROOT/scripts/fleet.sh" submit --fleet "$FLEET" --results "$TMP/results" --build-root "$TMP/build" \
  --as fleet-a --as "fleet-b:$B_CLASS" --suite smoke --budget 25s --reps 3 --time 15 --shared --cpus 1 --no-peers \
  --bench-args "--threads 1 --repetitions 2 --no-baseline --reference-max-gflop 0 --peak-seconds 0.005 --benchmark_min_time=0.01" \
  >/dev/null
JOB_A=$(cat "$FLEET/jobs/fleet-a.jobid")
MERGE_JOB=$(sed -n 's/^merge_job=//p' "$FLEET/plan.env")
say "submitted: fleet-a job $JOB_A, fleet-b job $(cat "$FLEET/jobs/fleet-b.jobid"), merge job $MERGE_JOB"

# requeue fleet-a once its tuner has recorded measurements (mid-tune)
cache_lines() {
  local c
  c=$(sed -n 's/.*cache \(\/[^ ]*\.jsonl\)$/\1/p' "$FLEET/jobs/fleet-a.release.log" 2>/dev/null | tail -1)
  [ -n "$c" ] && [ -f "$c" ] && wc -l < "$c" || echo 0
}
requeued=0
for _ in $(seq 300); do
  if [ "$(cache_lines)" -ge 20 ] && grep -q '2/5 tuning' "$FLEET/jobs/fleet-a.release.log" 2>/dev/null &&
     ! grep -q '3/5' "$FLEET/jobs/fleet-a.release.log"; then
    before=$(cache_lines)
    scontrol requeue "$JOB_A"
    requeued=1
    say "requeued fleet-a (job $JOB_A) mid-tune with $before measurements in its cache"
    break
  fi
  [ "$(sed -n 's/^phase=//p' "$FLEET/jobs/fleet-a.state")" = done ] && break
  sleep 1
done
check "fleet-a was requeued mid-tune" [ "$requeued" = 1 ]
# SLURM holds a requeued batch job for a while (BeginTime now+120 s); release it now
for _ in $(seq 30); do
  st=$(squeue -h -j "$JOB_A" -o '%T' 2>/dev/null || true)
  if [ "$st" = PENDING ]; then scontrol update JobId="$JOB_A" StartTime=now && break; fi
  sleep 1
done

# wait for the merge job to leave the queue
for _ in $(seq 420); do
  [ -z "$(squeue -h -j "$MERGE_JOB" -o '%T' 2>/dev/null || true)" ] && break
  sleep 1
done
say "fleet finished"
"$ROOT/scripts/fleet.sh" status --fleet "$FLEET" | tee "$TMP/status.txt" >&2

st_a="$FLEET/jobs/fleet-a.state"
st_b="$FLEET/jobs/fleet-b.state"
check "fleet-a done" grep -q '^phase=done' "$st_a"
check "fleet-b done" grep -q '^phase=done' "$st_b"
# a machine that did not finish: its job log's tail says why (CI keeps no temp folder)
for m in fleet-a fleet-b; do
  grep -q '^phase=done' "$FLEET/jobs/$m.state" && continue
  for f in "$FLEET/logs/$m"-*.out; do
    [ -f "$f" ] && { say "--- last 40 lines of $f"; tail -n 40 "$f" >&2; }
  done
done
check "fleet-a ran twice (restarts=1)" grep -q '^restarts=1' "$st_a"
check "fleet-a resumed its tuning from the cache" \
  grep -Eq 'resuming with [1-9][0-9]* recorded measurements' "$FLEET/jobs/fleet-a.release.log"
for m in fleet-a fleet-b; do
  d=$(ls -d "$TMP/results/$m"/*/ 2>/dev/null | head -1)
  check "$m: tuned header in results/$m/<commit>/" test -s "$(ls "$d"/*_xattn_config_tuned.h 2>/dev/null | head -1)"
  check "$m: tuned-vs-default report" test -s "$(ls "$d"/*_tuned-vs-default.json 2>/dev/null | head -1)"
  check "$m: bench results with the default header" test -s "$(ls "$d"/*_smoke-default-header.json 2>/dev/null | head -1)"
  check "$m: bench results with the tuned header" test -s "$(ls "$d"/*_smoke-tuned-header.json 2>/dev/null | head -1)"
done
check "fleet-b's bench results record its CPU class" \
  grep -q "\"xattn_cpu_class\": \"$(XATTN_CPU_CLASS=$B_CLASS "$TMP/build/fleet-b/tune/bin/xattn-tune" identity | sed -n 's/^cpu class: *//p')\"" \
  $(ls "$TMP/results/fleet-b"/*/*_smoke-tuned-header.json | head -1)
check "status shows both done" [ "$(grep -c ' done ' "$TMP/status.txt")" -ge 2 ]

MERGED="$FLEET/xattn_config_fleet.h"
check "merge job wrote the merged header" grep -q '^phase=done' "$FLEET/merge.state"
real_name=$(XATTN_MACHINE_ID= "$TMP/build/fleet-a/tune/bin/xattn-tune" identity | sed -n 's/^cpu class: *//p')
b_name=$(XATTN_CPU_CLASS=$B_CLASS "$TMP/build/fleet-b/tune/bin/xattn-tune" identity | sed -n 's/^cpu class: *//p')
check "merged header holds class A ($real_name)" grep -q "C(\"$real_name\"" "$MERGED"
check "merged header holds class B ($b_name)" grep -q "C(\"$b_name\"" "$MERGED"
check "provenance lists both machines" grep -q 'machines: fleet-a (class .*commit .*speedup .*fleet-b (class' "$MERGED"

# a build with the merged header: differential tests (fast subset) under each class
variants=$(sed -n 's/^variants=//p' "$FLEET/merge.state")
say "building with the merged header (variants $variants)"
cmake -S "$ROOT" -B "$TMP/merged-build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DXATTN_BUILD_BENCH=OFF \
  -DXATTN_BUILD_TUNE=OFF -DXATTN_CONFIG_HEADER="$MERGED" -DXATTN_VARIANTS="$variants" >/dev/null
cmake --build "$TMP/merged-build" -j"$(nproc)" --target xattn_cli test_diff >/dev/null
BIN="$TMP/merged-build/bin/xattn"
DIFF=$(find "$TMP/merged-build" -name test_diff -type f -executable | head -1)
check "differential tests, this CPU's class" env OMP_WAIT_POLICY=PASSIVE "$DIFF" --modes causal_br,causal_tl,bidirectional,cross,tree --shapes small --level reduced
check "differential tests, class B's rows" env OMP_WAIT_POLICY=PASSIVE XATTN_CPU_CLASS=$B_CLASS "$DIFF" --modes causal_br,causal_tl,bidirectional,cross,tree --shapes small --level reduced
# the config path itself (test_diff passes explicit options): cases of the smoke
# suite's shape run with the rows of each class, checked by the numpy oracle
for dt in f32 bf16; do
  "$TMP/merged-build/bin/xattn" make-case "$TMP/case-$dt" --mode causal --dtype "$dt" --heads-q 4 --heads-kv 2 \
    --head-dim 32 --head-dim-v 32 --prefix 0 --extend 48 >/dev/null
  for cls in "" "$B_CLASS"; do
    want=$([ -z "$cls" ] && echo "$real_name" || echo "$b_name")
    line=$(XATTN_CPU_CLASS=$cls "$BIN" run "$TMP/case-$dt" -o "$TMP/case-$dt/o.npy")
    say "  $line"
    check "$dt case runs with the rows of class $want" grep -q "cpu class $want" <<< "$line"
    check "$dt case under class $want matches the oracle" "$TMP/merged-build/bin/xattn" oracle "$TMP/case-$dt" \
      --check "$TMP/case-$dt/o.npy"
  done
done
"$BIN" info > "$TMP/info.txt"
check "xattn info names this machine's class (exact)" grep -q "^config class:  $real_name (exact" "$TMP/info.txt"
check "xattn info names class B under its override" \
  sh -c "XATTN_CPU_CLASS=$B_CLASS '$BIN' info | grep -q '^config class:  $b_name (exact'"
check "an unknown CPU of the ISA gets the nearest class" \
  sh -c "XATTN_CPU_CLASS=GenuineIntel:6:143:512:2 '$BIN' info | grep -q '^config class:  $b_name (nearest'"
# "another ISA" is one that neither class has: both take this machine's best
# (the class name ends with it), which is avx2 itself on a Zen 3
other_isa=$([ "${real_name##*-}" = avx2 ] && echo avx512 || echo avx2)
check "a CPU of another ISA ($other_isa) gets the hand default rows" \
  sh -c "XATTN_CPU_CLASS=GenuineIntel:6:85:1024:2:$other_isa '$BIN' info | grep -q '^config class:  none (none of the 2'"

# a merged header of other kernels is refused by the build, in one line
sed 's/^#define XATTN_CONFIG_KERNEL_DIGEST ".*"/#define XATTN_CONFIG_KERNEL_DIGEST "00000000deadbeef"/' "$MERGED" > "$TMP/other-kernels.h"
cmake -S "$ROOT" -B "$TMP/refused-build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DXATTN_BUILD_BENCH=OFF \
  -DXATTN_BUILD_TUNE=OFF -DXATTN_BUILD_TESTS=OFF -DXATTN_CONFIG_HEADER="$TMP/other-kernels.h" -DXATTN_VARIANTS="$variants" >/dev/null
if cmake --build "$TMP/refused-build" --target xattn_config_digest_check > "$TMP/refused.txt" 2>&1; then
  say "FAIL: a merged header of other kernels was accepted"; fails=$((fails + 1))
else
  check "digest mismatch refused with a clear line" grep -q "merged from tunings of kernels sha256:00000000deadbeef" "$TMP/refused.txt"
fi

# merge refuses an incomplete fleet, names the machine; --allow-partial merges the rest
cp -r "$FLEET" "$TMP/partial"
sed -i 's/^phase=done/phase=failed/' "$TMP/partial/jobs/fleet-b.state"
sed -i "s|^build_root=.*|build_root=$TMP/build|" "$TMP/partial/plan.env"
if "$ROOT/scripts/fleet.sh" merge --fleet "$TMP/partial" 2> "$TMP/partial.txt"; then
  say "FAIL: an incomplete fleet was merged"; fails=$((fails + 1))
else
  check "incomplete fleet refused, naming fleet-b" grep -q "did not finish: fleet-b" "$TMP/partial.txt"
  check "the refusal names fleet-b's node once" grep -q "fleet-b (job [0-9]*, node $(hostname -s), failed" "$TMP/partial.txt"
fi
check "--allow-partial merges the finished machine" "$ROOT/scripts/fleet.sh" merge --fleet "$TMP/partial" --allow-partial

say "$fails failure(s), $(( $(date +%s) - T0 )) s"
[ "$fails" = 0 ]
}
main "$@"
