package ethdev

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/paywatch/paywatch/contracts"
	"github.com/paywatch/paywatch/devnet"
)

// AnvilVersion is the anvil release InstallAnvil installs from npm.
const AnvilVersion = "1.7.1"

// anvilPackage is the npm package carrying the linux-amd64 anvil binary.
const anvilPackage = "@foundry-rs/anvil-linux-amd64"

// anvilRelPath is the binary's path below an npm install prefix.
var anvilRelPath = filepath.Join("node_modules", "@foundry-rs", "anvil-linux-amd64", "bin", "anvil")

// AnvilChainID is the chain id StartAnvil gives the node.
const AnvilChainID = 31337

// AnvilDevAccount is anvil's first dev account (from the standard test
// mnemonic), unlocked for eth_sendTransaction and funded with 10000 ETH. The
// helpers of Anvil send from it.
var AnvilDevAccount = common.HexToAddress("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266")

// AnvilCacheDir is the per-user npm prefix InstallAnvil uses by default:
// ~/.cache/paywatch/anvil.
func AnvilCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "paywatch", "anvil")
}

// FindAnvil finds the anvil binary: $PAYWATCH_ANVIL, then PATH, then the
// npm installs under AnvilCacheDir and ./.paywatch/anvil. It returns an
// error wrapping devnet.ErrMissing, naming the install command, when none exists.
func FindAnvil() (string, error) {
	if p := os.Getenv("PAYWATCH_ANVIL"); p != "" {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		return "", fmt.Errorf("%w: PAYWATCH_ANVIL=%s does not exist", devnet.ErrMissing, p)
	}
	p, err := devnet.LookBinary("anvil",
		filepath.Join(AnvilCacheDir(), anvilRelPath),
		filepath.Join(".paywatch", "anvil", anvilRelPath))
	if err != nil {
		return "", fmt.Errorf("%w: anvil (npm install --prefix %s %s@%s)", devnet.ErrMissing, AnvilCacheDir(), anvilPackage, AnvilVersion)
	}
	return p, nil
}

// InstallAnvil returns the anvil binary under the npm prefix dir, installing
// @foundry-rs/anvil-linux-amd64@AnvilVersion there first when it is missing.
// It needs npm and a linux/amd64 machine.
func InstallAnvil(ctx context.Context, dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, anvilRelPath)
	if st, err := os.Stat(bin); err == nil && !st.IsDir() {
		return bin, nil
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return "", fmt.Errorf("%w: anvil from npm is installed for linux/amd64 only (this is %s/%s)", devnet.ErrMissing, runtime.GOOS, runtime.GOARCH)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("%w: npm, needed to install anvil", devnet.ErrMissing)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--no-save",
		anvilPackage+"@"+AnvilVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install %s@%s: %w: %s", anvilPackage, AnvilVersion, err, out)
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("npm installed %s but %s is missing: %w", anvilPackage, bin, err)
	}
	return bin, nil
}

// Anvil is a running anvil node on loopback.
type Anvil struct {
	// RPCURL is the node's HTTP JSON-RPC endpoint.
	RPCURL string
	// Port is its TCP port on 127.0.0.1.
	Port int
	// Dir holds anvil.log (and state.json when persistence was asked for).
	Dir string
	// RPC is a JSON-RPC client connected to RPCURL.
	RPC *rpc.Client
	// Eth is an ethclient over RPC.
	Eth  *ethclient.Client
	proc *devnet.Process
}

// StartAnvil starts bin on 127.0.0.1:port (0 picks a free port) with chain id
// AnvilChainID, logging to dir/anvil.log, and waits until its RPC answers.
// extraArgs are passed through, e.g. "--slots-in-an-epoch", "1" (finalized
// = latest-2) or "--state", filepath.Join(dir, "state.json") to keep the
// chain across restarts.
func StartAnvil(ctx context.Context, bin, dir string, port int, extraArgs ...string) (*Anvil, error) {
	return StartAnvilChain(ctx, bin, dir, port, AnvilChainID, extraArgs...)
}

