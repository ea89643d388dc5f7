# sessctl: build, test and measure.
#
#   make demo    build a sample session through the library and show it
#   make test    gofmt check, go vet, go test -race ./... with a summary of skips, and test-adk
#   make cross   go build and go vet for every GOOS/GOARCH in PLATFORMS (CI runs it after test)
#   make test-adk   the ADK-Go adapter (the nested module adk/): vet, test -race (its cross builds: make cross)
#   make test-windows   the suite as Windows programs under wine64
#   make lint    staticcheck (pinned; installed into the cache when missing)
#   make check   test plus go mod tidy check and the API guard (api-check)
#   make fuzz    every fuzz target for FUZZTIME (default 30s) each
#   make crash   randomized crash-and-reopen workloads, real-process kills, search beside rebuilds
#   make bench   Go benchmarks plus whole-process runs, printed as a table

GO        ?= go
SHELL     := bash
FUZZTIME  ?= 30s
BIN       := bin/sessctl

.PHONY: all build demo test test-adk stress lint api api-check fmt-check vet cross test-windows race check tidy-check fuzz crash bench bench-scale clean

all: build

# -buildvcs=auto: the binary records the version (a release tag) and the
# commit it was built from, which sessctl --version prints, even where
# GOFLAGS turns VCS stamping off.
build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/sessctl

demo: build
	./$(BIN) demo

test: fmt-check vet race test-adk

# make test-adk: the ADK-Go session.Service (adk/) is a module of its own,
# so that programs that do not use ADK never download its dependencies;
# the root's ./... does not reach into it. make test runs its vet and
# tests (ADK's own sessiontestsuite among them), make cross its builds.
ADK_PLATFORMS ?= windows/amd64 darwin/arm64 freebsd/amd64
test-adk:
	cd adk && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 30m ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# make cross: every platform sessctl supports must build and vet, so that
# a Unix-only call in a file without a build tag fails here, not for the
# agent author who links sessctl on Windows or a Mac. Without cgo, as the
# binaries are shipped.
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64 freebsd/amd64 freebsd/arm64
cross:
	@set -e; for p in $(PLATFORMS); do \
		echo "cross $$p"; \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build ./...; \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) vet ./...; \
	done
	@set -e; cd adk; for p in $(ADK_PLATFORMS); do \
		echo "cross adk $$p"; \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build ./...; \
	done

# make test-windows: each package's tests built for windows/amd64 and run
# under wine64 (installed when missing); see scripts/test-windows.sh.
test-windows:
	scripts/test-windows.sh

# The race detector slows the crash and kill tests several times over, and
# a loaded machine more: a package gets 30 minutes, not go test's default
# 10, so that a slow run is not reported as a hang.
#
# The output is go test -json digested by internal/cmd/testsum: a line per
# package as it ends, the output of failed tests, and at the end one line
# per kind of skipped test saying how to enable it.
race:
	@set -o pipefail; $(GO) test -race -count=1 -timeout 30m -json ./... | $(GO) run ./internal/cmd/testsum

# make fuzz: each fuzz target for FUZZTIME; a failing input lands in the
# package's testdata/fuzz/ and then runs with every go test.
fuzz:
	$(GO) test -run=NONE -fuzz='^FuzzParseEntry$$' -fuzztime=$(FUZZTIME) ./internal/jsonl/
	$(GO) test -run=NONE -fuzz='^FuzzParseFile$$' -fuzztime=$(FUZZTIME) ./internal/jsonl/
	$(GO) test -run=NONE -fuzz='^FuzzParseReader$$' -fuzztime=$(FUZZTIME) ./internal/jsonl/
	$(GO) test -run=NONE -fuzz='^FuzzIndentTrusted$$' -fuzztime=$(FUZZTIME) ./internal/jsonl/
	$(GO) test -run=NONE -fuzz='^FuzzMigrate$$' -fuzztime=$(FUZZTIME) ./migrate/
	$(GO) test -run=NONE -fuzz='^FuzzBuild$$' -fuzztime=$(FUZZTIME) ./tree/
	$(GO) test -run=NONE -fuzz='^FuzzAgentUsePart$$' -fuzztime=$(FUZZTIME) ./engine/agentuse/

