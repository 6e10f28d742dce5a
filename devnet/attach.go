package devnet

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/btcsuite/btcd/txscript"
)

// AttachBtcd returns a handle on a btcd regtest node that another process
// started with StartBtcd (its RPC at rpcURL, its data under dir), so that a
// second process can pay from the same faucet and mine. Stop and Kill of an
// attached handle do nothing: the node belongs to the process that started
// it. Faucet coins are found again by scanning the chain's coinbases, so two
// processes paying at the same moment may pick the same coin (the second
// payment is refused by the node, never lost).
func AttachBtcd(ctx context.Context, rpcURL, dir string) (*Btcd, error) {
	key, addr, err := faucetKey()
	if err != nil {
		return nil, err
	}
	script, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	close(done)
	p := &Process{name: "btcd (attached)", logPath: filepath.Join(dir, "btcd.log"), done: done}
	p.once.Do(func() {}) // Stop and Kill are no-ops: the node is not ours.
	b := &Btcd{CoreRPC: CoreRPC{RPCURL: rpcURL}, Dir: dir, FaucetAddress: addr.EncodeAddress(), proc: p, key: key, script: script}
	if _, err := b.Tip(ctx); err != nil {
		return nil, fmt.Errorf("attach btcd: %w", err)
	}
	return b, nil
}
