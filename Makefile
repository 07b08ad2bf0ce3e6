# The two commands a user needs: `make run` (the main job) and `make test` (all tests).
# Both first install any missing Debian packages through scripts/bootstrap.

.PHONY: run test bench bootstrap

run: bootstrap
	swift build -c release --product storekit
	scripts/demo

test: bootstrap
	swift build --build-tests
	swift test

# Benchmarks run in release builds; each reports its ratio against a limit measured in the same run.
bench: bootstrap
	swift build -c release --product storekit
	.build/release/storekit bench verify
	.build/release/storekit bench catalog

bootstrap:
	scripts/bootstrap
