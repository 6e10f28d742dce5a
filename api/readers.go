package api

import (
	"context"
	"time"

	"github.com/paywatch/paywatch/store"
)

// Reader is what the API reads from the database beside the services
// (which own every decision and every money write): API keys, events,
// intents, transfers and payables by their keys, scanner, reconciler and
// webhook state, and where the operator's requests (a rescan, a
// reconciliation run) are filed for the scanners to pick up. The daemon
// gives its *store.Store; the payment core never hands out its own.
type Reader interface {
	EventReader
	// Ping and Pending are the readiness check's.
	Ping(ctx context.Context) error
	Pending(ctx context.Context) (int, error)
	APIKeyByPlain(ctx context.Context, plain string) (store.APIKey, error)
	EventSeqByID(ctx context.Context, id string) (int64, error)
	GetIntent(ctx context.Context, id string) (store.Intent, error)
	GetTransfer(ctx context.Context, id string) (store.Transfer, error)
	// TransferView is GetTransfer and its network's NodeHeight in one
	// round trip.
	TransferView(ctx context.Context, id string) (store.Transfer, int64, error)
	IntentsByPayable(ctx context.Context, payableID int64) ([]store.Intent, error)
	PayableByReference(ctx context.Context, shop, kind, reference string) (store.Payable, error)
	Shop(ctx context.Context, id string) (store.Shop, error)
	NodeHeight(ctx context.Context, network string) (int64, error)
	Findings(ctx context.Context, network, status string, limit int) ([]store.Finding, error)
	LiveFindingCounts(ctx context.Context) (map[[3]string]int64, error)
	ReconcileRuns(ctx context.Context) ([]store.ReconcileRun, error)
	// StatusReconcile is ReconcileRuns, LiveFindingCounts and the newest
	// live Findings in one round trip, for GET /v1/status.
	StatusReconcile(ctx context.Context, limit int) (store.ReconcileFigures, error)
	WebhookAttempts(ctx context.Context, endpoint string, before int64, limit int) ([]store.WebhookAttempt, error)
	WebhookEndpoints(ctx context.Context) ([]store.WebhookEndpoint, error)
	RequestReconcile(ctx context.Context, network string, now time.Time) error
	RequestRescan(ctx context.Context, network string, from int64, now time.Time) error

	// One store's rows (issue 34): a store's key reads through these.
	EventsAfterIn(ctx context.Context, shop string, after int64, types []string, limit int) ([]store.Event, error)
	EventSeqOf(ctx context.Context, shop, id string) (int64, error)
	WebhookEndpointsOf(ctx context.Context, shop string) ([]store.WebhookEndpoint, error)
	WebhookAttemptsOf(ctx context.Context, shop, endpoint string, before int64, limit int) ([]store.WebhookAttempt, error)
	// The operator's stores API: the stores, their keys and pools, and
	// where a new store, API key or extended key is filed.
	Shops(ctx context.Context) ([]store.Shop, error)
	ShopKeys(ctx context.Context) ([]store.ShopKey, error)
	FreeDerived(ctx context.Context, network, source string) (int64, error)
	CreateShop(ctx context.Context, sh store.Shop, now time.Time) (store.Shop, error)
	CreateStoreAPIKey(ctx context.Context, name string, scopes []string, shop, prefix string, now time.Time) (string, store.APIKey, error)
	RotateStoreAPIKey(ctx context.Context, shop, name string, now time.Time) (string, store.APIKey, error)
	AddShopKey(ctx context.Context, k store.ShopKey, now time.Time) error
}

var _ Reader = (*store.Store)(nil)
