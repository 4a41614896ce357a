#!/usr/bin/env bash
# Past one machine, measured side by side in one run:
#  - clones per second, 20 `git clone --no-checkout` at once through git-credential-cohort, against
#    one instance directly and against two instances behind nginx (Scripts/two-instances.sh; the
#    same data directory and PostgreSQL database);
#  - challenge + token exchanges per second against one instance on the file store and one on
#    PostgreSQL (cohort-bench exchanges: 8 clients, each exchange a fresh challenge signed and answered),
#    from one address, then each exchange from an address of its own (--addresses).
#   bash Scripts/bench-instances.sh [FILES] [ROUNDS]        (defaults 2000 and 5)
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
source "$scripts/timing.sh"
cd "$scripts/.."
files=${1:-2000}
rounds=${2:-5}
bin="$(bash "$scripts/build-release.sh" cohort git-credential-cohort cohort-bench)"
work=$(mktemp -d /tmp/cohort-bench-instances.XXXXXX)
chmod 755 "$work"
cleanup() {
  # serve runs in a command substitution's subshell: its pids are kept in a file.
  [ -e "$work/pids" ] && while read -r pid; do kill "$pid" 2>/dev/null || true; done < "$work/pids"
  bash "$scripts/two-instances.sh" stop "$work/two" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
export PATH="$bin:$PATH" GIT_TERMINAL_PROMPT=0 COHORT_HOME="$work/ann"
cohort id init --handle ann@example.com --name Ann >/dev/null
serve() {  # serve NAME ARGS...: starts cohort serve, prints its URL
  local name=$1; shift
  setsid "$bin/cohort" serve "$@" >"$work/$name.out" 2>"$work/$name.log" </dev/null &
  echo "$!" >> "$work/pids"
  wait_for 30 grep -q "listening on" "$work/$name.out" || { cat "$work/$name.log" >&2; exit 1; }
  sed -n 's/^listening on \([^ ]*\).*/\1/p' "$work/$name.out"
}
rate=(--identity-rate 1000000)

# Two instances behind nginx, and a third on the same data directory and database, reached directly.
front=$(COHORT_BIN="$bin" COHORT_SERVE_ARGS="${rate[*]}" quietly bash "$scripts/two-instances.sh" start "$work/two")
set -a; source "$work/two/state.env"; set +a
single_port=$(free_port)
# Both reached directly trust the benchmark to name clients (exchanges --addresses).
single=$(serve single --data "$work/two/data" --listen "127.0.0.1:$single_port" --trusted-proxy 127.0.0.1 "${rate[@]}")
unset COHORT_SERVE_STATE
files_url=$(serve files --data "$work/files" --listen 127.0.0.1:0 --trusted-proxy 127.0.0.1 "${rate[@]}")

mkdir -p "$work/recipes"
python3 "$scripts/generate-documents.py" "$work/recipes" "$files"
cohort start "$work/recipes" --title "Benchmark Recipes" >/dev/null
link=$(quietly cohort publish "$front" --workspace "$work/recipes")
id=${link##*/}
direct="$single/c/$id"
# The file store's own collaboration, for the exchanges.
mkdir -p "$work/small" && echo "hello" > "$work/small/a.md"
cohort start "$work/small" --title "Exchanges" >/dev/null
files_link=$(quietly cohort publish "$files_url" --workspace "$work/small")

# Tokens cached for both URLs first: the transfers are measured, not the first exchange.
git "${cohort_helper[@]}" ls-remote "$link" >/dev/null; git "${cohort_helper[@]}" ls-remote "$direct" >/dev/null
parallel_clones "$link" "$work/parallel" >/dev/null   # warm-up
one=(); two=(); ex_files=(); ex_pg=(); many_files=(); many_pg=()
for _ in $(seq 1 "$rounds"); do   # interleaved, so both see the same machine
  one+=("$(parallel_clones "$direct" "$work/parallel")")
  two+=("$(parallel_clones "$link" "$work/parallel")")
  ex_files+=("$(cohort-bench exchanges "$files_link" 5 8)")
  ex_pg+=("$(cohort-bench exchanges "$direct" 5 8)")
  many_files+=("$(cohort-bench exchanges "$files_link" 5 8 --addresses)")
  many_pg+=("$(cohort-bench exchanges "$direct" 5 8 --addresses)")
done
med() { printf '%s\n' "$@" | median; }
spr() { printf '%s\n' "$@" | spread %.1f; }
o=$(med "${one[@]}"); t=$(med "${two[@]}"); ef=$(med "${ex_files[@]}"); ep=$(med "${ex_pg[@]}")
mf=$(med "${many_files[@]}"); mp=$(med "${many_pg[@]}")

printf '\n%d files, %d cores; medians of %d interleaved rounds (lowest–highest beside)\n\n' "$files" "$(nproc)" "$rounds"
printf '| what | baseline | measured | ratio | lowest–highest (baseline / measured) |\n|---|---:|---:|---:|---|\n'
printf '| clones per second, 20 at once: one instance direct → two instances behind nginx | %.2f | %.2f | %s× | %s / %s |\n' \
  "$o" "$t" "$(ratio "$t" "$o")" "$(spr "${one[@]}")" "$(spr "${two[@]}")"
printf '| challenge + token exchanges per second, 8 clients: file store → PostgreSQL | %.1f | %.1f | %s× | %s / %s |\n' \
  "$ef" "$ep" "$(ratio "$ep" "$ef")" "$(spr "${ex_files[@]}")" "$(spr "${ex_pg[@]}")"
printf '| the same, each exchange from a client address of its own | %.1f | %.1f | %s× | %s / %s |\n' \
  "$mf" "$mp" "$(ratio "$mp" "$mf")" "$(spr "${many_files[@]}")" "$(spr "${many_pg[@]}")"
printf '\ngoals: two instances behind nginx ≥ 0.95× one instance; PostgreSQL ≥ 0.8× the file store\n'
