# Developer targets. `make help` lists them. Two modules: the root (the
# library and gsq) and bench/ (benches, and interop tests against Go peers).
GO ?= go

.PHONY: help test race fuzz interop bench lint demo
help: ## list targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

test: ## run the unit and conversation tests
	$(GO) test ./...

race: ## run the tests under the race detector
	$(GO) test -race ./...

fuzz: ## smoke-run every FuzzX target (15 s each, 6 min in all at most, by default)
	.ci/fuzz-smoke

interop: ## run the interop tests against qstat, gamedig, rcon-client and (in bench/) go-a2s, gorcon, go-mc
	.ci/install-peers
	$(GO) test -tags interop -count=1 -run Interop ./...
	$(GO) test -C bench -tags interop -count=1 -run Interop ./...

bench: ## run the Go benchmarks (figures, not assertions)
	$(GO) test -run='^$$' -bench=. -benchtime=1s ./...
	$(GO) test -C bench -run='^$$' -bench=. -benchtime=1s ./...

lint: ## gofmt and go vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags interop ./...
	$(GO) -C bench vet ./...
	$(GO) -C bench vet -tags interop ./...

demo: ## run the demo against the embedded simulated server
	$(GO) run ./cmd/gsq demo
