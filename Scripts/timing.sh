# Sourced by the benchmark scripts: wall-clock helpers.
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f\n", b - a }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { printf "%.6f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
spread() { sort -g | awk -v f="${1:-%.3f}" '{ v[NR] = $1 } END { printf f "–" f, v[1], v[NR] }'; }   # lowest–highest
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
parallel_clones() {  # parallel_clones URL DIR: clones per second, 20 `git clone --no-checkout` at once through git-credential-cohort
  rm -rf "$2"; mkdir -p "$2"
  local start end i
  start=$(now)
  for i in $(seq 1 20); do git "${cohort_helper[@]}" clone -q --no-checkout "$1" "$2/$i" & done
  wait
  end=$(now)
  for i in $(seq 1 20); do git -C "$2/$i" rev-parse -q --verify HEAD >/dev/null || { echo "parallel clone $i failed" >&2; exit 1; }; done
  awk -v s="$(elapsed "$start" "$end")" 'BEGIN { printf "%.2f", 20 / s }'
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() {  # wait_for SECONDS COMMAND...: true once COMMAND succeeds, false after SECONDS
  local tries=$(($1 * 10)); shift
  for _ in $(seq 1 "$tries"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}
quietly() {  # quietly COMMAND...: its standard error shown only when it fails
  local log; log=$(mktemp)
  "$@" 2>"$log" || { local status=$?; cat "$log" >&2; rm -f "$log"; return "$status"; }
  rm -f "$log"
}
cohort_helper=(-c credential.helper=cohort -c credential.useHttpPath=true)
