package devnet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// BtcdVersion is the btcd release devnet installs and runs.
const BtcdVersion = "v0.24.2"

// btcdInstall is the command that installs btcd and btcctl.
const btcdInstall = "go install github.com/btcsuite/btcd@" + BtcdVersion + " github.com/btcsuite/btcd/cmd/btcctl@" + BtcdVersion

// faucetKeySeed derives the regtest faucet key. The key is public knowledge
// (it is in this source file): it is a sandbox/test faucet that receives the
// regtest coinbase, never a paywatch receiving key, and worthless off regtest.
const faucetKeySeed = "paywatch devnet regtest faucet key: sandbox and tests only, never a receiving key"

// coinbaseMaturity is the regtest coinbase maturity (chaincfg.RegressionNetParams).
const coinbaseMaturity = 100

// goBin returns $(go env GOPATH)/bin, or "" when it cannot be found.
func goBin() string {
	if gp := os.Getenv("GOPATH"); gp != "" {
		return filepath.Join(filepath.SplitList(gp)[0], "bin")
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		if gp := strings.TrimSpace(string(out)); gp != "" {
			return filepath.Join(filepath.SplitList(gp)[0], "bin")
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, "go", "bin")
	}
	return ""
}

// lookBtcd finds the btcd binary on PATH or in $(go env GOPATH)/bin.
func lookBtcd() (string, error) {
	extra := ""
	if d := goBin(); d != "" {
		extra = filepath.Join(d, "btcd")
	}
	p, err := LookBinary("btcd", extra)
	if err != nil {
		return "", fmt.Errorf("%w (%s)", err, btcdInstall)
	}
	return p, nil
}

// InstallBtcd installs btcd and btcctl with go install when btcd is not on
// PATH or in $(go env GOPATH)/bin. It runs outside any module, so no go.mod
// is touched.
func InstallBtcd(ctx context.Context) error {
	if _, err := lookBtcd(); err == nil {
		return nil
	}
	cmd := exec.CommandContext(ctx, "go", "install",
		"github.com/btcsuite/btcd@"+BtcdVersion, "github.com/btcsuite/btcd/cmd/btcctl@"+BtcdVersion)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", btcdInstall, err, out)
	}
	_, err := lookBtcd()
	return err
}

// Output is one payment of a devnet transaction: Amount base units to the
// output script Script.
type Output struct {
	Script []byte
	Amount int64
}

// Btcd is a btcd regtest node on loopback whose coinbase goes to a fixed
// faucet key; Pay and PayMany spend those coins.
type Btcd struct {
	CoreRPC
	// Dir holds data/, logs/ and btcd.log.
	Dir string
	// RPCPort and P2PPort are the loopback ports.
	RPCPort, P2PPort int
	// FaucetAddress is the P2PKH regtest address the coinbase pays.
	FaucetAddress string

	proc   *Process
	key    *btcec.PrivateKey
	script []byte // faucet P2PKH script

	mu      sync.Mutex
	utxos   []faucetCoin // spendable faucet outputs, oldest first
	scanned int64        // coinbases of heights 1..scanned have been examined
}

type faucetCoin struct {
	op    wire.OutPoint
	value int64
}

// faucetKey returns the fixed regtest faucet key and its P2PKH address.
func faucetKey() (*btcec.PrivateKey, *btcutil.AddressPubKeyHash, error) {
	seed := sha256.Sum256([]byte(faucetKeySeed))
	key, _ := btcec.PrivKeyFromBytes(seed[:])
	addr, err := btcutil.NewAddressPubKeyHash(btcutil.Hash160(key.PubKey().SerializeCompressed()), &chaincfg.RegressionNetParams)
	return key, addr, err
}

