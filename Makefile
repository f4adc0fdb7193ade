# idemcheck — the two commands of the README, and their parts.
GO ?= go
NPM ?= npm
# Recipes pipe go test into a formatter: a failing test must fail the pipe.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

# What the tests install stays in the clone (git-ignored): the WireMock
# standalone jar in node_modules/ (npm package wiremock, pinned in
# package.json / package-lock.json; npm's cache in .cache/npm), and
# stripe-mock in .cache/ (installed by its own test, certify/).
JAR := node_modules/wiremock/build/wiremock-standalone-3.13.2.jar
# Mermaid's browser build (npm package @mermaid-js/tiny, pinned beside
# WireMock): reports/assets/ keeps a gzipped copy that report.html inlines
# (go:embed, so the binary needs no node); `make mermaid` refreshes it and
# reports' TestVendoredMermaidMatchesNPM holds it to this file.
MERMAID := node_modules/@mermaid-js/tiny/dist/mermaid.tiny.js
# actionlint (a Go module, from the module proxy) checks .github/workflows/*.yml
# and, through ci.yml's job that uses ./, the action's own action.yml.
ACTIONLINT := github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
# Where the test command's runs write their reports, so they never land in
# the index of your own runs (conformance/idemcheck-reports/).
TEST_REPORTS := $(CURDIR)/.cache/test-reports
# The stripe SDK of examples/stripe-node (a checkout service in Node).
STRIPE_NODE := examples/stripe-node/node_modules/stripe/package.json
# The formatter of go test -json (internal/testprogress), built there.
PROGRESS := $(CURDIR)/.cache/bin/testprogress

.PHONY: conformance certify test vet deps mutants-doc example-module bench bench-certify bench-profile mermaid

# The main job: the reference client against the embedded provider under
# random fault schedules, with the per-invariant summary. Needs only Go
# (works offline once the Go module cache is warm).
conformance:
	$(GO) test ./conformance -run '^TestConformance$$' -count=1 -v

# Every test: the race detector on everything but the mutant kill matrix,
# which runs ~100 child processes of the main job and is kept fast without
# it (the code paths it drives are the main job's, raced in TestConformance).
# -p 3: three packages at once (the default is the 2 cores), since the
# slow ones mostly wait on real time (loopback providers, a hung service):
# conformance then starts at once instead of after certify or checkout.
# The matrix (virtual time, fixed seeds) runs beside the race suite, not
# after it: for its last minutes the race suite is the conformance package
# alone, one child process at a time, and leaves a core idle. Its output
# is printed after the race suite's; either failing fails the target.
# The matrix runs at nice 10: the race suite's real-time tests (loopback
# providers, a service over HTTP, shrinking bounded in seconds) get the
# cores first; the matrix's in-memory rows are on virtual time.
# -timeout 20m: go test's default 10 min per package is too close for the
# conformance package (~4-6 min alone) on a loaded machine.
# go test -json goes through internal/testprogress: a line per package,
# slow test and failure, and every 30 s what is still running. The reports
# go to TEST_REPORTS; the last line checks that no test wrote into an
# idemcheck-reports/ folder of the clone.
test: vet $(JAR) $(MERMAID) $(STRIPE_NODE)
	rm -rf $(TEST_REPORTS) && mkdir -p $(TEST_REPORTS) && touch $(TEST_REPORTS)/.started
	$(GO) build -o $(PROGRESS) ./internal/testprogress
	@log=$$(mktemp); export IDEMCHECK_REPORT_DIR=$(TEST_REPORTS); \
	nice -n 10 $(GO) test -json -count=1 -timeout 20m -run '^TestMutantMatrix$$' ./conformance >"$$log" 2>&1 & matrix=$$!; \
	trap 'kill $$matrix 2>/dev/null; rm -f "$$log"' INT TERM; \
	echo "$(GO) test -count=1 -timeout 20m -run '^TestMutantMatrix\$$' ./conformance  (beside the race suite)"; \
	echo "$(GO) test -race -count=1 -timeout 20m -p 3 -skip '^TestMutantMatrix\$$' ./..."; \
	$(GO) test -json -race -count=1 -timeout 20m -p 3 -skip '^TestMutantMatrix$$' ./... | $(PROGRESS); race=$$?; \
	wait $$matrix; status=$$?; \
	echo "--- the mutant kill matrix:"; $(PROGRESS) <"$$log"; shown=$$?; rm -f "$$log"; \
	[ $$race -eq 0 ] && [ $$status -eq 0 ] && [ $$shown -eq 0 ]
	@written=$$(find . -path ./node_modules -prune -o -path ./.cache -prune -o -path '*/idemcheck-reports/*' -newer $(TEST_REPORTS)/.started -print); \
	if [ -n "$$written" ]; then echo "tests wrote into a report folder of your own runs instead of IDEMCHECK_REPORT_DIR:" >&2; echo "$$written" >&2; exit 1; fi
	@echo "test reports: $(TEST_REPORTS)/index.md"
	$(MAKE) example-module

