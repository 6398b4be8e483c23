# The two commands of the README: `make demo` and `make test`.
SWIFT ?= swift
DEMO_ARGS ?=

.PHONY: demo sync-demo relay-demo test docs build bootstrap benchmarks clean

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(SWIFT) build

## Build the demo through the build plugin and run its scripted scenario.
demo: bootstrap
	$(SWIFT) build --product StrataDemo
	$(SWIFT) run --skip-build StrataDemo $(DEMO_ARGS)

## Two stores edit offline, then sync through a private PostgreSQL cluster (started in a
## temporary folder, on a Unix socket only, and removed afterwards) and converge.
sync-demo: bootstrap
	$(SWIFT) build --product StrataSyncDemo
	$(SWIFT) run --skip-build StrataSyncDemo

## Two users' devices sync through `strata-relay` (a process of its own, in front of a private
## PostgreSQL cluster), signing in with tokens; each sees the other's changes arrive live.
relay-demo: bootstrap
	$(SWIFT) build --product StrataRelayDemo
	$(SWIFT) build --product strata-relay
	$(SWIFT) run --skip-build StrataRelayDemo

## Build everything, build the DocC catalog with warnings as errors, and run every test,
## the build-plugin integration test included.
## Strata's tests are swift-testing tests: XCTest (none) is not run. The output is one line per
## failing test and issue and a summary; VERBOSE=1 prints a line per test and argument.
VERBOSE ?=
TEST_OUTPUT = $(if $(VERBOSE),,--quiet)
test: bootstrap
	$(SWIFT) build --build-tests
	SWIFT=$(SWIFT) scripts/docs
	STRATA_PLUGIN_TEST=1 $(SWIFT) test --skip-build --disable-xctest $(TEST_OUTPUT)

## The runtime's DocC catalog, warnings as errors (.build/docs/Strata.doccarchive).
docs: bootstrap
	$(SWIFT) build --target Strata
	SWIFT=$(SWIFT) scripts/docs

## Release-build benchmarks (separate package, on package-benchmark): every benchmark, stored as
## the baseline $(BENCHMARK_BASELINE) (Benchmarks/.benchmarkBaselines), then its aims tables: ours
## beside the baseline of each pair (refetch + diff, plain GRDB, the standard library) and the ratio.
## `make benchmarks QUICK=1` leaves out the 1M sizes and the standard library's difference;
## BENCHMARK_ARGS passes more options to package-benchmark (--filter REGEX, --skip REGEX: each
## matches whole names).
BENCHMARK_BASELINE ?= latest
BENCHMARK_ARGS ?=
ifdef QUICK
BENCHMARK_ARGS += --skip '.*\.1M\..*' --skip 'IdentityDifference\.Sectioned\.Stdlib'
endif
benchmarks: bootstrap
	cd Benchmarks && $(SWIFT) build -c release --product StrataHistoryWriter
	cd Benchmarks && $(SWIFT) package --allow-writing-to-package-directory benchmark baseline update $(BENCHMARK_BASELINE) --no-progress $(BENCHMARK_ARGS)
	cd Benchmarks && $(SWIFT) run -c release StrataAims $(BENCHMARK_BASELINE)

clean:
	rm -rf .build
