package api

import (
	"context"
	"errors"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/store"
)

// keyCountingReader is the real store, counting its key lookups.
type keyCountingReader struct {
	*store.Store
	queries atomic.Int64
}

func (c *keyCountingReader) APIKeyByPlain(ctx context.Context, plain string) (store.APIKey, error) {
	c.queries.Add(1)
	return c.Store.APIKeyByPlain(ctx, plain)
}

// An unknown key costs one query, then is answered from memory for
// keyTTL; a client that keeps sending unknown keys is refused without a
// query until its window ends, while a key known valid still works for it
// and other clients are not affected (issue 34 item 4: each unknown bearer
// key used to cost a database query).
func TestUnknownKeysAreCachedAndThrottled(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, devnettest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	valid, _, err := st.CreateAPIKey(ctx, "shop", []string{"storefront"}, now)
	if err != nil {
		t.Fatal(err)
	}
	r := &keyCountingReader{Store: st}
	var c keyCache
	attacker := netip.MustParsePrefix("203.0.113.7/32")
	other := netip.MustParsePrefix("2001:db8:1::/64")

	// A known key is looked up once within keyTTL.
	for range 3 {
		if _, _, err := c.lookup(ctx, r, valid, now, attacker); err != nil {
			t.Fatalf("valid key: %v", err)
		}
	}
	if n := r.queries.Load(); n != 1 {
		t.Fatalf("a valid key looked up 3 times cost %d queries, want 1", n)
	}

	// The same unknown key again and again: one query.
	r.queries.Store(0)
	for range 5 {
		if _, _, err := c.lookup(ctx, r, "pw_unknown", now, attacker); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown key: %v, want ErrNotFound", err)
		}
	}
	if n := r.queries.Load(); n != 1 {
		t.Fatalf("one unknown key sent 5 times cost %d queries, want 1", n)
	}

	// Distinct unknown keys: a query each up to the limit, then none.
	r.queries.Store(0)
	refused := 0
	for i := range 2 * unknownKeysPerWindow {
		_, wait, err := c.lookup(ctx, r, "pw_guess_"+string(rune('a'+i%26))+string(rune('a'+i/26)), now, attacker)
		switch {
		case errors.Is(err, errKeyThrottled):
			refused++
			if wait <= 0 || wait > unknownKeyWindow {
				t.Fatalf("throttled with wait %s", wait)
			}
		case !errors.Is(err, store.ErrNotFound):
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	// 5 failures were counted before, so the limit is reached 5 guesses early.
	if want := unknownKeysPerWindow + 5; refused != want || r.queries.Load() != int64(2*unknownKeysPerWindow-want) {
		t.Fatalf("%d guesses: %d refused and %d queries, want %d refused and %d queries",
			2*unknownKeysPerWindow, refused, r.queries.Load(), want, 2*unknownKeysPerWindow-want)
	}

	// The valid key still works for the throttled client; other clients
	// are not throttled.
	if _, _, err := c.lookup(ctx, r, valid, now.Add(time.Second), attacker); err != nil {
		t.Fatalf("valid key from a throttled client: %v", err)
	}
	if _, _, err := c.lookup(ctx, r, "pw_other_guess", now, other); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another client's unknown key: %v, want ErrNotFound", err)
	}

	// After the window, the client is heard again; after keyTTL an unknown
	// key is asked again (a key created since would be found).
	r.queries.Store(0)
	later := now.Add(unknownKeyWindow)
	if _, _, err := c.lookup(ctx, r, "pw_unknown", later, attacker); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after the window: %v, want ErrNotFound", err)
	}
	if n := r.queries.Load(); n != 1 {
		t.Fatalf("after keyTTL an unknown key cost %d queries, want 1", n)
	}
}
