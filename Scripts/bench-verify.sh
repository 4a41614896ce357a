#!/usr/bin/env bash
# cohort verify over a generated history of signed commits, against git log over the same history and
# against the physical floor: raw ECDSA P-256 verifications per second on every core (cohort-bench
# floor), divided by the signatures each commit carries (its own and its notices'); beside it, the same
# verifications through keys' tables of multiples (cohort-bench table), as a long history has them. Rounds are
# interleaved, so that every side meets the same moments of the machine; medians and spreads reported.
#   bash Scripts/bench-verify.sh [COMMITS] [ROUNDS]        (defaults 10000, 7)
source "$(dirname "$0")/generated-history.sh" "${1:-10000}"
rounds=${2:-7}

timed() {  # timed COMMAND…: wall-clock seconds of one run
  local start end
  start=$(now); "$@" >/dev/null || { echo "failed: $*" >&2; exit 1; }; end=$(now)
  elapsed "$start" "$end"
}

notices=$(git ls-tree -r --name-only HEAD .cohort/notices | wc -l)
signatures=$((total + notices))
"$bin/cohort" verify >/dev/null   # must succeed before it is timed
: >"$work/log"; : >"$work/cold"; : >"$work/warm"; : >"$work/floor"; : >"$work/table"
for round in $(seq "$rounds"); do
  "$bin/cohort-bench" floor 1 >>"$work/floor"
  "$bin/cohort-bench" table 1 >>"$work/table"
  timed git log --format=%H%n%T%n%P%n%an%n%s >>"$work/log"
  rm -f .git/cohort/verified
  timed "$bin/cohort" verify >>"$work/cold"
  timed "$bin/cohort" verify >>"$work/warm"
  echo "round $round: floor $(tail -1 "$work/floor")/s, git log $(tail -1 "$work/log") s, verify $(tail -1 "$work/cold") s" >&2
done

git_log=$(median <"$work/log"); cold=$(median <"$work/cold"); warm=$(median <"$work/warm")
raw=$(median <"$work/floor" | xargs printf "%.0f")
table=$(median <"$work/table" | xargs printf "%.0f")
floor_rate=$(awk -v r="$raw" -v s="$signatures" -v n="$total" 'BEGIN { printf "%.0f", r / (s / n) }')
floor_time=$(awk -v n="$total" -v f="$floor_rate" 'BEGIN { printf "%.3f", n / f }')
rate() { awk -v n="$total" -v t="$1" 'BEGIN { printf "%.0f", n / t }'; }
printf '\n%d commits (genesis included), %d signatures (%.2f per commit), %d cores, %d rounds\n\n' \
  "$total" "$signatures" "$(awk -v s="$signatures" -v n="$total" 'BEGIN { print s / n }')" "$(nproc)" "$rounds"
printf '| measurement (median of %d) | seconds | spread | commits/s | vs floor |\n|---|---:|---:|---:|---:|\n' "$rounds"
printf '| floor: raw ECDSA on every core (%s verifications/s) | %s | %s | %s | 1.00× |\n' "$raw" "$floor_time" "$(spread %.0f <"$work/floor")/s" "$floor_rate"
printf '| the same through keys'"'"' tables of multiples (%s verifications/s) | %s | %s | %s | — |\n' "$table" \
  "$(awk -v n="$total" -v r="$table" -v s="$signatures" 'BEGIN { printf "%.3f", s / r }')" "$(spread %.0f <"$work/table")/s" \
  "$(awk -v r="$table" -v s="$signatures" -v n="$total" 'BEGIN { printf "%.0f", r / (s / n) }')"
printf '| git log (reads every commit) | %.3f | %s | %s | — |\n' "$git_log" "$(spread <"$work/log")" "$(rate "$git_log")"
printf '| cohort verify, whole history | %.3f | %s | %s | **%s×** |\n' "$cold" "$(spread <"$work/cold")" "$(rate "$cold")" "$(ratio "$floor_time" "$cold")"
printf '| cohort verify, nothing new (remembered) | %.3f | %s | %s | — |\n' "$warm" "$(spread <"$work/warm")" "$(rate "$warm")"
printf '\ncohort verify / floor = %s× (goal ≥ 0.5×); cohort verify / git log time = %s×\n' "$(ratio "$floor_time" "$cold")" "$(ratio "$cold" "$git_log")"
