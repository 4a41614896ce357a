#!/usr/bin/env bash
# Clone and fetch of a collaboration of FILES documents (default 10000, plus one signed
# content.created notice each) through `cohort serve` (stock git
# with git-credential-cohort: every clone and fetch buys its token by challenge–response, and
# receive/upload-pack run behind Cohort's access checks) against the same bare repository served by
# `git daemon` without authentication; then clones per second with 20 at once, both ways.
#   bash Scripts/bench-serve.sh [FILES] [RUNS]        (defaults 10000 and 7)
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
source "$scripts/timing.sh"
cd "$scripts/.."
files=${1:-10000}
runs=${2:-7}
bin="$(bash "$scripts/build-release.sh" cohort git-credential-cohort)"
work=$(mktemp -d)
cleanup() {
  [ -n "${serve_pid:-}" ] && kill "$serve_pid" 2>/dev/null || true
  [ -n "${daemon_pid:-}" ] && kill "$daemon_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export PATH="$bin:$PATH" GIT_TERMINAL_PROMPT=0
export COHORT_HOME="$work/ann"
cohort id init --handle ann@example.com --name Ann >/dev/null

# The collaboration: FILES small documents in 100 folders, started (one signed genesis) and published.
mkdir -p "$work/recipes"
python3 "$scripts/generate-documents.py" "$work/recipes" "$files"
cohort start "$work/recipes" --title "Benchmark Recipes" >/dev/null
"$bin/cohort" serve --data "$work/data" --listen 127.0.0.1:0 >"$work/serve.out" 2>"$work/serve.log" &
serve_pid=$!
wait_for 10 grep -q "listening on" "$work/serve.out" || { cat "$work/serve.log" >&2; exit 1; }
base=$(sed -n 's/^listening on \([^ ]*\).*/\1/p' "$work/serve.out")
link=$(quietly cohort publish "$base" --workspace "$work/recipes")
id=${link##*/}
bare="$work/data/collaborations/$id.git"

port=$(free_port)
git daemon --reuseaddr --listen=127.0.0.1 --port="$port" --export-all --base-path="$work/data/collaborations" \
  "$work/data/collaborations" 2>"$work/daemon.log" &
daemon_pid=$!
wait_for 10 git ls-remote "git://127.0.0.1:$port/$id.git"
plain="git://127.0.0.1:$port/$id.git"

# The servers' part of a clone is the transfer; checking out 20,000 files is the same client work
# either way (and dominated by this machine's disk), so the medians clone with --no-checkout and one
# full clone each is shown beside them.
clone_once() {  # clone_once URL [fresh-token] [checkout]: seconds for one clone into a fresh folder
  rm -rf "$work/clone"
  [ "${2:-}" = fresh-token ] && rm -rf "$COHORT_HOME/tokens"
  local start end checkout=--no-checkout
  [ "${3:-}" = checkout ] && checkout=
  start=$(now)
  git "${cohort_helper[@]}" clone -q $checkout "$1" "$work/clone"
  end=$(now)
  [ "$(git -C "$work/clone" rev-parse HEAD)" = "$(git --git-dir "$bare" rev-parse main)" ] || { echo "clone is incomplete" >&2; exit 1; }
  elapsed "$start" "$end"
}

# One more signed commit on the server, so that a fetch has something to bring.
cohort_commit() {
  echo "edited $(date +%s%N)" >> "$work/recipes/section-00/recipe-00000.md"
  cohort commit --workspace "$work/recipes" -m "edit" >/dev/null
  git -C "$work/recipes" "${cohort_helper[@]}" push -q origin main
}
cohort_commit

fetch_once() {  # fetch_once URL: seconds for a fetch that brings the newest commit again
  git -C "$work/clone" update-ref refs/remotes/origin/main "$(git --git-dir "$bare" rev-parse main~1)"
  local start end
  start=$(now)
  git -C "$work/clone" "${cohort_helper[@]}" fetch -q origin
  end=$(now)
  [ "$(git -C "$work/clone" rev-parse origin/main)" = "$(git --git-dir "$bare" rev-parse main)" ] || { echo "fetch is incomplete" >&2; exit 1; }
  elapsed "$start" "$end"
}

clone_served=(); clone_fresh=(); clone_plain=(); fetch_served=(); fetch_plain=()
for _ in $(seq 1 "$runs"); do   # interleaved, so both see the same machine
  clone_fresh+=("$(clone_once "$link" fresh-token)")
  clone_served+=("$(clone_once "$link")"); fetch_served+=("$(fetch_once "$link")")
  clone_plain+=("$(clone_once "$plain")"); fetch_plain+=("$(fetch_once "$plain")")
done
cs=$(printf '%s\n' "${clone_served[@]}" | median); cp=$(printf '%s\n' "${clone_plain[@]}" | median)
cf=$(printf '%s\n' "${clone_fresh[@]}" | median)
fs=$(printf '%s\n' "${fetch_served[@]}" | median); fp=$(printf '%s\n' "${fetch_plain[@]}" | median)
full_served=$(clone_once "$link" "" checkout); full_plain=$(clone_once "$plain" "" checkout)

ps=$(parallel_clones "$link" "$work/parallel"); pp=$(parallel_clones "$plain" "$work/parallel")

start=$(now); rm -rf "$work/cohort-clone"; cohort clone "$link" "$work/cohort-clone" >/dev/null 2>&1; end=$(now)
cc=$(elapsed "$start" "$end")

printf '\n%d files, %s commits; medians of %d interleaved runs\n\n' "$files" "$(git --git-dir "$bare" rev-list --count main)" "$runs"
printf '| what | cohort serve | git daemon, no auth | ratio |\n|---|---:|---:|---:|\n'
printf '| git clone --no-checkout, token cached (s) | %.3f | %.3f | %s× |\n' "$cs" "$cp" "$(ratio "$cs" "$cp")"
printf '| git clone --no-checkout, token bought by challenge–response (s) | %.3f | %.3f | %s× |\n' "$cf" "$cp" "$(ratio "$cf" "$cp")"
printf '| git clone with checkout, once (s) | %.3f | %.3f | %s× |\n' "$full_served" "$full_plain" "$(ratio "$full_served" "$full_plain")"
printf '| git fetch of one new commit (s) | %.3f | %.3f | %s× |\n' "$fs" "$fp" "$(ratio "$fs" "$fp")"
printf '| clones per second, 20 at once | %s | %s | %s× |\n' "$ps" "$pp" "$(ratio "$pp" "$ps")"
printf '\ncohort clone (libgit2, token, then the whole history verified): %.3f s\n' "$cc"
printf 'targets: clone and fetch ≤ 1.2× of the unauthenticated server\n'
