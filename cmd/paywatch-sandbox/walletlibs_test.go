package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/walletjs"
	"github.com/paywatch/paywatch/payment"
)

// The README's sandbox section shows the two wallet scripts the tests run,
// verbatim.
func TestREADMEShowsTheWalletScripts(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"../../docs/sandbox/pay-tron.cjs", "../../docs/sandbox/pay-solana.cjs"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(string(b), "\n"); lines > 12 {
			t.Errorf("%s has %d lines; the README promises about ten", f, lines)
		}
		if !strings.Contains(string(readme), string(b)) {
			t.Errorf("README.md does not show %s as it is", f)
		}
	}
	// The wallets table names the addresses the keys give.
	for _, a := range []string{sandboxTronWallet().Base58(), solanaAddress(publicKey32(sandboxSolanaWallet())), sandboxTronKeyHex[:8]} {
		if !strings.Contains(string(readme), a) {
			t.Errorf("README.md does not name %s", a)
		}
	}
}

// nodeScript runs a wallet script with the sandbox's environment and
// returns its standard output, trimmed.
func nodeScript(t *testing.T, ctx context.Context, js walletjs.Env, env sandboxEnv, script string, args ...string) string {
	t.Helper()
	vars := make([]string, 0, len(env))
	for k, v := range env {
		vars = append(vars, k+"="+v)
	}
	cmd := js.Command(ctx, script, vars...)
	cmd.Args = append(cmd.Args, args...)
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node %s %v: %v\n%s", script, args, err, stderr)
	}
	t.Logf("node %s %s: %s", script, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return strings.TrimSpace(string(out))
}

// scannedHeight reads a network's scanned height from GET /v1/status.
func scannedHeight(ctx context.Context, env sandboxEnv, network string) int64 {
	var st struct {
		Networks []struct {
			Network       string `json:"network"`
			ScannedHeight int64  `json:"scanned_height"`
		} `json:"networks"`
	}
	if err := apiCall(ctx, env[envURL], env[envAPIKey], http.MethodGet, "/v1/status", nil, &st); err != nil {
		return -1
	}
	for _, n := range st.Networks {
		if n.Network == network {
			return n.ScannedHeight
		}
	}
	return -1
}

