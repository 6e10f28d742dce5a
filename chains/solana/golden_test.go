package solana

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

const (
	devnetSig      = "2qfNzGs15dt999rt1AUJ7D1oPQaukMPPmHR2u5ZmDo4cVtr1Pr2Dax4Jo7ryTpM8jxjtXLi5NHy4uyr68MVh5my6"
	devnetSlot     = 353101424
	devnetSender   = "BLw3RweJmfbTapJRgnPRvd962YDjFYAnVGd1p5hmZ5tP"
	devnetReceiver = "FDUGdV6bjhvw5gbirXCvqbTSWK9999kcrZcrHoCQzXJK"
	failedSig      = "58FymkjJUeSFGeEdaUQZbhHP5tdwwvbRR8BfKfuEgfYznqDqsApRBk8LCtiKny9EjQZBNi5NxGvLjR6F3gY6rxn1"
	failedSlot     = 326686187
)

// The devnet 0.1 SOL transfer, served through the fake in accounts mode,
// credits exactly 100,000,000 lamports to its receiver at account index 1.
func TestGoldenDevnetTransfer(t *testing.T) {
	f := newFake(t, Config{})
	f.node.AddCapturedTransaction(devnetSig, readTestdata(t, "metamask_devnet_native_sol_transfer_2qfNzGs1.json"))

	b, err := f.client.Block(ctx(t), devnetSlot, watch(t, devnetReceiver, devnetSender))
	if err != nil {
		t.Fatal(err)
	}
	if b.Height != devnetSlot || b.Time.Unix() != 1736500242 {
		t.Fatalf("block %d time %v, want %d 1736500242", b.Height, b.Time, devnetSlot)
	}
	if len(b.Transfers) != 1 {
		t.Fatalf("transfers = %+v, want one (the sender's balance fell)", b.Transfers)
	}
	tr := b.Transfers[0]
	want := sol.MustPublicKeyFromBase58(devnetReceiver)
	if tr.TxID != devnetSig || tr.Index != 1 || tr.Asset != payment.Native ||
		tr.Address != devnetReceiver || string(tr.Key) != string(want[:]) || tr.Amount.Int64() != 100_000_000 {
		t.Fatalf("transfer = %+v amount %s", tr, tr.Amount)
	}

	// An unwatched receiver is not reported.
	b, err = f.client.Block(ctx(t), devnetSlot, watch(t, devnetSender))
	if err != nil || len(b.Transfers) != 0 {
		t.Fatalf("sender-only watch: %+v, %v", b.Transfers, err)
	}

	// Address mode reads the same credit through getTransaction (json).
	got, since, err := f.client.Poll(ctx(t), [][]byte{want[:]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].TxID != devnetSig || got[0].Slot != devnetSlot || got[0].Amount.Int64() != 100_000_000 || got[0].Index != 1 {
		t.Fatalf("Poll = %+v", got)
	}
	if since[devnetReceiver] != devnetSig {
		t.Fatalf("since = %v", since)
	}
}

// The failed mainnet v0 swap is never counted, whatever is watched, in block
// and address mode; the fake serves its 25 accounts (9 static, 9 lookup
// writable, 7 lookup readonly) in agave's order.
func TestGoldenFailedV0NeverCounted(t *testing.T) {
	f := newFake(t, Config{})
	capture := readTestdata(t, "metamask_mainnet_failed_v0_tx_58FymkjJ.json")
	f.node.AddCapturedTransaction(failedSig, capture)

	var tx struct {
		Meta struct {
			LoadedAddresses struct{ Writable, Readonly []string } `json:"loadedAddresses"`
		} `json:"meta"`
		Transaction struct {
			Message struct{ AccountKeys []string } `json:"message"`
		} `json:"transaction"`
	}
	if err := json.Unmarshal(capture, &tx); err != nil {
		t.Fatal(err)
	}
	order := append(append(append([]string{}, tx.Transaction.Message.AccountKeys...),
		tx.Meta.LoadedAddresses.Writable...), tx.Meta.LoadedAddresses.Readonly...)
	if len(order) != 25 {
		t.Fatalf("capture has %d keys", len(order))
	}

	// The fake's accounts-mode list is exactly static + writable + readonly.
	_, body := f.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[326686187,{"commitment":"finalized","maxSupportedTransactionVersion":0,"rewards":false,"transactionDetails":"accounts"}]}`)
	var resp struct {
		Result struct {
			Transactions []struct {
				Meta        map[string]json.RawMessage `json:"meta"`
				Transaction struct {
					AccountKeys []struct {
						Pubkey, Source   string
						Signer, Writable bool
					} `json:"accountKeys"`
				} `json:"transaction"`
				Version json.RawMessage `json:"version"`
			} `json:"transactions"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.Result.Transactions) != 1 {
		t.Fatalf("%s: %v", body, err)
	}
	served := resp.Result.Transactions[0]
	for i, a := range served.Transaction.AccountKeys {
		wantSource := "transaction"
		if i >= 9 {
			wantSource = "lookupTable"
		}
		if a.Pubkey != order[i] || a.Source != wantSource || a.Signer != (i == 0) {
			t.Fatalf("account %d = %+v, want %s from %s", i, a, order[i], wantSource)
		}
	}
	if len(served.Transaction.AccountKeys) != 25 || string(served.Version) != "0" {
		t.Fatalf("%d accounts, version %s", len(served.Transaction.AccountKeys), served.Version)
	}
	if _, ok := served.Meta["loadedAddresses"]; ok {
		t.Fatal("accounts-mode meta must not carry loadedAddresses")
	}
	if _, ok := served.Meta["logMessages"]; ok {
		t.Fatal("accounts-mode meta must not carry logMessages")
	}

	all := watch(t, order...)
	b, err := f.client.Block(ctx(t), failedSlot, all)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Transfers) != 0 {
		t.Fatalf("failed tx counted: %+v", b.Transfers)
	}
	keys := make([][]byte, 0, len(order))
	for _, a := range order {
		pk := sol.MustPublicKeyFromBase58(a)
		keys = append(keys, pk[:])
	}
	polled, _, err := f.client.Poll(ctx(t), keys[:3], nil)
	if err != nil || len(polled) != 0 {
		t.Fatalf("Poll = %+v, %v", polled, err)
	}
}

