# ctx — build, test and measure. `make check` is the gate before every commit and in CI.

GO               ?= go
GOLANGCI_VERSION := v2.15.0
GOBIN            := $(shell $(GO) env GOPATH)/bin
GOLANGCI         := $(GOBIN)/golangci-lint
FUZZTIME         ?= 15s
VERSION          ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS          := -s -w -X main.version=$(VERSION)
# ctx ships as a static binary: without cgo there is no dynamic loader and no libc to
# map at every start, which is 1.5 ms of each hook (BENCHMARKS.md). ctx needs no cgo:
# it looks up no users and resolves no host name but localhost (ctx serve's address),
# which Go's own resolver reads from /etc/hosts.
NOCGO            := CGO_ENABLED=0

.PHONY: build test check fmt vet cross lint bench bench-e2e fuzz savegen install clean e2e fresh torture

build:
	$(NOCGO) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/ctx ./cmd/ctx

test:
	$(GO) test ./...

check: fmt vet cross lint
	$(GO) test -race ./...

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# golangci-lint is built from the module proxy at a pinned version on first use.
$(GOLANGCI):
	$(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)

# Every platform builds: platform code sits behind build tags (xxx_unix.go, xxx_other.go),
# and a 32-bit int (linux/386) compiles too. Cached after the first run: seconds.
cross:
	@for os in linux darwin windows; do \
		GOOS=$$os GOARCH=amd64 $(GO) build ./... || exit 1; \
		GOOS=$$os GOARCH=amd64 $(GO) vet -tags e2e ./e2e/ || exit 1; \
	done
	GOOS=linux GOARCH=386 $(GO) build ./...

lint: $(GOLANGCI)
	@if ! $(GOLANGCI) version 2>/dev/null | grep -q "$(GOLANGCI_VERSION:v%=%)"; then \
		$(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION); fi
	$(GOLANGCI) run ./...

# The end-to-end suite: the real Claude Code (pinned in e2e/client_test.go, installed from
# npm into the user cache on first use) against a loopback model stand-in. Needs npm,
# tmux and git; see docs/e2e.md.
E2E_TIMEOUT ?= 15m
e2e:
	$(GO) test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) ./e2e/

# The crash-and-load suite: real ctx processes at once over a generated workspace, some
# killed mid-write, then every invariant checked (torture/README.md). CI runs the short
# budget; locally, e.g. make torture TORTURE_TIME=5m.
TORTURE_TIME    ?= 20s
TORTURE_TIMEOUT ?= 30m
torture:
	TORTURE_TIME=$(TORTURE_TIME) GO=$(GO) $(GO) test -tags torture -count=1 -v -run '^TestTorture' -timeout $(TORTURE_TIMEOUT) ./torture/

# Each ctx hook's duration as the real Claude Code measures it (its debug log).
bench-e2e:
	$(GO) test -tags e2e -run '^$$' -bench 'HooksInRealClient|Agent|Handoff|Hosts|Remote' -benchtime 15x -timeout $(E2E_TIMEOUT) ./e2e/

# Whole-process medians on a generated workspace; see BENCHMARKS.md.
bench:
	$(GO) run ./bench

# The save-point oracle at scale: SAVEGEN_N generated save points (decoys of every line
# ctx owns, in every container) through save, save and close, every line of the
# person's checked byte for byte (cmd/ctx/savegen_test.go; needs cmark). CI runs 10,000;
# make fuzz runs 100,000.
SAVEGEN_N    ?= 10000
SAVEGEN_SEED ?= 23
savegen:
	CTX_SAVEGEN_N=$(SAVEGEN_N) CTX_SAVEGEN_SEED=$(SAVEGEN_SEED) $(GO) test -count=1 -timeout 60m -run '^TestSaveGenerated$$' ./cmd/ctx/

# Every fuzz target for FUZZTIME each (go test runs one target at a time), then the
# save-point oracle on 100,000 documents.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$target"; \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done
	$(MAKE) savegen SAVEGEN_N=100000

# The README's set-up and tour on a clean clone with a fresh HOME and the oldest Go
# the README promises (.ci/fresh-machine).
fresh:
	.ci/fresh-machine

# Static (CGO_ENABLED=0, as the README's `go run` of the demo): the compiled packages
# that run left in the build cache are reused, and only the link is new (about 4 s).
install:
	$(NOCGO) $(GO) install -ldflags '$(LDFLAGS)' ./cmd/ctx

clean:
	rm -rf bin
