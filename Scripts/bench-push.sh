#!/usr/bin/env bash
# A push of a generated history of signed commits into a bare repository: with Cohort's pre-receive
# hook, without any hook, and the stock way of checking the same commits (git verify-commit in a loop).
#   bash Scripts/bench-push.sh [COMMITS]        (default 10000)
source "$(dirname "$0")/generated-history.sh" "${1:-10000}"

push_into_fresh() {  # push_into_fresh hook|plain: one push into a new bare repository, in seconds
  rm -rf "$work/server.git"
  git init -q --bare "$work/server.git"
  if [ "$1" = hook ]; then "$bin/cohort" hook install "$work/server.git" >/dev/null; fi
  start=$(now)
  git push -q "$work/server.git" main 2>"$work/push.err" || { cat "$work/push.err" >&2; exit 1; }
  end=$(now)
  [ "$(git --git-dir "$work/server.git" rev-parse main)" = "$(git rev-parse main)" ] || { echo "push did not land" >&2; exit 1; }
  elapsed "$start" "$end"
}

plain=$(for _ in 1 2 3; do push_into_fresh plain; done | best)
hooked=$(for _ in 1 2 3; do push_into_fresh hook; done | best)

"$bin/cohort" export allowed-signers --output "$work/signers" >/dev/null
git rev-list HEAD > "$work/commits"
start=$(now)
while read -r commit; do
  git -c gpg.ssh.allowedSignersFile="$work/signers" verify-commit "$commit" 2>/dev/null || { echo "verify-commit failed on $commit" >&2; exit 1; }
done < "$work/commits"
end=$(now)
loop=$(elapsed "$start" "$end")

printf '\n%d commits (genesis included)\n\n' "$total"
printf '| what | seconds |\n|---|---:|\n'
printf '| git push, no hook (best of 3) | %.3f |\n' "$plain"
printf '| git push through cohort hook pre-receive (best of 3) | %.3f |\n' "$hooked"
printf '| git verify-commit for every commit, in a loop (once) | %.3f |\n' "$loop"
printf '\nthe hook adds %s%% to the push (target ≤ 50%%); it is %s× faster than the stock loop (target ≥ 20×)\n' \
  "$(awk -v h="$hooked" -v p="$plain" 'BEGIN { printf "%.0f", (h - p) / p * 100 }')" \
  "$(awk -v l="$loop" -v h="$hooked" -v p="$plain" 'BEGIN { printf "%.0f", l / (h - p) }')"