// credits must skip a failed transaction because of meta.err, not because
// its balances happen not to rise: the same transaction with a positive
// delta counts once err is null.
func TestFailedTransactionSkippedByErr(t *testing.T) {
	const tmpl = `{"jsonrpc":"2.0","id":1,"result":{"blockHeight":5,"blockTime":null,"blockhash":"3Eq21vXNB5s86c62bVuUfTeaMif1N2kUqRPBmGRJhyTA","parentSlot":9,"previousBlockhash":"mfcyqEXB3DnHXki6KjjmZck6YjmZLvpAByy2fj4nh6B","transactions":[{"meta":{"err":ERR,"fee":5000,"postBalances":[90,110,1],"preBalances":[200,0,1],"status":{}},"transaction":{"accountKeys":[{"pubkey":"BLw3RweJmfbTapJRgnPRvd962YDjFYAnVGd1p5hmZ5tP","signer":true,"source":"transaction","writable":true},{"pubkey":"FDUGdV6bjhvw5gbirXCvqbTSWK9999kcrZcrHoCQzXJK","signer":false,"source":"transaction","writable":true},{"pubkey":"11111111111111111111111111111111","signer":false,"source":"transaction","writable":false}],"signatures":["2qfNzGs15dt999rt1AUJ7D1oPQaukMPPmHR2u5ZmDo4cVtr1Pr2Dax4Jo7ryTpM8jxjtXLi5NHy4uyr68MVh5my6"]}}]}}`
	w := watch(t, devnetReceiver)
	for _, tc := range []struct {
		err  string
		want int
	}{{"null", 1}, {`{"InstructionError":[0,{"Custom":1}]}`, 0}} {
		b, err := decodeBlock(10, []byte(strings.Replace(tmpl, "ERR", tc.err, 1)), w)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Transfers) != tc.want {
			t.Fatalf("err %s: %d transfers, want %d", tc.err, len(b.Transfers), tc.want)
		}
		if tc.want == 1 && b.Transfers[0].Amount.Int64() != 110 {
			t.Fatalf("amount %s", b.Transfers[0].Amount)
		}
	}
}