// StartBtcd starts btcd in regtest mode with its data under dir, its RPC on
// port (0 picks a free one), and waits until the RPC answers. Mining pays the
// faucet key; a chain shorter than 101 blocks is extended to 101 so that the
// faucet owns a mature coinbase. Restarting on the same dir is allowed, but
// btcd itself wipes a regtest chain on every start (btcd.go
// removeRegressionDB): the node comes back at genesis and is funded anew.
func StartBtcd(ctx context.Context, dir string, port int) (*Btcd, error) {
	bin, err := lookBtcd()
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	if port == 0 {
		if port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	p2p, err := FreePort()
	if err != nil {
		return nil, err
	}
	key, addr, err := faucetKey()
	if err != nil {
		return nil, err
	}
	script, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return nil, err
	}
	b := &Btcd{
		CoreRPC:       CoreRPC{RPCURL: fmt.Sprintf("http://u:p@127.0.0.1:%d", port)},
		Dir:           dir,
		RPCPort:       port,
		P2PPort:       p2p,
		FaucetAddress: addr.EncodeAddress(),
		key:           key,
		script:        script,
	}
	b.proc, err = StartProcess("btcd", filepath.Join(dir, "btcd.log"), bin,
		"--regtest", "--configfile=/dev/null",
		"--datadir="+filepath.Join(dir, "data"), "--logdir="+filepath.Join(dir, "logs"),
		"--rpcuser=u", "--rpcpass=p", fmt.Sprintf("--rpclisten=127.0.0.1:%d", port), "--notls",
		fmt.Sprintf("--listen=127.0.0.1:%d", p2p), "--nodnsseed", "--txindex", "--utxocachemaxsize=5",
		"--miningaddr="+b.FaucetAddress)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := WaitUntil(wctx, b.proc, "btcd", func(ctx context.Context) error {
		_, err := b.Tip(ctx)
		return err
	}); err != nil {
		b.Kill()
		return nil, err
	}
	tip, err := b.Tip(ctx)
	if err == nil && tip < coinbaseMaturity+1 {
		_, err = b.Generate(ctx, int(coinbaseMaturity+1-tip))
	}
	if err != nil {
		b.Kill()
		return nil, fmt.Errorf("btcd: fund the faucet: %w", err)
	}
	return b, nil
}

// Generate mines n blocks paying the faucet and returns their hashes.
func (b *Btcd) Generate(ctx context.Context, n int) ([]string, error) {
	var hashes []string
	if err := b.Call(ctx, "generate", &hashes, n); err != nil {
		return nil, err
	}
	return hashes, nil
}

// FaucetScript returns the faucet's output script (P2PKH).
func (b *Btcd) FaucetScript() []byte { return append([]byte(nil), b.script...) }

// Pay sends amountSats to toScript from the faucet and returns the txid. The
// transaction is broadcast, not mined.
func (b *Btcd) Pay(ctx context.Context, toScript []byte, amountSats int64) (string, error) {
	return b.PayMany(ctx, []Output{{Script: toScript, Amount: amountSats}})
}

// feeRate is the devnet fee in satoshis per byte (btcd's relay minimum is 1).
const feeRate = 5

// PayMany sends one transaction from the faucet paying every output, with
// change back to the faucet, and returns its txid. It spends mature coinbase
// outputs and earlier change (confirmed or not); it does not mine.
func (b *Btcd) PayMany(ctx context.Context, outs []Output) (string, error) {
	if len(outs) == 0 {
		return "", errors.New("btcd: PayMany: no outputs")
	}
	var total int64
	tx := wire.NewMsgTx(2)
	for _, o := range outs {
		if o.Amount <= 0 {
			return "", fmt.Errorf("btcd: PayMany: amount %d", o.Amount)
		}
		total += o.Amount
		tx.AddTxOut(wire.NewTxOut(o.Amount, o.Script))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var picked []faucetCoin
	var in int64
	fee := func() int64 { return feeRate * int64(12+148*len(picked)+34*(len(outs)+1)+len(outs)*10) }
	for in < total+fee() {
		if len(b.utxos) == 0 {
			if err := b.scanCoinbases(ctx); err != nil {
				b.utxos = append(picked, b.utxos...)
				return "", err
			}
			continue
		}
		c := b.utxos[0]
		b.utxos = b.utxos[1:]
		picked = append(picked, c)
		in += c.value
	}
	for _, c := range picked {
		tx.AddTxIn(wire.NewTxIn(&c.op, nil, nil))
	}
	change := in - total - fee()
	if change >= 1000 {
		tx.AddTxOut(wire.NewTxOut(change, b.script))
	}
	for i := range tx.TxIn {
		sig, err := txscript.SignatureScript(tx, i, b.script, txscript.SigHashAll, b.key, true)
		if err != nil {
			return "", fmt.Errorf("btcd: sign input %d: %w", i, err)
		}
		tx.TxIn[i].SignatureScript = sig
	}
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		return "", err
	}
	var txid string
	if err := b.Call(ctx, "sendrawtransaction", &txid, hex.EncodeToString(buf.Bytes())); err != nil {
		// The picked coins stay out of the pool: one of them may be spent.
		return "", fmt.Errorf("btcd: sendrawtransaction: %w", err)
	}
	if change >= 1000 {
		h := tx.TxHash()
		b.utxos = append(b.utxos, faucetCoin{op: wire.OutPoint{Hash: h, Index: uint32(len(tx.TxOut) - 1)}, value: change})
	}
	return txid, nil
}

