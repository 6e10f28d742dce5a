package store

import (
	"context"
	"math/big"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/payment"
)

// ReconRow is one transfer of the reconciliation report with what it paid.
type ReconRow struct {
	Transfer Transfer
	// Intent fields are empty for a transfer without an intent.
	Method       string
	IntentAmount *big.Int
	IntentRate   string
	IntentStatus payment.IntentStatus
	PayableKind  payment.PayableKind
	PayableRef   string
	Account      string
	NodeHeight   int64
}

// ReconRows returns every transfer first seen in [from, to) that was
// recorded by asOf, oldest first, each as it stood at asOf: its intent,
// classification, status and block from transfer_history, its intent's
// status from intent_history, its resolution when decided by asOf (and not
// voided by then: a voided credit_intent is history, migration 0004), and the
// node height from node_heights (migration 0006). The state at asOf is the
// history row with the latest (recorded_at, seq) at or before it, so the
// same asOf always gives the same rows. The rows are shop's transfers:
// each store has its own books.
func (s *Store) ReconRows(ctx context.Context, shop string, from, to, asOf time.Time) ([]ReconRow, error) {
	rows, err := s.pool.Query(ctx, reconRowsAsOfSQL, from, to, asOf, StoreOr(shop))
	if err != nil {
		return nil, translate(err)
	}
	return scanReconRows(rows)
}

