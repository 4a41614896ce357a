#!/usr/bin/env bash
# Instruction counts of `cohort verify` over a generated history, per function, with valgrind's
# callgrind: figures that do not move with the machine's noise. Valgrind 3.19 cannot read the debug
# information Swift 6.3 writes, so a copy of the binary without it is profiled (symbols stay).
# Under valgrind BoringSSL takes its portable code paths, so the signatures' share is larger than on
# the real processor: compare counts between builds, not with wall-clock time.
#   bash Scripts/profile-verify.sh [COMMITS] [LINES]        (defaults 1000, 40)
source "$(dirname "$0")/generated-history.sh" "${1:-1000}"
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
cp "$bin/cohort" "$work/cohort" && strip --strip-debug "$work/cohort"
valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$work/cohort" verify 2>&1 | grep -E "refs|ok:|error" >&2
callgrind_annotate --inclusive=yes --threshold=100 "$work/callgrind.out" 2>/dev/null | swift demangle --simplified \
  | grep -E "^ *[0-9,]+ \(" | grep -v "PROGRAM TOTALS" | head -"${2:-40}" | cut -c1-160
echo "total: $(callgrind_annotate "$work/callgrind.out" 2>/dev/null | awk '/PROGRAM TOTALS/ { print $1 }') instructions for $total commits"
