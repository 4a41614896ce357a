#!/usr/bin/env bash
# Reading objects on two cores: every object of a generated history (the objects a
# verification reads: commits, trees, notices) read by `cohort-bench objects`, in interleaved rounds,
# medians reported:
#   - on one thread;
#   - on two threads of one process, each with its own repository handle, libgit2's state of each
#     pack shared between them (how verification's workers read before 2026-11-24's eleventh session);
#   - through Cohort's own pack reader, one handle each (`Repository.reopen(_:ownPacks:)`, how
#     they read now);
#   - by two processes at once, half each (nothing shared: the most two cores can give);
#   - by `git cat-file --batch` (git's own reader, one process).
#   bash Scripts/bench-objects.sh [COMMITS] [ROUNDS]        (defaults 10000, 7)
source "$(dirname "$0")/generated-history.sh" "${1:-10000}"
rounds=${2:-7}
repository="$work/history/.git"
git cat-file --batch-all-objects --batch-check='%(objectname)' --unordered >"$work/ids"
split -n l/2 "$work/ids" "$work/half."
# Each way cohort-bench reads: a name, its threads, and whether through Cohort's own pack reader.
ways=("one 1" "two-threads 2" "own-one 1 own" "own-packs 2 own")
: >"$work/two-processes"; : >"$work/git"
for way in "${ways[@]}"; do set -- $way; : >"$work/$1"; : >"$work/cpu-$1"; done
for round in $(seq "$rounds"); do
  for way in "${ways[@]}"; do
    set -- $way
    read -r _ wall cpu < <("$bin/cohort-bench" objects "$repository" "$work/ids" "$2" ${3:-}); echo "$wall" >>"$work/$1"; echo "$cpu" >>"$work/cpu-$1"
  done
  start=$(now)
  "$bin/cohort-bench" objects "$repository" "$work/half.aa" 1 >/dev/null &
  "$bin/cohort-bench" objects "$repository" "$work/half.ab" 1 >/dev/null &
  wait
  end=$(now)
  # Each process's start (about 10 ms) is inside this figure, and not inside the others.
  elapsed "$start" "$end" >>"$work/two-processes"
  start=$(now); git cat-file --batch <"$work/ids" >/dev/null; end=$(now); elapsed "$start" "$end" >>"$work/git"
done
one=$(median <"$work/one")
printf '\n%d objects of a history of %d commits, %d rounds, medians\n\n' "$(wc -l <"$work/ids")" "$total" "$rounds"
printf '| reader | seconds | spread | CPU seconds | speed-up over one thread |\n|---|---:|---:|---:|---:|\n'
printf '| libgit2, one thread | %.3f | %s | %.3f | 1.00× |\n' "$one" "$(spread <"$work/one")" "$(median <"$work/cpu-one")"
for kind in two-threads own-one own-packs two-processes; do
  cpu="—"; [ -s "$work/cpu-$kind" ] && cpu=$(printf '%.3f' "$(median <"$work/cpu-$kind")")
  case $kind in
    two-threads) label="libgit2, two threads, packs shared" ;;
    own-one) label="Cohort's pack reader, one thread" ;;
    own-packs) label="Cohort's pack reader, two threads" ;;
    *) label="libgit2, two processes, half each" ;;
  esac
  printf '| %s | %.3f | %s | %s | %s× |\n' "$label" "$(median <"$work/$kind")" "$(spread <"$work/$kind")" "$cpu" "$(ratio "$one" "$(median <"$work/$kind")")"
done
printf '| git cat-file --batch, one process | %.3f | %s | — | %s× |\n' "$(median <"$work/git")" "$(spread <"$work/git")" "$(ratio "$one" "$(median <"$work/git")")"
