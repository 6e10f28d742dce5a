package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/payment"
)

// DefaultStore is the store everything of a one-shop install belongs to
// (store.DefaultStore; the config cannot import the store).
const DefaultStore = "default"

// PageLanguages are the languages of the payment page's catalogue (package
// checkout's test keeps them equal): what a store may offer.
var PageLanguages = []string{"en", "de", "fr", "id"}

// Store declares a store (issue 34) in the config file: its name, its
// payment page's look, its settings where they differ from the instance's,
// and its extended public keys. The daemon ensures each in the database at
// start. The default store's keys are networks.<n>.account_key: an entry
// with id "default" may set only its name and look.
type Store struct {
	// ID is the store's slug (1 to 40 of a-z, 0-9, - and _), what its API
	// keys and the Paywatch-Store header name.
	ID string `yaml:"id"`
	// Name is the operator's name for it (default: the id).
	Name string `yaml:"name"`
	// DisplayName, LogoURL and Colour (#rrggbb) are the payment page's look.
	DisplayName string `yaml:"display_name"`
	LogoURL     string `yaml:"logo_url"`
	Colour      string `yaml:"colour"`
	// Languages are the page languages offered (empty: all of them).
	Languages []string `yaml:"languages"`
	// ReturnHosts are the hosts a return_url of the store may name, as
	// checkout.return_hosts (empty: checkout.return_hosts).
	ReturnHosts []string `yaml:"return_hosts"`
	// Confirmations per method (BTC, USDT-TRC20, …) where they differ from
	// methods.<m>.confirmations.
	Confirmations map[payment.Method]int `yaml:"confirmations"`
	// ToleranceBPS, when set, is the underpayment tolerance of every
	// network, in basis points of the amount.
	ToleranceBPS *int `yaml:"tolerance_bps"`
	// Networks are the store's extended public keys per network (bitcoin,
	// litecoin, ethereum, tron). A network left out is unavailable to the
	// store; a Solana pool is imported with `paywatch pool import --store`.
	Networks map[payment.Network]StoreNetwork `yaml:"networks"`
}

// StoreNetwork is a store's key on one network.
type StoreNetwork struct {
	// AccountKey is the store's account-level extended public key.
	AccountKey string `yaml:"account_key"`
}

var colourPattern = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)
var storeIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)

// CheckStoreKey checks a store's account key for network: a public
// (never private) extended key of the network and chain, account level,
// as the deriver takes it. It returns the key's fingerprint. field names
// the key in the error.
func (c *Config) CheckStoreKey(field string, network payment.Network, key string) (string, error) {
	n := c.Networks[network]
	if !network.Valid() || n == nil {
		return "", invalid(field, "unknown network %q (known: bitcoin, litecoin, ethereum, tron)", network)
	}
	if network == payment.Solana {
		return "", invalid(field, "Solana has no public derivation: import the store's pool with `paywatch pool import --store`")
	}
	if !n.Enabled {
		return "", invalid(field, "networks.%s is not enabled", network)
	}
	if key == "" {
		return "", invalid(field, "must be the account-level extended public key")
	}
	// As the API's stores routes check a store's key.
	if err := CheckAccountKey(network, n.Chain, field, key); err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if _, err := addresses.NewDeriver(network, key, n.Chain); err != nil {
		return "", invalid(field, "%v", err)
	}
	fp, err := addresses.Fingerprint(key)
	if err != nil {
		return "", invalid(field, "%v", err)
	}
	if n.AccountKey != "" {
		if other, err := addresses.Fingerprint(n.AccountKey); err == nil && other == fp {
			return "", invalid(field, "is networks.%s.account_key, the default store's key: one key, one store", network)
		}
	}
	return fp, nil
}

