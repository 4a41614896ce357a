#!/usr/bin/env bash
# Sync-sized pushes through `cohort serve`: a line of commits, each editing 100 documents with its 100
# signed notices (`cohort commit`), each pushed onto the last with stock git and git-credential-cohort
# (token cached) into four servers side by side, rounds interleaved:
#   - `cohort serve`, as it starts: its hooks ask the resident verifier it runs beside it;
#   - `cohort serve --no-resident-verifier`: a hook program started for each push;
#   - `cohort serve` whose repository's pre-receive only reads its input: the same transport (HTTP,
#     token, receive-pack), verifying nothing: what the hooks' verification costs is measured against it;
#   - `git daemon --enable=receive-pack` on a bare copy without hooks: no HTTP, no token, no verification.
#   bash Scripts/bench-serve-push.sh [ROUNDS]        (default 21)
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
source "$scripts/timing.sh"
cd "$scripts/.."
rounds=${1:-21}
bin="$(bash "$scripts/build-release.sh" cohort git-credential-cohort)"
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export PATH="$bin:$PATH" GIT_TERMINAL_PROMPT=0
export COHORT_HOME="$work/ann"
cohort id init --handle ann@example.com --name Ann >/dev/null

mkdir -p "$work/recipes"
python3 "$scripts/generate-documents.py" "$work/recipes" 100 >/dev/null
quietly cohort start "$work/recipes" --title "Benchmark Recipes" >/dev/null

serve() {  # serve NAME [OPTIONS…]: starts cohort serve on DATA-NAME; its base URL in $url
  "$bin/cohort" serve --data "$work/data-$1" --listen 127.0.0.1:0 "${@:2}" >"$work/serve-$1.out" 2>"$work/serve-$1.log" &
  pids+=($!)
  wait_for 20 grep -q "listening on" "$work/serve-$1.out" || { cat "$work/serve-$1.log" >&2; exit 1; }
  url=$(sed -n 's/^listening on \([^ ]*\).*/\1/p' "$work/serve-$1.out")
}
serve resident; resident=$url
wait_for 20 test -S "$work/data-resident/server/verifier.sock" || { echo "no resident verifier" >&2; exit 1; }
serve program --no-resident-verifier; program=$url
serve nothing --no-resident-verifier; nothing=$url
quietly cohort publish "$resident" --workspace "$work/recipes" >/dev/null
quietly cohort publish "$program" --workspace "$work/recipes" --remote program >/dev/null
quietly cohort publish "$nothing" --workspace "$work/recipes" --remote nothing >/dev/null
id=$(git -C "$work/recipes" remote get-url origin); id=${id##*/}
printf '#!/bin/sh\ncat >/dev/null\n' >"$work/data-nothing/collaborations/$id.git/hooks/pre-receive"

git clone -q --bare "$work/data-resident/collaborations/$id.git" "$work/plain/$id.git"
port=$(free_port)
git daemon --reuseaddr --listen=127.0.0.1 --port="$port" --export-all --enable=receive-pack --base-path="$work/plain" \
  "$work/plain" 2>"$work/daemon.log" &
pids+=($!)
wait_for 10 git ls-remote "git://127.0.0.1:$port/$id.git"
git -C "$work/recipes" remote add plain "git://127.0.0.1:$port/$id.git"

line=()
for round in $(seq "$rounds"); do
  for n in $(seq 0 99); do
    file=$(printf '%s/recipes/section-%02d/recipe-%05d.md' "$work" $((n % 100)) "$n")
    echo "edited in sync $round" >>"$file"
  done
  cohort commit --workspace "$work/recipes" -m "100 edits ($round)" >/dev/null
  line+=("$(git -C "$work/recipes" rev-parse HEAD)")
done
[ "$(git -C "$work/recipes" diff --name-only "${line[0]}~1" "${line[0]}" -- .cohort/notices | wc -l)" -eq 100 ] \
  || { echo "the commit does not carry 100 notices" >&2; exit 1; }

push_one() {  # push_one REMOTE COMMIT: seconds
  local start end
  start=$(now)
  git -C "$work/recipes" "${cohort_helper[@]}" push -q "$1" "$2:refs/heads/main" 2>"$work/push.err" || { cat "$work/push.err" >&2; exit 1; }
  end=$(now)
  elapsed "$start" "$end"
}
: >"$work/times-plain"; : >"$work/times-resident"; : >"$work/times-program"; : >"$work/times-nothing"
for commit in "${line[@]}"; do
  push_one plain "$commit" >>"$work/times-plain"
  push_one nothing "$commit" >>"$work/times-nothing"
  push_one origin "$commit" >>"$work/times-resident"
  push_one program "$commit" >>"$work/times-program"
done
for name in resident program nothing; do
  [ "$(git --git-dir "$work/data-$name/collaborations/$id.git" rev-parse main)" = "${line[-1]}" ] || { echo "$name: the line did not land" >&2; exit 1; }
done
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true
answered=$(sed -n 's/.*resident verifier: stopped; \([0-9]*\) push.*/\1/p' "$work/serve-resident.log")

p=$(median <"$work/times-plain"); n=$(median <"$work/times-nothing")
r=$(median <"$work/times-resident"); h=$(median <"$work/times-program")
printf '\n%d one-commit pushes of 100 edits and their 100 notices, each onto the last; medians in s (spread)\n\n' "$rounds"
printf '| push | seconds | / cohort serve verifying nothing | / git daemon |\n|---|---:|---:|---:|\n'
printf '| git daemon, receive-pack, no hook | %.3f (%s) | — | 1.00× |\n' "$p" "$(spread <"$work/times-plain")"
printf '| cohort serve, a pre-receive that only reads its input | %.3f (%s) | 1.00× | %s× |\n' "$n" "$(spread <"$work/times-nothing")" "$(ratio "$n" "$p")"
printf '| cohort serve, its resident verifier | %.3f (%s) | **%s×** | %s× |\n' "$r" "$(spread <"$work/times-resident")" "$(ratio "$r" "$n")" "$(ratio "$r" "$p")"
printf '| cohort serve --no-resident-verifier (a hook program each push) | %.3f (%s) | %s× | %s× |\n' "$h" "$(spread <"$work/times-program")" "$(ratio "$h" "$n")" "$(ratio "$h" "$p")"
printf '\npushes the resident verifier verified: %s of %d (the line and the publish)\n' "${answered:-?}" "$((rounds + 1))"