// The real mainnet legacy block 122,788,843 (json/full as captured) is
// served in accounts mode and read with its real hashes and time; its only
// transaction pays a fee and credits nobody.
func TestGoldenMainnetBlock(t *testing.T) {
	f := newFake(t, Config{})
	f.node.AddCapturedBlock(122788843, result(t, readTestdata(t, "mainnet_getBlock_122788843.json")))
	all := watch(t, "5YXnWX6Mmd8hp7fCpAB3wQUrHt6WtjJrA5QjmBuySsDP", "5ALDzwcRJfSyGdGyhP3kP628aqBNHZzLuVww7o9kdspe",
		"SysvarC1ock11111111111111111111111111111111", "FsJ3A3u2vn5cTVofAjvy6y5kwABJAqYWpe4975bi2epH")
	b, err := f.client.Block(ctx(t), 122788843, all)
	if err != nil {
		t.Fatal(err)
	}
	if b.Hash != "Bmm7S3gKAbYLKqEWjFjoZ7PnDGB3C6vsJ1yjG6tznrCX" || b.Parent != "3XhDMjAQMcMJHgbb6aTG48MLCTHnDfwk7FHpJ4wN4ymj" ||
		b.Time.Unix() != 1646009934 || len(b.Transfers) != 0 {
		t.Fatalf("block = %+v", b)
	}
	tip, err := f.client.Tip(ctx(t))
	if err != nil || tip != 122788843 {
		t.Fatalf("tip %d, %v", tip, err)
	}
	// The slot before it is not in the fake: skipped.
	if _, err := f.client.Block(ctx(t), 122788842, all); !errors.Is(err, chains.ErrSkipped) {
		t.Fatalf("Block(122788842) = %v, want ErrSkipped", err)
	}

	// The docs example block has a null blockTime.
	f.node.AddCapturedBlock(122788900, result(t, readTestdata(t, "docs_getBlock.response.json")))
	b, err = f.client.Block(ctx(t), 122788900, all)
	if err != nil || !b.Time.IsZero() || b.Hash != "3Eq21vXNB5s86c62bVuUfTeaMif1N2kUqRPBmGRJhyTA" {
		t.Fatalf("docs block = %+v, %v", b, err)
	}
}

// The base64 block captured by solana-go's authors is re-served by the fake
// byte for byte in base64 (read with solana-go's own client) and in accounts
// mode (read with ours).
func TestGoldenBase64BlockRoundTrip(t *testing.T) {
	f := newFake(t, Config{})
	capture := readTestdata(t, "solanago_test_getBlock_base64.json")
	const slot = 83987984
	f.node.AddCapturedBlock(slot, capture)

	var want struct {
		Transactions []struct {
			Transaction []string `json:"transaction"`
		} `json:"transactions"`
	}
	if err := json.Unmarshal(capture, &want); err != nil {
		t.Fatal(err)
	}
	sc := rpc.New(f.srv.URL)
	got, err := sc.GetBlock(ctx(t), slot) // legacy block: no version needed
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Transactions) != len(want.Transactions) || got.Blockhash.String() != "5M77sHdwzH6rckuQwF8HL1w52n7hjrh4GVTFiF6T8QyB" {
		t.Fatalf("%d transactions, hash %s", len(got.Transactions), got.Blockhash)
	}
	for i, tx := range got.Transactions {
		if enc := tx.Transaction.GetBinary(); enc == nil {
			t.Fatalf("tx %d: not binary", i)
		}
		decoded, err := tx.GetTransaction()
		if err != nil {
			t.Fatal(err)
		}
		if decoded.Signatures[0].String() == "" {
			t.Fatal("no signature")
		}
	}
	_, body := f.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[83987984,"base64"]}`)
	var served struct {
		Result struct {
			Transactions []struct {
				Transaction []string `json:"transaction"`
			} `json:"transactions"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &served); err != nil {
		t.Fatal(err)
	}
	for i := range want.Transactions {
		if served.Result.Transactions[i].Transaction[0] != want.Transactions[i].Transaction[0] {
			t.Fatalf("tx %d re-encoded differently:\n%s\n%s", i, served.Result.Transactions[i].Transaction[0], want.Transactions[i].Transaction[0])
		}
	}
	b, err := f.client.Block(ctx(t), slot, watch(t, "EvcZ1RVURAK6bLdNf8KZiBtshyRFsvFbjBqdEuRC9Mmd"))
	if err != nil || len(b.Transfers) != 0 {
		t.Fatalf("accounts mode: %+v, %v", b, err)
	}
}

