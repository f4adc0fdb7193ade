# idemcheck — the two commands of the README, and their parts.
GO ?= go

.PHONY: conformance test vet deps

# The main job: the reference client against the embedded provider under
# random fault schedules, with the per-invariant summary.
conformance: deps
	$(GO) test ./conformance -run '^TestConformance$$' -count=1 -v

# Every test, with the race detector (what CI runs).
test: deps vet
	$(GO) test -race -count=1 ./...

vet:
	test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	$(GO) vet ./...

deps:
	$(GO) mod download
