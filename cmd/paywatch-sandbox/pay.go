package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/system"

	"github.com/paywatch/paywatch/addresses"
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
		"TRX/USDT-TRC20/SOL from the sandbox's Tron and Solana test wallets, signed and\n"+
		"broadcast through the simulated nodes' public APIs. It waits until paywatch sees the\n"+
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

// payTron pays TRX or the sandbox USDT-TRC20 from the Tron test wallet the
// way a wallet does, through the node's public API: the node builds the
// transaction (createtransaction, or triggersmartcontract calling
// transfer(address,uint256)), the wallet checks that txID is the sha256 of
// raw_data_hex, signs it with its key and broadcasts it.
func payTron(ctx context.Context, env sandboxEnv, info payment.MethodInfo, address string, units *big.Int) (string, error) {
	w, err := newTronWallet(env[envTronKey])
	if err != nil {
		return "", err
	}
	to, err := addresses.TronAccount(address)
	if err != nil {
		return "", err
	}
	owner := hex.EncodeToString(w.addr)
	var tx map[string]any
	if info.Asset == payment.Native {
		if !units.IsInt64() {
			return "", fmt.Errorf("amount %s sun is too large", units)
		}
		err = tronCall(ctx, env[envTron]+"/wallet/createtransaction",
			map[string]any{"owner_address": owner, "to_address": "41" + hex.EncodeToString(to), "amount": units.Int64()}, &tx)
	} else {
		contract, cerr := addresses.TronAccount(env[envTronUSDT])
		if cerr != nil {
			return "", cerr
		}
		if units.Sign() < 0 || units.BitLen() > 256 {
			return "", fmt.Errorf("amount %s: want a 256-bit unsigned integer", units)
		}
		param := hex.EncodeToString(abiWord(to)) + hex.EncodeToString(abiWord(units.Bytes()))
		var out struct {
			Result      map[string]any `json:"result"`
			Transaction map[string]any `json:"transaction"`
		}
		err = tronCall(ctx, env[envTron]+"/wallet/triggersmartcontract", map[string]any{
			"owner_address": owner, "contract_address": "41" + hex.EncodeToString(contract),
			"function_selector": "transfer(address,uint256)", "parameter": param, "fee_limit": 100_000_000}, &out)
		if err == nil && out.Result["result"] != true {
			msg, _ := hex.DecodeString(fmt.Sprint(out.Result["message"]))
			err = fmt.Errorf("triggersmartcontract: %v %s", out.Result["code"], msg)
		}
		tx = out.Transaction
	}
	if err != nil {
		return "", fmt.Errorf("simulated Tron node: %w", err)
	}
	if e, ok := tx["Error"]; ok {
		return "", fmt.Errorf("simulated Tron node: %v", e)
	}
	txID, _ := tx["txID"].(string)
	raw, err := hex.DecodeString(fmt.Sprint(tx["raw_data_hex"]))
	if sum := sha256.Sum256(raw); err != nil || hex.EncodeToString(sum[:]) != txID {
		return "", fmt.Errorf("simulated Tron node: the transaction it built has txID %q, not the hash of its raw_data_hex", txID)
	}
	hash, _ := hex.DecodeString(txID)
	sig, err := ecdsa.SignCompact(w.priv, hash, false) // header ‖ r ‖ s
	if err != nil {
		return "", err
	}
	tx["signature"] = []string{hex.EncodeToString(append(sig[1:], sig[0]-27))}
	var res struct {
		Result  bool   `json:"result"`
		TxID    string `json:"txid"`
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if err := tronCall(ctx, env[envTron]+"/wallet/broadcasttransaction", tx, &res); err != nil {
		return "", fmt.Errorf("simulated Tron node: %w", err)
	}
	if !res.Result {
		msg, _ := hex.DecodeString(res.Message)
		return "", fmt.Errorf("simulated Tron node refused the transaction: %s: %s", res.Code, msg)
	}
	return res.TxID, nil
}

// abiWord left-pads b to a 32-byte ABI word.
func abiWord(b []byte) []byte { return append(make([]byte, 32-len(b)), b...) }

// tronCall POSTs body to a java-tron HTTP endpoint and decodes the answer
// with exact numbers (a transaction's fields go back unchanged).
func tronCall(ctx context.Context, url string, body, out any) error {
	data, err := postJSON(ctx, url, body)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%s: %w: %.200s", url, err, data)
	}
	return nil
}

// paySolana pays SOL from the Solana test wallet the way a wallet does:
// a System transfer on the latest blockhash, signed with the wallet's key
// (its keypair file), sent with sendTransaction.
func paySolana(ctx context.Context, env sandboxEnv, address string, lamports *big.Int) (string, error) {
	if !lamports.IsUint64() {
		return "", fmt.Errorf("amount %s lamports is too large", lamports)
	}
	key, err := readSolanaKeypair(env[envSolanaKeypair])
	if err != nil {
		return "", err
	}
	to, err := sol.PublicKeyFromBase58(address)
	if err != nil {
		return "", fmt.Errorf("address %s: %w", address, err)
	}
	var latest struct {
		Value struct {
			Blockhash string `json:"blockhash"`
		} `json:"value"`
	}
	if err := solanaCall(ctx, env[envSolana], "getLatestBlockhash", []any{map[string]string{"commitment": "finalized"}}, &latest); err != nil {
		return "", err
	}
	hash, err := sol.HashFromBase58(latest.Value.Blockhash)
	if err != nil {
		return "", fmt.Errorf("simulated Solana node: blockhash %q: %w", latest.Value.Blockhash, err)
	}
	payer := sol.PrivateKey(key)
	tx, err := sol.NewTransaction([]sol.Instruction{system.NewTransferInstruction(lamports.Uint64(), payer.PublicKey(), to).Build()},
		hash, sol.TransactionPayer(payer.PublicKey()))
	if err != nil {
		return "", err
	}
	if _, err := tx.Sign(func(k sol.PublicKey) *sol.PrivateKey {
		if k == payer.PublicKey() {
			return &payer
		}
		return nil
	}); err != nil {
		return "", err
	}
	wire, err := tx.MarshalBinary()
	if err != nil {
		return "", err
	}
	var sig string
	err = solanaCall(ctx, env[envSolana], "sendTransaction",
		[]any{base64.StdEncoding.EncodeToString(wire), map[string]string{"encoding": "base64", "preflightCommitment": "finalized"}}, &sig)
	return sig, err
}

// solanaCall calls a JSON-RPC method of the simulated Solana node.
func solanaCall(ctx context.Context, url, method string, params []any, out any) error {
	data, err := postJSON(ctx, url, map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return fmt.Errorf("simulated Solana node: %w", err)
	}
	var res struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		return fmt.Errorf("simulated Solana node: %s: %w", method, err)
	}
	if res.Error != nil {
		return fmt.Errorf("simulated Solana node: %s: %d %s", method, res.Error.Code, res.Error.Message)
	}
	return json.Unmarshal(res.Result, out)
}

// postJSON POSTs a JSON body to a node and returns the answer's body.
func postJSON(ctx context.Context, url string, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := controlHTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, strings.TrimSpace(string(data)))
	}
	return data, nil
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
