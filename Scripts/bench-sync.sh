#!/usr/bin/env bash
# `cohort sync` on a workspace of FILES documents (default 10000) against the plain git CLI doing the
# same work (`git add -A; git commit; git pull --no-rebase; git push`) on a copy of the very same
# repository: a no-op sync, a sync of 100 edited files, and a first clone. Cohort syncs with a bare
# repository that runs Cohort's verifying hook, and (to show the client alone) with a copy without
# it; git with a copy that runs none.
#   bash Scripts/bench-sync.sh [FILES] [RUNS]        (defaults 10000 and 5)
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
source "$scripts/timing.sh"
cd "$scripts/.."
files=${1:-10000}
runs=${2:-5}
bin="$(bash "$scripts/build-release.sh" cohort)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$bin:$PATH" COHORT_HOME="$work/ann"
source "$scripts/documents.sh"
cohort id init --handle ann@example.com --name Ann >/dev/null
documents_collaboration "$work/cohort-ws" "$work/cohort.git" "$files"
git clone -q --bare "$work/cohort.git" "$work/plain.git"
git clone -q "$work/plain.git" "$work/plain-ws"
# The same collaboration once more, on a remote without the hook: what the client alone costs.
git clone -q --bare "$work/cohort.git" "$work/unhooked.git"
cohort clone "$work/unhooked.git" "$work/client-ws" >/dev/null 2>&1
# git leaves `gc --auto` running in the background (after a commit, a push, a receive); wait for it,
# so that each measurement has the machine to itself, and so that no gc is under way when the
# script packs the repositories itself.
settle() { while pgrep -f "git (gc|repack)|git-(gc|repack)|pack-objects" >/dev/null; do sleep 0.05; done; }
# Steady state: every repository packed, as `git gc --auto` (which cohort sync runs) keeps them.
settle
for repository in "$work/cohort-ws" "$work/client-ws" "$work/plain-ws"; do git -C "$repository" gc -q; done

cohort_sync() { cohort sync --workspace "$work/cohort-ws" -m "bench" >/dev/null; }
client_sync() { cohort sync --workspace "$work/client-ws" -m "bench" >/dev/null; }
git_sync() {
  (cd "$work/plain-ws" && git add -A && { git commit -q -m "bench" >/dev/null || true; } && git pull -q --no-rebase origin main && git push -q origin main) >/dev/null
}
cohort_clone() { rm -rf "$work/c-clone"; cohort clone "$work/cohort.git" "$work/c-clone" >/dev/null 2>&1; }
git_clone() { rm -rf "$work/g-clone"; git clone -q "$work/plain.git" "$work/g-clone"; }
edit_100() {  # edit_100 WORKSPACE ROUND: append a line to 100 documents
  python3 - "$1" "$2" <<'PY'
import sys
root, round_ = sys.argv[1], sys.argv[2]
for i in range(100):
    with open(f"{root}/section-{i % 100:02d}/recipe-{i:05d}.md", "a") as f:
        f.write(f"edit {round_}\n")
PY
}
timed() { local start end; start=$(now); "$@"; end=$(now); elapsed "$start" "$end"; settle; }

noop_c=(); noop_g=(); edit_c=(); edit_g=(); clone_c=(); clone_g=(); noop_u=(); edit_u=()
for round in $(seq 1 "$runs"); do   # interleaved, so both see the same machine
  noop_c+=("$(timed cohort_sync)"); noop_u+=("$(timed client_sync)"); noop_g+=("$(timed git_sync)")
  edit_100 "$work/cohort-ws" "$round"; edit_100 "$work/client-ws" "$round"; edit_100 "$work/plain-ws" "$round"
  edit_c+=("$(timed cohort_sync)"); edit_u+=("$(timed client_sync)"); edit_g+=("$(timed git_sync)")
done
# The clones last: each round deletes 40,000 files, and ext4 then searches past those freed inodes
# for a while whenever a file is created, which would slow every sync of the next round.
for round in $(seq 1 "$runs"); do
  clone_c+=("$(timed cohort_clone)"); clone_g+=("$(timed git_clone)")
done
[ -z "$(git -C "$work/cohort-ws" status --porcelain)" ] || { echo "cohort workspace not clean" >&2; exit 1; }
[ "$(git -C "$work/cohort-ws" rev-parse HEAD)" = "$(git --git-dir "$work/cohort.git" rev-parse main)" ] || { echo "cohort did not push" >&2; exit 1; }
[ "$(git -C "$work/plain-ws" rev-parse HEAD)" = "$(git --git-dir "$work/plain.git" rev-parse main)" ] || { echo "git did not push" >&2; exit 1; }
cohort verify --workspace "$work/c-clone" >/dev/null

m() { printf '%s\n' "$@" | median; }
nc=$(m "${noop_c[@]}"); ng=$(m "${noop_g[@]}"); nu=$(m "${noop_u[@]}"); eu=$(m "${edit_u[@]}"); ec=$(m "${edit_c[@]}"); eg=$(m "${edit_g[@]}"); cc=$(m "${clone_c[@]}"); cg=$(m "${clone_g[@]}")
printf '\n%d documents (%s files with the notices), medians of %d interleaved runs\n\n' "$files" \
  "$(git -C "$work/cohort-ws" ls-files | wc -l)" "$runs"
printf '| what | cohort sync | git CLI | ratio |\n|---|---:|---:|---:|\n'
printf '| no-op sync, remote with the verifying hook (s) | %.3f | %.3f | %s× |\n' "$nc" "$ng" "$(ratio "$nc" "$ng")"
printf '| no-op sync, remote without a hook (s) | %.3f | %.3f | %s× |\n' "$nu" "$ng" "$(ratio "$nu" "$ng")"
printf '| sync of 100 edited files, remote with the verifying hook (s) | %.3f | %.3f | %s× |\n' "$ec" "$eg" "$(ratio "$ec" "$eg")"
printf '| sync of 100 edited files, remote without a hook (s) | %.3f | %.3f | %s× |\n' "$eu" "$eg" "$(ratio "$eu" "$eg")"
printf '| first clone (s): cohort clone (verified) vs git clone | %.3f | %.3f | %s× |\n' "$cc" "$cg" "$(ratio "$cc" "$cg")"
printf '\ntargets: no-op ≤ 1.5×, 100 edits ≤ 1.3×\n'
