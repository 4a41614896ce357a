#!/usr/bin/env bash
# Plays the README's tour as written: its ```sh tour blocks, in order, in one shell, in a temporary
# folder that is also HOME (so ~/.config/cohort, ~/phone and ~/bo are fresh), with the port 8377
# replaced by a free one. Every command must succeed; the server the tour starts is stopped however
# it ends. The test suite runs this, so the tour cannot drift from the code.
#
#     bash Scripts/tour.sh [BIN_DIR]     (default: .build/debug; build first with `swift build`)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${1:-$root/.build/debug}" && pwd)
for tool in cohort git-credential-cohort; do
  [ -x "$bin/$tool" ] || { echo "error: E_IO: no $tool in $bin (build first: swift build)" >&2; exit 1; }
done
home=$(mktemp -d "${TMPDIR:-/tmp}/cohort-tour.XXXXXX")
inner=""
# However the tour ends (a failure, a kill, 10 minutes), its process group (the server too) goes first.
trap '{ [ -n "$inner" ] && kill -- -"$inner" 2>/dev/null; } || true; wait 2>/dev/null || true; rm -rf "$home"' EXIT
trap 'exit 143' TERM INT HUP
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

script=$home/.tour.sh
{
  echo 'set -euo pipefail'
  echo "trap 'kill \$(jobs -p) 2>/dev/null || true; wait' EXIT"
  echo 'PS4="tour\$ "; set -x'
  awk '/^```sh tour$/ { inside = 1; next } /^```/ { inside = 0 } inside' "$root/README.md" | sed "s/8377/$port/g"
} > "$script"
blocks=$(grep -c '^```sh tour$' "$root/README.md")
[ "$blocks" -gt 0 ] || { echo "error: E_MALFORMED: README.md has no \`\`\`sh tour blocks" >&2; exit 1; }

cd "$home"
setsid timeout 600 env -i HOME="$home" PATH="$bin:/usr/local/bin:/usr/bin:/bin" LANG=C.UTF-8 GIT_TERMINAL_PROMPT=0 bash "$script" &
inner=$!
status=0
wait "$inner" || status=$?
[ "$status" -eq 0 ] || { echo "error: E_IO: the tour stopped with status $status (the command above it failed)" >&2; exit "$status"; }
echo "tour: all $blocks blocks of README.md ran"
