# paywatch: `make run` starts the local sandbox, `make test` runs every test.
#
# Plain Go tooling: no build tag. (go-ethereum's and ltcd's cgo secp256k1
# define the same C symbols, so no binary may link both: the daemon hashes
# Ethereum addresses with go-ethereum's keccak package only, anvil lives in
# devnet/ethdev apart from devnet, and the sandbox reads Core block hashes
# over RPC; TestNoBinaryLinksBothSecp256k1 checks it.)
export GOFLAGS := -buildvcs=false

BIN := bin/paywatch
SANDBOX := bin/paywatch-sandbox

.PHONY: build run test vet bench bench-latency bench-all fuzz sim clean drill-pg

# build makes the daemon and the local sandbox, which runs the daemon
# beside it (bin/paywatch serve).
build:
	go build -o $(BIN) ./cmd/paywatch
	go build -o $(SANDBOX) ./cmd/paywatch-sandbox

run: build
	$(SANDBOX)

vet:
	go vet ./...

# test starts its own throwaway PostgreSQL unless PAYWATCH_TEST_DATABASE_URL
# is set; chain-node tests start btcd, litecoind and anvil themselves.
test: vet
	go test -count=1 -timeout 40m ./...

# drill-pg is the PostgreSQL failover drill at length: a primary with a
# synchronous standby under load, killed (SIGKILL) then frozen (SIGSTOP),
# the standby promoted each time, DRILL_LOAD of load around each failover
# (`make test` runs it with 3 s). It prints the time from each loss to the
# first successful write and the counts (docs/operating.md, Operations).
DRILL_LOAD ?= 60s
drill-pg:
	go test -count=1 -timeout 30m -run '^TestFailoverDrill$$' -v ./cmd/paywatch -args -drill.load=$(DRILL_LOAD)

# fuzz runs every native fuzz target for FUZZTIME each, one target at a
# time (.ci/fuzz). `make test` already runs each target's seed corpus and
# testdata/fuzz.
FUZZTIME ?= 30s
fuzz:
	bash .ci/fuzz $(FUZZTIME)

# sim runs the money simulator (package sim) for DURATION: generated
# histories of SIMSTEPS steps, every invariant checked after every step; it
# reports one shrunk example per broken invariant and histories per second.
# `make test` runs its bounded CI set (2,000 short histories).
DURATION ?= 30m
SIMSTEPS ?= 40
sim:
	go test -count=1 -timeout 0 ./sim -run TestSim -duration $(DURATION) -steps $(SIMSTEPS) -all -v

# bench measures the scale figures (watched-set lookups, status at 200k
# and 2M addresses, intent creation at 16 callers beside what the same
# PostgreSQL commits at 16 callers), the money simulator's histories a
# second (600 histories, 12 steps, 3 workers; before the latency figures,
# whose nodes take seconds of CPU to stop) and the latency figures
# (bench-latency, about two minutes) and prints them as one table, with the
# machine's load average at the start and the end; the raw output stays
# in bin/bench.out.
# bench-all runs every benchmark.
bench: build
	{ echo "bench load average $$(cut -d' ' -f1-3 /proc/loadavg) at start" && \
	  go test -run '^$$' -bench 'WatchSetContains' -benchmem ./chains/ && \
	  go test -run '^$$' -bench 'BenchmarkStatus' -benchtime 100x -timeout 30m ./api/ && \
	  go test -run '^$$' -bench 'CreateIntent/(commits|BTC)/callers=16' -benchtime 3000x ./api/ && \
	  go test -count=1 -run '^TestSim$$' ./sim -histories 600 -steps 12 -workers 3 -v && \
	  go run ./cmd/paywatch-latency -bin $(BIN) && \
	  echo "bench load average $$(cut -d' ' -f1-3 /proc/loadavg) at end"; } > bin/bench.out
	go run ./cmd/paywatch-bench < bin/bench.out

# bench-latency: broadcast → detected and block → confirmation in the API,
# p50/p95/max per network, against real btcd, litecoind and anvil with the
# daemon at its default poll intervals.
bench-latency: build
	go run ./cmd/paywatch-latency -bin $(BIN)

bench-all:
	go test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin
