package daemon

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// StoresReloadEvery is how often a running daemon reads the stores and
// their keys again, so a store or key added by `paywatch stores` or the
// API (on any instance) takes effect without a restart.
const StoresReloadEvery = 5 * time.Second

// EnsureStores creates or updates the config file's stores in the
// database and adds their keys. A key that differs from the one the
// database holds for the store and network is refused: the addresses
// derived from the stored key would change owner. It runs at every start.
func EnsureStores(ctx context.Context, cfg *config.Config, st *store.Store, now time.Time) error {
	if len(cfg.Stores) == 0 {
		return nil
	}
	held, err := st.ShopKeys(ctx)
	if err != nil {
		return err
	}
	stored := map[string]store.ShopKey{}
	owner := map[string]string{} // network/fingerprint → store
	for _, k := range held {
		stored[k.Store+"/"+k.Network] = k
		owner[k.Network+"/"+k.Fingerprint] = k.Store
	}
	// Every key is checked before anything is written: a refused start
	// changes nothing.
	type add struct {
		field string
		key   store.ShopKey
	}
	var adds []add
	for i, s := range cfg.Stores {
		for _, n := range payment.Networks {
			sn, ok := s.Networks[n]
			if !ok {
				continue
			}
			kf := fmt.Sprintf("stores[%d].networks.%s.account_key", i, n)
			fp, err := cfg.CheckStoreKey(kf, n, sn.AccountKey)
			if err != nil {
				return err
			}
			if old, ok := stored[s.ID+"/"+string(n)]; ok {
				if old.Fingerprint != fp {
					return fmt.Errorf("%s: store %s already has another %s key (fingerprint %s, added %s); the addresses derived from it "+
						"would change owner: put that key back, or give the new key to a new store", kf, s.ID, n, old.Fingerprint,
						old.AddedAt.UTC().Format(time.RFC3339))
				}
				continue
			}
			if other, ok := owner[string(n)+"/"+fp]; ok && other != s.ID {
				return fmt.Errorf("%s: this key is another store's (one key, one store)", kf)
			}
			adds = append(adds, add{kf, store.ShopKey{Store: s.ID, Network: string(n), AccountKey: sn.AccountKey, Fingerprint: fp}})
		}
	}
	for i, s := range cfg.Stores {
		name := s.Name
		if name == "" {
			name = s.ID
		}
		sh := store.Shop{ID: s.ID, Name: name, DisplayName: s.DisplayName, LogoURL: s.LogoURL, Colour: s.Colour,
			Languages: s.Languages, ReturnHosts: s.ReturnHosts, Settings: store.ShopSettings{ToleranceBPS: s.ToleranceBPS}}
		if len(s.Confirmations) > 0 {
			sh.Settings.Confirmations = map[string]int{}
			for m, n := range s.Confirmations {
				sh.Settings.Confirmations[string(m)] = n
			}
		}
		if _, _, err := st.EnsureShop(ctx, sh, now); err != nil {
			return fmt.Errorf("stores[%d]: %w", i, err)
		}
	}
	for _, a := range adds {
		err := st.AddShopKey(ctx, a.key, now)
		if errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("%s: this key is another store's (one key, one store)", a.field)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", a.field, err)
		}
	}
	return nil
}

// StoreSetups builds the payment core's setups of the stores other than
// the default one from the database: a deriver per key of an enabled
// network (as for the default store: addresses.NewDeriver, Fingerprint),
// and for an enabled Solana, the store's pool lane. A key the config's
// network cannot take (its chain changed) leaves the network unavailable
// to the store, and is returned in skipped.
func StoreSetups(ctx context.Context, cfg *config.Config, st *store.Store) (setups map[string]intents.StoreSetup, skipped []error, err error) {
	shops, keys, err := st.ShopsAndKeys(ctx)
	if err != nil {
		return nil, nil, err
	}
	setups, skipped = storeSetupsOf(cfg, shops, keys)
	return setups, skipped, nil
}

// storeSetupsOf is StoreSetups of the stores and keys read.
func storeSetupsOf(cfg *config.Config, shops []store.Shop, keys []store.ShopKey) (setups map[string]intents.StoreSetup, skipped []error) {
	setups = map[string]intents.StoreSetup{}
	for _, sh := range shops {
		if sh.ID == store.DefaultStore {
			continue
		}
		setup := intents.StoreSetup{Addresses: map[payment.Network]intents.AddressSource{}, Settings: sh.Settings}
		if nc := cfg.Networks[payment.Solana]; nc != nil && nc.Enabled {
			setup.Addresses[payment.Solana] = intents.AddressSource{Store: sh.ID}
		}
		setups[sh.ID] = setup
	}
	for _, k := range keys {
		setup, ok := setups[k.Store]
		n := payment.Network(k.Network)
		nc := cfg.Networks[n]
		if !ok || nc == nil || !nc.Enabled || n == payment.Solana {
			continue
		}
		der, err := addresses.NewDeriver(n, k.AccountKey, nc.Chain)
		if err == nil {
			var fp string
			if fp, err = addresses.Fingerprint(k.AccountKey); err == nil && fp != k.Fingerprint {
				err = fmt.Errorf("its fingerprint is %s, the database says %s", fp, k.Fingerprint)
			}
		}
		if err != nil {
			skipped = append(skipped, fmt.Errorf("store %s: its %s key cannot be used on chain %s: %w", k.Store, n, nc.Chain, err))
			continue
		}
		setup.Addresses[n] = intents.AddressSource{Deriver: der, Source: k.Fingerprint, Store: k.Store}
	}
	return setups, skipped
}

// storesState is what a reload compares: the stores' rows and keys.
type storesState struct {
	shops []store.Shop
	keys  []store.ShopKey
}

// ReloadStores reads the stores and their keys and, when they changed
// since the last reload, gives the payment core their new setups.
func (d *Daemon) ReloadStores(ctx context.Context) error {
	shops, keys, err := d.store.ShopsAndKeys(ctx)
	if err != nil {
		return err
	}
	now := storesState{shops: shops, keys: keys}
	d.storesMu.Lock()
	defer d.storesMu.Unlock()
	if d.storesSeen != nil && reflect.DeepEqual(*d.storesSeen, now) {
		return nil
	}
	// The setups are built from what was just read (StoreSetups read both
	// again).
	setups, skipped := storeSetupsOf(d.cfg, shops, keys)
	for _, e := range skipped {
		d.log.Warn("a store's key is not used", "err", e)
	}
	d.svc.SetStores(setups)
	if d.links != nil {
		d.links.SetShops(shops)
	}
	d.storesSeen = &now
	if len(setups) > 0 {
		d.log.Info("stores loaded", "stores", len(setups)+1, "keys", len(keys))
	}
	return nil
}

// reloadStores runs ReloadStores every StoresReloadEvery until ctx ends; a
// failed read is logged and tried again.
func (d *Daemon) reloadStores(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(StoresReloadEvery):
		}
		if err := d.ReloadStores(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn("reading the stores failed; the last ones read stay in use", "err", err)
		}
	}
}
