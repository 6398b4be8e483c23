# The two commands of the README: `make demo` and `make test`.
SWIFT ?= swift
DEMO_ARGS ?=

.PHONY: demo test docs build bootstrap benchmarks clean

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(SWIFT) build

## Build the demo through the build plugin and run its scripted scenario.
demo: bootstrap
	$(SWIFT) build --product StrataDemo
	$(SWIFT) run --skip-build StrataDemo $(DEMO_ARGS)

## Build everything, build the DocC catalog with warnings as errors, and run every test,
## the build-plugin integration test included.
test: bootstrap
	$(SWIFT) build --build-tests
	SWIFT=$(SWIFT) scripts/docs
	STRATA_PLUGIN_TEST=1 $(SWIFT) test --skip-build

## The runtime's DocC catalog, warnings as errors (.build/docs/Strata.doccarchive).
docs: bootstrap
	$(SWIFT) build --target Strata
	SWIFT=$(SWIFT) scripts/docs

## Release-build benchmarks (separate package), ours beside a baseline in one run.
benchmarks: bootstrap
	cd Benchmarks && $(SWIFT) run -c release StrataBenchmarks

clean:
	rm -rf .build
