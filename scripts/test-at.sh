#!/usr/bin/env bash
# Runs the test suite with the process clock moved to INSTANT (UTC, e.g. 2027-01-01T00:00:30Z)
# and, optionally, the time zone TZ, through Debian's libfaketime (apt-get install faketime):
#   scripts/test-at.sh 2027-01-01T00:00:30Z Pacific/Kiritimati [vitest arguments…]
# The clock starts at INSTANT and runs on; timers (the monotonic clock) are left alone. Meant for
# SQLite: a PostgreSQL server keeps its own clock.
set -euo pipefail
instant="$1"
zone="${2:-UTC}"
shift $(( $# >= 2 ? 2 : 1 ))
lib="$(ls /usr/lib/*/faketime/libfaketimeMT.so.1 2>/dev/null | head -1)"
if [ -z "$lib" ]; then
  echo "libfaketime not found: apt-get install faketime" >&2
  exit 2
fi
# libfaketime reads its start time in the process's own time zone.
local_start="$(TZ="$zone" date -d "$instant" '+%Y-%m-%d %H:%M:%S')"
echo "== npm test with the clock at $instant ($local_start in $zone)"
TZ="$zone" LD_PRELOAD="$lib" FAKETIME="@$local_start" FAKETIME_DONT_FAKE_MONOTONIC=1 npm test -- "$@"
