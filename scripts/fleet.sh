#!/usr/bin/env bash
# scripts/fleet.sh — sweeps over a fleet of machines on SLURM, and one release
# header for all of them (docs/fleet-runbook.md).
#
#   scripts/fleet.sh submit [options]     one sweep job per target (node, feature or
#                                         partition) + a merge job after all of them
#   scripts/fleet.sh status [--fleet DIR] each target's job state and how far its sweep is
#   scripts/fleet.sh merge  [--fleet DIR] [--allow-partial]
#                                         what the merge job runs: the finished machines'
#                                         tuned headers -> DIR/xattn_config_fleet.h
#
# submit options:
#   --node NAME           one job on this node (--nodelist); repeatable
#   --feature F           one job on a node with this feature (--constraint); repeatable
#   --partitions P1,P2    one job per partition
#   (none of the three: one job on the default partition)
#   --partition P         the partition of every job (with --node / --feature)
#   --account A           sbatch --account
#   --time T              time limit of each sweep job (sbatch --time; default 02:00:00)
#   --suite S             suites to tune and bench (repeatable; default: default)
#   --budget B            tuning budget per machine (default 10m)
#   --reps N              repetitions of the tuned-vs-default check (default 15)
#   --no-bench            skip xattn-bench with both headers
#   --bench-args "ARGS"   more xattn-bench flags (e.g. "--repetitions 3 --threads 1")
#   --no-peers            skip the peers even where their venv (.venv) exists
#   --allow-partial       the merge job merges the machines that finished and names the rest
#   --fleet DIR           this fleet's folder on the shared filesystem
#                         (default results/fleet/<commit>); holds jobs/, logs/, the merged header
#   --results DIR         results tree, results/<machine>/<commit>/ (default: the checkout's results/)
#   --build-root DIR      where each target's builds go, DIR/<target>/{tune,release}
#                         (default <fleet>/build; node-local disk is fine: see the runbook)
#   --shared --cpus N     do not ask for exclusive nodes, N CPUs per job (tests, shared nodes)
#   --as ID[:CLASS]       TESTS ONLY: one job per ID presenting as machine ID
#                         (XATTN_MACHINE_ID) and, with CLASS, as CPU class
#                         vendor:family:model:l2_kib:cores_per_l3 (XATTN_CPU_CLASS); repeatable
#
# The fleet is pinned to the checkout's HEAD commit: every job refuses to run
# another one. Jobs are submitted with --requeue; a requeued job resumes its
# tuning from the machine's tune cache.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { echo "fleet.sh: $*" >&2; exit 1; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

# key=value files: the value of key, "" if absent
kv() { [ -f "$1" ] && sed -n "s/^$2=//p" "$1" | tail -1 || true; }

default_fleet() { echo "$ROOT/results/fleet/$(git -C "$ROOT" rev-parse --short=12 HEAD)"; }

