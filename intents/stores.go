package intents

import (
	"math/big"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// StoreSetup is what the payment core needs of a store other than the
// default one: its own address sources, and its confirmation and
// tolerance settings where they differ from the instance's.
type StoreSetup struct {
	// Addresses are the store's own extended keys (and for Solana, a
	// source with no Deriver: the store's pool lane). A network the store
	// has no source for is unavailable to it: its money never lands on
	// another store's addresses.
	Addresses map[payment.Network]AddressSource
	Settings  store.ShopSettings
}

// sourceFor is the address source of shop on network: the instance's for
// the default store, the store's own for another.
func (s *Service) sourceFor(shop string, n payment.Network) (AddressSource, bool) {
	if store.StoreOr(shop) == store.DefaultStore {
		src, ok := s.opt.Addresses[n]
		return src, ok
	}
	setup, ok := s.stores()[shop]
	if !ok {
		return AddressSource{}, false
	}
	src, ok := setup.Addresses[n]
	return src, ok
}

// settingsOf is shop's settings (none for the default store: the
// instance's are its own).
func (s *Service) settingsOf(shop string) store.ShopSettings {
	if store.StoreOr(shop) == store.DefaultStore {
		return store.ShopSettings{}
	}
	return s.stores()[shop].Settings
}

// stores is the stores' setups now: Options.Stores, or what SetStores
// last gave.
func (s *Service) stores() map[string]StoreSetup {
	if p := s.storeSetups.Load(); p != nil {
		return *p
	}
	return s.opt.Stores
}

// SetStores replaces Options.Stores, for creations from now on: the daemon
// calls it when a store or a store's key is added while it runs. The map
// is not changed afterwards.
func (s *Service) SetStores(stores map[string]StoreSetup) {
	s.storeSetups.Store(&stores)
}

// storeConfirmations is the confirmations an intent of shop requires with
// method: the store's where it sets them, else def.
func (s *Service) storeConfirmations(shop string, m payment.Method, def int) int {
	if n, ok := s.settingsOf(shop).Confirmations[string(m)]; ok {
		return n
	}
	return def
}

// storeTolerance is the underpayment tolerance of an intent of shop for
// amount: the store's tolerance_bps of the amount where it sets one, else
// def.
func (s *Service) storeTolerance(shop string, amount, def *big.Int) *big.Int {
	bps := s.settingsOf(shop).ToleranceBPS
	if bps == nil {
		return def
	}
	t := new(big.Int).Mul(amount, big.NewInt(int64(*bps)))
	return t.Quo(t, big.NewInt(10_000))
}

// StoreHasSource reports whether shop can take payments on network n: the
// default store has the instance's sources, another store only its own
// (an extended key, or its Solana pool lane). GET /v1/methods asks it for
// a store's key.
func (s *Service) StoreHasSource(shop string, n payment.Network) bool {
	_, ok := s.sourceFor(shop, n)
	return ok
}

// StoreConfirmations is the confirmations an intent of shop requires with
// method m: the store's setting where it has one, else def.
func (s *Service) StoreConfirmations(shop string, m payment.Method, def int) int {
	return s.storeConfirmations(shop, m, def)
}
