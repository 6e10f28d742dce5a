package devnet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// LitecoindPath is where Debian's litecoind package puts the real daemon
// (/usr/bin/litecoind is a wrapper that writes its own config).
const LitecoindPath = "/usr/lib/litecoin/litecoind"

// litecoindInstall is the command that installs litecoind.
const litecoindInstall = "apt-get install -y --no-install-recommends litecoind"

// MWEBHeight is the regtest height from which MWEB is active (unless
// disabled): from it on a block needs a peg-in or an earlier HogEx.
const MWEBHeight = 432

// InstallLitecoind installs Litecoin Core from Debian when LitecoindPath is
// missing. It needs root; otherwise it returns ErrMissing naming the command.
func InstallLitecoind(ctx context.Context) error {
	if _, err := os.Stat(LitecoindPath); err == nil {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: litecoind (as root: %s)", ErrMissing, litecoindInstall)
	}
	install := func() ([]byte, error) {
		cmd := exec.CommandContext(ctx, "apt-get", "install", "-y", "--no-install-recommends", "litecoind")
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.CombinedOutput()
	}
	if _, err := install(); err != nil {
		// A fresh image has no package lists yet.
		if out, err := exec.CommandContext(ctx, "apt-get", "update").CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get update: %w\n%s", err, out)
		}
		if out, err := install(); err != nil {
			return fmt.Errorf("%s: %w\n%s", litecoindInstall, err, out)
		}
	}
	if _, err := os.Stat(LitecoindPath); err != nil {
		return fmt.Errorf("%w: litecoind installed but %s is missing", ErrMissing, LitecoindPath)
	}
	return nil
}

// Litecoind is a Litecoin Core regtest node on loopback with a funded wallet
// named "w".
type Litecoind struct {
	CoreRPC
	// Dir is the node's data directory (regtest/ holds chain and wallet).
	Dir string
	// RPCPort and P2PPort are the loopback ports.
	RPCPort, P2PPort int
	// MWEB reports whether MWEB can activate (at MWEBHeight, see ActivateMWEB).
	MWEB bool

	proc *Process
}

// StartLitecoind starts litecoind in regtest mode with its data under dir,
// its RPC on port (0 picks a free one), creates or loads the wallet "w" and
// mines until the wallet owns a mature coinbase (height 101). With mweb
// false MWEB never activates (-vbparams=mweb:9999999999:9999999999); with
// mweb true call ActivateMWEB before mining past height 431. Restarting on
// the same dir reuses chain and wallet.
func StartLitecoind(ctx context.Context, dir string, port int, mweb bool) (*Litecoind, error) {
	if _, err := os.Stat(LitecoindPath); err != nil {
		return nil, fmt.Errorf("%w: litecoind (%s)", ErrMissing, litecoindInstall)
	}
	var err error
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
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
	l := &Litecoind{
		CoreRPC: CoreRPC{RPCURL: fmt.Sprintf("http://u:p@127.0.0.1:%d", port)},
		Dir:     dir,
		RPCPort: port,
		P2PPort: p2p,
		MWEB:    mweb,
	}
	args := []string{"-regtest", "-datadir=" + dir, "-conf=/dev/null", "-server=1",
		"-rpcuser=u", "-rpcpassword=p", "-rpcbind=127.0.0.1", "-rpcallowip=127.0.0.1", fmt.Sprintf("-rpcport=%d", port),
		fmt.Sprintf("-bind=127.0.0.1:%d", p2p), "-dnsseed=0", "-discover=0", "-upnp=0", "-fallbackfee=0.0002", "-txindex=1",
		"-printtoconsole=1"}
	if !mweb {
		args = append(args, "-vbparams=mweb:9999999999:9999999999")
	}
	l.proc, err = StartProcess("litecoind", filepath.Join(dir, "litecoind.log"), LitecoindPath, args...)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := WaitUntil(wctx, l.proc, "litecoind", func(ctx context.Context) error {
		_, err := l.Tip(ctx)
		return err
	}); err != nil {
		l.Kill()
		return nil, err
	}
	if err := l.openWallet(ctx); err != nil {
		l.Kill()
		return nil, err
	}
	tip, err := l.Tip(ctx)
	if err == nil && tip < coinbaseMaturity+1 {
		_, err = l.Generate(ctx, int(coinbaseMaturity+1-tip))
	}
	if err != nil {
		l.Kill()
		return nil, fmt.Errorf("litecoind: fund the wallet: %w", err)
	}
	return l, nil
}

