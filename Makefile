# The two commands of the README: `make demo` and `make test`.
SWIFT ?= swift
DEMO_ARGS ?=

.PHONY: demo test build bootstrap benchmarks clean

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(SWIFT) build

## Build the demo through the build plugin and run its scripted scenario.
demo: bootstrap
	$(SWIFT) build --product StrataDemo
	$(SWIFT) run --skip-build StrataDemo $(DEMO_ARGS)

## Build everything and run every test, the build-plugin integration test included.
test: bootstrap
	$(SWIFT) build --build-tests
	STRATA_PLUGIN_TEST=1 $(SWIFT) test --skip-build

## Release-build benchmarks (separate package), ours beside a baseline in one run.
benchmarks: bootstrap
	cd Benchmarks && $(SWIFT) run -c release StrataBenchmarks

clean:
	rm -rf .build
