# Cohort: the two commands a newcomer needs are `make demo` and `make test`.
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
BUILD_PACKAGES := libgit2-dev libssl-dev zlib1g-dev pkg-config git openssh-client openssl python3
# Only the tests use these: Chromium renders link pages; PostgreSQL and nginx run the instances that
# share a database (the tests start and stop their own, and skip, saying so, without them).
TEST_PACKAGES := chromium postgresql nginx
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps deps-build build release test demo bench docs fuzz fuzz-build clean

## deps: everything the build and the tests need (CI runs this): deps-build, and the test servers
deps: deps-build
	@$(call apt_install,$(TEST_PACKAGES))

## deps-build: install the C libraries Cohort links (libgit2, OpenSSL's libcrypto) and the Python
## packages the tests and the demo check Cohort with, when missing
deps-build:
	@$(call apt_install,$(BUILD_PACKAGES))
	@# The tests check signed files with an implementation written apart, in Python.
	@python3 -c 'import cryptography' 2>/dev/null || python3 -m pip install --quiet cryptography \
	  || $(SUDO) apt-get install -y -qq python3-cryptography
	@# The webhook tests' receiver verifies signatures with the reference Standard Webhooks package.
	@python3 -c 'import standardwebhooks' 2>/dev/null || python3 -m pip install --quiet standardwebhooks

# apt_install PACKAGES: installs those that are missing (with sudo when not root).
define apt_install
missing=""; \
for p in $(1); do \
  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
done; \
if [ -n "$$missing" ]; then \
  echo "installing:$$missing"; \
  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
else \
  echo "deps: $(1) already installed"; \
fi
endef

## build: debug build of every product
build: deps-build
	$(SWIFT) build

## release: optimised build of every product, Swift's runtime linked in statically (two files to copy
## to a server, cohort and cohort-hook; used by the benchmarks): .build/release/cohort
release: deps-build
	@SWIFT=$(SWIFT) bash Scripts/build-release.sh >/dev/null

## test: every test, one at a time (many wait on real processes and servers; async tests' timeouts
## must not wait behind them); conformance suites read COHORT_TEST_VECTORS (../shared/vectors when present)
test: deps
	@if [ -z "$$COHORT_TEST_VECTORS" ] && [ -d ../shared/vectors ]; then \
	  export COHORT_TEST_VECTORS="$$(cd ../shared/vectors && pwd)"; fi; \
	$(SWIFT) test --no-parallel
	@# Every fuzz target, briefly, on an instrumented build (`make fuzz` runs them longer).
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS)

## fuzz: every libFuzzer target (Sources/cohort-fuzz) for FUZZ_SECONDS each, from the seed corpus in
## Fuzz/corpus; a crash is saved in Fuzz/crashes/TARGET/ and fails the run
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 10
fuzz-build: deps-build
	$(SWIFT) build --product cohort-fuzz --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING -Xswiftc -use-ld=lld

fuzz: fuzz-build
	@bash Scripts/fuzz.sh "$$($(SWIFT) build --scratch-path .build-fuzz --show-bin-path)/cohort-fuzz" $(FUZZ_SECONDS)

## demo: Cohort's whole lifecycle on this machine (a loopback server, four people), explained step by
## step; DEMO_FLAGS=--batch runs it without pauses
demo: build
	bash Scripts/demo.sh $(DEMO_FLAGS)

## bench: the identity benchmark (release build, as `make release` makes it)
bench: deps-build
	@"$$(SWIFT=$(SWIFT) bash Scripts/build-release.sh cohort-bench)/cohort-bench" identity

## docs: the shell completions and the man page, generated from the command definitions; the layers of Docs/Architecture.md, from Package.swift
docs: build
	@bin="$$($(SWIFT) build --show-bin-path)"; \
	$(SWIFT) build --product generate-manual >/dev/null; \
	mkdir -p Docs/completions Docs/man; \
	"$$bin/cohort" --generate-completion-script bash > Docs/completions/cohort.bash; \
	"$$bin/cohort" --generate-completion-script zsh > Docs/completions/_cohort; \
	"$$bin/cohort" --generate-completion-script fish > Docs/completions/cohort.fish; \
	"$$bin/generate-manual" "$$bin/cohort" --date "$$(date -u +%F)" --authors "Cohort developers" --output-directory Docs/man; \
	echo "wrote Docs/completions/{cohort.bash,_cohort,cohort.fish} and Docs/man/cohort.1"; \
	SWIFT=$(SWIFT) python3 Scripts/architecture.py --write && echo "wrote the layers of Docs/Architecture.md"

clean:
	rm -rf .build