submit() {
  local fleet="" results="$ROOT/results" build_root="" partition="" account="" time="02:00:00"
  local budget=10m reps=15 bench=1 bench_args="" peers=1 partial=0 shared=0 cpus=""
  local -a nodes=() features=() partitions=() suites=() as=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --node) nodes+=("$2"); shift 2 ;;
      --feature) features+=("$2"); shift 2 ;;
      --partitions) IFS=, read -r -a partitions <<< "$2"; shift 2 ;;
      --partition) partition="$2"; shift 2 ;;
      --account) account="$2"; shift 2 ;;
      --time) time="$2"; shift 2 ;;
      --suite) suites+=("$2"); shift 2 ;;
      --budget) budget="$2"; shift 2 ;;
      --reps) reps="$2"; shift 2 ;;
      --no-bench) bench=0; shift ;;
      --bench-args) bench_args="$2"; shift 2 ;;
      --no-peers) peers=0; shift ;;
      --allow-partial) partial=1; shift ;;
      --fleet) fleet="$2"; shift 2 ;;
      --results) results="$2"; shift 2 ;;
      --build-root) build_root="$2"; shift 2 ;;
      --shared) shared=1; shift ;;
      --cpus) cpus="$2"; shift 2 ;;
      --as) as+=("$2"); shift 2 ;;
      -h|--help) usage; exit 0 ;;
      *) die "submit: unknown argument '$1' (see --help)" ;;
    esac
  done
  command -v sbatch >/dev/null || die "submit: sbatch not found (SLURM client tools; scripts/install-deps.sh)"
  [ ${#suites[@]} -gt 0 ] || suites=(default)
  for s in "${suites[@]}"; do
    [ -f "$ROOT/bench/suites/$s.json" ] || [ -f "$s" ] || die "submit: --suite: no suite '$s' (bench/suites/$s.json)"
  done
  [[ "$budget" =~ ^[0-9]+[smh]?([0-9]+[smh])*$ ]] || die "submit: --budget: '$budget' is not a duration (90s, 10m, 1h)"
  [[ "$reps" =~ ^[1-9][0-9]*$ ]] || die "submit: --reps: '$reps' is not a positive count"
  [ -z "$cpus" ] || [[ "$cpus" =~ ^[1-9][0-9]*$ ]] || die "submit: --cpus: '$cpus' is not a positive count"
  local commit
  commit=$(git -C "$ROOT" rev-parse HEAD) || die "submit: $ROOT is not a git checkout (the fleet is pinned to a commit)"
  fleet=${fleet:-$(default_fleet)}
  [ -e "$fleet/plan.env" ] && die "submit: $fleet already holds a fleet (plan.env); give another --fleet or remove it"
  build_root=${build_root:-$fleet/build}
  mkdir -p "$fleet/jobs" "$fleet/logs" "$results"
  fleet=$(cd "$fleet" && pwd)
  results=$(cd "$results" && pwd)

  # targets: name + the sbatch options that put the job there
  local -a tnames=() topts=()
  local n
  for n in "${nodes[@]}"; do tnames+=("node-$n"); topts+=("--nodelist=$n"); done
  for n in "${features[@]}"; do tnames+=("feature-$n"); topts+=("--constraint=$n"); done
  for n in "${partitions[@]}"; do tnames+=("partition-$n"); topts+=("--partition=$n"); done
  if [ ${#tnames[@]} -eq 0 ]; then tnames+=("default"); topts+=(""); fi

  local -a common=(--parsable --requeue --time="$time" --chdir="$ROOT")
  [ -n "$partition" ] && common+=(--partition="$partition")
  [ -n "$account" ] && common+=(--account="$account")
  if [ "$shared" = 1 ]; then common+=(--oversubscribe); else common+=(--exclusive); fi
  [ -n "$cpus" ] && common+=(--cpus-per-task="$cpus")

  export XATTN_FLEET_SRC="$ROOT" XATTN_FLEET_DIR="$fleet" XATTN_FLEET_RESULTS="$results"
  export XATTN_FLEET_COMMIT="$commit" XATTN_FLEET_BUDGET="$budget" XATTN_FLEET_REPS="$reps"
  export XATTN_FLEET_BENCH="$bench" XATTN_FLEET_BENCH_ARGS="$bench_args" XATTN_FLEET_PEERS="$peers"
  export XATTN_FLEET_ALLOW_PARTIAL="$partial"
  XATTN_FLEET_SUITES=$(IFS=,; echo "${suites[*]}")
  export XATTN_FLEET_SUITES

  local -a ids=() names=()
  local i
  for i in "${!tnames[@]}"; do
    local -a idents=("")
    [ ${#as[@]} -gt 0 ] && idents=("${as[@]}")
    local ident
    for ident in "${idents[@]}"; do
      local name=${tnames[$i]} machine_id="" cpu_class=""
      if [ -n "$ident" ]; then
        machine_id=${ident%%:*}
        [[ "$ident" == *:* ]] && cpu_class=${ident#*:}
        [[ "$machine_id" =~ ^[A-Za-z0-9_-][A-Za-z0-9._-]*$ ]] || die "submit: --as: '$machine_id' is not a machine name"
        name=$([ ${#tnames[@]} -eq 1 ] && [ "${tnames[0]}" = default ] && echo "$machine_id" || echo "$name-$machine_id")
      fi
      local -a opts=("${common[@]}" --job-name="xattn-sweep-$name" --output="$fleet/logs/$name-%j.out")
      [ -n "${topts[$i]}" ] && opts+=("${topts[$i]}")
      local id
      id=$(env -u XATTN_MACHINE_ID -u XATTN_CPU_CLASS XATTN_FLEET_TARGET="$name" \
             XATTN_FLEET_BUILD="$build_root/$name" \
             ${machine_id:+XATTN_MACHINE_ID="$machine_id"} ${cpu_class:+XATTN_CPU_CLASS="$cpu_class"} \
             sbatch "${opts[@]}" "$ROOT/scripts/fleet/sweep.sbatch") || die "submit: sbatch refused target $name"
      id=${id%%;*}
      echo "$id" > "$fleet/jobs/$name.jobid"
      printf 'target=%s\njob=%s\nphase=queued\nrestarts=0\nwhere=%s\n' "$name" "$id" "${topts[$i]:-default partition}" \
        > "$fleet/jobs/$name.state"
      ids+=("$id")
      names+=("$name")
      echo "fleet.sh: target $name: job $id ${topts[$i]}${machine_id:+ (as machine $machine_id${cpu_class:+, CPU class $cpu_class})}" >&2
    done
  done
  local -a mopts=(--parsable --job-name=xattn-merge --output="$fleet/logs/merge-%j.out" --chdir="$ROOT"
                  --dependency="afterany:$(IFS=:; echo "${ids[*]}")")
  [ -n "$partition" ] && mopts+=(--partition="$partition")
  [ -n "$account" ] && mopts+=(--account="$account")
  local merge_id
  merge_id=$(sbatch "${mopts[@]}" "$ROOT/scripts/fleet/merge.sbatch") || die "submit: sbatch refused the merge job"
  merge_id=${merge_id%%;*}
  {
    echo "commit=$commit"
    echo "results=$results"
    echo "build_root=$build_root"
    echo "targets=${names[*]}"
    echo "jobs=${ids[*]}"
    echo "merge_job=$merge_id"
    echo "allow_partial=$partial"
    echo "suites=$XATTN_FLEET_SUITES"
    echo "budget=$budget"
    echo "submitted=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  } > "$fleet/plan.env"
  echo "fleet.sh: merge job $merge_id after ${ids[*]} (afterany; $([ "$partial" = 1 ] && echo "--allow-partial" || echo "refuses an incomplete fleet"))" >&2
  echo "fleet.sh: fleet folder $fleet; scripts/fleet.sh status --fleet $fleet" >&2
  echo "$fleet"
}

# the squeue state of a job ("" when it left the queue)
queue_state() { squeue -h -j "$1" -o '%T %R' 2>/dev/null | head -1 || true; }

status() {
  local fleet=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --fleet) fleet="$2"; shift 2 ;;
      *) die "status: unknown argument '$1'" ;;
    esac
  done
  fleet=${fleet:-$(default_fleet)}
  local plan="$fleet/plan.env"
  [ -f "$plan" ] || die "status: no fleet in $fleet (no plan.env; see submit --fleet)"
  local acct="sacct"
  sacct -n -j 1 >/dev/null 2>&1 || acct="no accounting storage (slurmdbd): finished jobs are read from their progress files"
  echo "fleet $fleet: commit $(kv "$plan" commit), suites $(kv "$plan" suites), budget $(kv "$plan" budget)"
  echo "job states: squeue; $acct"
  printf '%-24s %-8s %-22s %-10s %-8s %s\n' TARGET JOB SLURM PHASE RESTARTS PROGRESS
  local t
  for t in $(kv "$plan" targets); do
    local st="$fleet/jobs/$t.state" job q phase progress=""
    job=$(kv "$st" job)
    q=$(queue_state "$job")
    if [ -z "$q" ] && [ "$acct" = sacct ]; then q=$(sacct -n -X -j "$job" -o State 2>/dev/null | head -1 | tr -s ' ')
    fi
    phase=$(kv "$st" phase)
    local log="$fleet/jobs/$t.release.log"
    if [ "$phase" = done ]; then
      progress="machine $(kv "$st" machine), peers $(kv "$st" peers)"
    elif [ -f "$log" ]; then
      progress=$(grep '^\[release\]' "$log" | tail -1 | sed 's/^\[release\] //')
      local cache
      cache=$(sed -n 's/.*cache \(\/[^ ]*\.jsonl\)$/\1/p' "$log" | tail -1)
      [ -n "$cache" ] && [ -f "$cache" ] && progress="$progress; tune cache $(wc -l < "$cache") measurements"
    fi
    [ "$phase" = failed ] && progress="$(kv "$st" exit); node $(kv "$st" node); see $fleet/logs/$t-$job.out"
    printf '%-24s %-8s %-22s %-10s %-8s %s\n' "$t" "$job" "${q:-ended}" "${phase:-?}" "$(kv "$st" restarts)" "$progress"
  done
  local mj ms
  mj=$(kv "$plan" merge_job)
  ms=$(kv "$fleet/merge.state" phase)
  q=$(queue_state "$mj")
  echo "merge job $mj: ${q:-ended}, ${ms:-not run}$([ "$ms" = done ] && echo ": $(kv "$fleet/merge.state" header)")"
  [ "$ms" = refused ] && echo "  $(kv "$fleet/merge.state" reason)"
  return 0
}

merge() {
  local fleet="" partial=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --fleet) fleet="$2"; shift 2 ;;
      --allow-partial) partial=1; shift ;;
      *) die "merge: unknown argument '$1'" ;;
    esac
  done
  fleet=${fleet:-$(default_fleet)}
  local plan="$fleet/plan.env"
  [ -f "$plan" ] || die "merge: no fleet in $fleet (no plan.env)"
  local -a headers=() missing=() done_targets=()
  local t
  for t in $(kv "$plan" targets); do
    local st="$fleet/jobs/$t.state" h
    h=$(kv "$st" header)
    if [ "$(kv "$st" phase)" = done ] && [ -f "$h" ]; then
      headers+=("$h")
      done_targets+=("$t")
    else
      local why node
      why="$(kv "$st" phase) $(kv "$st" exit)"
      node=$(kv "$st" node)
      if [ -n "$node" ]; then node="node $node"; else node="never started: $(kv "$st" where)"; fi
      missing+=("$t (job $(kv "$st" job), $node, ${why% })")
    fi
  done
  local out="$fleet/xattn_config_fleet.h"
  local state_tmp="$fleet/merge.state.tmp.$$"
  if [ ${#missing[@]} -gt 0 ] && { [ "$partial" = 0 ] || [ ${#headers[@]} -eq 0 ]; }; then
    local reason
    reason="${#missing[@]} of $(wc -w <<< "$(kv "$plan" targets)") machines did not finish: $(IFS=';'; echo "${missing[*]}")"
    printf 'phase=refused\nreason=%s\n' "$reason" > "$state_tmp" && mv "$state_tmp" "$fleet/merge.state"
    die "merge: $reason; rerun them, or merge what finished with --allow-partial"
  fi
  [ ${#missing[@]} -gt 0 ] && echo "fleet.sh: merge: --allow-partial: leaving out $(IFS=';'; echo "${missing[*]}")" >&2
  # merging needs no kernels: the xattn-tune of any finished target's build of this commit
  local tune
  tune="$(kv "$plan" build_root)/${done_targets[0]}/tune/bin/xattn-tune"
  [ -x "$tune" ] || die "merge: $tune not found (the build of target ${done_targets[0]})"
  "$tune" merge --out "$out" "${headers[@]}"
  {
    echo "phase=done"
    echo "header=$out"
    echo "machines=${done_targets[*]}"
    echo "missing=$(IFS=';'; echo "${missing[*]}")"
    echo "variants=$("$tune" variants "$out")"
  } > "$state_tmp" && mv "$state_tmp" "$fleet/merge.state"
  echo "fleet.sh: merged ${#headers[@]} machine(s) into $out" >&2
}

case "${1:-}" in
  submit) shift; submit "$@" ;;
  status) shift; status "$@" ;;
  merge) shift; merge "$@" ;;
  -h|--help) usage ;;
  *) usage >&2; exit 2 ;;
esac
