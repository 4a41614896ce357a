# Sourced by the benchmark scripts: builds the release binaries into $bin, generates a collaboration
# of $commits signed commits (1 argument, default 10000) in $work/history, packs it as a clone or
# `git gc` would, leaves the shell there with $total commits, and defines the timing helpers.
set -euo pipefail
scripts="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$scripts/timing.sh"
cd "$scripts/.."
commits=${1:-10000}
bin="$(bash "$scripts/build-release.sh" cohort cohort-bench)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export COHORT_HOME="$work/home"

"$bin/cohort-bench" history "$work/history" "$commits"
cd "$work/history"
git repack -adq
total=$(git rev-list --count HEAD)

