#!/usr/bin/env bash
# tune/release.sh --flush-caches reaches every step that times calls: the
# tuning run, the tuned-vs-default compare and (with --bench) both
# xattn-bench runs, and none of them without the flag. The script itself
# runs; only the tools it calls are faked (a `cmake` that does nothing, first
# on PATH; an xattn-tune, an `xattn info` and an xattn-bench that log their
# arguments and write what release.sh reads next).
# usage: check_release_flush.sh SOURCE_DIR
set -u
src="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }

mkdir -p "$tmp/path" "$tmp/results"
printf '#!/bin/sh\nexit 0\n' > "$tmp/path/cmake"
for b in tb rb; do
  mkdir -p "$tmp/$b/bin" "$tmp/$b/bench"
  cat > "$tmp/$b/bin/xattn-tune" <<'EOF2'
#!/usr/bin/env bash
echo "xattn-tune $*" >> "$FAKE_LOG"
case "$1" in
  identity) printf 'machine: testbox\ncommit: abc123\nkernel digest: 0123456789abcdef\n' ;;
  run)
    while [ $# -gt 0 ]; do [ "$1" = --header ] && hdr="$2"; shift; done
    printf '/* fake tuned header */\n' > "$hdr"
    echo "$hdr" > "$FAKE_HDR" ;;
  variants) echo "64x64" ;;
  compare)
    while [ $# -gt 0 ]; do case "$1" in --json) j="$2" ;; --report) r="$2" ;; esac; shift; done
    echo '{"classes": []}' > "$j"; echo "# fake" > "$r" ;;
  *) exit 2 ;;
esac
EOF2
  cat > "$tmp/$b/bin/xattn" <<'EOF2'
#!/usr/bin/env bash
printf '{"config_header": "%s", "provenance": "xattn-tune fake", "config_classes": 0}\n' "$(cat "$FAKE_HDR")"
EOF2
  printf '#!/usr/bin/env bash\necho "xattn-bench $*" >> "$FAKE_LOG"\n' > "$tmp/$b/bench/xattn-bench"
  chmod +x "$tmp/$b/bin/xattn-tune" "$tmp/$b/bin/xattn" "$tmp/$b/bench/xattn-bench"
done
chmod +x "$tmp/path/cmake"

for flush in 1 0; do
  log="$tmp/log$flush"
  : > "$log"
  args=(--tune-build "$tmp/tb" --release-build "$tmp/rb" --results "$tmp/results" --bench --suite decode)
  [ $flush = 1 ] && args+=(--flush-caches)
  sleep 1.1 # a new UTC stamp per run
  if ! PATH="$tmp/path:$PATH" FAKE_LOG="$log" FAKE_HDR="$tmp/hdr" "$src/tune/release.sh" "${args[@]}" \
      >"$tmp/out$flush" 2>&1; then
    bad "release.sh ${args[*]} failed: $(tail -3 "$tmp/out$flush")"; continue
  fi
  for step in "xattn-tune run" "xattn-tune compare" "xattn-bench"; do
    n=$(grep -c "^$step " "$log")
    nf=$(grep "^$step " "$log" | grep -c -- '--flush-caches')
    [ "$n" -ge 1 ] || bad "flush=$flush: no '$step' call"
    if [ $flush = 1 ]; then
      [ "$nf" = "$n" ] || bad "--flush-caches reached $nf of $n '$step' calls"
    else
      [ "$nf" = 0 ] || bad "'$step' got --flush-caches without the flag"
    fi
  done
done
[ $fail = 0 ] && echo "ok: --flush-caches reaches tuning, compare and both benches, and only with the flag"
exit $fail
