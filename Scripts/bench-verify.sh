#!/usr/bin/env bash
# cohort verify over a generated history of signed commits, against git log over the same history.
#   bash Scripts/bench-verify.sh [COMMITS]        (default 10000)
source "$(dirname "$0")/generated-history.sh" "${1:-10000}"

measure() {  # measure LABEL COMMAND…: best of 3 wall-clock runs, in seconds
  for _ in 1 2 3; do
    [ "$1" = "cohort verify (cold)" ] && rm -f .git/cohort/verified
    start=$(now); "${@:2}" >/dev/null || { echo "failed: ${*:2}" >&2; exit 1; }; end=$(now)
    elapsed "$start" "$end"
  done | best
}

git_log=$(measure "git log" git log --format=%H%n%T%n%P%n%an%n%s)
"$bin/cohort" verify   # must succeed before it is timed
cold=$(measure "cohort verify (cold)" "$bin/cohort" verify)
warm=$(measure "cohort verify (remembered)" "$bin/cohort" verify)

rate() { awk -v n="$total" -v t="$1" 'BEGIN { printf "%.0f", n / t }'; }
printf '\n%d commits (genesis included)\n\n' "$total"
printf '| command (best of 3) | seconds | commits/s |\n|---|---:|---:|\n'
printf '| git log (baseline) | %.3f | %s |\n' "$git_log" "$(rate "$git_log")"
printf '| cohort verify, whole history | %.3f | %s |\n' "$cold" "$(rate "$cold")"
printf '| cohort verify, nothing new (remembered) | %.3f | %s |\n' "$warm" "$(rate "$warm")"
printf '\ncohort verify / git log time: %s×; target ≥ 2,000 commits/s verified\n' "$(awk -v a="$cold" -v b="$git_log" 'BEGIN { printf "%.1f", a / b }')"
