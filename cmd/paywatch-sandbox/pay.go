package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	solbase58 "github.com/mr-tron/base58"

	"github.com/paywatch/paywatch/contracts"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/payment"
)

// detectWait bounds how long `paywatch-sandbox pay` waits for paywatch to see the
// payment before it mines the confirmations.
const detectWait = 30 * time.Second

func runPay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("pay", "pay <intent-id> [--amount X] [--dir DIR]\n\n"+
		"Pays a sandbox intent with its asset from the sandbox's coins: BTC from the btcd\n"+
		"faucet, LTC from litecoind's wallet, ETH/USDT/USDC from anvil's dev account 9,\n"+
		"TRX/USDT-TRC20/SOL through the simulated nodes. It waits until paywatch sees the\n"+
		"payment, then mines the blocks it needs to confirm. Run it from the repository root.", stderr)
	amount := fs.String("amount", "", "amount in the asset's units, e.g. 0.0005 (default: the intent's exact amount)")
	dir := fs.String("dir", devDir, "sandbox directory")
	// The intent id may come before or after the flags.
	var id string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		id, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if id == "" && fs.NArg() > 0 {
		id = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return fmt.Errorf("pay: unexpected argument %q", fs.Arg(0))
	}
	if id == "" {
		fs.Usage()
		return errors.New("pay needs the intent id (the \"id\" of POST /v1/intents)")
	}
	env, err := readSandboxEnv(filepath.Join(*dir, "sandbox.env"))
	if err != nil {
		return err
	}
	res, err := payIntent(ctx, env, *dir, id, *amount, stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nsent %s %s to %s\n  transaction %s\n", res.Amount, res.Asset, res.Address, res.TxID)
	if res.Mined > 0 {
		fmt.Fprintf(stdout, "  mined %d block(s) to confirm it\n", res.Mined)
	}
	fmt.Fprintf(stdout, "\nThe intent goes awaiting_payment -> detected -> paid; see it with\n  curl -s -H 'Authorization: Bearer %s' %s/v1/intents/%s\n\n",
		env[envAPIKey], env[envURL], id)
	followIntent(ctx, env, id, res.Seen, followWait, stdout)
	return nil
}

// followWait bounds how long `paywatch-sandbox pay` reports the intent's progress.
const followWait = 30 * time.Second

