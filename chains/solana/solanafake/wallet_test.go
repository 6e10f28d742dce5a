package solanafake

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/mr-tron/base58"
)

func testKey(seed string) sol.PrivateKey {
	s := sha256.Sum256([]byte(seed))
	return sol.PrivateKey(ed25519.NewKeyFromSeed(s[:]))
}

// signedTransfer builds and signs a System transfer with solana-go.
func signedTransfer(t *testing.T, from sol.PrivateKey, to sol.PublicKey, lamports uint64, blockhash string) string {
	t.Helper()
	h, err := sol.HashFromBase58(blockhash)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := sol.NewTransaction([]sol.Instruction{system.NewTransferInstruction(lamports, from.PublicKey(), to).Build()}, h, sol.TransactionPayer(from.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Sign(func(k sol.PublicKey) *sol.PrivateKey {
		if k == from.PublicKey() {
			return &from
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	b, err := tx.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// A wallet's System transfer without node.js: preflight, inclusion,
// status, the balances, and the refusals the web3.js test also checks.
func TestSignedTransfer(t *testing.T) {
	n := New()
	srv := httptest.NewServer(n)
	defer srv.Close()
	payer, to := testKey("payer"), testKey("to").PublicKey()
	var pk [32]byte
	copy(pk[:], payer.PublicKey().Bytes())
	n.Fund(pk, 10_000_000_000)
	n.Mine(1)
	latest := func() string {
		a := call(t, srv.URL, "getLatestBlockhash")
		var r struct {
			Value struct {
				Blockhash            string
				LastValidBlockHeight uint64
			}
		}
		_ = json.Unmarshal(a.Result, &r)
		return r.Value.Blockhash
	}
	bh := latest()
	raw := signedTransfer(t, payer, to, 1_000_000_000, bh)
	a := call(t, srv.URL, "sendTransaction", raw, map[string]any{"encoding": "base64"})
	if a.Error != nil {
		t.Fatal(a.Error)
	}
	var sig string
	_ = json.Unmarshal(a.Result, &sig)
	// Not processed until the next slot.
	st := call(t, srv.URL, "getSignatureStatuses", []string{sig})
	if string(st.Result) == "" || !jsonHas(t, st.Result, `"value":[null]`) {
		t.Fatalf("status before the slot: %s", st.Result)
	}
	n.Mine(1)
	st = call(t, srv.URL, "getSignatureStatuses", []string{sig})
	if !jsonHas(t, st.Result, `"confirmationStatus":"finalized"`) || !jsonHas(t, st.Result, `"err":null`) {
		t.Fatalf("status after the slot: %s", st.Result)
	}
	var tk [32]byte
	copy(tk[:], to.Bytes())
	if n.Balance(tk) != 1_000_000_000 || n.Balance(pk) != 10_000_000_000-1_000_000_000-5000 {
		t.Fatalf("balances: to %d, payer %d", n.Balance(tk), n.Balance(pk))
	}
	// The same transaction again.
	if a := call(t, srv.URL, "sendTransaction", raw, map[string]any{"encoding": "base64"}); a.Error == nil || a.Error.Code != -32002 ||
		a.Error.Message != "Transaction simulation failed: This transaction has already been processed" {
		t.Fatalf("replay: %+v", a.Error)
	}
	// One changed byte in the message: the signature no longer verifies.
	b, _ := base64.StdEncoding.DecodeString(signedTransfer(t, payer, to, 5, bh))
	b[len(b)-1] ^= 1
	if a := call(t, srv.URL, "sendTransaction", base58.Encode(b)); a.Error == nil || a.Error.Code != -32003 {
		t.Fatalf("tampered: %+v", a.Error)
	}
	// An expired blockhash.
	n.Mine(maxProcessingAge + 1)
	if a := call(t, srv.URL, "sendTransaction", signedTransfer(t, payer, to, 5, bh), map[string]any{"encoding": "base64"}); a.Error == nil ||
		a.Error.Message != "Transaction simulation failed: Blockhash not found" {
		t.Fatalf("expired: %+v", a.Error)
	}
	// Below the rent-exempt minimum into a new account.
	fresh := testKey("fresh").PublicKey()
	h, _ := sol.HashFromBase58(latest())
	tx, _ := sol.NewTransaction([]sol.Instruction{system.NewTransferInstruction(1000, payer.PublicKey(), fresh).Build()}, h, sol.TransactionPayer(payer.PublicKey()))
	_, _ = tx.Sign(func(sol.PublicKey) *sol.PrivateKey { return &payer })
	wire, _ := tx.MarshalBinary()
	if a := call(t, srv.URL, "sendTransaction", base58.Encode(wire)); a.Error == nil ||
		a.Error.Message != "Transaction simulation failed: Transaction results in an account (1) with insufficient funds for rent" {
		t.Fatalf("rent: %+v", a.Error)
	}
}

// Token accounts by getAccountInfo: base64 and jsonParsed; base58 of 165
// bytes is refused as agave refuses it; a System account in jsonParsed
// falls back to base64.
func TestAccountInfoEncodings(t *testing.T) {
	n := New()
	srv := httptest.NewServer(n)
	defer srv.Close()
	owner, mint := testKey("owner").PublicKey(), testKey("mint").PublicKey()
	var ok, mk [32]byte
	copy(ok[:], owner.Bytes())
	copy(mk[:], mint.Bytes())
	n.Fund(ok, 1_000_000_000)
	n.CreateMint(mk, 6, ok)
	ata, err := n.MintTo(mk, ok, 1_500_000)
	if err != nil {
		t.Fatal(err)
	}
	addr := base58.Encode(ata[:])
	a := call(t, srv.URL, "getAccountInfo", addr, map[string]any{"encoding": "base64"})
	if a.Error != nil || !jsonHas(t, a.Result, `"owner":"`+TokenProgram+`"`) || !jsonHas(t, a.Result, `"space":165`) ||
		!jsonHas(t, a.Result, `"lamports":2039280`) {
		t.Fatalf("base64: %s %v", a.Result, a.Error)
	}
	a = call(t, srv.URL, "getAccountInfo", addr, map[string]any{"encoding": "jsonParsed"})
	if a.Error != nil || !jsonHas(t, a.Result, `"type":"account"`) || !jsonHas(t, a.Result, `"uiAmountString":"1.5"`) ||
		!jsonHas(t, a.Result, `"uiAmount":1.5,`) || !jsonHas(t, a.Result, `"program":"spl-token"`) {
		t.Fatalf("jsonParsed: %s %v", a.Result, a.Error)
	}
	a = call(t, srv.URL, "getAccountInfo", addr)
	if a.Error == nil || a.Error.Message != "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding." {
		t.Fatalf("binary of 165 bytes: %s %v", a.Result, a.Error)
	}
	a = call(t, srv.URL, "getAccountInfo", base58.Encode(ok[:]), map[string]any{"encoding": "jsonParsed"})
	if a.Error != nil || !jsonHas(t, a.Result, `"data":["","base64"]`) {
		t.Fatalf("System account in jsonParsed: %s %v", a.Result, a.Error)
	}
	a = call(t, srv.URL, "getAccountInfo", base58.Encode(mk[:]), map[string]any{"encoding": "jsonParsed"})
	if a.Error != nil || !jsonHas(t, a.Result, `"type":"mint"`) || !jsonHas(t, a.Result, `"supply":"1500000"`) {
		t.Fatalf("mint: %s %v", a.Result, a.Error)
	}
	if a := call(t, srv.URL, "getAccountInfo", testKey("nobody").PublicKey().String()); a.Error != nil || !jsonHas(t, a.Result, `"value":null`) {
		t.Fatalf("missing account: %s %v", a.Result, a.Error)
	}
}

func jsonHas(t *testing.T, b json.RawMessage, s string) bool {
	t.Helper()
	return strings.Contains(string(b), s)
}

// FuzzDecodeTransaction feeds sendTransaction payloads to the decoder and
// the sanitizer: they never panic, and a transaction that parses keeps its
// message as the bytes after the signatures (seeded with a legacy and a v0
// transaction).
func FuzzDecodeTransaction(f *testing.F) {
	payer, to := testKey("payer"), testKey("to").PublicKey()
	h := sol.MustHashFromBase58("Dd2KFRayr2fPNAKnKUuB6cSqEi4YSRhUPgG2BfaDTiLL")
	for _, v0 := range []bool{false, true} {
		tx, err := sol.NewTransaction([]sol.Instruction{system.NewTransferInstruction(5, payer.PublicKey(), to).Build()}, h, sol.TransactionPayer(payer.PublicKey()))
		if err != nil {
			f.Fatal(err)
		}
		if v0 {
			tx.Message.SetVersion(sol.MessageVersionV0)
		}
		if _, err := tx.Sign(func(sol.PublicKey) *sol.PrivateKey { return &payer }); err != nil {
			f.Fatal(err)
		}
		b, err := tx.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tx, err := parseWire(b)
		if err != nil {
			return
		}
		if tx.sanitize() == nil {
			tx.verify()
			tx.computeBudget()
			for i := range tx.keys {
				tx.isWritable(i)
			}
		}
		if len(tx.raw) < len(tx.message) || string(tx.raw[len(tx.raw)-len(tx.message):]) != string(tx.message) {
			t.Fatal("the message is not the bytes after the signatures")
		}
	})
}