// StartAnvilChain is StartAnvil with the chain id chainID: an anvil that
// presents itself as another chain (1 for a mainnet look-alike, 11155111
// for Sepolia's).
func StartAnvilChain(ctx context.Context, bin, dir string, port int, chainID int64, extraArgs ...string) (*Anvil, error) {
	var err error
	if port == 0 {
		if port, err = devnet.FreePort(); err != nil {
			return nil, err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	args := append([]string{"--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--chain-id", strconv.FormatInt(chainID, 10)}, extraArgs...)
	proc, err := devnet.StartProcess("anvil", filepath.Join(dir, "anvil.log"), bin, args...)
	if err != nil {
		return nil, err
	}
	a := &Anvil{RPCURL: fmt.Sprintf("http://127.0.0.1:%d", port), Port: port, Dir: dir, proc: proc}
	if a.RPC, err = rpc.DialContext(ctx, a.RPCURL); err != nil {
		proc.Kill()
		return nil, err
	}
	a.Eth = ethclient.NewClient(a.RPC)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = devnet.WaitUntil(wctx, proc, "anvil", func(ctx context.Context) error {
		id, err := a.Eth.ChainID(ctx)
		if err != nil {
			return err
		}
		if id.Int64() != chainID {
			return fmt.Errorf("chain id %s, want %d", id, chainID)
		}
		return nil
	})
	if err != nil {
		a.Kill()
		return nil, err
	}
	return a, nil
}

// Stop shuts anvil down (SIGTERM, which lets --state write its file) and
// closes the client. Calling it twice is harmless.
func (a *Anvil) Stop() {
	a.RPC.Close()
	a.proc.Stop(10 * time.Second)
}

// Kill ends anvil at once, as a crash would.
func (a *Anvil) Kill() {
	if a.RPC != nil {
		a.RPC.Close()
	}
	a.proc.Kill()
}

// LogTail returns the end of anvil's log, for error messages.
func (a *Anvil) LogTail() string { return a.proc.LogTail() }

// TxRequest is an eth_sendTransaction request from an unlocked dev account.
type TxRequest struct {
	// From defaults to AnvilDevAccount.
	From common.Address
	// To is nil for a contract creation.
	To *common.Address
	// Value in wei; nil means zero.
	Value *big.Int
	// Data is the calldata or creation code.
	Data []byte
	// Gas, when not zero, skips gas estimation: a transaction that reverts
	// needs it, or anvil refuses it at estimation.
	Gas uint64
}

// Send submits req with eth_sendTransaction and waits for its receipt (anvil
// mines every transaction at once). A reverted transaction is returned with
// its receipt (Status 0) and no error.
func (a *Anvil) Send(ctx context.Context, req TxRequest) (*types.Receipt, error) {
	from := req.From
	if from == (common.Address{}) {
		from = AnvilDevAccount
	}
	arg := map[string]any{"from": from}
	if req.To != nil {
		arg["to"] = *req.To
	}
	if req.Value != nil {
		arg["value"] = (*hexutil.Big)(req.Value)
	}
	if len(req.Data) > 0 {
		arg["data"] = hexutil.Bytes(req.Data)
	}
	if req.Gas != 0 {
		arg["gas"] = hexutil.Uint64(req.Gas)
	}
	var hash common.Hash
	if err := a.RPC.CallContext(ctx, &hash, "eth_sendTransaction", arg); err != nil {
		return nil, fmt.Errorf("eth_sendTransaction: %w", err)
	}
	return a.WaitReceipt(ctx, hash)
}

// WaitReceipt waits until the receipt of hash is available.
func (a *Anvil) WaitReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error) {
	for {
		r, err := a.Eth.TransactionReceipt(ctx, hash)
		if err == nil {
			return r, nil
		}
		if !errors.Is(err, ethereum.NotFound) {
			return nil, fmt.Errorf("receipt of %s: %w", hash, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("receipt of %s: %w", hash, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// sendOK is Send that also fails on a reverted transaction.
func (a *Anvil) sendOK(ctx context.Context, what string, req TxRequest) (*types.Receipt, error) {
	r, err := a.Send(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return nil, fmt.Errorf("%s: transaction %s reverted", what, r.TxHash)
	}
	return r, nil
}

// Deploy deploys c with constructor args and returns its address.
func (a *Anvil) Deploy(ctx context.Context, c *contracts.Contract, args ...any) (common.Address, error) {
	data, err := c.DeployData(args...)
	if err != nil {
		return common.Address{}, err
	}
	r, err := a.sendOK(ctx, "deploy "+c.Name, TxRequest{Data: data})
	if err != nil {
		return common.Address{}, err
	}
	return r.ContractAddress, nil
}

// DeployToken deploys a contracts.TestToken with 6 decimals.
func (a *Anvil) DeployToken(ctx context.Context, name, symbol string) (common.Address, error) {
	return a.Deploy(ctx, contracts.TestToken, name, symbol, contracts.TokenDecimals)
}

// Mint mints amount base units of token to to.
func (a *Anvil) Mint(ctx context.Context, token, to common.Address, amount *big.Int) error {
	data, err := contracts.TestToken.Call("mint", to, amount)
	if err != nil {
		return err
	}
	_, err = a.sendOK(ctx, "mint", TxRequest{To: &token, Data: data})
	return err
}

// SendETH sends wei from AnvilDevAccount to to.
func (a *Anvil) SendETH(ctx context.Context, to common.Address, wei *big.Int) (common.Hash, error) {
	r, err := a.sendOK(ctx, "send ETH", TxRequest{To: &to, Value: wei})
	if err != nil {
		return common.Hash{}, err
	}
	return r.TxHash, nil
}

// TransferToken transfers amount base units of token from AnvilDevAccount
// (which must hold them: Mint first) to to.
func (a *Anvil) TransferToken(ctx context.Context, token, to common.Address, amount *big.Int) (common.Hash, error) {
	data, err := contracts.TestToken.Call("transfer", to, amount)
	if err != nil {
		return common.Hash{}, err
	}
	r, err := a.sendOK(ctx, "token transfer", TxRequest{To: &token, Data: data})
	if err != nil {
		return common.Hash{}, err
	}
	return r.TxHash, nil
}

// Mine mines n empty blocks (anvil_mine).
func (a *Anvil) Mine(ctx context.Context, n int) error {
	if err := a.RPC.CallContext(ctx, nil, "anvil_mine", hexutil.Uint64(n)); err != nil {
		return fmt.Errorf("anvil_mine %d: %w", n, err)
	}
	return nil
}

// Reorg replaces the last depth blocks by as many new empty blocks
// (anvil_reorg): the transactions of the replaced blocks vanish.
func (a *Anvil) Reorg(ctx context.Context, depth int) error {
	if err := a.RPC.CallContext(ctx, nil, "anvil_reorg", depth, []any{}); err != nil {
		return fmt.Errorf("anvil_reorg %d: %w", depth, err)
	}
	return nil
}

// AnvilSecondAccount is anvil's second dev account (unlocked, funded).
var AnvilSecondAccount = common.HexToAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79C8")

// Sign signs req (eth_signTransaction; anvil fills nonce, gas and fees)
// without sending it and returns the raw transaction and its hash: the same
// transaction can then be mined, reorged out and mined again elsewhere.
func (a *Anvil) Sign(ctx context.Context, req TxRequest) ([]byte, common.Hash, error) {
	arg := txArg(req)
	var raw hexutil.Bytes
	if err := a.RPC.CallContext(ctx, &raw, "eth_signTransaction", arg); err != nil {
		return nil, common.Hash{}, fmt.Errorf("eth_signTransaction: %w", err)
	}
	var tx types.Transaction
	if err := tx.UnmarshalBinary(raw); err != nil {
		return nil, common.Hash{}, fmt.Errorf("signed transaction: %w", err)
	}
	return raw, tx.Hash(), nil
}

// MineTogether mines one block holding the transactions of first (sent
// from their accounts with a high priority fee, so that they come first)
// and then the raw transactions, in that order, and returns the block's
// number. Automine is off meanwhile and on again after.
func (a *Anvil) MineTogether(ctx context.Context, first []TxRequest, raws ...[]byte) (uint64, error) {
	if err := a.RPC.CallContext(ctx, nil, "evm_setAutomine", false); err != nil {
		return 0, fmt.Errorf("evm_setAutomine: %w", err)
	}
	defer a.RPC.CallContext(context.WithoutCancel(ctx), nil, "evm_setAutomine", true)
	var hashes []common.Hash
	for _, req := range first {
		arg := txArg(req)
		arg["maxPriorityFeePerGas"] = (*hexutil.Big)(big.NewInt(100e9))
		arg["maxFeePerGas"] = (*hexutil.Big)(big.NewInt(1000e9))
		var h common.Hash
		if err := a.RPC.CallContext(ctx, &h, "eth_sendTransaction", arg); err != nil {
			return 0, fmt.Errorf("eth_sendTransaction: %w", err)
		}
		hashes = append(hashes, h)
	}
	for _, raw := range raws {
		var h common.Hash
		if err := a.RPC.CallContext(ctx, &h, "eth_sendRawTransaction", hexutil.Bytes(raw)); err != nil {
			return 0, fmt.Errorf("eth_sendRawTransaction: %w", err)
		}
		hashes = append(hashes, h)
	}
	if err := a.RPC.CallContext(ctx, nil, "evm_mine"); err != nil {
		return 0, fmt.Errorf("evm_mine: %w", err)
	}
	var number uint64
	for i, h := range hashes {
		r, err := a.WaitReceipt(ctx, h)
		if err != nil {
			return 0, err
		}
		if i > 0 && r.BlockNumber.Uint64() != number {
			return 0, fmt.Errorf("transaction %s mined in block %d, not %d with the others", h, r.BlockNumber, number)
		}
		number = r.BlockNumber.Uint64()
	}
	return number, nil
}

// txArg is req as eth_sendTransaction's argument.
func txArg(req TxRequest) map[string]any {
	from := req.From
	if from == (common.Address{}) {
		from = AnvilDevAccount
	}
	arg := map[string]any{"from": from}
	if req.To != nil {
		arg["to"] = *req.To
	}
	if req.Value != nil {
		arg["value"] = (*hexutil.Big)(req.Value)
	}
	if len(req.Data) > 0 {
		arg["data"] = hexutil.Bytes(req.Data)
	}
	if req.Gas != 0 {
		arg["gas"] = hexutil.Uint64(req.Gas)
	}
	return arg
}
