#!/usr/bin/env bash
# xattn-tune's command line: bad input gives one line naming the field and a
# non-zero exit; `variants` reads a header. usage: check_cli.sh XATTN_TUNE FIXTURE_HEADER
set -u
TUNE="$1"
HDR="$2"
fail=0
expect() { # expect RC PATTERN -- command...
  local want_rc="$1" pat="$2"
  shift 3
  local err rc
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne "$want_rc" ] || ! grep -q -- "$pat" <<<"$err" || [ "$(wc -l <<<"$err")" -ne 1 ]; then
    echo "FAIL: $* -> rc $rc (want $want_rc), stderr: $err" >&2
    fail=1
  fi
}
expect 2 "--budget" -- "$TUNE" run --suite default --header /tmp/x.h --budget 5x
expect 2 "--strategy" -- "$TUNE" run --suite default --header /tmp/x.h --strategy fastest
expect 2 "--max-evals" -- "$TUNE" run --suite default --header /tmp/x.h --max-evals -3
expect 2 "--header" -- "$TUNE" run --suite default
expect 2 "no-such-suite" -- "$TUNE" run --suite no-such-suite --header /tmp/x.h
expect 2 "--baseline" -- "$TUNE" compare --suite default
expect 2 "unknown command" -- "$TUNE" bogus
expect 1 "cannot read" -- "$TUNE" variants /nonexistent/header.h
# outputs are checked before tuning starts (they used to fail, or be skipped, after it)
expect 2 "folder /nonexistent-dir does not exist" -- "$TUNE" run --suite smoke --header /nonexistent-dir/x.h --max-evals 1
expect 2 "--report" -- "$TUNE" run --suite smoke --header /tmp/x.h --report /nonexistent-dir/r.md --max-evals 1
expect 2 "--json" -- "$TUNE" compare --suite smoke --baseline "$HDR" --json /nonexistent-dir/c.json
out=$("$TUNE" variants "$HDR")
if [ "$out" != "32x128;16x256;64x64" ]; then
  echo "FAIL: variants of the fixture header: '$out'" >&2
  fail=1
fi
[ $fail -eq 0 ] && echo "cli: ok"
exit $fail
