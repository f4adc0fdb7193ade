# idemcheck — the two commands of the README, and their parts.
GO ?= go

.PHONY: conformance certify test vet deps mutants-doc example-module

# The main job: the reference client against the embedded provider under
# random fault schedules, with the per-invariant summary.
conformance: deps
	$(GO) test ./conformance -run '^TestConformance$$' -count=1 -v

# Every test: the race detector on everything but the mutant kill matrix,
# which runs ~100 child processes of the main job and is kept fast without
# it (the code paths it drives are the main job's, raced in TestConformance).
# -p 3: three packages at once (the default is the 2 cores), since the
# slow ones mostly wait on real time (loopback providers, a hung service):
# conformance then starts at once instead of after certify or checkout.
test: deps vet
	$(GO) test -race -count=1 -p 3 -skip '^TestMutantMatrix$$' ./...
	$(GO) test -count=1 -run '^TestMutantMatrix$$' ./conformance
	$(MAKE) example-module

# A module outside this one (examples/usage, its own go.mod replacing
# this module with ../..) that uses only the public API: certify a URL,
# check a client. go test ./... above does not enter it.
example-module:
	cd examples/usage && $(GO) vet ./... && $(GO) test -race -count=1 ./...

vet:
	test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	$(GO) vet ./...

# Go modules; the WireMock standalone jar (npm package wiremock, pinned in
# package.json / package-lock.json) that sut/wiremock starts with java; and
# stripe-mock for the certification test against it (the test installs it
# itself too, into the user cache; this warms the build cache).
deps:
	$(GO) mod download
	test -f node_modules/wiremock/build/wiremock-standalone-3.13.2.jar || npm ci --no-audit --no-fund
	GOBIN="$${XDG_CACHE_HOME:-$$HOME/.cache}/idemcheck/stripe-mock-v0.203.0" $(GO) install github.com/stripe/stripe-mock@v0.203.0

# Certify a provider: the in-process refprovider, or IDEMCHECK_PROVIDER=<url>
# with IDEMCHECK_DIALECT, IDEMCHECK_API_KEY, IDEMCHECK_PROFILE and budgets.
certify: deps
	$(GO) test ./conformance -run '^TestCertify$$' -count=1 -v

# Regenerate docs/mutants.md from the kill matrix.
mutants-doc: deps
	$(GO) test ./conformance -run '^TestMutantMatrix$$' -count=1 -update-mutants-doc
