#!/usr/bin/env bash
# Runs every fuzz target of cohort-fuzz (an instrumented build: make fuzz) for SECONDS each.
#   bash Scripts/fuzz.sh BINARY [SECONDS]
# Each target starts from a copy of its seeds in Fuzz/corpus/TARGET (the repository's corpus is not
# changed) plus the inputs of earlier crashes in Fuzz/regressions/TARGET; a crash is written to
# Fuzz/crashes/TARGET/ and makes the script fail. Prints one line per target: executions, coverage.
set -uo pipefail
binary=$1
seconds=${2:-60}
root="$(cd "$(dirname "$0")/.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
printf '| target | seconds | executions | exec/s | coverage (edges) | features | crashes |\n|---|---:|---:|---:|---:|---:|---:|\n'
for target in $("$binary" list); do
  corpus="$work/$target"
  mkdir -p "$corpus" "$root/Fuzz/crashes/$target"
  cp "$root/Fuzz/corpus/$target/"* "$corpus/" 2>/dev/null || true
  cp "$root/Fuzz/regressions/$target/"* "$corpus/" 2>/dev/null || true
  log="$work/$target.log"
  "$binary" fuzz "$target" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$root/Fuzz/crashes/$target/" -print_final_stats=1 "$corpus" >"$log" 2>&1
  status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  edges=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  features=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  crashes=$(ls "$root/Fuzz/crashes/$target" 2>/dev/null | wc -l)
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$target" "$seconds" "${runs:-?}" "${rate:-?}" "${edges:-?}" "${features:-?}" "$crashes"
  if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    failed=1
    echo "fuzz target $target failed (exit $status); its log:" >&2
    tail -40 "$log" >&2
  fi
done
exit $failed