// openWallet creates the wallet "w", or loads it when it already exists.
func (l *Litecoind) openWallet(ctx context.Context) error {
	err := l.Call(ctx, "createwallet", nil, "w")
	var re *RPCError
	if errors.As(err, &re) && re.Code == -4 { // database already exists
		err = l.Call(ctx, "loadwallet", nil, "w")
		if errors.As(err, &re) && re.Code == -35 { // already loaded
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("litecoind: wallet w: %w", err)
	}
	return nil
}

// NewAddress returns a fresh wallet address of the given type ("bech32",
// "legacy", "p2sh-segwit", "mweb"; "" means the wallet default, bech32).
func (l *Litecoind) NewAddress(ctx context.Context, kind string) (string, error) {
	var addr string
	params := []any{""}
	if kind != "" {
		params = append(params, kind)
	}
	err := l.Call(ctx, "getnewaddress", &addr, params...)
	return addr, err
}

// Generate mines n blocks to a fresh wallet address (so a block mined after
// invalidateblock never repeats the invalidated one) and returns their hashes.
func (l *Litecoind) Generate(ctx context.Context, n int) ([]string, error) {
	addr, err := l.NewAddress(ctx, "")
	if err != nil {
		return nil, err
	}
	var hashes []string
	if err := l.Call(ctx, "generatetoaddress", &hashes, n, addr); err != nil {
		return nil, err
	}
	return hashes, nil
}

// SendToAddress pays amount litoshis to addr from the wallet and returns the
// txid. The transaction is broadcast, not mined.
func (l *Litecoind) SendToAddress(ctx context.Context, addr string, amount int64) (string, error) {
	var txid string
	err := l.Call(ctx, "sendtoaddress", &txid, addr, coins(amount))
	return txid, err
}

// SendMany pays several addresses (litoshis by address) in one transaction
// and returns its txid. It does not mine.
func (l *Litecoind) SendMany(ctx context.Context, amounts map[string]int64) (string, error) {
	m := make(map[string]json.Number, len(amounts))
	for a, v := range amounts {
		m[a] = coins(v)
	}
	var txid string
	err := l.Call(ctx, "sendmany", &txid, "", m)
	return txid, err
}

// ActivateMWEB mines to height MWEBHeight-1, pegs coins into MWEB (a wallet
// send to a fresh MWEB address) and mines a block, so that this and every
// later block carry a HogEx transaction and an MWEB extension block. It is an
// error on a node started with mweb false.
func (l *Litecoind) ActivateMWEB(ctx context.Context) error {
	if !l.MWEB {
		return errors.New("litecoind: started with MWEB disabled")
	}
	tip, err := l.Tip(ctx)
	if err != nil {
		return err
	}
	if tip < MWEBHeight-1 {
		if _, err := l.Generate(ctx, int(MWEBHeight-1-tip)); err != nil {
			return err
		}
	}
	addr, err := l.NewAddress(ctx, "mweb")
	if err != nil {
		return fmt.Errorf("litecoind: MWEB address: %w", err)
	}
	if _, err := l.SendToAddress(ctx, addr, 100_000_000); err != nil {
		return fmt.Errorf("litecoind: peg-in: %w", err)
	}
	if _, err := l.Generate(ctx, 1); err != nil {
		return fmt.Errorf("litecoind: mine the peg-in: %w", err)
	}
	return nil
}

// Stop shuts litecoind down (SIGTERM, then SIGKILL after 30 s). Calling it
// twice is harmless. Litecoin Core's shutdown waits for open keep-alive RPC
// connections (up to -rpcservertimeout, 30 s): clients should close their
// idle connections first; devnet's own are closed here.
func (l *Litecoind) Stop() {
	rpcClient.CloseIdleConnections()
	l.proc.Stop(30 * time.Second)
}

// Kill ends litecoind at once, as a crash would.
func (l *Litecoind) Kill() { l.proc.Kill() }

// LogTail returns the end of the node's log.
func (l *Litecoind) LogTail() string { return l.proc.LogTail() }
