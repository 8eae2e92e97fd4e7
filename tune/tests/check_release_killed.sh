#!/usr/bin/env bash
# tune/release.sh killed mid-run, for real: the script itself runs, with only
# the tools it calls faked (a `cmake` that does nothing, first on PATH, and an
# xattn-tune in --tune-build that writes a partial header and its temp file,
# says so, then works "forever"). Three runs:
#   1. killed with TERM to its process group (Ctrl-C, a scheduler's kill): its
#      EXIT trap renames the header *.unfinished, removes its temp files and its
#      marker, exits 143;
#   2. killed with KILL (no trap can run): marker, header and temp file stay;
#   3. the next run cleans up after run 2 before it tunes (tune/release_cleanup.sh:
#      header renamed, temp file and marker removed, one line saying so), then
#      its own tuner fails: it exits 1 and leaves no marker of its own.
# usage: check_release_killed.sh SOURCE_DIR
set -u
src="$1"
tmp=$(mktemp -d)
pgids=()
trap 'for g in "${pgids[@]}"; do kill -KILL -- -"$g" 2>/dev/null; done; rm -rf "$tmp"' EXIT
fail=0
check() { "$@" || { echo "FAIL: $*" >&2; fail=1; }; }

mkdir -p "$tmp/path" "$tmp/tb/bin" "$tmp/results"
printf '#!/bin/sh\nexit 0\n' > "$tmp/path/cmake"
cat > "$tmp/tb/bin/xattn-tune" <<'EOF'
#!/usr/bin/env bash
# the fake tuner: identity, and a `run` that leaves what a real one has on disk mid-way
case "$1" in
  identity) printf 'machine: testbox\ncommit: abc123\nkernel digest: 0123456789abcdef\n' ;;
  run)
    [ "${FAKE_TUNE_FAIL:-0}" = 1 ] && { echo "fake xattn-tune: failing on purpose" >&2; exit 1; }
    while [ $# -gt 0 ]; do [ "$1" = --header ] && hdr="$2"; shift; done
    echo "/* partial */" > "$hdr"
    : > "$hdr.tmp.$$"
    : > "$FAKE_TUNE_READY"
    while :; do sleep 1; done ;;
  *) exit 2 ;;
esac
EOF
chmod +x "$tmp/path/cmake" "$tmp/tb/bin/xattn-tune"
out="$tmp/results/testbox/abc123"

# start a run in its own process group; wait until its tuner is mid-way
start() {
  rm -f "$tmp/ready"
  PATH="$tmp/path:$PATH" FAKE_TUNE_READY="$tmp/ready" setsid "$src/tune/release.sh" --tune-build "$tmp/tb" \
      --release-build "$tmp/rb" --results "$tmp/results" 2>>"$tmp/err$1" &
  pid=$!
  for _ in $(seq 200); do [ -e "$tmp/ready" ] && break; sleep 0.1; done
  check [ -e "$tmp/ready" ]
  pgid=$(cut -d" " -f5 "/proc/$pid/stat") # its process group (setsid made it the leader)
  pgids+=("$pgid")
}
header_of() { ls "$out"/*_xattn_config_tuned.h 2>/dev/null | head -1; }
# after run $2 ended with status $3: header $1 renamed *.unfinished, no temp file, no marker
cleaned_up() {
  check [ "$2" -eq "$3" ]
  check [ ! -e "$1" ]
  check [ -f "$1.unfinished" ]
  check [ -z "$(ls "$out" | grep '\.tmp')" ]
  check [ -z "$(ls -A "$out" | grep '^\.release-running-')" ]
}

# 1. TERM to the process group: the trap cleans up
start 1
hdr1=$(header_of)
check [ -n "$hdr1" ]
check [ -e "$out/.release-running-$(basename "$hdr1" _xattn_config_tuned.h)-$pid" ]
kill -TERM -- -"$pgid"
wait "$pid"; rc=$?
cleaned_up "$hdr1" "$rc" 143
check grep -q "stopped (exit 143): header renamed to $hdr1.unfinished" "$tmp/err1"

# 2. KILL: nothing runs, everything stays for the next run
sleep 1.1 # a new UTC stamp (seconds)
start 2
hdr2=$(ls "$out"/*_xattn_config_tuned.h | grep -v "^$hdr1" | head -1)
check [ -n "$hdr2" ]
stamp2=$(basename "$hdr2" _xattn_config_tuned.h)
kill -KILL -- -"$pgid"
wait "$pid" 2>/dev/null
check [ -f "$hdr2" ]
check [ -e "$out/.release-running-$stamp2-$pid" ]
check [ -n "$(ls "$out" | grep "^${stamp2}_.*\.tmp\.")" ]

# 3. the next run cleans up run 2, then fails on its own. Run 2's tuner (the
# temp file's writer) got the KILL too; wait until it has died (gone, or a
# zombie its new parent has not reaped yet: release_cleanup.sh counts both as
# dead), so that what run 3 sees does not depend on how busy the machine is.
tuner=$(ls "$out" | grep "^${stamp2}_.*\.tmp\." | head -1); tuner=${tuner##*.tmp.}
for _ in $(seq 100); do
  st=$(cat "/proc/$tuner/stat" 2>/dev/null) || break
  st=${st##*) }; case "${st%% *}" in Z|X) break ;; esac
  sleep 0.1
done
sleep 1.1
dead=$pid
PATH="$tmp/path:$PATH" FAKE_TUNE_FAIL=1 "$src/tune/release.sh" --tune-build "$tmp/tb" --release-build "$tmp/rb" \
    --results "$tmp/results" 2>"$tmp/err3"; rc=$?
cleaned_up "$hdr2" "$rc" 1
check grep -q "run $stamp2 (pid $dead) was killed before it finished: header renamed" "$tmp/err3"
check [ -f "$hdr1.unfinished" ] # run 1's evidence untouched
[ $fail -eq 0 ] && echo "release killed mid-run: ok" || cat "$tmp"/err* >&2
exit $fail
