package daemon

import (
	"context"
	"fmt"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// errWellKnownPool names a sandbox pool key met on a mainnet Solana.
func errWellKnownPool(key string) error {
	return fmt.Errorf("networks.solana is on chain: mainnet, and the Solana pool holds %s, a key of the sandbox's pool "+
		"(addresses.SandboxSolanaPool): its secret key is public, so anyone can take what is paid to it; "+
		"import the public keys of your own wallet instead", key)
}

// solanaMainnet reports whether Solana is enabled on mainnet.
func solanaMainnet(cfg *config.Config) bool {
	nc := cfg.Networks[payment.Solana]
	return nc != nil && nc.Enabled && nc.Chain == "mainnet"
}

// RefuseWellKnownPool refuses to import a sandbox pool key into a mainnet
// Solana pool (config validation does the same for account keys).
func RefuseWellKnownPool(cfg *config.Config, keys []addresses.Address) error {
	if !solanaMainnet(cfg) {
		return nil
	}
	for _, k := range keys {
		if addresses.WellKnownPoolKey(k.String) {
			return errWellKnownPool(k.String)
		}
	}
	return nil
}

// checkWellKnownPool refuses to serve a mainnet Solana whose pool (in the
// database, imported before the network went to mainnet) holds a sandbox
// key.
func checkWellKnownPool(ctx context.Context, cfg *config.Config, st *store.Store) error {
	if !solanaMainnet(cfg) {
		return nil
	}
	keys := make([][]byte, 0, len(addresses.SandboxSolanaPool))
	for _, k := range addresses.SandboxSolanaPool {
		a, err := addresses.ParseAddress(payment.Solana, "mainnet", k)
		if err != nil {
			return fmt.Errorf("sandbox pool key %s: %w", k, err)
		}
		keys = append(keys, a.Key)
	}
	found, err := st.AddressesPresent(ctx, string(payment.Solana), keys)
	if err != nil {
		return err
	}
	if len(found) > 0 {
		return errWellKnownPool(found[0])
	}
	return nil
}
