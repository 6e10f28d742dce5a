package solanafake_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mr-tron/base58"

	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/walletjs"
)

// refusal is a JSON-RPC error as testdata/web3.cjs reports it.
type refusal struct {
	Code    int
	Message string
	Err     any
	Logs    []string
}

// TestWeb3JS has the real @solana/web3.js and @solana/spl-token (devnet/
// walletjs's pinned versions) pay through the simulated cluster and read
// the results back (testdata/web3.cjs): SOL in a legacy and a v0 message
// confirmed over signatureSubscribe, the recipient's associated token
// account created by getOrCreateAssociatedTokenAccount, transferChecked
// and transfer, getParsedTransaction, getParsedBlock, getParsedAccountInfo,
// getAccount; and the refusals in agave's shapes: a signature that is not
// the payer's (-32003), lamports beyond the balance, a replay, an unfunded
// payer, tokens beyond the balance, tokens sent to a wallet instead of its
// token account, an expired blockhash (-32002 with data.err).
func TestWeb3JS(t *testing.T) {
	js, err := walletjs.Find()
	devnettest.Need(t, "node with @solana/web3.js", err)

	n := solanafake.New()
	srv := httptest.NewServer(n)
	defer srv.Close()
	control := httptest.NewServer(n.ControlHandler())
	defer control.Close()
	seed := sha256.Sum256([]byte("solanafake web3.js test payer"))
	priv := ed25519.NewKeyFromSeed(seed[:])
	var payer, mint, to, authority [32]byte
	copy(payer[:], priv.Public().(ed25519.PublicKey))
	mintSeed := sha256.Sum256([]byte("solanafake web3.js test mint"))
	copy(mint[:], ed25519.NewKeyFromSeed(mintSeed[:]).Public().(ed25519.PublicKey))
	toSeed := sha256.Sum256([]byte("solanafake web3.js test recipient"))
	copy(to[:], ed25519.NewKeyFromSeed(toSeed[:]).Public().(ed25519.PublicKey))
	authority = payer
	n.Fund(payer, 50_000_000_000)
	n.CreateMint(mint, 6, authority)
	if _, err := n.MintTo(mint, payer, 900_000_000); err != nil {
		t.Fatal(err)
	}
	n.Mine(2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go n.Produce(ctx, 200*time.Millisecond) // a blockhash lasts 150 slots: 30 s for web3.js to confirm

	keyfile := filepath.Join(t.TempDir(), "payer.json")
	kb, _ := json.Marshal([]int(bytesToInts(priv)))
	if err := os.WriteFile(keyfile, kb, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd := js.Command(ctx, "testdata/web3.cjs",
		"SOLANA_URL="+srv.URL, "SOLANA_WS_URL="+strings.Replace(srv.URL, "http://", "ws://", 1),
		"SOLANA_KEYPAIR="+keyfile, "TO="+base58.Encode(to[:]), "MINT="+base58.Encode(mint[:]),
		"CONTROL_URL="+control.URL, "LAMPORTS=250000000", "TOKENS=12340000")
	outb, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("web3.cjs: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	t.Logf("web3.js script: %s", time.Since(start).Round(time.Millisecond))
	t.Logf("%s", outb)
	var out struct {
		SOL string
		V0  struct {
			Sig string
			Err any
		}
		Fee, Rent165 uint64
		ATA          string
		SPL          string
		ParsedSPL    struct {
			Program, Type string
			Info          map[string]any
			Pre, Post     []map[string]any
		}
		ParsedSOL struct {
			Program, Type string
			Info          map[string]any
			Fee           uint64
		}
		ParsedCreate struct {
			Type  string
			Inner []string
			Logs  int
		}
		RawV0 struct {
			Version any
			Fee     uint64
			Err     any
		}
		Balance                                                            uint64
		Tokens                                                             string
		TokenBalance                                                       map[string]any
		ParsedAccount                                                      map[string]any
		MintInfo                                                           struct{ Decimals int }
		Block                                                              struct{ Txs int }
		Statuses                                                           []string
		WrongSig                                                           refusal
		WrongSigLibrary                                                    string
		TooMuch, Replay, Unfunded, TokensTooMuch, NotTokenAccount, Expired refusal
		ExpiredLibrary                                                     string
		Valid                                                              bool
		FeeExpired                                                         *uint64
	}
	if err := json.Unmarshal(outb, &out); err != nil {
		t.Fatalf("%v: %s", err, outb)
	}
	ata, _ := solanafake.AssociatedTokenAddress(to, mint)
	if out.ATA != base58.Encode(ata[:]) {
		t.Errorf("spl-token's associated account %s, the node's %s", out.ATA, base58.Encode(ata[:]))
	}
	// The replay check later sent 7 more lamports.
	if out.Balance != 250_000_000+1_000_000 || n.Balance(to) != out.Balance+7 {
		t.Errorf("recipient lamports %d (node %d)", out.Balance, n.Balance(to))
	}
	if out.Tokens != "12340001" || n.TokenBalance(ata) != 12_340_001 {
		t.Errorf("recipient tokens %s (node %d)", out.Tokens, n.TokenBalance(ata))
	}
	if out.V0.Err != nil || out.RawV0.Version != 0.0 || out.RawV0.Fee != 5000 || out.Fee != 5000 || out.Rent165 != 2_039_280 {
		t.Errorf("v0 %+v, raw %+v, fee %d, rent %d", out.V0, out.RawV0, out.Fee, out.Rent165)
	}
	if out.ParsedSOL.Program != "system" || out.ParsedSOL.Type != "transfer" || out.ParsedSOL.Info["lamports"] != 250_000_000.0 ||
		out.ParsedSOL.Info["destination"] != base58.Encode(to[:]) {
		t.Errorf("parsed SOL transfer: %+v", out.ParsedSOL)
	}
	amt, _ := out.ParsedSPL.Info["tokenAmount"].(map[string]any)
	if out.ParsedSPL.Program != "spl-token" || out.ParsedSPL.Type != "transferChecked" || amt["amount"] != "12340000" ||
		amt["uiAmountString"] != "12.34" || out.ParsedSPL.Info["destination"] != out.ATA || len(out.ParsedSPL.Post) != 2 {
		t.Errorf("parsed SPL transfer: %+v", out.ParsedSPL)
	}
	if out.ParsedCreate.Type != "create" || strings.Join(out.ParsedCreate.Inner, ",") != "getAccountDataSize,createAccount,initializeImmutableOwner,initializeAccount3" {
		t.Errorf("parsed account creation: %+v", out.ParsedCreate)
	}
	if out.ParsedAccount["type"] != "account" || out.TokenBalance["uiAmountString"] != "12.340001" || out.MintInfo.Decimals != 6 || out.Block.Txs < 1 {
		t.Errorf("accounts: %+v %+v %+v block %+v", out.ParsedAccount, out.TokenBalance, out.MintInfo, out.Block)
	}
	if len(out.Statuses) != 2 || out.Statuses[0] != "finalized" || out.Statuses[1] != "finalized" {
		t.Errorf("statuses: %v", out.Statuses)
	}
	check := func(name string, got refusal, code int, msg string, errJSON string, log string) {
		t.Helper()
		e, _ := json.Marshal(got.Err)
		if got.Code != code || got.Message != msg || (errJSON != "" && string(e) != errJSON) {
			t.Errorf("%s: %+v (err %s), want %d %q %s", name, got, e, code, msg, errJSON)
		}
		if log != "" && !strings.Contains(strings.Join(got.Logs, "\n"), log) {
			t.Errorf("%s: logs %q lack %q", name, got.Logs, log)
		}
	}
	check("foreign signature", out.WrongSig, -32003, "Transaction signature verification failure", "null", "")
	check("lamports", out.TooMuch, -32002, "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1",
		`{"InstructionError":[0,{"Custom":1}]}`, "Transfer: insufficient lamports")
	check("replay", out.Replay, -32002, "Transaction simulation failed: This transaction has already been processed", `"AlreadyProcessed"`, "")
	check("unfunded payer", out.Unfunded, -32002, "Transaction simulation failed: Attempt to debit an account but found no record of a prior credit.", `"AccountNotFound"`, "")
	check("tokens", out.TokensTooMuch, -32002, "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1",
		`{"InstructionError":[0,{"Custom":1}]}`, "Program log: Error: insufficient funds")
	check("wallet instead of token account", out.NotTokenAccount, -32002,
		"Transaction simulation failed: Error processing Instruction 0: invalid account data for instruction", `{"InstructionError":[0,"InvalidAccountData"]}`, "")
	check("expired blockhash", out.Expired, -32002, "Transaction simulation failed: Blockhash not found", `"BlockhashNotFound"`, "")
	if out.Valid || out.FeeExpired != nil {
		t.Errorf("expired blockhash: isBlockhashValid %v, getFeeForMessage %v", out.Valid, out.FeeExpired)
	}
	if !strings.Contains(out.ExpiredLibrary, "Transaction simulation failed: Blockhash not found") ||
		!strings.Contains(out.WrongSigLibrary, "Transaction signature verification failure") {
		t.Errorf("web3.js errors: %q, %q", out.ExpiredLibrary, out.WrongSigLibrary)
	}
}

func bytesToInts(b []byte) []int {
	out := make([]int, len(b))
	for i, x := range b {
		out[i] = int(x)
	}
	return out
}
