#!/usr/bin/env bash
# Builds the release products named (all of them when none is) the way `make release` does, and
# prints the folder the binaries are in. Swift's runtime and Foundation are linked in statically:
# one file to copy to a server, and each start (every hook run, every command) about 4 ms shorter
# than with the runtime loaded from /opt/swift (Docs/Benchmarks.md).
#   bash Scripts/build-release.sh [PRODUCT …]
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
flags=(-c release --static-swift-stdlib)
if [ $# -eq 0 ]; then "$swift" build "${flags[@]}" >&2; fi
for product in "$@"; do "$swift" build "${flags[@]}" --product "$product" >&2; done
"$swift" build "${flags[@]}" --show-bin-path
