#!/usr/bin/env bash
# Pushes through Cohort's pre-receive hook against the same pushes without any hook, rounds
# interleaved, medians and spreads reported:
#   - a generated history of signed commits, each with its notice, into a fresh bare repository
#     (the hook verifies every commit);
#   - one commit carrying 100 notices (100 files edited and `cohort commit`ed: the size of a real
#     sync) onto a repository that already holds the history, and again for each round, each commit
#     onto the one before (a line of syncs).
# Each through the hook as installed (a program started for every push) and through a resident
# verifier (`cohort hook serve`, the hooks installed with --resident), which this script starts.
# With LOOP=1, also the stock way of checking the history: git verify-commit in a loop (minutes).
#   bash Scripts/bench-push.sh [COMMITS] [ROUNDS]        (defaults 10000, 5)
source "$(dirname "$0")/generated-history.sh" "${1:-10000}"
rounds=${2:-5}
socket="$work/verifier.sock"
"$bin/cohort" hook serve --socket "$socket" >/dev/null &
serving=$!
trap 'kill "$serving" 2>/dev/null; wait "$serving" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || { echo "cohort hook serve did not start" >&2; exit 1; }

install_hooks() {  # install_hooks plain|hook|resident REPOSITORY
  case "$1" in
    hook) "$bin/cohort" hook install "$2" >/dev/null ;;
    resident) "$bin/cohort" hook install "$2" --resident "$socket" >/dev/null ;;
  esac
}

push_into_fresh() {  # push_into_fresh plain|hook|resident: one push of the history into a new bare repository, in seconds
  rm -rf "$work/server.git"
  git init -q --bare "$work/server.git"
  install_hooks "$1" "$work/server.git"
  start=$(now)
  git push -q "$work/server.git" main 2>"$work/push.err" || { cat "$work/push.err" >&2; exit 1; }
  end=$(now)
  [ "$(git --git-dir "$work/server.git" rev-parse main)" = "$(git rev-parse main)" ] || { echo "push did not land" >&2; exit 1; }
  elapsed "$start" "$end"
}

: >"$work/times-history"; : >"$work/times-history-hook"; : >"$work/times-history-resident"
for round in $(seq "$rounds"); do
  push_into_fresh plain >>"$work/times-history"
  push_into_fresh hook >>"$work/times-history-hook"
  push_into_fresh resident >>"$work/times-history-resident"
  echo "round $round: plain $(tail -1 "$work/times-history") s, hook $(tail -1 "$work/times-history-hook") s, resident $(tail -1 "$work/times-history-resident") s" >&2
done

# One commit of 100 edits, each with its notice, pushed onto the last: a line of such commits (one a
# round), each pushed in turn with no hook, through the hook and through the resident verifier, as
# one sync follows another on a server. Every push is of a commit new to the server, as in use: a
# resident verifier keeps the trees each push read for the next, whose parent that push brought.
base=$(git rev-parse main)
git reset -q --hard
line=()
for round in $(seq $((rounds * 3))); do
  for n in $(seq 0 99); do echo "edited in sync $round" >>"docs/file-$n.md"; done
  "$bin/cohort" commit -m "100 edits ($round)" >/dev/null
  line+=("$(git rev-parse HEAD)")
done
[ "$(git ls-tree -r --name-only "${line[0]}" .cohort/notices | wc -l)" -eq "$(( $(git ls-tree -r --name-only "$base" .cohort/notices | wc -l) + 100 ))" ] \
  || { echo "the commit does not carry 100 notices" >&2; exit 1; }
for kind in plain hook resident; do
  git init -q --bare "$work/$kind-small.git"
  git push -q "$work/$kind-small.git" "$base:refs/heads/main"
  install_hooks "$kind" "$work/$kind-small.git"
done
push_one() {  # push_one plain|hook|resident COMMIT: the commit, onto the one pushed before it, in seconds
  start=$(now)
  git push -q "$work/$1-small.git" "$2:refs/heads/main" 2>"$work/push.err" || { cat "$work/push.err" >&2; exit 1; }
  end=$(now)
  elapsed "$start" "$end"
}
: >"$work/times-small"; : >"$work/times-small-hook"; : >"$work/times-small-resident"
for commit in "${line[@]}"; do
  push_one plain "$commit" >>"$work/times-small"
  push_one hook "$commit" >>"$work/times-small-hook"
  push_one resident "$commit" >>"$work/times-small-resident"
done

row() {  # row LABEL FILE-STEM: one line of the table
  local plain hook resident
  plain=$(median <"$work/times-$2"); hook=$(median <"$work/times-$2-hook"); resident=$(median <"$work/times-$2-resident")
  printf '| %s | %.3f (%s) | %.3f (%s) | **%s×** | %.3f (%s) | **%s×** |\n' "$1" \
    "$plain" "$(spread <"$work/times-$2")" "$hook" "$(spread <"$work/times-$2-hook")" "$(ratio "$hook" "$plain")" \
    "$resident" "$(spread <"$work/times-$2-resident")" "$(ratio "$resident" "$plain")"
}
hooked=$(median <"$work/times-history-hook"); plain=$(median <"$work/times-history")
printf '\n%d commits (genesis included), %d rounds (the one-commit push: %d); medians in s (spread)\n\n' "$total" "$rounds" $((rounds * 3))
printf '| push | no hook | the hook as installed | / plain | a resident verifier | / plain |\n|---|---:|---:|---:|---:|---:|\n'
row "$total commits, each with its notice, into an empty repository" history
row "one commit with 100 notices onto the last (a line of them onto the history)" small
printf '\ngoals: ≤ 1.8× for the history, ≤ 1.2× for the one commit\n'

if [ "${LOOP:-0}" = 1 ]; then
  git reset -q --hard "$base"
  "$bin/cohort" export allowed-signers --output "$work/signers" >/dev/null
  git rev-list HEAD > "$work/commits"
  start=$(now)
  while read -r commit; do
    git -c gpg.ssh.allowedSignersFile="$work/signers" verify-commit "$commit" 2>/dev/null || { echo "verify-commit failed on $commit" >&2; exit 1; }
  done < "$work/commits"
  end=$(now)
  loop=$(elapsed "$start" "$end")
  printf '\ngit verify-commit for every commit, in a loop (once): %.3f s; the hook'"'"'s own time is %s× faster\n' \
    "$loop" "$(awk -v l="$loop" -v h="$hooked" -v p="$plain" 'BEGIN { printf "%.0f", l / (h - p) }')"
fi