// validateStores checks the stores list; every error names the key.
func (c *Config) validateStores() error {
	seen := map[string]int{}
	keys := map[string]string{} // network/fingerprint → field
	for i, s := range c.Stores {
		f := fmt.Sprintf("stores[%d]", i)
		if !storeIDPattern.MatchString(s.ID) {
			return invalid(f+".id", "%q: 1 to 40 of a-z, 0-9, - and _, starting with a letter or digit", s.ID)
		}
		if j, ok := seen[s.ID]; ok {
			return invalid(f+".id", "%q is also stores[%d].id", s.ID, j)
		}
		seen[s.ID] = i
		if err := c.CheckStore(f, s); err != nil {
			return err
		}
		if s.ID == DefaultStore {
			continue
		}
		for _, n := range payment.Networks {
			sn, ok := s.Networks[n]
			if !ok {
				continue
			}
			nf := fmt.Sprintf("%s.networks.%s.account_key", f, n)
			fp, err := c.CheckStoreKey(nf, n, sn.AccountKey)
			if err != nil {
				return err
			}
			if other, ok := keys[string(n)+"/"+fp]; ok {
				return invalid(nf, "is also %s: one key, one store", other)
			}
			keys[string(n)+"/"+fp] = nf
		}
		for n := range s.Networks {
			if !n.Valid() {
				return invalid(fmt.Sprintf("%s.networks.%s", f, n), "unknown network (known: bitcoin, litecoin, ethereum, tron)")
			}
		}
	}
	return nil
}

// CheckStore checks one store's id, name, look and settings (not its keys:
// CheckStoreKey); field prefixes the keys named in an error.
func (c *Config) CheckStore(f string, s Store) error {
	if !storeIDPattern.MatchString(s.ID) {
		return invalid(f+".id", "%q: 1 to 40 of a-z, 0-9, - and _, starting with a letter or digit", s.ID)
	}
	if len(s.Name) > 200 || len(s.DisplayName) > 200 {
		return invalid(f+".name", "name and display_name must be at most 200 characters")
	}
	if len(s.LogoURL) > 2000 {
		return invalid(f+".logo_url", "must be at most 2000 characters")
	}
	if s.LogoURL != "" && !strings.HasPrefix(s.LogoURL, "https://") && !strings.HasPrefix(s.LogoURL, "/") {
		return invalid(f+".logo_url", "must be an https:// URL or a path on this listener")
	}
	if s.Colour != "" && !colourPattern.MatchString(s.Colour) {
		return invalid(f+".colour", "%q is not a colour like #1a2b3c", s.Colour)
	}
	for j, l := range s.Languages {
		if !slices.Contains(PageLanguages, l) {
			return invalid(fmt.Sprintf("%s.languages[%d]", f, j), "%q is not a language of the page (%s)", l, strings.Join(PageLanguages, ", "))
		}
	}
	for j, h := range s.ReturnHosts {
		if !hostPattern.MatchString(h) || len(h) > 260 {
			return invalid(fmt.Sprintf("%s.return_hosts[%d]", f, j), "%q is not a lower-case host[:port] or *.domain, like shop.example.com", h)
		}
	}
	if s.ID == DefaultStore {
		// The default store's keys and settings are the instance's own
		// (networks.<n>.account_key, methods.<m>.confirmations): here
		// only its look.
		if len(s.Networks) > 0 {
			return invalid(f+".networks", "the default store's keys are networks.<network>.account_key")
		}
		if len(s.Confirmations) > 0 || s.ToleranceBPS != nil {
			return invalid(f+".confirmations", "the default store's settings are methods.<method>.confirmations and tolerance")
		}
		return nil
	}
	for m, n := range s.Confirmations {
		mf := fmt.Sprintf("%s.confirmations.%s", f, m)
		info, ok := payment.LookupMethod(m)
		if !ok {
			return invalid(mf, "unknown method")
		}
		if mc := c.Methods[m]; mc == nil || !mc.Enabled {
			return invalid(mf, "methods.%s is not enabled", m)
		}
		if n < 0 || n > 10000 {
			return invalid(mf, "must be between 0 and 10000")
		}
		if (info.Network == payment.Bitcoin || info.Network == payment.Litecoin) && n == 0 {
			return invalid(mf, "must be at least 1: %s has no finality marker", info.Network)
		}
	}
	if b := s.ToleranceBPS; b != nil && (*b < 0 || *b > 1000) {
		return invalid(f+".tolerance_bps", "must be between 0 and 1000")
	}
	return nil
}
