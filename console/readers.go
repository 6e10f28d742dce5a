package console

import (
	"context"
	"time"

	"github.com/paywatch/paywatch/store"
)

// Reader is what the console reads from the database beside the services
// (which own every decision and every money write): sessions and sign-in
// tokens, API keys, events, intents, transfers, payables, search, the
// inbox counts, scanner, reconciler and webhook state, and where the
// operator's requests (a rescan, a reconciliation run, a redelivery) are
// filed. The daemon gives its *store.Store; the payment core never hands
// out its own.
type Reader interface {
	SignInTokens
	APIKeyByPlain(ctx context.Context, plain string) (store.APIKey, error)
	CreateConsoleSession(ctx context.Context, token, keyID string, now, expires time.Time) error
	ConsoleSessionByToken(ctx context.Context, token string, now time.Time) (store.ConsoleSession, error)
	TouchConsoleSession(ctx context.Context, token string, now time.Time) error
	DeleteConsoleSession(ctx context.Context, token string, now time.Time) error
	UseSignInToken(ctx context.Context, token string, now time.Time) (store.APIKey, error)
	ShopCount(ctx context.Context) (int, error)
	LastEventSeq(ctx context.Context) (int64, error)
	LastStoreEventSeq(ctx context.Context, shop string) (int64, error)
	EventCountAfter(ctx context.Context, after int64, types []string, shop string) (int64, error)
	EventsOfIntent(ctx context.Context, intentID string, transferIDs []string, limit int) ([]store.Event, error)
	GetTransfer(ctx context.Context, id string) (store.Transfer, error)
	IntentsByIDs(ctx context.Context, ids []string) ([]store.Intent, error)
	IntentsByPayable(ctx context.Context, payableID int64) ([]store.Intent, error)
	PayableByReference(ctx context.Context, shop, kind, reference string) (store.Payable, error)
	Search(ctx context.Context, shop, q string) ([]store.SearchHit, error)
	Accounts(ctx context.Context, shop, q string, limit int) ([]store.AccountSummary, error)
	InboxCounts(ctx context.Context, f store.InboxFilter) (map[string]int64, error)
	NodeHeight(ctx context.Context, network string) (int64, error)
	Findings(ctx context.Context, network, status string, limit int) ([]store.Finding, error)
	ReconcileRuns(ctx context.Context) ([]store.ReconcileRun, error)
	WebhookAttempts(ctx context.Context, endpoint string, before int64, limit int) ([]store.WebhookAttempt, error)
	EventTypes(ctx context.Context, ids []string) (map[string]string, error)
	WebhookEndpoints(ctx context.Context) ([]store.WebhookEndpoint, error)
	RedeliverWebhook(ctx context.Context, name string, fromSeq int64, now time.Time) (store.WebhookEndpoint, error)
	RequestReconcile(ctx context.Context, network string, now time.Time) error
	RequestRescan(ctx context.Context, network string, from int64, now time.Time) error
}

var _ Reader = (*store.Store)(nil)