# A module outside this one (examples/usage, its own go.mod replacing
# this module with ../..) that uses only the public API: certify a URL,
# check a client. go test ./... above does not enter it.
example-module:
	cd examples/usage && $(GO) vet ./... && $(GO) test -race -count=1 ./...

vet:
	test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	$(GO) vet ./...
	$(GO) run $(ACTIONLINT)

# examples/stripe-node's SDK (npm package stripe, pinned in its
# package.json / package-lock.json), installed once (its TestMain also
# runs this npm ci when it is missing).
$(STRIPE_NODE):
	cd examples/stripe-node && $(NPM) ci --no-audit --no-fund --cache $(CURDIR)/.cache/npm

# The WireMock jar and Mermaid, installed once (the WireMock tests also run
# this npm ci themselves when the jar is missing: sut/wiremock.FindJar).
$(JAR) $(MERMAID) &:
	$(NPM) ci --no-audit --no-fund --cache $(CURDIR)/.cache/npm

# Refresh reports/assets/ from node_modules/ after changing the pinned
# @mermaid-js/tiny in package.json (then npm install, to update the lock).
mermaid: $(MERMAID)
	gzip -9n -c $(MERMAID) >reports/assets/mermaid.tiny.js.gz
	cp node_modules/@mermaid-js/tiny/LICENSE reports/assets/mermaid.LICENSE

# Everything the tests download, ahead of time (for an offline run later):
# Go modules, the WireMock jar, stripe-mock.
deps: $(JAR) $(STRIPE_NODE)
	$(GO) mod download
	GOBIN=$(CURDIR)/.cache/stripe-mock-v0.203.0 GOFLAGS=-mod=mod $(GO) install github.com/stripe/stripe-mock@v0.203.0

# Certify a provider: the in-process refprovider, or IDEMCHECK_PROVIDER=<url>
# with IDEMCHECK_DIALECT, IDEMCHECK_API_KEY, IDEMCHECK_PROFILE and budgets.
certify:
	$(GO) test ./conformance -run '^TestCertify$$' -count=1 -v

# Regenerate docs/mutants.md from the kill matrix.
# It also measures the column "caught at default settings" (issue 28:
# every mutant under the matrix's seeds at RAPID_CHECKS=100 and rapid's
# default steps), which CI's matrix run leaves out: about half again the
# matrix's time, hence -timeout 45m.
mutants-doc:
	$(GO) test ./conformance -run '^TestMutantMatrix$$' -count=1 -timeout 45m -update-mutants-doc

