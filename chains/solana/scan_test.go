package solana

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/paywatch/paywatch/chains"
)

// decodeKey58 accepts exactly what solana-go's PublicKeyFromBase58 accepts
// and yields the same bytes.
func TestDecodeKey58(t *testing.T) {
	cases := []string{"11111111111111111111111111111111", "1111111111111111111111111111111", "111111111111111111111111111111111",
		"Vote111111111111111111111111111111111111111", devnetReceiver, "0OIl", "", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
		"JEKNVnkbo3jma5nREBBJCDoXFVeKkD56V3xKrvRmWxFG", "1JEKNVnkbo3jma5nREBBJCDoXFVeKkD56V3xKrvRmWxF"}
	for range 2000 {
		k := newKey(t)
		for i := range int(k[0] % 4) { // some leading zero bytes
			k[i] = 0
		}
		cases = append(cases, sol.PublicKeyFromBytes(k[:]).String())
	}
	for _, c := range cases {
		want, err := sol.PublicKeyFromBase58(c)
		got, ok := decodeKey58([]byte(c))
		if ok != (err == nil) || (ok && got != [32]byte(want)) {
			t.Fatalf("%q: decodeKey58 = %x %v, solana-go %x %v", c, got, ok, want, err)
		}
	}
}

func FuzzDecodeKey58(f *testing.F) {
	f.Add("11111111111111111111111111111111")
	f.Add(devnetReceiver)
	f.Fuzz(func(t *testing.T, c string) {
		want, err := sol.PublicKeyFromBase58(c)
		got, ok := decodeKey58([]byte(c))
		if ok != (err == nil) || (ok && got != [32]byte(want)) {
			t.Fatalf("%q: decodeKey58 = %x %v, solana-go %x %v", c, got, ok, want, err)
		}
	})
}

// The scanner decoder and the encoding/json oracle agree on every input:
// both fail, or both succeed with the same block.
func FuzzDecoderAgreement(f *testing.F) {
	for _, seed := range decoderSeeds(f)[1:] { // the 60 kB generated block makes minimizing crawl
		f.Add(seed)
	}
	w := watch(f, devnetReceiver, "11111111111111111111111111111111", "8ns4WyfWQCWkNAHDyRPnT6J4yqSKZL6GBWTWoXkwK4Jr")
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ferr := decodeBlock(9, body, w)
		std, serr := decodeBlockStd(9, body, w)
		var rpcErr *RPCError
		if ferr != nil && !errors.Is(ferr, chains.ErrInvalidResponse) && !errors.As(ferr, &rpcErr) && !errors.Is(ferr, ErrTransient) {
			t.Fatalf("unclassified error %v", ferr)
		}
		differ := (ferr == nil) != (serr == nil) ||
			(ferr == nil && fmt.Sprint(fast.BlockRef, fast.Time, summary(fast.Transfers)) != fmt.Sprint(std.BlockRef, std.Time, summary(std.Transfers)))
		if differ && caseVariantKey(body) {
			t.Skip("encoding/json matches member names case-insensitively; agave never varies case")
		}
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("disagree on %q:\nscanner: %v\noracle:  %v", body, ferr, serr)
		}
		if ferr == nil && fmt.Sprint(fast.BlockRef, fast.Time, summary(fast.Transfers)) != fmt.Sprint(std.BlockRef, std.Time, summary(std.Transfers)) {
			t.Fatalf("disagree on %q:\nscanner: %+v\noracle:  %+v", body, fast, std)
		}
	})
}

// knownKeys are the member names either decoder reads.
var knownKeys = strings.Fields("jsonrpc result error id code message blockhash previousBlockhash parentSlot blockTime " +
	"transactions meta transaction version slot err preBalances postBalances loadedAddresses writable readonly " +
	"signatures accountKeys pubkey")

// caseVariantKey reports whether body has a member name equal to a known one
// but for case.
func caseVariantKey(body []byte) bool {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				for _, known := range knownKeys {
					if k != known && strings.EqualFold(k, known) {
						return true
					}
				}
				if walk(x) {
					return true
				}
			}
		case []any:
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

func decoderSeeds(tb testing.TB) [][]byte {
	seeds := [][]byte{genBlock(tb, 40, nil)}
	const ok = `{"jsonrpc":"2.0","id":1,"result":{"blockhash":"3Eq21vXNB5s86c62bVuUfTeaMif1N2kUqRPBmGRJhyTA","blockTime":-5,"parentSlot":1,"previousBlockhash":"x","transactions":[TX]}}`
	for _, tx := range []string{
		`{"meta":{"err":null,"preBalances":[1,0],"postBalances":[0,3]},"transaction":{"accountKeys":[{"pubkey":"11111111111111111111111111111111"},"FDUGdV6bjhvw5gbirXCvqbTSWK9999kcrZcrHoCQzXJK"],"signatures":["5h6xBEauJ3PK6SWCZ1PGjBvj8vDdWG3KpwATGy1ARAXFSDwt8GFXM7W5Ncn16wmqokgpiKRLuS83KUxyZyv2sUYv","x"]}}`,
		`{"meta":{"err":{"a":[1]},"preBalances":[1],"postBalances":[3]},"transaction":{"message":{"accountKeys":["FDUGdV6bjhvw5gbirXCvqbTSWK9999kcrZcrHoCQzXJK"]},"signatures":["a"]}}`,
		`{"meta":{"err":null,"loadedAddresses":{"writable":["FDUGdV6bjhvw5gbirXCvqbTSWK9999kcrZcrHoCQzXJK"],"readonly":[]},"preBalances":[1,0],"postBalances":[0,3e0]},"transaction":{"message":{"accountKeys":["11111111111111111111111111111111"]},"signatures":["a"]}}`,
		`{"meta":{"err":null,"preBalances":[1,0],"postBalances":[0,18446744073709551616]},"transaction":{"accountKeys":[{"pubkey":"11111111111111111111111111111111"},"FDUGdV6bjhvw5gbirXCvqbTSWK9999kcrZcrHoCQzXJK"],"signatures":["a\u0041"]}}`,
		`{"meta":null,"transaction":{"accountKeys":[],"signatures":["a"]}}`,
	} {
		seeds = append(seeds, []byte(strings.Replace(ok, "TX", tx, 1)))
	}
	seeds = append(seeds, []byte(`{"jsonrpc":"2.0","error":{"code":-32007,"message":"Slot 5 was \"skipped\""},"id":1}`),
		[]byte(`{"jsonrpc":"2.0","result":null,"id":1}`), []byte(`{"jsonrpc":"2.0","id":1} x`), []byte(`[1]`))
	return seeds
}

// The seeds alone (run as a unit test) already exercise agreement on valid,
// failed, json-mode, overflowing and malformed bodies.
func TestDecoderAgreementSeeds(t *testing.T) {
	w := watch(t, devnetReceiver, "11111111111111111111111111111111")
	for _, body := range decoderSeeds(t) {
		fast, ferr := decodeBlock(9, body, w)
		std, serr := decodeBlockStd(9, body, w)
		if (ferr == nil) != (serr == nil) || (ferr == nil && fmt.Sprint(summary(fast.Transfers)) != fmt.Sprint(summary(std.Transfers))) {
			t.Fatalf("disagree on %s:\nscanner: %+v %v\noracle:  %+v %v", body, fast, ferr, std, serr)
		}
	}
}