// ReconRowsEach is ReconRows for each of shops (their rows in that
// order), in one round trip.
func (s *Store) ReconRowsEach(ctx context.Context, shops []string, from, to, asOf time.Time) (out [][]ReconRow, err error) {
	b := &pgx.Batch{}
	for _, shop := range shops {
		b.Queue(reconRowsAsOfSQL, from, to, asOf, StoreOr(shop))
	}
	br := s.pool.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			err = translate(cerr)
		}
	}()
	out = make([][]ReconRow, len(shops))
	for i := range shops {
		rows, err := br.Query()
		if err != nil {
			return nil, translate(err)
		}
		if out[i], err = scanReconRows(rows); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scanReconRows reads reconRowsAsOfSQL's rows, closing them.
func scanReconRows(rows pgx.Rows) ([]ReconRow, error) {
	defer rows.Close()
	var out []ReconRow
	for rows.Next() {
		var r ReconRow
		var intentAmount string
		tr, err := scanTransfer(extraRow{rows, []any{&r.Method, &intentAmount, &r.IntentRate, &r.IntentStatus,
			&r.PayableKind, &r.PayableRef, &r.Account, &r.NodeHeight}})
		if err != nil {
			return nil, err
		}
		if r.IntentAmount, err = parseNum(intentAmount); err != nil {
			return nil, err
		}
		r.Transfer = tr
		out = append(out, r)
	}
	return out, translate(rows.Err())
}

// ReportClose is a closed reporting period: the reconciliation of
// [From, To) as of AsOf, stored as it was rendered (JSON and CSV) when
// ClosedBy closed it at ClosedAt. The table refuses updates and deletes.
type ReportClose struct {
	ID string
	// Store is the store whose books were closed ("" when writing: the
	// default store).
	Store    string
	From     time.Time
	To       time.Time
	AsOf     time.Time
	ClosedBy string
	ClosedAt time.Time
	JSON     []byte
	CSV      []byte
}

const reportCloseColumns = `id, store_id, period_from, period_to, as_of, closed_by, closed_at`

func scanReportClose(row pgx.Row, withBodies bool) (ReportClose, error) {
	var c ReportClose
	dest := []any{&c.ID, &c.Store, &c.From, &c.To, &c.AsOf, &c.ClosedBy, &c.ClosedAt}
	if withBodies {
		dest = append(dest, &c.JSON, &c.CSV)
	}
	err := row.Scan(dest...)
	return c, translate(err)
}

// InsertReportClose stores a closed period once per (From, To). When the
// period was already closed it returns that close and created=false, and c
// is not stored.
func (s *Store) InsertReportClose(ctx context.Context, c ReportClose) (ReportClose, bool, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO report_closes (id, period_from, period_to, as_of, closed_by, closed_at, report_json, report_csv, store_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (store_id, period_from, period_to) DO NOTHING`,
		c.ID, c.From, c.To, c.AsOf, c.ClosedBy, c.ClosedAt, c.JSON, c.CSV, StoreOr(c.Store))
	if err != nil {
		return ReportClose{}, false, translate(err)
	}
	stored, err := s.ReportCloseByPeriod(ctx, c.Store, c.From, c.To)
	return stored, tag.RowsAffected() == 1, err
}

// ReportCloseByPeriod returns the store's close of exactly [from, to) with
// its stored report, or ErrNotFound.
func (s *Store) ReportCloseByPeriod(ctx context.Context, store string, from, to time.Time) (ReportClose, error) {
	return scanReportClose(s.pool.QueryRow(ctx, `SELECT `+reportCloseColumns+`, report_json, report_csv
		FROM report_closes WHERE store_id = $3 AND period_from = $1 AND period_to = $2`, from, to, StoreOr(store)), true)
}

// ReportCloses lists the store's closed periods (without the stored
// reports), oldest period first.
func (s *Store) ReportCloses(ctx context.Context, store string) ([]ReportClose, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+reportCloseColumns+` FROM report_closes WHERE store_id = $1 ORDER BY period_from, period_to, id`, StoreOr(store))
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ReportClose, error) { return scanReportClose(r, false) })
}

// reconRowsAsOfSQL (a variable only because it is assembled from
// transferAsOf) selects the transfer columns (in transferColumns order,
// the mutable ones from the history as of $3) and the ReconRow extras.
var reconRowsAsOfSQL = `SELECT t.id, t.network, t.txid, t.idx, t.asset, t.address, t.address_key, t.amount::text,
	coalesce(h.intent_id, ''), h.block_height, coalesce(h.block_hash, ''), t.first_seen_at, h.status,
	t.confirmations_required, h.confirmed_at, h.classification, h.credited, coalesce(t.notified_class, ''), t.created_at, h.recorded_at,
	t.recorded, h.settled::text, h.resolved::text, t.coinbase, t.store_id, t.scanned_by, coalesce(t.verify_state, ''), t.verify_endpoint,
	t.verify_detail, t.verify_checked_at,
	(SELECT json_agg(json_build_object('seq', r.seq, 'action', r.action, 'note', r.note, 'actor', r.actor,
		'intent_id', r.intent_id, 'account', r.account, 'amount_cents', r.amount_cents, 'refund_txid', r.refund_txid,
		'covers', r.covers::text, 'created_at', r.created_at, 'recorded', r.recorded) ORDER BY r.seq)
		FROM resolutions r WHERE r.transfer_id = t.id AND r.created_at <= $3 AND (r.voided_at IS NULL OR r.voided_at > $3)),
	coalesce(i.method, ''), coalesce(i.amount, 0)::text, coalesce(i.rate::text, ''), coalesce(ih.status, i.status, ''),
	coalesce(p.kind, ''), coalesce(p.reference, ''), coalesce(p.account, ''),
	coalesce((SELECT n.node_height FROM node_heights n WHERE n.network = t.network AND n.recorded_at <= $3
		ORDER BY n.recorded_at DESC, n.seq DESC LIMIT 1), 0)
	FROM transfers t
	CROSS JOIN LATERAL (` + transferAsOf("t") + `) h
	LEFT JOIN intents i ON i.id = h.intent_id
	LEFT JOIN LATERAL (SELECT x.status FROM intent_history x WHERE x.intent_id = i.id AND x.recorded_at <= $3
		ORDER BY x.recorded_at DESC, x.seq DESC LIMIT 1) ih ON TRUE
	LEFT JOIN payables p ON p.id = i.payable_id
	WHERE t.store_id = $4 AND t.created_at <= $3 AND t.first_seen_at >= $1 AND t.first_seen_at < $2 ORDER BY t.first_seen_at, t.id`

// transferAsOf selects the tracked state of transfer alias as of $3: its
// latest transfer_history row at or before $3, or, for a transfer that
// never changed (no history: the first change records the state it
// replaces), its current columns. The caller only asks for transfers
// created by $3.
func transferAsOf(alias string) string {
	return `SELECT coalesce(hh.intent_id, CASE WHEN hh.seq IS NULL THEN ` + alias + `.intent_id END) AS intent_id,
		coalesce(hh.classification, ` + alias + `.classification) AS classification, coalesce(hh.status, ` + alias + `.status) AS status,
		CASE WHEN hh.seq IS NULL THEN ` + alias + `.block_height ELSE hh.block_height END AS block_height,
		CASE WHEN hh.seq IS NULL THEN ` + alias + `.block_hash ELSE hh.block_hash END AS block_hash,
		CASE WHEN hh.seq IS NULL THEN ` + alias + `.confirmed_at ELSE hh.confirmed_at END AS confirmed_at,
		coalesce(hh.credited, ` + alias + `.credited) AS credited, coalesce(hh.recorded_at, ` + alias + `.created_at) AS recorded_at,
		-- History written before migration 0019 has no parts: the current ones stand in.
		coalesce(hh.settled, ` + alias + `.settled) AS settled, coalesce(hh.resolved, ` + alias + `.resolved) AS resolved
		FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT * FROM transfer_history th WHERE th.transfer_id = ` + alias + `.id AND th.recorded_at <= $3
			ORDER BY th.recorded_at DESC, th.seq DESC LIMIT 1) hh ON TRUE`
}