// scanCoinbases adds the faucet outputs of the next mature coinbase that is
// still unspent (gettxout, mempool included) to b.utxos. Scanning from
// height 1 makes a restarted node reusable: spent coinbases are skipped.
func (b *Btcd) scanCoinbases(ctx context.Context) error {
	tip, err := b.Tip(ctx)
	if err != nil {
		return err
	}
	for b.scanned+1 <= tip-coinbaseMaturity {
		h := b.scanned + 1
		hash, err := b.BlockHash(ctx, h)
		if err != nil {
			return err
		}
		var rawHex string
		if err := b.Call(ctx, "getblock", &rawHex, hash, 0); err != nil {
			return err
		}
		raw, err := hex.DecodeString(rawHex)
		if err != nil {
			return fmt.Errorf("btcd: block %d: %w", h, err)
		}
		var blk wire.MsgBlock
		if err := blk.Deserialize(bytes.NewReader(raw)); err != nil {
			return fmt.Errorf("btcd: block %d: %w", h, err)
		}
		b.scanned = h
		cb := blk.Transactions[0]
		cbHash := cb.TxHash()
		found := false
		for i, out := range cb.TxOut {
			if !bytes.Equal(out.PkScript, b.script) {
				continue
			}
			var unspent json.RawMessage
			if err := b.Call(ctx, "gettxout", &unspent, cbHash.String(), i, true); err != nil {
				return err
			}
			if string(unspent) == "null" || len(unspent) == 0 {
				continue
			}
			b.utxos = append(b.utxos, faucetCoin{op: wire.OutPoint{Hash: cbHash, Index: uint32(i)}, value: out.Value})
			found = true
		}
		if found {
			return nil
		}
	}
	return fmt.Errorf("btcd: the faucet has no mature unspent coinbase (tip %d): mine more blocks", tip)
}

// Stop shuts btcd down (SIGTERM, then SIGKILL after 10 s). Calling it twice is
// harmless.
func (b *Btcd) Stop() {
	rpcClient.CloseIdleConnections()
	b.proc.Stop(10 * time.Second)
}

// Kill ends btcd at once, as a crash would.
func (b *Btcd) Kill() { b.proc.Kill() }

// LogTail returns the end of the node's log.
func (b *Btcd) LogTail() string { return b.proc.LogTail() }

// RPCError is a JSON-RPC error object returned by a devnet node.
type RPCError struct {
	Method  string
	Code    int
	Message string
}

// Error implements error.
func (e *RPCError) Error() string {
	return fmt.Sprintf("%s: rpc error %d: %s", e.Method, e.Code, e.Message)
}

// rpcClient is shared by the devnet nodes; their RPC is on loopback.
var rpcClient = &http.Client{Timeout: 120 * time.Second}

// rpcCall performs one JSON-RPC 1.0 call against rawURL (credentials in the
// URL's user info) and decodes the result into out (nil discards it).
func rpcCall(ctx context.Context, rawURL, method string, out any, params ...any) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	user := u.User
	u.User = nil
	if params == nil {
		params = []any{}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "1.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	if user != nil {
		pass, _ := user.Password()
		req.SetBasicAuth(user.Username(), pass)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := rpcClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return fmt.Errorf("%s: HTTP %d: %q", method, resp.StatusCode, truncate(data, 200))
	}
	if env.Error != nil {
		return &RPCError{Method: method, Code: env.Error.Code, Message: env.Error.Message}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(env.Result, out); err != nil {
		return fmt.Errorf("%s: result: %w", method, err)
	}
	return nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// coins formats base units with 8 decimals as an exact JSON number.
func coins(units int64) json.Number {
	sign := ""
	if units < 0 {
		sign, units = "-", -units
	}
	return json.Number(sign + strconv.FormatInt(units/1e8, 10) + "." + fmt.Sprintf("%08d", units%1e8))
}
