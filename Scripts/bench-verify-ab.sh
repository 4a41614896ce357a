#!/usr/bin/env bash
# cohort verify of this tree's build against another cohort binary (an earlier commit's, say), over
# the same generated history, runs interleaved (A B, B A, …) so both see the same machine; prints the
# median and the fastest wall-clock and CPU seconds of each.
#   bash Scripts/bench-verify-ab.sh OTHER_COHORT [COMMITS] [ROUNDS]      (defaults 10000, 11)
# An earlier commit's binary: git worktree add /tmp/before REV && (cd /tmp/before && bash Scripts/build-release.sh cohort)
other=$(realpath "$1")
rounds=${3:-11}
source "$(dirname "$0")/generated-history.sh" "${2:-10000}"
"$other" verify >/dev/null && "$bin/cohort" verify >/dev/null || { echo "a binary refused the history" >&2; exit 1; }
results="$work/ab.txt"
for i in $(seq 1 "$rounds"); do
  if [ $((i % 2)) = 0 ]; then order="this other"; else order="other this"; fi
  for which in $order; do
    rm -f .git/cohort/verified
    binary=$([ "$which" = this ] && echo "$bin/cohort" || echo "$other")
    /usr/bin/time -f "$which %e %U %S" "$binary" verify 2>>"$results" >/dev/null
  done
done
stat() {  # stat NAME COLUMN: median and minimum of a column (2 = wall, 3 = user + sys)
  grep "^$1 " "$results" | awk -v c="$2" '{print (c == 2 ? $2 : $3 + $4)}' | sort -n \
    | awk '{a[NR] = $1} END {printf "%.3f | %.3f", a[int((NR + 1) / 2)], a[1]}'
}
printf '\n%d commits, %d interleaved rounds of cohort verify with nothing remembered\n\n' "$total" "$rounds"
printf '| binary | wall median | wall fastest | CPU median | CPU fastest |\n|---|---:|---:|---:|---:|\n'
printf '| other (%s) | %s | %s |\n' "$1" "$(stat other 2)" "$(stat other 3)"
printf '| this tree | %s | %s |\n' "$(stat this 2)" "$(stat this 3)"