// The real getBlocks result around slot 122,791,100 (with its skipped slots)
// is reproduced by the fake and read back exactly by Slots.
func TestGoldenSlotsWithRealGaps(t *testing.T) {
	var want []uint64
	if err := json.Unmarshal(result(t, readTestdata(t, "mainnet_getBlocks_range.json")), &want); err != nil {
		t.Fatal(err)
	}
	f := newFake(t, Config{})
	f.node.Skip(int(want[0] - 1))
	for _, s := range want {
		f.node.Skip(int(s - f.node.Tip() - 1))
		f.node.Mine(1)
	}
	got, err := f.client.Slots(ctx(t), 122791100, 122791185)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("Slots = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Slots = %v, want %v", got, want)
		}
	}
	// A skipped slot of the capture answers agave's real message.
	_, err = f.client.Block(ctx(t), 122791104, keySet{})
	if !errors.Is(err, chains.ErrSkipped) {
		t.Fatalf("Block(122791104) = %v", err)
	}
	captured := string(readTestdata(t, "rpc_errors_skipped_slot.txt"))
	real := "Slot 311350484 was skipped, or missing due to ledger jump to recent snapshot"
	if !strings.Contains(captured, real) || !strings.Contains(err.Error(), strings.Replace(real, "311350484", "122791104", 1)) {
		t.Fatalf("skip message %q does not follow the captured %q", err, real)
	}
}

// Account ordering on the real v0 capture (9 static, 9 lookup-writable, 7
// lookup-readonly keys): with its error cleared and a credit put on index 11
// (the third lookup-writable key), every path reports that key.
func TestGoldenV0OrderingOnRealCapture(t *testing.T) {
	var tx map[string]any
	if err := json.Unmarshal(readTestdata(t, "metamask_mainnet_failed_v0_tx_58FymkjJ.json"), &tx); err != nil {
		t.Fatal(err)
	}
	meta := tx["meta"].(map[string]any)
	meta["err"] = nil
	meta["status"] = map[string]any{"Ok": nil}
	post := meta["postBalances"].([]any)
	post[11] = post[11].(float64) + 1_000_000 // 682356201411 + 1e6: exact in float64
	mutated, err := json.Marshal(tx)
	if err != nil {
		t.Fatal(err)
	}
	const want = "8ns4WyfWQCWkNAHDyRPnT6J4yqSKZL6GBWTWoXkwK4Jr"
	all := watch(t, want, "5Q544fKrFoe6tsEbD7SEmxGTJYAKtTVhAW5Q5pge4j1", "7kVpsksdgQ6cUaWNsw6xRK5a3S6PJtz9JKcp8k6N4HqG",
		"So11111111111111111111111111111111111111112", "675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8")
	check := func(mode string, ts []chains.Transfer) {
		t.Helper()
		if len(ts) != 1 || ts[0].Index != 11 || ts[0].Address != want || ts[0].Amount.Int64() != 1_000_000 || ts[0].TxID != failedSig {
			t.Fatalf("%s: %+v", mode, ts)
		}
	}

	f := newFake(t, Config{})
	f.node.AddCapturedTransaction(failedSig, mutated)
	b, err := f.client.Block(ctx(t), failedSlot, all)
	if err != nil {
		t.Fatal(err)
	}
	check("accounts mode", b.Transfers)

	_, body := f.rpc(t, `{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[326686187,{"encoding":"json","maxSupportedTransactionVersion":0,"rewards":false}]}`)
	full, err := decodeBlock(failedSlot, body, all)
	if err != nil {
		t.Fatal(err)
	}
	check("json mode", full.Transfers)

	k := sol.MustPublicKeyFromBase58(want)
	polled, _, err := f.client.Poll(ctx(t), [][]byte{k[:]}, nil)
	if err != nil || len(polled) != 1 {
		t.Fatalf("Poll = %+v, %v", polled, err)
	}
	check("address mode", []chains.Transfer{polled[0].Transfer})
}