// TestSandboxWalletLibraries pays sandbox intents from the test wallets
// with the real TronWeb and @solana/web3.js, running the README's scripts
// (docs/sandbox) as a developer would, with sandbox.env's values: TRX and
// USDT-TRC20 to a TRX and a USDT-TRC20 intent, SOL to a SOL intent; each
// becomes paid by exactly the transaction the library sent. The same
// libraries read the payments back (TronWeb's getTransactionInfo,
// getBalance, contract().balanceOf; web3.js's getParsedTransaction and
// getBalance), the Tron node refuses a replay, and the sandbox SPL token
// sent to a Solana intent's address with spl-token (its associated token
// account created on the way) arrives there while the intent, which waits
// for SOL, stays unpaid.
func TestSandboxWalletLibraries(t *testing.T) {
	needSandboxPeers(t)
	js, err := walletjs.Find()
	devnettest.Need(t, "node with TronWeb and @solana/web3.js", err)
	checkAPIAnswers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := sandboxDir(t)
	port, err := devnet.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dev := startDev(t, ctx, dir, fmt.Sprintf("127.0.0.1:%d", port))
	env := dev.env
	if env[envTronAddress] != sandboxTronWallet().Base58() || env[envSolanaAddress] != solanaAddress(publicKey32(sandboxSolanaWallet())) {
		t.Fatalf("sandbox.env wallets: %s %s", env[envTronAddress], env[envSolanaAddress])
	}

	trx := createIntent(t, ctx, env, payment.TRX, "7.00")
	usdt := createIntent(t, ctx, env, payment.USDTTRC20, "12.34")
	solIntent := createIntent(t, ctx, env, payment.SOL, "9.00")
	tokenIntent := createIntent(t, ctx, env, payment.SOL, "1.00")

	trxID := nodeScript(t, ctx, js, env, "../../docs/sandbox/pay-tron.cjs", trx.Address, trx.AmountBaseUnits)
	usdtID := nodeScript(t, ctx, js, env, "../../docs/sandbox/pay-tron.cjs", usdt.Address, usdt.AmountBaseUnits, "USDT")
	solSig := nodeScript(t, ctx, js, env, "../../docs/sandbox/pay-solana.cjs", solIntent.Address, solIntent.AmountBaseUnits)
	for _, c := range []struct {
		in   intentState
		txid string
	}{{trx, trxID}, {usdt, usdtID}, {solIntent, solSig}} {
		got := waitPaid(t, ctx, env, c.in.ID, 2*time.Minute)
		if got.ReceivedBaseUnits != c.in.AmountBaseUnits || len(got.Transfers) != 1 || got.Transfers[0].TxID != c.txid {
			t.Errorf("%s: received %s by %+v, want %s by %s", c.in.Method, got.ReceivedBaseUnits, got.Transfers, c.in.AmountBaseUnits, c.txid)
		}
	}

	var tron struct {
		TRX, USDT struct {
			Fee     int64
			Receipt map[string]any
			Log     []map[string]any
			Block   int64
		}
		TRXBalance  int64
		USDTBalance string
		Tx          struct{ Ret, Signature, Owner string }
		Replay      struct{ Code, Message string }
	}
	out := nodeScript(t, ctx, js, env, "testdata/wallets/tron-readback.cjs", trxID, usdtID, trx.Address, usdt.Address)
	if err := json.Unmarshal([]byte(out), &tron); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Logf("TronWeb read back: %s", out)
	// The TRX intent's address was new: 1 TRX account fee plus 0.1 TRX of bandwidth.
	if tron.TRXBalance != mustInt64(t, trx.AmountBaseUnits) || tron.TRX.Fee != 1_100_000 || tron.TRX.Receipt["net_fee"] != 100_000.0 {
		t.Errorf("TRX: balance %d, info %+v", tron.TRXBalance, tron.TRX)
	}
	if tron.USDTBalance != usdt.AmountBaseUnits || tron.USDT.Receipt["result"] != "SUCCESS" || tron.USDT.Receipt["energy_usage_total"] != 29_631.0 ||
		len(tron.USDT.Log) != 1 {
		t.Errorf("USDT: balance %s, info %+v", tron.USDTBalance, tron.USDT)
	}
	if tron.Tx.Ret != "SUCCESS" || tron.Tx.Owner != "41"+strings.ToLower(strings.TrimPrefix(sandboxEthPayer.Hex(), "0x")) ||
		tron.Replay.Code != "DUP_TRANSACTION_ERROR" || tron.Replay.Message != "Dup transaction." {
		t.Errorf("mined TRX transaction %+v, replay %+v", tron.Tx, tron.Replay)
	}

	var solana struct {
		TokenSig, TokenAccount, Tokens string
		TokenSlot                      int64
		TokenParsed, SOLParsed         struct {
			Type string
			Info map[string]any
		}
		SOLFee, SOLBalance, TokenOwnerBalance int64
	}
	out = nodeScript(t, ctx, js, env, "testdata/wallets/solana-readback.cjs", solSig, solIntent.Address, tokenIntent.Address, "2500000")
	if err := json.Unmarshal([]byte(out), &solana); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Logf("web3.js read back: %s", out)
	if solana.SOLParsed.Type != "transfer" || solana.SOLParsed.Info["destination"] != solIntent.Address ||
		fmt.Sprint(int64(solana.SOLParsed.Info["lamports"].(float64))) != solIntent.AmountBaseUnits || solana.SOLFee != 5000 ||
		fmt.Sprint(solana.SOLBalance) != solIntent.AmountBaseUnits {
		t.Errorf("SOL read back: %+v", solana)
	}
	if solana.Tokens != "2500000" || solana.TokenParsed.Type != "transferChecked" || solana.TokenParsed.Info["destination"] != solana.TokenAccount ||
		solana.TokenOwnerBalance != 0 {
		t.Errorf("SPL token: %+v", solana)
	}
	// Tokens to the intent's address are not SOL: once the scanner is past
	// their slot, the intent still waits, with no transfer.
	for scannedHeight(ctx, env, "solana") < solana.TokenSlot {
		select {
		case <-ctx.Done():
			t.Fatalf("the Solana scanner did not reach slot %d", solana.TokenSlot)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if got, err := getIntent(ctx, env, tokenIntent.ID); err != nil || got.Status != "awaiting_payment" || len(got.Transfers) != 0 {
		t.Errorf("the SOL intent that received only tokens: %+v (%v)", got, err)
	}
}

func mustInt64(t *testing.T, s string) int64 {
	t.Helper()
	var v int64
	if _, err := fmt.Sscan(s, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