// followIntent prints the intent's status as it changes, starting with
// seen (the status when the payment was seen), until it settles (anything
// but awaiting_payment and detected) or timeout.
func followIntent(ctx context.Context, env sandboxEnv, id, seen string, timeout time.Duration, w io.Writer) {
	start := time.Now()
	if seen != "" {
		fmt.Fprintf(w, "  status %-17s (payment seen)\n", seen)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := seen
	for {
		var in devIntent
		if err := apiCall(ctx, env[envURL], env[envAPIKey], http.MethodGet, "/v1/intents/"+id, nil, &in); err == nil && in.Status != last {
			last = in.Status
			fmt.Fprintf(w, "  status %-17s (+%s)\n", in.Status, time.Since(start).Round(100*time.Millisecond))
		}
		if last != "" && last != "awaiting_payment" && last != "detected" {
			return
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(w, "  still %s after %s (an underpayment stays detected until the rest arrives or the deadline)\n", last, timeout)
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// devIntent is the part of an intent `paywatch-sandbox pay` needs.
type devIntent struct {
	ID                    string `json:"id"`
	Method                string `json:"method"`
	Network               string `json:"network"`
	Asset                 string `json:"asset"`
	Address               string `json:"address"`
	Amount                string `json:"amount"`
	AmountBaseUnits       string `json:"amount_base_units"`
	Status                string `json:"status"`
	ConfirmationsRequired int    `json:"confirmations_required"`
}

// payResult describes a sandbox payment.
type payResult struct {
	TxID, Amount, Asset, Address string
	// Mined is how many blocks were mined after the payment was seen.
	Mined int
	// Seen is the intent's status when the blocks were mined.
	Seen string
}

// payIntent pays intent id from the sandbox's coins (amount in the asset's
// units; "" means the intent's exact amount), waits until paywatch has seen
// the payment (at most detectWait), then mines the confirmations it needs.
// Both `paywatch-sandbox pay` and the sandbox test call it.
func payIntent(ctx context.Context, env sandboxEnv, dir, id, amount string, progress io.Writer) (payResult, error) {
	var in devIntent
	if err := apiCall(ctx, env[envURL], env[envAPIKey], http.MethodGet, "/v1/intents/"+id, nil, &in); err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			return payResult{}, fmt.Errorf("cannot reach paywatch at %s (is the sandbox running? `make run`): %w", env[envURL], err)
		}
		return payResult{}, fmt.Errorf("intent %s: %w", id, err)
	}
	info, ok := payment.LookupMethod(payment.Method(in.Method))
	if !ok {
		return payResult{}, fmt.Errorf("intent %s: unknown method %q", id, in.Method)
	}
	units, ok := new(big.Int).SetString(in.AmountBaseUnits, 10)
	if !ok {
		return payResult{}, fmt.Errorf("intent %s: amount_base_units %q is not an integer", id, in.AmountBaseUnits)
	}
	if amount != "" {
		v, err := payment.ParseUnits(amount, info.Decimals)
		if err != nil {
			return payResult{}, fmt.Errorf("--amount %q: %w", amount, err)
		}
		if v.Sign() <= 0 {
			return payResult{}, fmt.Errorf("--amount %q: must be positive", amount)
		}
		units = v
	}
	res := payResult{Amount: payment.FormatUnits(units, info.Decimals), Asset: string(info.Asset), Address: in.Address}
	if info.Asset == payment.Native {
		res.Asset = info.Symbol
	}
	if progress != nil {
		fmt.Fprintf(progress, "paying %s %s (%s) to %s from the sandbox …\n", res.Amount, res.Asset, in.Method, in.Address)
	}
	var (
		txid string
		err  error
	)
	switch info.Network {
	case payment.Bitcoin:
		txid, err = payBitcoin(ctx, env, dir, in.Address, units)
	case payment.Litecoin:
		txid, err = payLitecoin(ctx, env, in.Address, units)
	case payment.Ethereum:
		txid, err = payEthereum(ctx, env, info, in.Address, units)
	case payment.Tron:
		txid, err = payTron(ctx, env, info, in.Address, units)
	case payment.Solana:
		txid, err = paySolana(ctx, env, in.Address, units)
	default:
		err = fmt.Errorf("no sandbox payer for %s", info.Network)
	}
	if err != nil {
		return res, err
	}
	res.TxID = txid
	res.Seen = waitSeen(ctx, env, id, detectWait)
	if mined(info.Network) && in.ConfirmationsRequired > 0 {
		if err := mineBlocks(ctx, env, dir, info.Network, in.ConfirmationsRequired); err != nil {
			return res, fmt.Errorf("mine %d blocks after %s: %w", in.ConfirmationsRequired, txid, err)
		}
		res.Mined = in.ConfirmationsRequired
	}
	return res, nil
}

// mined reports whether the sandbox mines network's blocks on demand (the
// simulated Tron and Solana nodes produce blocks on a timer).
func mined(n payment.Network) bool {
	return n == payment.Bitcoin || n == payment.Litecoin || n == payment.Ethereum
}

// mineBlocks mines n blocks on a sandbox node of network.
func mineBlocks(ctx context.Context, env sandboxEnv, dir string, network payment.Network, n int) error {
	switch network {
	case payment.Bitcoin:
		b, err := devnet.AttachBtcd(ctx, env[envBitcoin], filepath.Join(dir, "btcd"))
		if err != nil {
			return err
		}
		_, err = b.Generate(ctx, n)
		return err
	case payment.Litecoin:
		// Only RPC calls are used: the node belongs to the sandbox process.
		_, err := (&devnet.Litecoind{CoreRPC: devnet.CoreRPC{RPCURL: env[envLitecoin]}}).Generate(ctx, n)
		return err
	case payment.Ethereum:
		a, err := dialAnvil(ctx, env)
		if err != nil {
			return err
		}
		defer a.RPC.Close()
		return a.Mine(ctx, n)
	}
	return fmt.Errorf("%s produces its blocks by itself in the sandbox", network)
}

// dialAnvil connects to the sandbox's anvil. Only RPC calls are used: the
// node belongs to the `dev` process.
func dialAnvil(ctx context.Context, env sandboxEnv) (*ethdev.Anvil, error) {
	c, err := rpc.DialContext(ctx, env[envEthereum])
	if err != nil {
		return nil, err
	}
	return &ethdev.Anvil{RPCURL: env[envEthereum], RPC: c, Eth: ethclient.NewClient(c)}, nil
}

// waitSeen polls the intent until its status leaves awaiting_payment, or
// timeout; it returns the last status seen.
func waitSeen(ctx context.Context, env sandboxEnv, id string, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	status := ""
	for {
		var in devIntent
		if err := apiCall(ctx, env[envURL], env[envAPIKey], http.MethodGet, "/v1/intents/"+id, nil, &in); err == nil {
			status = in.Status
			if status != "awaiting_payment" {
				return status
			}
		}
		select {
		case <-ctx.Done():
			return status
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func payBitcoin(ctx context.Context, env sandboxEnv, dir, address string, sats *big.Int) (string, error) {
	if !sats.IsInt64() {
		return "", fmt.Errorf("amount %s sat is too large", sats)
	}
	addr, err := btcutil.DecodeAddress(address, &chaincfg.RegressionNetParams)
	if err != nil {
		return "", fmt.Errorf("address %s: %w", address, err)
	}
	script, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return "", err
	}
	b, err := devnet.AttachBtcd(ctx, env[envBitcoin], filepath.Join(dir, "btcd"))
	if err != nil {
		return "", err
	}
	return b.Pay(ctx, script, sats.Int64())
}

func payLitecoin(ctx context.Context, env sandboxEnv, address string, litoshis *big.Int) (string, error) {
	if !litoshis.IsInt64() {
		return "", fmt.Errorf("amount %s litoshi is too large", litoshis)
	}
	// Only RPC calls are used: the node belongs to the sandbox process.
	txid, err := (&devnet.Litecoind{CoreRPC: devnet.CoreRPC{RPCURL: env[envLitecoin]}}).SendToAddress(ctx, address, litoshis.Int64())
	if err != nil {
		return "", fmt.Errorf("litecoind sendtoaddress: %w", err)
	}
	return txid, nil
}

// payEthereum pays ETH or a sandbox token from sandboxEthPayer; anvil mines
// the transaction at once (one confirmation).
func payEthereum(ctx context.Context, env sandboxEnv, info payment.MethodInfo, address string, units *big.Int) (string, error) {
	if !common.IsHexAddress(address) {
		return "", fmt.Errorf("address %s is not an Ethereum address", address)
	}
	to := common.HexToAddress(address)
	req := ethdev.TxRequest{From: sandboxEthPayer, To: &to, Value: units}
	if info.Asset != payment.Native {
		contract := env[envUSDT]
		if info.Asset == payment.USDC {
			contract = env[envUSDC]
		}
		token := common.HexToAddress(contract)
		data, err := contracts.TestToken.Call("transfer", to, units)
		if err != nil {
			return "", err
		}
		req = ethdev.TxRequest{From: sandboxEthPayer, To: &token, Data: data}
	}
	a, err := dialAnvil(ctx, env)
	if err != nil {
		return "", err
	}
	defer a.RPC.Close()
	r, err := a.Send(ctx, req)
	if err != nil {
		return "", err
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return "", fmt.Errorf("transaction %s reverted", r.TxHash.Hex())
	}
	return r.TxHash.Hex(), nil
}

func payTron(ctx context.Context, env sandboxEnv, info payment.MethodInfo, address string, units *big.Int) (string, error) {
	var out struct {
		TxID string `json:"txid"`
	}
	var err error
	if info.Asset == payment.Native {
		err = controlCall(ctx, env[envTronControl]+"/pay/trx",
			map[string]any{"from": sandboxTronPayer, "to": address, "sun": units.String()}, &out)
	} else {
		err = controlCall(ctx, env[envTronControl]+"/pay/trc20",
			map[string]any{"contract": env[envTronUSDT], "from": sandboxTronPayer, "to": address, "amount": units.String()}, &out)
	}
	if err != nil {
		return "", fmt.Errorf("simulated Tron node: %w", err)
	}
	return out.TxID, nil
}

func paySolana(ctx context.Context, env sandboxEnv, address string, lamports *big.Int) (string, error) {
	if !lamports.IsUint64() {
		return "", fmt.Errorf("amount %s lamports is too large", lamports)
	}
	// A fresh payer per payment: the simulated node funds a new payer with
	// 1,000 SOL, so the sandbox never runs dry.
	var seed [32]byte
	_, _ = rand.Read(seed[:])
	payer := sha256.Sum256(append([]byte("paywatch sandbox solana payer "), seed[:]...))
	var out struct {
		Signature string `json:"signature"`
	}
	err := controlCall(ctx, env[envSolanaControl]+"/pay/sol",
		map[string]any{"from": solbase58.Encode(payer[:]), "to": address, "lamports": lamports.String()}, &out)
	if err != nil {
		return "", fmt.Errorf("simulated Solana node: %w", err)
	}
	return out.Signature, nil
}

// apiHTTP carries the sandbox's calls to the paywatch API (apiCall), and
// controlHTTP its calls to the simulated nodes' control handlers
// (controlCall): two clients, so that what the API answers can be checked
// on its own.
var (
	apiHTTP     = &http.Client{Timeout: 30 * time.Second}
	controlHTTP = &http.Client{Timeout: 30 * time.Second}
)

// controlCall POSTs a JSON body to a fake node's control handler.
func controlCall(ctx context.Context, url string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := controlHTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(data)))
	}
	return json.Unmarshal(data, out)
}

// apiError is an error answer of the paywatch API.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

// apiCall calls the paywatch API with the sandbox key and decodes a 2xx
// answer into out; anything else is an *apiError.
func apiCall(ctx context.Context, base, key, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := apiHTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(data, &e)
		return &apiError{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}
