package store

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultStore is the store every row of a one-shop install belongs to,
// and what a database from before stores migrated into.
const DefaultStore = "default"

// StoreOr is store, or DefaultStore when it is "".
func StoreOr(store string) string {
	if store == "" {
		return DefaultStore
	}
	return store
}

// storeIDPattern is what a store id may be (the stores table checks it too).
var storeIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)

// ValidStoreID reports whether id may name a store: 1 to 40 lower-case
// letters, digits, '-' or '_', starting with a letter or digit.
func ValidStoreID(id string) bool { return storeIDPattern.MatchString(id) }

// Shop is a store (issue 34): one shop's name and payment page look, and
// its settings where they differ from the instance's. (The package's Store
// is the database.)
type Shop struct {
	ID          string
	Name        string
	DisplayName string
	LogoURL     string
	Colour      string
	// Languages are the page languages the store offers (empty: every
	// language of the page's catalogue).
	Languages []string
	// ReturnHosts are the hosts a return_url of the store may name (empty:
	// checkout.return_hosts).
	ReturnHosts []string
	Settings    ShopSettings
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// ShopSettings are a store's confirmation and tolerance settings where they
// differ from the networks' (zero values: the instance's).
type ShopSettings struct {
	// Confirmations per method (btc, usdt-trc20, ...), where they differ.
	Confirmations map[string]int `json:"confirmations,omitempty"`
	// ToleranceBPS, when set, replaces the underpayment tolerance of every
	// network, in basis points.
	ToleranceBPS *int `json:"tolerance_bps,omitempty"`
}

const shopColumns = `id, name, display_name, logo_url, colour, languages, return_hosts, settings, created_at, updated_at`

func scanShop(row pgx.Row) (Shop, error) {
	var s Shop
	var settings []byte
	err := row.Scan(&s.ID, &s.Name, &s.DisplayName, &s.LogoURL, &s.Colour, &s.Languages, &s.ReturnHosts, &settings, &s.CreatedAt, &s.UpdatedAt)
	if err != nil {
		return Shop{}, translate(err)
	}
	if err := json.Unmarshal(settings, &s.Settings); err != nil {
		return Shop{}, fmt.Errorf("store %s settings: %w", s.ID, err)
	}
	return s, nil
}

// EnsureShop creates the store or, when it exists, sets its name, look and
// settings to sh's (the config file's stores are ensured at every start).
// It returns the stored row and whether it was created.
func (s *Store) EnsureShop(ctx context.Context, sh Shop, now time.Time) (Shop, bool, error) {
	if !ValidStoreID(sh.ID) {
		return Shop{}, false, fmt.Errorf("%w: store id %q: 1 to 40 of a-z, 0-9, - and _, starting with a letter or digit", ErrCheck, sh.ID)
	}
	settings, err := json.Marshal(sh.Settings)
	if err != nil {
		return Shop{}, false, err
	}
	var created bool
	row := s.pool.QueryRow(ctx, `INSERT INTO stores (id, name, display_name, logo_url, colour, languages, return_hosts, settings, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
		ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, display_name = EXCLUDED.display_name, logo_url = EXCLUDED.logo_url,
			colour = EXCLUDED.colour, languages = EXCLUDED.languages, return_hosts = EXCLUDED.return_hosts, settings = EXCLUDED.settings,
			updated_at = CASE WHEN (stores.name, stores.display_name, stores.logo_url, stores.colour, stores.languages, stores.return_hosts, stores.settings)
				IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.display_name, EXCLUDED.logo_url, EXCLUDED.colour, EXCLUDED.languages, EXCLUDED.return_hosts, EXCLUDED.settings)
				THEN EXCLUDED.updated_at ELSE stores.updated_at END
		RETURNING `+shopColumns+`, xmax = 0`,
		sh.ID, sh.Name, sh.DisplayName, sh.LogoURL, sh.Colour, nonNil(sh.Languages), nonNil(sh.ReturnHosts), settings, now)
	var out Shop
	var raw []byte
	if err := row.Scan(&out.ID, &out.Name, &out.DisplayName, &out.LogoURL, &out.Colour, &out.Languages, &out.ReturnHosts, &raw,
		&out.CreatedAt, &out.UpdatedAt, &created); err != nil {
		return Shop{}, false, translate(err)
	}
	if err := json.Unmarshal(raw, &out.Settings); err != nil {
		return Shop{}, false, err
	}
	return out, created, nil
}

// CreateShop creates a new store; an id in use is ErrConflict.
func (s *Store) CreateShop(ctx context.Context, sh Shop, now time.Time) (Shop, error) {
	if _, err := s.Shop(ctx, sh.ID); err == nil {
		return Shop{}, fmt.Errorf("%w: store %q exists", ErrConflict, sh.ID)
	}
	out, created, err := s.EnsureShop(ctx, sh, now)
	if err == nil && !created {
		return Shop{}, fmt.Errorf("%w: store %q exists", ErrConflict, sh.ID)
	}
	return out, err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Shop returns one store.
func (s *Store) Shop(ctx context.Context, id string) (Shop, error) {
	return scanShop(s.pool.QueryRow(ctx, `SELECT `+shopColumns+` FROM stores WHERE id = $1`, StoreOr(id)))
}

const shopsSQL = `SELECT ` + shopColumns + ` FROM stores ORDER BY id <> 'default', id`

// Shops lists every store, the default first, then by id.
func (s *Store) Shops(ctx context.Context) ([]Shop, error) {
	rows, err := s.pool.Query(ctx, shopsSQL)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []Shop
	for rows.Next() {
		sh, err := scanShop(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sh)
	}
	return out, translate(rows.Err())
}

// ShopKey is a store's extended public key for one network.
type ShopKey struct {
	Store       string
	Network     string
	AccountKey  string
	Fingerprint string
	AddedAt     time.Time
}

// AddShopKey records a store's extended public key for a network. The
// caller has parsed the key (watch-only, the network's) and computed its
// fingerprint. A store that has a key for the network keeps it
// (ErrConflict: addresses already derived from it would change owner), and
// a key another store has is ErrConflict: one key, one store.
func (s *Store) AddShopKey(ctx context.Context, k ShopKey, now time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO store_keys (store_id, network, account_key, fingerprint, added_at) VALUES ($1, $2, $3, $4, $5)`,
		k.Store, k.Network, k.AccountKey, k.Fingerprint, now)
	return translate(err)
}

// ShopKeys lists every store's keys, by store and network.
func (s *Store) ShopKeys(ctx context.Context) ([]ShopKey, error) {
	rows, err := s.pool.Query(ctx, shopKeysSQL)
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, scanShopKey)
}

const shopKeysSQL = `SELECT store_id, network, account_key, fingerprint, added_at FROM store_keys ORDER BY store_id, network`

func scanShopKey(r pgx.CollectableRow) (ShopKey, error) {
	var k ShopKey
	err := r.Scan(&k.Store, &k.Network, &k.AccountKey, &k.Fingerprint, &k.AddedAt)
	return k, err
}

// ShopsAndKeys is Shops and ShopKeys in one round trip.
func (s *Store) ShopsAndKeys(ctx context.Context) ([]Shop, []ShopKey, error) {
	b := &pgx.Batch{}
	b.Queue(shopsSQL)
	b.Queue(shopKeysSQL)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return nil, nil, translate(err)
	}
	var shops []Shop
	for rows.Next() {
		sh, err := scanShop(rows)
		if err != nil {
			rows.Close()
			return nil, nil, err
		}
		shops = append(shops, sh)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, translate(err)
	}
	rows, err = br.Query()
	if err != nil {
		return nil, nil, translate(err)
	}
	keys, err := pgx.CollectRows(rows, scanShopKey)
	if err != nil {
		return nil, nil, translate(err)
	}
	return shops, keys, translate(br.Close())
}

// PoolLane is the free_addresses lane of a store's Solana pool (” is the
// default store's, as it was before stores).
func PoolLane(store string) string {
	if StoreOr(store) == DefaultStore {
		return ""
	}
	return "pool:" + store
}
