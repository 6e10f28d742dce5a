package paywatchtest

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// AddShop creates the store id (a second shop on the instance).
func (e *Env) AddShop(id string) {
	e.T.Helper()
	if _, err := e.Store.CreateShop(context.Background(), store.Shop{ID: id, Name: id}, e.Clock.Now()); err != nil {
		e.T.Fatalf("create store %s: %v", id, err)
	}
}

// ShopKey creates an API key of store shop with the given scopes and
// returns it.
func (e *Env) ShopKey(shop, name string, scopes ...string) string {
	e.T.Helper()
	plain, _, err := e.Store.CreateStoreAPIKey(context.Background(), name, scopes, shop, "", e.Clock.Now())
	if err != nil {
		e.T.Fatalf("store key %s: %v", name, err)
	}
	return plain
}

// IntoShop files unpaid intents (their payables, every intent of those,
// their addresses and their events) under store shop, as if the shop's
// own extended key had derived their addresses: whatever pays them
// afterwards is the shop's (transfers, events, ledger entries take their
// store from these rows). Tests use it to give a second store real
// history through the whole pipeline while nothing wires a store's keys
// into the Env's daemon.
func (e *Env) IntoShop(shop string, ins ...views.Intent) {
	e.T.Helper()
	ids := make([]string, len(ins))
	for i, in := range ins {
		ids[i] = in.ID
	}
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, e.Store.Pool(), func(tx pgx.Tx) error {
		for _, q := range []string{
			`UPDATE payables SET store_id = $1 WHERE id IN (SELECT payable_id FROM intents WHERE id = ANY($2))`,
			`UPDATE addresses a SET store_id = $1 FROM intents i
				WHERE i.payable_id IN (SELECT payable_id FROM intents WHERE id = ANY($2)) AND a.network = i.network AND a.key = i.address_key`,
			`UPDATE events SET store_id = $1 WHERE intent_id IN
				(SELECT i.id FROM intents i WHERE i.payable_id IN (SELECT payable_id FROM intents WHERE id = ANY($2)))`,
			`UPDATE intents SET store_id = $1 WHERE payable_id IN (SELECT payable_id FROM intents WHERE id = ANY($2))`,
		} {
			if _, err := tx.Exec(ctx, q, shop, ids); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		e.T.Fatalf("file intents under store %s: %v", shop, err)
	}
}
