package evm_test

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/verify"
)

type oneKey []byte

func (k oneKey) Contains(key []byte) bool { return bytes.Equal(key, k) }

// Issue 33 item 5 before a real anvil: an ETH payment the scanner read
// from one endpoint is verified by the other (role verify) at the required
// depth; the verifier lying about its value (eth_getBlockByNumber's
// "value") disagrees, unavailable it cannot say (pending), and honest
// again it verifies.
func TestVerifyAgainstAnvil(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := ethdev.FindAnvil()
	devnettest.Need(t, "anvil", err)
	a, err := ethdev.StartAnvil(ctx, bin, t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	proxy := faultyproxy.New(faultyproxy.EVM, a.RPCURL)
	defer proxy.Close()
	src, pool := pooled(ctx, t, endpoints.Spec{Name: "scan", URL: a.RPCURL, Scans: true},
		endpoints.Spec{Name: "checker", URL: proxy.URL()})
	to := common.BigToAddress(big.NewInt(0x4444))
	const wei = 1_000_000_000_012_345
	if _, err := a.SendETH(ctx, to, big.NewInt(wei)); err != nil {
		t.Fatal(err)
	}
	if err := a.Mine(ctx, 3); err != nil {
		t.Fatal(err)
	}
	tip, err := src.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var tr store.Transfer
	for h := tip; h > 0 && tr.TxID == ""; h-- {
		b, err := src.Block(ctx, h, oneKey(to.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Transfers) == 0 {
			continue
		}
		if b.Endpoint != "scan" {
			t.Fatalf("served by %q, want scan", b.Endpoint)
		}
		x, height := b.Transfers[0], int64(h)
		tr = store.Transfer{ID: "tr_1", Network: "ethereum", TxID: x.TxID, Index: x.Index, Asset: string(x.Asset), AddressKey: x.Key,
			Amount: x.Amount, BlockHeight: &height, BlockHash: b.Hash, ScannedBy: b.Endpoint, ConfirmationsRequired: 2}
	}
	v := verify.New(nil, nil, verify.Config{Networks: map[payment.Network]verify.Network{payment.Ethereum: {Source: src, Pool: pool, MinCents: 1}}})
	check := func(want, what string) store.Verification {
		t.Helper()
		for {
			got := v.Check(ctx, payment.Ethereum, tr)
			if got.State == want || (got.State != store.VerifyPending && want != store.VerifyPending) || want == store.VerifyPending || ctx.Err() != nil {
				if got.State != want {
					t.Fatalf("%s: %+v, want %s", what, got, want)
				}
				return got
			}
			time.Sleep(20 * time.Millisecond) // the pool's probe learns the checker's head
		}
	}
	if got := check(store.VerifyVerified, "an honest verifier"); got.Endpoint != "checker" {
		t.Fatalf("verified by %q", got.Endpoint)
	}
	proxy.Set(faultyproxy.Fault{Lie: &faultyproxy.Lie{Find: fmt.Sprintf(`"value":"0x%x"`, wei), Replace: fmt.Sprintf(`"value":"0x%x"`, wei-5)}})
	if got := check(store.VerifyDisagrees, "a lying verifier"); !strings.Contains(got.Detail, fmt.Sprint(wei-5)) {
		t.Fatalf("disagreement: %+v", got)
	}
	proxy.Set(faultyproxy.Fault{Unavailable: true})
	check(store.VerifyPending, "an unavailable verifier")
	proxy.Set(faultyproxy.Fault{})
	check(store.VerifyVerified, "the verifier honest again")
}
