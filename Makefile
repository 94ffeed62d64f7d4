# sessionfix — see README.md. Needs Go (1.26+) and gcc (cgo, for the SQLite driver).
GO      ?= go
BIN     ?= bin/sessionfix
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
# BUILDFLAGS: go build's flags besides -ldflags (-trimpath: no path of this machine in the binary).
BUILDFLAGS ?= -trimpath
SHELL   := /bin/bash

.PHONY: all build install test torture demo bench bench-go lint fuzz clean

all: build

build:
	$(GO) build $(BUILDFLAGS) -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/sessionfix

## install: build, then copy the command to $(DESTDIR)$(BINDIR)/sessionfix. BINDIR defaults to
## where `go install` puts commands ($(go env GOBIN), else $(go env GOPATH)/bin, usually ~/go/bin);
## e.g. make install BINDIR=$HOME/.local/bin. For every user of a machine:
## make build && sudo make install BINDIR=/usr/local/bin (go must then be on root's PATH too).
## The module path is not served by any proxy, so `go install …@latest` cannot fetch it; in a
## clone, `go install ./cmd/sessionfix` works too (without the version stamp).
BINDIR  ?= $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)
install: build
	install -d "$(DESTDIR)$(BINDIR)"
	install -m 0755 "$(BIN)" "$(DESTDIR)$(BINDIR)/sessionfix"
	@echo "installed $(DESTDIR)$(BINDIR)/sessionfix ($(VERSION))"

## test: vet, then every unit, property and end-to-end test (CI runs this). Prints go test's
## "ok"/"FAIL" lines (and the output of failing tests), then one line listing every skipped
## test with its reason (internal/testsummary reads go test -json); then runs every Go benchmark once on small inputs
## (-benchtime=1x, SESSIONFIX_BENCH_PARTS=2000) so none rots unnoticed; their timings are not checked.
## A package may take 20 min (go test's default 10 was reached by cmd/sessionfix on a loaded 2-core machine).
test:
	$(GO) vet ./...
	$(GO) vet -tags purego ./internal/jsonscan   # the build without assembly (classify_other.go)
	set -o pipefail; $(GO) test -count=1 -timeout 20m -json ./... | $(GO) run ./internal/testsummary
	@# every Go benchmark once on small inputs, so none rots unnoticed (timings are not checked)
	@log=$$(mktemp); if SESSIONFIX_BENCH_PARTS=2000 $(GO) test -count=1 -run '^$$' -bench . -benchtime=1x ./... >"$$log" 2>&1; \
	then echo "benchmarks: each ran once, none failed"; rm -f "$$log"; else cat "$$log"; rm -f "$$log"; exit 1; fi

## torture: the long fault tests (internal/torture): SIGKILL at random instants of fix and undo
## (JSONL, a rollback-journal SQLite store: hot journals, a WAL one: -wal/-shm left), tampered run
## manifests and journals, agents writing to a session while it is fixed, an agent process
## inserting into a WAL and a rollback-journal SQLite store while it is fixed (none of its rows
## lost; with the sqlite3 shell on PATH also as the shell's SQLite), a full state disk (tmpfs,
## root), an unprivileged user (made with useradd; root only, skipped otherwise, failing under
## CI=true as root when it cannot run) against root's scan/fix/--plan (issue 30: --discover and
## plans running the user's commands, a user's plan profile, links out of the home, temp-file,
## FIFO and symlink swaps); prints trials, failures and bytes lost
## (under 15 minutes; SESSIONFIX_TORTURE_TRIALS=N sets the trials per scenario; one scenario:
## SESSIONFIX_TORTURE=1 go test -run TestTorture/kill-fix-sqlite -v ./internal/torture)
torture:
	SESSIONFIX_TORTURE=1 $(GO) test -count=1 -timeout 15m -run TestTorture -v ./internal/torture

## demo: the main job on a copy of the bundled real fixtures (scan, dry-run, apply, scan, undo)
demo: build
	./scripts/demo.sh $(BIN)

## bench: one table of how cost grows (cmd/sessionfix-bench): 256 MiB, 1 GiB and 4 GiB JSONL
## corpora generated from the fixture records (scan vs cat|wc -l, fix --apply vs cp -r && sync,
## both applies on a fresh synced copy: up to 4x the corpus on disk, 16 GiB at 4 GiB)
## and 100k/1M-part SQLite databases (scan and fix vs the sqlite3 shell), one of each per corpus
## of agent/all/allbench (the rooms' generators), and 100k/1M-chat PostgreSQL databases (scan vs
## psql SELECT, fix vs psql's UPDATE, with both sides' CPU: docs/openwebui.md): time, ratio to
## the floor, peak RSS, target met or not. Data goes to a temp dir (BENCH_DIR=DIR to choose one; the
## generated SQLite databases are then kept there and reused by the next run);
## BENCH_LARGE=1 adds the opt-in large cases (a 10M-part database: 14 GiB, and about 40 GiB of
## free disk for it, sessionfix's backup and the WALs of both rewrites; 40+ minutes on 2 cores).
## BENCH_ARGS are passed on, e.g. a quick look: BENCH_ARGS='-jsonl 16 -sqlite 3000 -runs 1'.
## bench-go: the Go benchmarks of the hot paths.
BENCH_DIR   ?=
BENCH_LARGE ?=
BENCH_ARGS  ?=
bench: build
	$(GO) run ./cmd/sessionfix-bench -bin $(BIN) $(if $(BENCH_DIR),-dir $(BENCH_DIR)) $(if $(filter 1,$(BENCH_LARGE)),-large) $(BENCH_ARGS)

bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/jsonscan ./engine/jsonl ./mcpname
	$(GO) test -run '^$$' -bench . -benchtime 2x -benchmem ./agent/opencode/opencodebench   # a 1M-part opencode database

## lint: formatting, vet (also of the purego build), staticcheck
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags purego ./internal/jsonscan   # the build without assembly (classify_other.go)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

## fuzz: run each fuzz target for FUZZTIME (default 30s)
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzNormalize -fuzztime $(FUZZTIME) ./mcpname
	$(GO) test -run '^$$' -fuzz FuzzScannerAgreesWithEncodingJSON -fuzztime $(FUZZTIME) ./internal/jsonscan

clean:
	rm -rf bin
