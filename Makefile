# paywatch: `make run` starts the local sandbox, `make test` runs every test.
#
# go-ethereum's cgo secp256k1 and ltcd's cgo secp256k1 (MWEB) define the same
# C symbols; the gofuzz tag selects go-ethereum's pure-Go secp256k1 so that
# one binary can hold both.
export GOFLAGS := -tags=gofuzz -buildvcs=false

BIN := bin/paywatch

.PHONY: build run test vet bench clean

build:
	go build -o $(BIN) ./cmd/paywatch

run: build
	$(BIN) dev

vet:
	go vet ./...

# test starts its own throwaway PostgreSQL unless PAYWATCH_TEST_DATABASE_URL
# is set; chain-node tests start btcd, litecoind and anvil themselves.
test: vet
	go test -count=1 -timeout 40m ./...

bench:
	go test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin
