# The two commands a user needs: `make run` (the main job) and `make test` (all tests).
# Both first install any missing Debian packages through scripts/bootstrap.

.PHONY: run test tour bench bootstrap

# A guided demo: the subscriptions example app, written against the StoreKit-shaped API, lives a
# year against the local App Store selling Examples/Shop.storekit.
run: bootstrap
	swift build --product SubscriptionPlans
	.build/debug/SubscriptionPlans

# A tour of the `storekit` command line: stores, purchases, subscriptions, refunds, notifications.
tour: bootstrap
	swift build -c release --product storekit
	scripts/store-tour

test: bootstrap
	swift build --build-tests
	swift test

# Benchmarks run in release builds; each reports its ratio against a limit measured in the same run.
bench: bootstrap
	swift build -c release --product storekit
	.build/release/storekit bench verify
	.build/release/storekit bench catalog
	.build/release/storekit bench purchase
	.build/release/storekit bench renewals
	.build/release/storekit bench ledger

bootstrap:
	scripts/bootstrap
