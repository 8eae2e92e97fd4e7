#!/bin/sh
# The shared library exports exactly the XATTN_API declarations of its public
# headers (-fvisibility=hidden): nothing internal leaks, nothing declared is
# missing. Usage: check_exports.sh LIBXATTN.so INCLUDE_DIR
set -eu
lib=$1 inc=$2
declared=$(grep -ho '^XATTN_API [^(]*(' "$inc"/xattn/*.h | sed 's/($//; s/.*[ *]//' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TWDBR]$/ {print $3}' | sort -u)
extra=$(printf '%s\n' "$exported" | grep -vxF "$declared" || true)
missing=$(printf '%s\n' "$declared" | grep -vxF "$exported" || true)
[ -z "$extra" ] || { echo "exported but not declared XATTN_API: $(echo $extra)"; exit 1; }
[ -z "$missing" ] || { echo "declared XATTN_API but not exported: $(echo $missing)"; exit 1; }
echo "$(printf '%s\n' "$exported" | wc -l) symbols exported, all declared XATTN_API"
