#!/usr/bin/env bash
# Builds the release products named (when none is, those a server or a user's machine runs: cohort,
# with cohort-hook and cohort-hook-client, and git-credential-cohort) the way `make release` does, and
# prints the folder the binaries are in. Swift's runtime and Foundation are linked in statically:
# cohort and cohort-hook (built whenever cohort is) to copy to a server, each start about 4 ms shorter
# than with the runtime loaded from /opt/swift (Docs/Benchmarks.md).
# The compiler's output is kept in .build/release-build.log and shown (on standard error) only when
# the build fails.
#   bash Scripts/build-release.sh [PRODUCT …]
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
# Generic types such as [ObjectID: Commit] are made by direct calls rather than from their mangled
# names: a process no longer demangles them and looks up their conformances on first use (3% of a
# one-commit hook's instructions, 1.6 ms of its CPU; Docs/Benchmarks.md).
flags=(-c release --static-swift-stdlib -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors)
mkdir -p .build
log=.build/release-build.log
: > "$log"
build() {
  "$swift" build "${flags[@]}" "$@" >>"$log" 2>&1 || { cat "$log" >&2; echo "error: E_IO: the release build failed (the compiler's output is above, and in $log)" >&2; exit 1; }
}
# Not every target: the tests' support target imports Testing, which has no static library to link
# with --static-swift-stdlib.
if [ $# -eq 0 ]; then set -- cohort git-credential-cohort; fi
# cohort's hooks call cohort-hook (and with a resident verifier cohort-hook-client) beside it: build
# them together, so that the ones beside a new cohort are never older builds.
for product in "$@"; do
  build --product "$product"
  if [ "$product" = cohort ]; then build --product cohort-hook; build --product cohort-hook-client; fi
done
bin=$("$swift" build "${flags[@]}" --show-bin-path)
# cohort-hook-client is C, but linked by Swift's driver with --static-swift-stdlib it carries Swift's
# runtime and loads the C++ library: 1.9 ms to start against 1.0 ms, on every push through a resident
# verifier (Docs/Benchmarks.md). It is compiled again with the system's C compiler, over the one made
# above (kept when there is no C compiler).
if [ -e "$bin/cohort-hook-client" ] && "${CC:-cc}" -O2 -Wall -o "$bin/cohort-hook-client.cc" Sources/cohort-hook-client/main.c >>"$log" 2>&1; then
  mv -f "$bin/cohort-hook-client.cc" "$bin/cohort-hook-client"
fi
echo "$bin"
