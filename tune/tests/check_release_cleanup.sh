#!/usr/bin/env bash
# tune/release_cleanup.sh (run by release.sh before it tunes): what killed
# release runs left is cleaned up and said so, what a live run is writing is
# left alone, and finished headers are untouched. issue 12 item 8: killed runs
# left *.tmp.PID files and orphan headers that `*_xattn_config_tuned.h` globs
# (xattn-tune merge) took for finished ones.
# usage: check_release_cleanup.sh SOURCE_DIR
set -u
src="$1"
tmp=$(mktemp -d)
sleep 60 & live=$!
# a killed writer its parent has not reaped yet (a zombie: the child's parent
# becomes `sleep 60`, which never waits; init on a firecracker VM reaps orphans
# as lazily): dead, it writes nothing. The child exits only once its parent has
# exec'd sleep: a child that ended earlier (`sleep 0`) was at times reaped by
# the shell before its exec, and no zombie was made (1 run in 5 under load)
sh -c 'sh -c "while [ \"\$(cat /proc/$$/comm 2>/dev/null)\" != sleep ]; do sleep 0.02; done" &
       echo $! > "$1"; exec sleep 60' sh "$tmp/zpid" & zparent=$!
trap 'kill $live $zparent 2>/dev/null; rm -rf "$tmp"' EXIT
true & dead=$!; wait $dead
zombie=
for _ in $(seq 300); do
  [ -s "$tmp/zpid" ] && zombie=$(cat "$tmp/zpid") && st=$(cat "/proc/$zombie/stat" 2>/dev/null) &&
    st=${st##*) } && [ "${st%% *}" = Z ] && break
  zombie=; sleep 0.1
done
fail=0
d="$tmp/m/abc123"; mkdir -p "$d"
touch "$d/20260101T000000Z_xattn_config_tuned.h"                      # a finished run
touch "$d/20260102T000000Z_xattn_config_tuned.h.tmp.$dead"            # header writer killed
touch "$d/o.npy.tmp.$dead"                                            # npy writer killed
touch "$d/z.npy.tmp.$zombie"                                          # writer killed, not reaped
touch "$d/20260103T000000Z_xattn_config_tuned.h.tmp.$live"            # writer at work
touch "$d/.release-running-20260104T000000Z-$dead" "$d/20260104T000000Z_xattn_config_tuned.h" \
      "$d/20260104T000000Z_tuned-vs-default.json.tmp"                 # run killed after tuning
touch "$d/.release-running-20260105T000000Z-$live" "$d/20260105T000000Z_xattn_config_tuned.h"  # run in progress
"$src/tune/release_cleanup.sh" "$tmp/m"/*/ 2>"$tmp/err"; rc=$?
check() { "$@" || { echo "FAIL: $*" >&2; fail=1; }; }
check [ $rc -eq 0 ]
check [ -f "$d/20260101T000000Z_xattn_config_tuned.h" ]
check [ ! -e "$d/20260102T000000Z_xattn_config_tuned.h.tmp.$dead" ]
check [ ! -e "$d/o.npy.tmp.$dead" ]
check grep -q "removed .*o.npy.tmp.$dead, a temp file of a killed run (pid $dead)" "$tmp/err"
check [ -n "$zombie" ] # the zombie was made
check [ ! -e "$d/z.npy.tmp.$zombie" ]
check [ -f "$d/20260103T000000Z_xattn_config_tuned.h.tmp.$live" ]
check [ ! -e "$d/20260104T000000Z_xattn_config_tuned.h" ]
check [ -f "$d/20260104T000000Z_xattn_config_tuned.h.unfinished" ]
check [ ! -e "$d/20260104T000000Z_tuned-vs-default.json.tmp" ]
check [ ! -e "$d/.release-running-20260104T000000Z-$dead" ]
check grep -q "run 20260104T000000Z (pid $dead) was killed before it finished: header renamed" "$tmp/err"
check [ -f "$d/.release-running-20260105T000000Z-$live" ]
check [ -f "$d/20260105T000000Z_xattn_config_tuned.h" ]
check [ "$(wc -l < "$tmp/err")" -eq 4 ]
# that release.sh runs it before tuning and cleans up after itself when killed:
# tune.release_killed (check_release_killed.sh) kills real runs
[ $fail -eq 0 ] && echo "release cleanup: ok" || cat "$tmp/err" >&2
exit $fail