# The benchmarks of issue 15 (docs/BENCHMARKS.md): the provider's floor,
# the two systems under test alone (the reference client's checkout against
# the provider's handler, issue 29), the main job's property and its growth, one safety evaluation at three
# history lengths (each -count BENCH_COUNT), every in-memory mutant's time
# to detect (median of BENCH_MUTANT_SEEDS seeds: 3 here to stay under
# ~10 min on 2 cores; docs/BENCHMARKS.md has a 10-seed run) and the peak
# memory of a BENCH_SEQUENCES-sequence run (once). Not part of make test:
# nothing here fails on a duration. The raw output goes to BENCH_OUT,
# benchstat's summary beside it; the one table of medians and ratios to
# the floor (internal/benchtable) is printed.
BENCH_OUT := $(CURDIR)/.cache/bench
BENCH_COUNT ?= 5
BENCH_MUTANT_SEEDS ?= 3
BENCH_SEQUENCES ?= 10000
BENCHSTAT := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
bench:
	mkdir -p $(BENCH_OUT) && rm -f $(BENCH_OUT)/bench.txt
	@echo "bench: the provider (count $(BENCH_COUNT))"
	$(GO) test -run '^$$' -bench '^BenchmarkProvider(Direct|Loopback)$$' -count $(BENCH_COUNT) ./sut/provider >>$(BENCH_OUT)/bench.txt
	$(GO) test -run '^$$' -bench '^BenchmarkSystemsDirect$$' -count $(BENCH_COUNT) ./sut/client >>$(BENCH_OUT)/bench.txt
	@echo "bench: the property, its steps, the checker (count $(BENCH_COUNT))"
	$(GO) test -run '^$$' -bench '^Benchmark(Property|PropertyParallel|PropertySteps|CheckerStep|RapidFloor)$$' -count $(BENCH_COUNT) -timeout 30m ./conformance/internal/run >>$(BENCH_OUT)/bench.txt
	@echo "bench: every in-memory mutant, $(BENCH_MUTANT_SEEDS) seeds"
	$(GO) test -run '^$$' -bench '^BenchmarkMutantDetect$$' -benchtime $(BENCH_MUTANT_SEEDS)x -timeout 30m ./conformance/internal/run >>$(BENCH_OUT)/bench.txt
	@echo "bench: peak memory of $(BENCH_SEQUENCES) sequences"
	IDEMCHECK_BENCH_SEQUENCES=$(BENCH_SEQUENCES) $(GO) test -run '^$$' -bench '^BenchmarkPeakMemory$$' -benchtime 1x -timeout 60m ./conformance/internal/run >>$(BENCH_OUT)/bench.txt
	$(GO) run $(BENCHSTAT) $(BENCH_OUT)/bench.txt >$(BENCH_OUT)/benchstat.txt 2>&1
	@echo
	@$(GO) run ./internal/benchtable $(BENCH_OUT)/bench.txt
	@echo
	@echo "raw: $(BENCH_OUT)/bench.txt; benchstat (95% intervals): $(BENCH_OUT)/benchstat.txt"

# What a certification spends to find each provider mutant over loopback
# (issue 24; docs/BENCHMARKS.md), at 0 and 300 ms of processing: one
# certification each, to its first detection (~10 min on 2 cores). Not part
# of make bench or make test: its numbers are counts, not times.
bench-certify:
	mkdir -p $(BENCH_OUT)
	$(GO) test -run '^$$' -bench '^BenchmarkCertifyMutant$$' -benchtime 1x -timeout 60m ./conformance/internal/run >$(BENCH_OUT)/certify.txt
	@$(GO) run ./internal/benchtable $(BENCH_OUT)/certify.txt

# The CPU profile of BenchmarkProperty (docs/BENCHMARKS.md): what dominates.
bench-profile:
	mkdir -p $(BENCH_OUT)
	$(GO) test -run '^$$' -bench '^BenchmarkProperty$$' -benchtime 10s -count 1 -cpuprofile $(BENCH_OUT)/property.cpu -o $(BENCH_OUT)/run.test ./conformance/internal/run
	$(GO) tool pprof -top -nodecount 30 $(BENCH_OUT)/run.test $(BENCH_OUT)/property.cpu
	$(GO) tool pprof -top -cum -nodecount 40 $(BENCH_OUT)/run.test $(BENCH_OUT)/property.cpu