# make crash: the randomized crash workloads for CRASHTIME, from a seed
# taken from the clock unless CRASHSEED is set (the run prints it); the
# stress cases at full size (testenv.Stress: 1,000 cross-process lock
# cycles, the 200 MB line, the million siblings, the 400 MB session's
# peak heap), which every go test runs scaled down; real-process kills:
# of syncs, of compacting pushes (50) and of the MinIO server under them
# (10), and of a lease holder that another machine then takes over (5
# rounds; the takeover times are logged); pi appending beside a looping
# sync on one and on two machines (20 rounds each, entries counted on
# every side).
CRASHTIME ?= 2m
CRASHSEED ?= 0
crash: stress
	$(GO) test -tags crash -run Crash -count=1 -v -timeout 30m ./engine/ ./engine/agentuse/ -crash.time=$(CRASHTIME) -crash.seed=$(CRASHSEED)
	SESSCTL_KILLS=200 $(GO) test -run TestKillWhileAppending -count=1 -v -timeout 30m ./engine/
	SESSCTL_SYNC_KILLS=50 $(GO) test -run TestKillDuringSync -count=1 -v -timeout 30m ./replica/
	SESSCTL_REQUIRE_MINIO=1 SESSCTL_REQUIRE_PI=1 SESSCTL_PI_SYNC_ROUNDS=20 $(GO) test -run TestPiBesideSync -count=1 -v -timeout 30m ./replica/
	SESSCTL_REQUIRE_MINIO=1 SESSCTL_COMPACT_KILLS=50 $(GO) test -run 'TestKillDuringCompaction|TestServerKilledMidCompaction' -count=1 -v -timeout 30m ./replica/
	SESSCTL_REQUIRE_MINIO=1 SESSCTL_LEASE_ROUNDS=5 $(GO) test -run TestLeaseTakeoverAfterKill -count=1 -v -timeout 30m ./replica/
	SESSCTL_SEARCH_ROUNDS=30 $(GO) test -run TestSearchBesideRebuild -count=1 -v -timeout 30m ./search/

# make bench: Go benchmarks and whole-process runs on generated workloads
# (kept in .bench), as a table of medians of RUNS runs with their spread,
# ending with the figures that miss their targets. With
# PI_MODULES=$(scripts/pi-install.sh 0.58.3), pi is measured on the same files in
# the same run. Sizes and RUNS are environment variables (see
# scripts/bench.sh); `make bench-smoke` runs the whole script at a small
# scale in .bench-smoke, to check the script, not to measure.
bench:
	scripts/bench.sh
	scripts/bench-scale.sh

# make bench-scale: only the real-size part (issue 35; BENCHMARKS.md, Scale).
bench-scale:
	scripts/bench-scale.sh

bench-smoke:
	BENCH_DIR=.bench-smoke RUNS=3 BIG_ENTRIES=3000 SESSIONS=50 SESSION_SIZE=20000 \
	  V1_ENTRIES=2000 V1BIG_ENTRIES=4000 APPEND_N=1000 APPEND_BIG_N=2000 APPEND_SYNC_N=50 \
	  SYNCBENCH=0 SCALE_DIR=.bench-smoke/no-scale scripts/bench.sh

lint:
	scripts/lint.sh

# make stress: only the stress cases at full size (CI runs it).
stress:
	$(GO) test -tags crash -run 'TestMutualExclusion|TestHostileInputs' -count=1 -timeout 30m ./lock/ ./engine/
	$(GO) test -tags crash -run TestLargeSessionMemory -count=1 -v -timeout 30m ./cmd/sessctl/

tidy-check:
	$(GO) mod tidy -diff

# make api-check: no exported name of a public package removed or changed
# since the last release (api/v*.txt) without a CHANGELOG entry under
# Unreleased; see internal/cmd/apicheck. At a release, `make api` writes
# the new API file (API=api/vX.Y.Z.txt).
api-check:
	$(GO) run ./internal/cmd/apicheck

api:
	@test -n "$(API)" || { echo "make api: set API=api/vX.Y.Z.txt"; exit 1; }
	$(GO) run ./internal/cmd/apicheck -write $(API)

check: test tidy-check api-check

clean:
	rm -rf bin .bench .bench-smoke .bench-cache .bench-smoke-cache
