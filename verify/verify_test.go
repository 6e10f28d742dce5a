package verify_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/nodes"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/verify"
)

// setup is one network for checkTest: its honest node's URL (what the
// scanner reads), the proxy kind before it for the verifier, a key paid
// and a function that pays amount to it and makes the block (returns the
// lie that rewrites that amount in the verifier's answers).
type setup struct {
	n        payment.Network
	kind     faultyproxy.Kind
	url      string
	creds    func(string) string
	key      []byte
	required int
	// lied is what a lie about the amount shows as: disagrees, or, where
	// the client computes the txid from the transaction's bytes
	// (Bitcoin), unseen: a changed amount is another transaction.
	lied string
	// pay pays the key, mines the block and enough on top, and returns
	// the lie that rewrites the amount in the block's answers.
	pay func() *faultyproxy.Lie
}

func poolSource(t *testing.T, ctx context.Context, s setup, eps string) chains.Source {
	t.Helper()
	y := fmt.Sprintf(`
database_url: postgres://u@127.0.0.1/pw
networks:
  %s:
    enabled: true
    chain: regtest
    account_key: %q
    poll_interval: 50ms
    max_lag_blocks: 2
    endpoints:
%s
`, s.n, addresses.SandboxKeys[s.n], eps)
	cfg, err := config.Parse(strings.NewReader(y), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := nodes.New(ctx, cfg, s.n, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

type oneKey []byte

func (k oneKey) Contains(key []byte) bool { return bytes.Equal(key, k) }

// checkTest: issue 33 item 5 against a node. The scanner's endpoint is the
// honest node and the verifier (role verify) a faulty proxy before it. The
// transfer the scan read is verified by the checker at the required
// depth; a lie about its amount disagrees; a lagging, unavailable or
// absent verifier holds it (pending, no_verifier); another block at its
// height is unseen; and honest again, it is verified again.
func checkTest(t *testing.T, s setup) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	proxy := faultyproxy.New(s.kind, s.url)
	defer proxy.Close()
	src := poolSource(t, ctx, s, fmt.Sprintf("      - {name: scan, url: %q, role: scan}\n      - {name: checker, url: %q, role: verify}",
		s.creds(s.url), s.creds(proxy.URL())))
	lie := s.pay()
	tip, err := src.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var tr store.Transfer
	for h := tip; h > 0 && tr.TxID == ""; h-- {
		b, err := src.Block(ctx, h, oneKey(s.key))
		if errors.Is(err, chains.ErrSkipped) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Transfers) == 0 {
			continue
		}
		if b.Endpoint != "scan" {
			t.Fatalf("the scan's block was served by %q, want scan (a verify endpoint never scans)", b.Endpoint)
		}
		x := b.Transfers[0]
		height := int64(h)
		tr = store.Transfer{ID: "tr_1", Network: string(s.n), TxID: x.TxID, Index: x.Index, Asset: string(x.Asset), AddressKey: x.Key,
			Address: x.Address, Amount: x.Amount, BlockHeight: &height, BlockHash: b.Hash, ScannedBy: b.Endpoint, ConfirmationsRequired: s.required}
	}
	if tr.TxID == "" {
		t.Fatal("the payment is in no block")
	}
	v := verify.New(nil, nil, verify.Config{Networks: map[payment.Network]verify.Network{s.n: {Source: src, Pool: nodes.Pool(src), MinCents: 1}}})
	check := func(want string, what string) store.Verification {
		t.Helper()
		var got store.Verification
		for {
			got = v.Check(ctx, s.n, tr)
			// The checker's head is learnt by the pool's probe: until
			// then (and only then) it cannot say.
			if got.State == want || got.State != store.VerifyPending || ctx.Err() != nil || want == store.VerifyPending {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if got.State != want {
			t.Fatalf("%s: %+v, want %s", what, got, want)
		}
		return got
	}
	if got := check(store.VerifyVerified, "an honest verifier"); got.Endpoint != "checker" {
		t.Fatalf("verified by %q, want checker", got.Endpoint)
	}
	proxy.Set(faultyproxy.Fault{Lie: lie})
	if got := check(s.lied, "a verifier lying about the amount"); got.Endpoint != "checker" || !strings.Contains(got.Detail, tr.TxID) && !strings.Contains(got.Detail, tr.Amount.String()) {
		t.Fatalf("disagreement: %+v", got)
	}
	proxy.Set(faultyproxy.Fault{Unavailable: true})
	check(store.VerifyPending, "an unavailable verifier")
	proxy.Set(faultyproxy.Fault{})
	check(store.VerifyVerified, "the verifier back")
	other := tr
	other.BlockHash = strings.Repeat("0", len(tr.BlockHash)-1) + "1"
	check2 := v.Check(ctx, s.n, other)
	if check2.State != store.VerifyUnseen {
		t.Fatalf("another block at the height: %+v, want unseen", check2)
	}
	deep := tr
	deep.ConfirmationsRequired = 1000
	if s.required > 0 {
		if got := v.Check(ctx, s.n, deep); got.State != store.VerifyPending || !strings.Contains(got.Detail, "confirmations") {
			t.Fatalf("short of the depth: %+v, want pending", got)
		}
	}
	// A network of one endpoint, or of endpoints that all scanned: no
	// second source.
	alone := poolSource(t, ctx, s, fmt.Sprintf("      - {name: scan, url: %q}", s.creds(s.url)))
	v1 := verify.New(nil, nil, verify.Config{Networks: map[payment.Network]verify.Network{s.n: {Source: alone, Pool: nodes.Pool(alone), MinCents: 1}}})
	if got := v1.Check(ctx, s.n, tr); got.State != store.VerifyNoVerifier {
		t.Fatalf("one endpoint: %+v, want no_verifier", got)
	}
}

// Against a real btcd: the lie rewrites the output's value in the raw
// block (getblock verbosity 0).
func TestCheckAgainstBtcd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	node, err := devnet.StartBtcd(ctx, t.TempDir(), 0)
	if errors.Is(err, devnet.ErrMissing) {
		devnettest.Need(t, "btcd", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer node.Stop()
	if _, err := node.Generate(ctx, 101); err != nil {
		t.Fatal(err)
	}
	script := append([]byte{0x00, 0x14}, bytes.Repeat([]byte{0x11}, 20)...)
	const sats = 123_456_789
	checkTest(t, setup{n: payment.Bitcoin, kind: faultyproxy.Bitcoin, url: node.RPCURL, key: script, required: 2, lied: store.VerifyUnseen,
		creds: func(u string) string {
			if strings.Contains(u, "@") {
				return u
			}
			return strings.Replace(u, "http://", "http://u:p@", 1)
		},
		pay: func() *faultyproxy.Lie {
			if _, err := node.Pay(ctx, script, sats); err != nil {
				t.Fatal(err)
			}
			if _, err := node.Generate(ctx, 3); err != nil {
				t.Fatal(err)
			}
			le := func(v uint64) string {
				var b [8]byte
				binary.LittleEndian.PutUint64(b[:], v)
				return hex.EncodeToString(b[:]) + "16" + hex.EncodeToString(script)
			}
			return &faultyproxy.Lie{Find: le(sats), Replace: le(sats - 1000)}
		}})
}

// Against the simulated Tron node (finality-counted: the verifier's
// solidified height).
func TestCheckAgainstTronfake(t *testing.T) {
	node := tronfake.New()
	srv := httptest.NewServer(node)
	defer srv.Close()
	node.Mine(3)
	to := bytes.Repeat([]byte{0x22}, 20)
	checkTest(t, setup{n: payment.Tron, kind: faultyproxy.Tron, url: srv.URL, key: to, required: 0, lied: store.VerifyDisagrees, creds: func(u string) string { return u },
		pay: func() *faultyproxy.Lie {
			node.PayTRX(bytes.Repeat([]byte{7}, 20), to, 654_321_000, true)
			node.Mine(30)
			return &faultyproxy.Lie{Find: `"amount":654321000`, Replace: `"amount":654000000`}
		}})
}

// Against the simulated Solana node (finalized at once). (Ethereum's is
// chains/evm's TestVerifyAgainstAnvil: go-ethereum's and ltcd's cgo
// secp256k1 may not share a test binary.)
func TestCheckAgainstSolanafake(t *testing.T) {
	node := solanafake.New()
	srv := httptest.NewServer(node)
	defer srv.Close()
	var payer, to [32]byte
	payer[0], to[0] = 9, 0x33
	node.Fund(payer, 1e12)
	node.Mine(3)
	checkTest(t, setup{n: payment.Solana, kind: faultyproxy.Solana, url: srv.URL, key: to[:], required: 0, lied: store.VerifyDisagrees, creds: func(u string) string { return u },
		pay: func() *faultyproxy.Lie {
			node.PaySOL(payer, to, 7_654_321, false, false)
			node.Mine(3)
			return &faultyproxy.Lie{Find: `7654321`, Replace: `7650000`}
		}})
}

// Two endpoints of role both: the block the scan read from one is
// verified by the other, whichever served it, and a lie of the other
// disagrees.
func TestCheckWithTwoEndpointsOfRoleBoth(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node := tronfake.New()
	srv := httptest.NewServer(node)
	defer srv.Close()
	to := bytes.Repeat([]byte{0x66}, 20)
	node.PayTRX(bytes.Repeat([]byte{7}, 20), to, 321_000_000, true)
	node.Mine(30)
	pa, pb := faultyproxy.New(faultyproxy.Tron, srv.URL), faultyproxy.New(faultyproxy.Tron, srv.URL)
	defer pa.Close()
	defer pb.Close()
	s := setup{n: payment.Tron}
	src := poolSource(t, ctx, s, fmt.Sprintf("      - {name: a, url: %q}\n      - {name: b, url: %q, priority: 1}", pa.URL(), pb.URL()))
	tip, err := src.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var tr store.Transfer
	for h := tip; h > 0 && tr.TxID == ""; h-- {
		b, err := src.Block(ctx, h, oneKey(to))
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Transfers) == 1 {
			x, height := b.Transfers[0], int64(h)
			tr = store.Transfer{TxID: x.TxID, Index: x.Index, Asset: string(x.Asset), AddressKey: x.Key, Amount: x.Amount,
				BlockHeight: &height, BlockHash: b.Hash, ScannedBy: b.Endpoint}
		}
	}
	if tr.ScannedBy != "a" {
		t.Fatalf("scanned by %q, want a (priority 0)", tr.ScannedBy)
	}
	v := verify.New(nil, nil, verify.Config{Networks: map[payment.Network]verify.Network{payment.Tron: {Source: src, Pool: nodes.Pool(src), MinCents: 1}}})
	until := func(tr store.Transfer, want, by string) {
		t.Helper()
		for {
			got := v.Check(ctx, payment.Tron, tr)
			if got.State != store.VerifyPending || ctx.Err() != nil {
				if got.State != want || got.Endpoint != by {
					t.Fatalf("scanned by %s: %+v, want %s by %s", tr.ScannedBy, got, want, by)
				}
				return
			}
			time.Sleep(20 * time.Millisecond) // the pool's probe learns b's head
		}
	}
	until(tr, store.VerifyVerified, "b")
	byB := tr
	byB.ScannedBy = "b"
	until(byB, store.VerifyVerified, "a")
	pb.Set(faultyproxy.Fault{Lie: &faultyproxy.Lie{Find: `"amount":321000000`, Replace: `"amount":320000000`}})
	until(tr, store.VerifyDisagrees, "b")
	// The liar's own reads are not checked by itself: a's block is.
	until(byB, store.VerifyVerified, "a")
}
