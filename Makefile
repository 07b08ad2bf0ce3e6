# The two commands a user needs: `make run` (the main job) and `make test` (all tests).
# Both first install any missing Debian packages through scripts/bootstrap.

.PHONY: run demo test tour serve bench bootstrap

# The example shop as a local App Store: `storekit serve` on Examples/Shop.storekit (kept in
# .build/run-store, manual clock from 2026-01-01, a few accounts) on PORT (8080 unless given; 0 picks a
# free one). It prints the Transaction Manager's and the storefront's URLs; apps connect with
# `--store URL`; the admin and device APIs are in docs/.
PORT ?= 8080
run: bootstrap
	swift build --product storekit
	PORT=$(PORT) scripts/run-store

# A guided demo: the subscriptions example app, written against the StoreKit-shaped API, lives a
# year against the local App Store selling Examples/Shop.storekit.
demo: bootstrap
	swift build --product SubscriptionPlans
	.build/debug/SubscriptionPlans

# A tour of the `storekit` command line: stores, purchases, subscriptions, refunds, notifications.
tour: bootstrap
	swift build -c release --product storekit
	scripts/store-tour

# The same as `make run` (its earlier name).
serve: run

# The whole suite, through a watchdog: when no test ends for five minutes it prints every thread's
# stack of the test process (gdb) and fails, rather than waiting for CI's time limit.
test: bootstrap
	swift build --build-tests
	scripts/test-watchdog swift test

# Benchmarks run in release builds; each reports its ratio against a limit measured in the same run.
# `bench pipeline` runs at a size that takes about a minute here (SQLite); give it --postgres URL for PostgreSQL.
bench: bootstrap
	swift build -c release --product storekit
	.build/release/storekit bench verify
	.build/release/storekit bench catalog
	.build/release/storekit bench purchase
	.build/release/storekit bench renewals
	.build/release/storekit bench ledger
	.build/release/storekit bench serve
	.build/release/storekit bench backend
	.build/release/storekit bench pipeline --subscribers 20000

bootstrap:
	scripts/bootstrap
