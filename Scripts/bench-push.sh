#!/usr/bin/env bash
# Pushes through Cohort's pre-receive hook against the same pushes without any hook, rounds
# interleaved, medians and spreads reported:
#   - a generated history of signed commits, each with its notice, into a fresh bare repository
#     (the hook verifies every commit);
#   - one commit carrying 100 notices (100 files edited and `cohort commit`ed: the size of a real
#     sync) onto a repository that already holds the history.
# With LOOP=1, also the stock way of checking the history: git verify-commit in a loop (minutes).
#   bash Scripts/bench-push.sh [COMMITS] [ROUNDS]        (defaults 10000, 5)
source "$(dirname "$0")/generated-history.sh" "${1:-10000}"
rounds=${2:-5}

push_into_fresh() {  # push_into_fresh hook|plain: one push of the history into a new bare repository, in seconds
  rm -rf "$work/server.git"
  git init -q --bare "$work/server.git"
  if [ "$1" = hook ]; then "$bin/cohort" hook install "$work/server.git" >/dev/null; fi
  start=$(now)
  git push -q "$work/server.git" main 2>"$work/push.err" || { cat "$work/push.err" >&2; exit 1; }
  end=$(now)
  [ "$(git --git-dir "$work/server.git" rev-parse main)" = "$(git rev-parse main)" ] || { echo "push did not land" >&2; exit 1; }
  elapsed "$start" "$end"
}

: >"$work/plain"; : >"$work/hook"
for round in $(seq "$rounds"); do
  push_into_fresh plain >>"$work/plain"
  push_into_fresh hook >>"$work/hook"
  echo "round $round: plain $(tail -1 "$work/plain") s, hook $(tail -1 "$work/hook") s" >&2
done

# One commit of 100 edits, each with its notice, pushed onto the history already there.
base=$(git rev-parse main)
git reset -q --hard
for n in $(seq 0 99); do echo "edited in one sync" >>"docs/file-$n.md"; done
"$bin/cohort" commit -m "100 edits" >/dev/null
[ "$(git ls-tree -r --name-only HEAD .cohort/notices | wc -l)" -eq "$(( $(git ls-tree -r --name-only "$base" .cohort/notices | wc -l) + 100 ))" ] \
  || { echo "the commit does not carry 100 notices" >&2; exit 1; }
for kind in plain hook; do
  git init -q --bare "$work/$kind-small.git"
  git push -q "$work/$kind-small.git" "$base:refs/heads/main"
  if [ "$kind" = hook ]; then "$bin/cohort" hook install "$work/$kind-small.git" >/dev/null; fi
done
# What the installed hook remembers of the history (`cohort hook install` verified it): a server's
# file holds every verified commit, and the hook reads it on every push.
cp "$work/hook-small.git/cohort/verified" "$work/verified-before"
push_one() {  # push_one plain|hook: the one commit, onto the history, in seconds
  git --git-dir "$work/$1-small.git" update-ref refs/heads/main "$base"
  if [ "$1" = hook ]; then cp "$work/verified-before" "$work/hook-small.git/cohort/verified"; fi
  start=$(now)
  git push -q "$work/$1-small.git" main 2>"$work/push.err" || { cat "$work/push.err" >&2; exit 1; }
  end=$(now)
  elapsed "$start" "$end"
}
: >"$work/plain-small"; : >"$work/hook-small"
for round in $(seq $((rounds * 3))); do
  push_one plain >>"$work/plain-small"
  push_one hook >>"$work/hook-small"
done

plain=$(median <"$work/plain"); hooked=$(median <"$work/hook")
plain_small=$(median <"$work/plain-small"); hooked_small=$(median <"$work/hook-small")
printf '\n%d commits (genesis included), %d rounds (the one-commit push: %d)\n\n' "$total" "$rounds" $((rounds * 3))
printf '| push (median) | no hook (s) | spread | through the installed hook (s) | spread | hook / plain |\n|---|---:|---:|---:|---:|---:|\n'
printf '| %d commits, each with its notice, into an empty repository | %.3f | %s | %.3f | %s | **%s×** |\n' \
  "$total" "$plain" "$(spread <"$work/plain")" "$hooked" "$(spread <"$work/hook")" "$(ratio "$hooked" "$plain")"
printf '| one commit with 100 notices onto the history | %.3f | %s | %.3f | %s | **%s×** |\n' \
  "$plain_small" "$(spread <"$work/plain-small")" "$hooked_small" "$(spread <"$work/hook-small")" "$(ratio "$hooked_small" "$plain_small")"
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
