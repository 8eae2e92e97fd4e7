#!/usr/bin/env bash
# tune/release_cleanup.sh DIR... — what killed release.sh runs left in results
# folders, cleaned up by the next run (issue 12 item 8), each said in one line:
#   - NAME.tmp.PID (the header writer's temp file, caseio's npy writer uses the
#     same form) whose writer PID is gone: removed;
#   - .release-running-STAMP-PID, the marker release.sh keeps while a run is in
#     progress, whose PID is gone: that run was killed before it finished, so its
#     STAMP_xattn_config_tuned.h becomes STAMP_xattn_config_tuned.h.unfinished
#     (kept as evidence, but no longer matched by `*_xattn_config_tuned.h`, e.g.
#     by `xattn-tune merge`), its STAMP_*.tmp files are removed, and so is the marker.
# A PID that is still running is left alone: its writer may still be at work.
# A zombie is not running. The same rule as xattn-bench's stale
# .tmp-STAMP-PID.json files (xc_pid_running, common/src/process.c).
set -euo pipefail

# running: /proc/PID exists and is not a zombie. A killed writer's orphaned
# children are reaped by init, which on some machines (firecracker VMs) does
# it lazily: for a while the dead writer is a zombie, and it writes nothing.
alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) } # the state follows the last ')' (the name may hold anything)
  case "${stat%% *}" in Z|X) return 1 ;; esac
  return 0
}

for dir in "$@"; do
  [ -d "$dir" ] || continue
  for f in "$dir"/*.tmp.[0-9]*; do
    [ -f "$f" ] || continue
    pid=${f##*.tmp.}
    case "$pid" in *[!0-9]*|'') continue ;; esac
    alive "$pid" && continue
    rm -f -- "$f" && echo "release.sh: removed $f, a temp file of a killed run (pid $pid)" >&2
  done
  for m in "$dir"/.release-running-*-[0-9]*; do
    [ -f "$m" ] || continue
    base=${m##*/.release-running-}
    pid=${base##*-}
    stamp=${base%-*}
    case "$pid" in *[!0-9]*|'') continue ;; esac
    alive "$pid" && continue
    hdr="$dir/${stamp}_xattn_config_tuned.h"
    what="no header"
    if [ -f "$hdr" ]; then mv -f -- "$hdr" "$hdr.unfinished" && what="header renamed to $hdr.unfinished"; fi
    rm -f -- "$dir/${stamp}_"*.tmp "$m"
    echo "release.sh: run $stamp (pid $pid) was killed before it finished: $what" >&2
  done
done
exit 0
