package sim

import (
	"encoding/hex"

	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/reports"
	"github.com/paywatch/paywatch/views"
)

// Invariants are the properties checked after every step.
var Invariants = []string{
	"every transfer to a watched key on the best chain up to the cursor is recorded exactly once, in its block; those of dropped blocks are orphaned",
	"a payable is paid at most once (one paid intent, or one debit, never both)",
	"intent statuses move only along the lifecycle",
	"a paid intent leaves paid only when one of its paying transfers left the chain",
	"a detected payment is announced vanished only when it vanished",
	"each top-up is credited net at most once (exactly once while paid)",
	"ledger balance = sum of entries >= 0, and the API shows it",
	"per method, sum of transfers = settled + unresolved + resolved, to the base unit (reconciliation)",
	"events strictly ordered, one per state change, their bodies equal what the API shows after commit",
	"no scanner halts on business state",
	"a resolved transfer counts only through credit_intent",
	"an account is credited only for confirmed money",
	"a debit is refused while a detected payment covers the order",
	"an idempotent replay returns the stored response",
	"a full rescan reproduces the same state",
	"a refused request changes nothing",
	"a round trip gives the books back: the same transactions at the same confirmation status, the same books",
	"a rebuild from the chains and the recorded facts reaches the same books",
	"every event body equals the API's answer right after the commit that wrote it",
	"any config validation accepts confirms every payment",
	"what the reconciliation counts resolved is what finance's decisions covered, to the base unit",
	"deciding every payable again changes nothing: the books are up to date with the facts",
	"a transfer lost behind paywatch's back is found by the reconciler's next run",
	"a creation answers the payable's open intent of its method (200), creates (201) only when none is open, and is refused (409) only at the cap of open intents",
	"a hung leader is replaced: a standby takes its lease once it expires, and detection goes on",
	"a woken ex-leader writes nothing",
	"a transaction is one transfer per position inside it wherever it is mined, and a recorded transfer's content (amount, asset, address) is the best chain's",
	"a credit_account credits the unresolved amount at the locked rate of the intent it came to by the deadline, else at the rate finance sent within the bound of the quote of the transfer's time, else at that quote; a rate finance sent is never replaced",
	"the API never answers 500: every request gets an answer of the API's own (an internal error is a bug)",
	"every row is in the store of what it follows from: an intent in its payable's, a transfer in its address's and its intent's, a ledger entry in its account's, intent's and transfer's, an event in its intent's, transfer's or entry's (issue 34)",
	"no value moves between stores: each store's balances are the sum of its own ledger; a debit pays an order of its store; finance credits a transfer only to an intent or account of its store (issue 34)",
	"same facts, same books, per store: forgetting one store's decisions and deciding its payables again from the facts gives both stores the books they had, and writes nothing of the other store (issue 34)",
	"money never lands on another store's address: every address derives from its store's key or is in its store's pool, and an intent's address is its store's (issue 34)",
	"references are a namespace per store: a creation is refused as a conflict only over its own store's payable, and answers an intent of its store (issue 34)",
}

// Indexes of the invariants of issue 21 in Invariants.
const (
	invRoundTrip = 16
	invRebuild   = 17
	invBodies    = 18
	invConfirm   = 19
	invCovers    = 20
	invUpToDate  = 21
	invLost      = 22
	invOpen      = 23
	invIdentity  = 26
	invCreditAt  = 27
	invNo500     = 28
)

// edges are the lifecycle's direct transitions (docs/behaviour.md), as events must
// follow them; finance's credit_intent may pay or re-detect an intent that
// stopped waiting.
var edges = map[string][]string{
	"awaiting_payment": {"detected", "paid", "expired", "underpaid", "superseded"},
	"detected":         {"awaiting_payment", "paid", "expired", "underpaid"},
	"paid":             {"reverted"},
	"reverted":         {"paid"},
	"expired":          {"detected", "paid", "underpaid", "superseded"},
	"underpaid":        {"detected", "paid", "expired", "superseded"},
	"superseded":       {"paid"},
}

func edge(from, to string) bool {
	for _, s := range edges[from] {
		if s == to {
			return true
		}
	}
	return false
}

// reachable reports whether to is reachable from from (several changes can
// happen between two checks).
func reachable(from, to string) bool {
	if from == to {
		return true
	}
	seen := map[string]bool{from: true}
	q := []string{from}
	for len(q) > 0 {
		s := q[0]
		q = q[1:]
		for _, t := range edges[s] {
			if t == to {
				return true
			}
			if !seen[t] {
				seen[t] = true
				q = append(q, t)
			}
		}
	}
	return false
}

type checker struct {
	status     map[string]string   // intent status at the last check
	paying     map[string][]string // txids paying a paid intent at the last check
	counting   map[string][]string // txids counting for an intent at the last check
	lastSeq    int64
	lastAt     time.Time
	evStatus   map[string]string // status of the last intent.<status> event
	evLedger   map[string]int    // ledger entry id -> events about it
	paidCounts map[int64]int
	booksFP    string          // the books at the last reconciliation check
	storeSeq   int64           // the last event the stores check read
	addrOK     map[string]bool // intents whose address was checked
	// storeCounts: the intents, transfers, entries and payables at the
	// last stores check.
	storeCounts [4]int
	// last is the state the last check read, lastAcquires the pool's
	// acquisitions when it ended: while no statement went to the pool
	// since, the tables are the same.
	last         *state
	lastPool     *pgxpool.Pool
	lastAcquires int64
}

func (c *checker) init() {
	*c = checker{status: map[string]string{}, paying: map[string][]string{}, counting: map[string][]string{},
		evStatus: map[string]string{}, evLedger: map[string]int{}, addrOK: map[string]bool{}}
}

type dbIntent struct {
	id, status, kind, ref, account string
	shop                           string
	payable, cents                 int64
	overpaid, late                 bool
	paidAt                         *time.Time
}

type dbTransfer struct {
	id, network, txid, intent, status, class, hash, action string
	asset                                                  string
	shop                                                   string
	key                                                    []byte
	idx                                                    int64
	height                                                 *int64
	credited                                               bool
	amount                                                 *big.Int
}

type dbPayable struct {
	id, cents                    int64
	kind, ref, byIntent, byEntry string
	paid                         bool
}

type dbEntry struct {
	seq                                     int64
	id, account, typ, intent, transfer, ref string
	cents, after, unrecovered               int64
}

type dbCursor struct {
	height int64
	hash   string
}

type dbEvent struct {
	seq    int64
	typ    string
	intent string
	at     time.Time
	data   []byte
}

type state struct {
	events    []dbEvent
	cursors   map[string]dbCursor
	intents   map[string]dbIntent
	transfers []dbTransfer
	payables  map[int64]dbPayable
	entries   []dbEntry
	balances  map[string]int64
	// accountCredits are the live credit_account decisions by transfer.
	accountCredits map[string]struct{ n, cents int64 }
}

func (r *run) load() (*state, error) {
	ctx, pool := r.ctx, r.w.e.Store.Pool()
	s := &state{intents: map[string]dbIntent{}, payables: map[int64]dbPayable{}, balances: map[string]int64{}, cursors: map[string]dbCursor{}}
	// One round trip for the whole state.
	b := &pgx.Batch{}
	// Accounts and references are a store's: another store's are
	// qualified ("store/name", qualifiedSQL).
	b.Queue(`SELECT i.id, i.status, p.kind, ` + qualifiedSQL("p.store_id", "p.reference") + `, ` + qualifiedSQL("p.store_id", "coalesce(p.account, '')") + `, i.payable_id, p.amount_cents,
		i.overpaid, i.late, i.paid_at, i.store_id FROM intents i JOIN payables p ON p.id = i.payable_id`)
	b.Queue(`SELECT t.id, t.network, t.txid, coalesce(t.intent_id, ''), t.status, t.classification,
		coalesce(t.block_hash, ''), coalesce(r.action, ''), t.idx, t.block_height, t.credited, t.amount::text, t.asset, t.address_key, t.store_id
		FROM transfers t LEFT JOIN LATERAL (SELECT action FROM resolutions r WHERE r.transfer_id = t.id AND r.voided_at IS NULL
			ORDER BY r.seq DESC LIMIT 1) r ON TRUE ORDER BY t.network, t.txid, t.idx`)
	b.Queue(`SELECT id, amount_cents, kind, ` + qualifiedSQL("store_id", "reference") + `, coalesce(paid_by_intent, ''), coalesce(paid_by_entry, ''), paid_at IS NOT NULL FROM payables`)
	b.Queue(`SELECT seq, id, ` + qualifiedSQL("store_id", "account") + `, type, coalesce(intent_id, ''), coalesce(transfer_id, ''), ` + qualifiedSQL("store_id", "reference") + `,
		amount_cents, balance_after_cents, unrecovered_cents FROM ledger_entries ORDER BY seq`)
	b.Queue(`SELECT ` + qualifiedSQL("store_id", "account") + `, balance_cents FROM accounts`)
	b.Queue(`SELECT network, height, hash FROM cursors`)
	b.Queue(`SELECT seq, type, coalesce(intent_id, ''), created_at, data FROM events WHERE seq > $1 ORDER BY seq`, r.chk.lastSeq)
	b.Queue(`SELECT transfer_id, count(*), coalesce(sum(amount_cents), 0) FROM resolutions
		WHERE action = 'credit_account' AND voided_at IS NULL GROUP BY transfer_id`)
	br := pool.SendBatch(ctx, b)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var i dbIntent
		if err := rows.Scan(&i.id, &i.status, &i.kind, &i.ref, &i.account, &i.payable, &i.cents, &i.overpaid, &i.late, &i.paidAt, &i.shop); err != nil {
			rows.Close()
			return nil, err
		}
		s.intents[i.id] = i
	}
	rows.Close()
	rows, err = br.Query()
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var t dbTransfer
		var amt string
		if err := rows.Scan(&t.id, &t.network, &t.txid, &t.intent, &t.status, &t.class, &t.hash, &t.action, &t.idx, &t.height, &t.credited, &amt, &t.asset, &t.key, &t.shop); err != nil {
			rows.Close()
			return nil, err
		}
		t.amount, _ = new(big.Int).SetString(amt, 10)
		s.transfers = append(s.transfers, t)
	}
	rows.Close()
	rows, err = br.Query()
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var p dbPayable
		if err := rows.Scan(&p.id, &p.cents, &p.kind, &p.ref, &p.byIntent, &p.byEntry, &p.paid); err != nil {
			rows.Close()
			return nil, err
		}
		s.payables[p.id] = p
	}
	rows.Close()
	rows, err = br.Query()
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var e dbEntry
		if err := rows.Scan(&e.seq, &e.id, &e.account, &e.typ, &e.intent, &e.transfer, &e.ref, &e.cents, &e.after, &e.unrecovered); err != nil {
			rows.Close()
			return nil, err
		}
		s.entries = append(s.entries, e)
	}
	rows.Close()
	rows, err = br.Query()
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var a string
		var b int64
		if err := rows.Scan(&a, &b); err != nil {
			rows.Close()
			return nil, err
		}
		s.balances[a] = b
	}
	rows.Close()
	rows, err = br.Query()
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var c dbCursor
		var n string
		if err := rows.Scan(&n, &c.height, &c.hash); err != nil {
			rows.Close()
			return nil, err
		}
		s.cursors[n] = c
	}
	rows.Close()
	rows, err = br.Query()
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var e dbEvent
		if err := rows.Scan(&e.seq, &e.typ, &e.intent, &e.at, &e.data); err != nil {
			rows.Close()
			return nil, err
		}
		s.events = append(s.events, e)
	}
	rows.Close()
	rows, err = br.Query()
	if err != nil {
		return nil, err
	}
	s.accountCredits = map[string]struct{ n, cents int64 }{}
	for rows.Next() {
		var id string
		var c struct{ n, cents int64 }
		if err := rows.Scan(&id, &c.n, &c.cents); err != nil {
			rows.Close()
			return nil, err
		}
		s.accountCredits[id] = c
	}
	rows.Close()
	return s, rows.Err()
}

func paysClass(c string) bool { return c == "settles" || c == "overpaid" }

func (r *run) check() {
	pool := r.w.e.Store.Pool()
	var s *state
	if last := r.chk.last; last != nil && pool == r.chk.lastPool && pool.Stat().AcquireCount() == r.chk.lastAcquires && !r.held {
		// Nothing used the database since the last check read it (the
		// step moved only the chains, the node or nothing: a broadcast,
		// an eviction, blocks mined and not scanned, a fault, a lag): the
		// tables are what that check read, the events it read are behind
		// it, and every check below runs on them against the chains as
		// they are now.
		cp := *last
		cp.events = nil
		s = &cp
	} else {
		var err error
		if s, err = r.load(); err != nil {
			r.violate("harness", "load state: %v", err)
			return
		}
	}
	defer func() {
		r.chk.last, r.chk.lastPool, r.chk.lastAcquires = s, pool, pool.Stat().AcquireCount()
	}()
	r.checkChains(s)
	r.checkPayables(s)
	if !r.rebuilt {
		r.checkLifecycle(s)
	}
	r.checkLedger(s)
	r.checkResolved(s)
	r.checkStores(s)
	// The reconciliation and the API's balances change only with the
	// transfers, the intents or the ledger.
	var fp strings.Builder
	for _, t := range s.transfers {
		fmt.Fprintf(&fp, "%s %s %s %s %v %s;", t.id, t.status, t.class, t.action, t.credited, t.amount)
	}
	// In the order of their ids: a map's order changes from one range
	// to the next, and made every check's fingerprint new.
	ids := make([]string, 0, len(s.intents))
	for id := range s.intents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(&fp, "%s %s;", id, s.intents[id].status)
	}
	fmt.Fprintf(&fp, "%d", len(s.entries))
	if f := fp.String(); f != r.chk.booksFP {
		r.chk.booksFP = f
		r.checkRecon(s)
		r.checkBalancesAPI(s)
	}
	if !r.rebuilt {
		r.checkEvents(s)
	}
}

// checkChains: every transfer to our keys on the best chain, up to the
// cursor, is recorded once in its block; every recorded block transfer at or
// below the cursor is on the chain or orphaned. Checked when the cursor's
// block is on the best chain (after a reorg the scanner has not seen yet,
// what it recorded is by definition on a stale branch).
func (r *run) checkChains(s *state) {
	byKey := map[string]dbTransfer{}
	for _, t := range s.transfers {
		byKey[fmt.Sprintf("%s/%s/%d", t.network, t.txid, t.idx)] = t
	}
	for _, n := range r.h.Nets {
		cur, ok := s.cursors[string(n)]
		if !ok {
			continue
		}
		chain := r.nodes[n].f.Chain()
		if cur.height >= int64(len(chain)) || chain[cur.height].Hash != cur.hash {
			continue
		}
		onChain := map[string]string{}
		for h := int64(1); h <= cur.height; h++ {
			b := chain[h]
			for _, t := range b.Transfers {
				if !r.w.ours[n][hex.EncodeToString(t.Key)] {
					continue
				}
				k := fmt.Sprintf("%s/%s/%d", n, t.TxID, t.Index)
				onChain[k] = b.Hash
				got, ok := byKey[k]
				switch {
				case !ok:
					r.violate(Invariants[0], "%s tx %s:%d in block %d (scanned up to %d) is not recorded", n, r.txName(t.TxID), t.Index, h, cur.height)
				case got.status == "orphaned" || got.status == "pending" || got.hash != b.Hash:
					r.violate(Invariants[0], "%s tx %s:%d in block %d is recorded %s in block %s", n, r.txName(t.TxID), t.Index, h, got.status, short(got.hash))
				case got.amount.Cmp(t.Amount) != 0 || got.asset != string(t.Asset) || string(got.key) != string(t.Key):
					r.violate(Invariants[invIdentity], "%s tx %s:%d in block %d moves %s %s to %s; recorded %s %s to %s", n, r.txName(t.TxID), t.Index, h,
						t.Amount, t.Asset, short(hex.EncodeToString(t.Key)), got.amount, got.asset, short(hex.EncodeToString(got.key)))
				}
			}
		}
		r.checkOnePerPosition(n, s)
		for _, t := range s.transfers {
			if t.network != string(n) || t.height == nil || t.status == "orphaned" || *t.height > cur.height {
				continue
			}
			k := fmt.Sprintf("%s/%s/%d", t.network, t.txid, t.idx)
			if onChain[k] != t.hash {
				r.violate(Invariants[0], "%s tx %s:%d is recorded %s in block %d %s, which is not on the best chain: not orphaned (%s)", n, r.txName(t.txid), t.idx, t.status, *t.height, short(t.hash),
					r.whereOnChain(n, chain, t.txid, t.idx, *t.height))
			}
		}
	}
}

// checkOnePerPosition checks that each transaction the simulator sent on
// network n is recorded at most once per position inside it (a re-mine at
// another position in another block is the same transfer: issue 32 item 1).
func (r *run) checkOnePerPosition(n payment.Network, s *state) {
	rows := map[string]int{}
	for _, t := range s.transfers {
		if t.network == string(n) {
			rows[t.txid]++
		}
	}
	for id, tx := range r.txs {
		if tx.network != n || rows[id] == 0 {
			continue
		}
		positions := map[int64]bool{}
		for _, t := range tx.transfers {
			positions[t.Index] = true
		}
		if rows[id] > len(positions) {
			r.violate(Invariants[invIdentity], "%s tx %s has %d positions inside it and %d recorded transfers", n, r.txName(id), len(positions), rows[id])
		}
	}
}

// whereOnChain says where a transaction's transfer is on the node's chain,
// for a violation's detail: the block at the recorded height, the heights
// that hold it, and whether its key is one of ours.
func (r *run) whereOnChain(n payment.Network, chain []chainstest.FakeBlock, txid string, idx, height int64) string {
	var out []string
	if height < int64(len(chain)) {
		out = append(out, fmt.Sprintf("the chain's block %d is %s", height, short(chain[height].Hash)))
	}
	for h, b := range chain {
		for _, t := range b.Transfers {
			if t.TxID == txid && t.Index == idx {
				out = append(out, fmt.Sprintf("on the chain at %d %s, key ours: %v", h, short(b.Hash), r.w.ours[n][hex.EncodeToString(t.Key)]))
			}
		}
	}
	if len(out) < 2 {
		out = append(out, "not on the chain")
	}
	return strings.Join(out, "; ")
}

func short(h string) string {
	if len(h) > 8 {
		return h[:8]
	}
	return h
}

func (r *run) checkPayables(s *state) {
	paid := map[int64][]string{}
	for _, i := range s.intents {
		if i.status == "paid" {
			paid[i.payable] = append(paid[i.payable], i.id)
		}
	}
	debits := map[string]int{}
	for _, e := range s.entries {
		if e.typ == "debit" {
			debits[e.ref]++
		}
	}
	for id, p := range s.payables {
		ps := paid[id]
		if len(ps) > 1 {
			r.violate(Invariants[1], "%s %s has %d paid intents %v", p.kind, p.ref, len(ps), ps)
		}
		if p.kind == "order" && debits[p.ref] > 1 {
			r.violate(Invariants[1], "order %s is debited %d times", p.ref, debits[p.ref])
		}
		if p.kind == "order" && debits[p.ref] > 0 && len(ps) > 0 {
			r.violate(Invariants[1], "order %s is paid by intent %s and by a balance debit", p.ref, ps[0])
		}
		if len(ps) == 1 && p.byIntent != ps[0] {
			r.violate(Invariants[1], "%s %s: intent %s is paid but the payable says paid by %q/%q", p.kind, p.ref, ps[0], p.byIntent, p.byEntry)
		}
	}
}

// checkLifecycle compares every intent's status with the last check's.
func (r *run) checkLifecycle(s *state) {
	ours := map[string][]dbTransfer{}
	for _, t := range s.transfers {
		if t.intent != "" {
			ours[t.intent] = append(ours[t.intent], t)
		}
	}
	paidElsewhere := func(i dbIntent) bool {
		p := s.payables[i.payable]
		return p.paid && p.byIntent != i.id
	}
	// disturbed: one of the transactions left the chain or the mempool (a
	// reorg, an eviction, a replacement), or finance resolved one of its
	// transfers otherwise than credit_intent to the same intent (it no
	// longer counts there).
	resolved := map[string]bool{}
	for _, t := range s.transfers {
		if res, ok := r.res[t.id]; ok && (res.action != finance.ActionCreditIntent || res.intent != res.from) {
			resolved[t.txid] = true
		}
	}
	disturbed := func(txids []string) bool {
		for _, id := range txids {
			if t := r.txs[id]; t == nil || t.disturbed || resolved[id] {
				return true
			}
		}
		return false
	}
	for id, i := range s.intents {
		prev, seen := r.chk.status[id]
		if seen && prev != i.status {
			if !reachable(prev, i.status) {
				r.violate(Invariants[2], "intent %s (%s %s) went %s -> %s", id, i.kind, i.ref, prev, i.status)
			}
			if prev == "paid" && !disturbed(r.chk.paying[id]) {
				r.violate(Invariants[3], "intent %s (%s %s) went paid -> %s but none of its paying transactions %v left the chain",
					id, i.kind, i.ref, i.status, r.txNames(r.chk.paying[id]))
			}
			if prev == "detected" && (i.status == "awaiting_payment" || i.status == "expired") && !paidElsewhere(i) && !disturbed(r.chk.counting[id]) {
				r.violate(Invariants[4], "intent %s (%s %s) went detected -> %s but its payment %v is still on the chain or in the mempool",
					id, i.kind, i.ref, i.status, r.txNames(r.chk.counting[id]))
			}
		}
		r.chk.status[id] = i.status
		var paying, counting []string
		for _, t := range ours[id] {
			if t.status == "orphaned" {
				continue
			}
			if paysClass(t.class) || t.class == "partial" {
				counting = append(counting, t.txid)
			}
			if paysClass(t.class) {
				paying = append(paying, t.txid)
			}
		}
		r.chk.paying[id], r.chk.counting[id] = paying, counting
	}
}

func (r *run) txNames(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = r.txName(id)
	}
	return out
}

// checkLedger: per account, each entry's balance follows from the one
// before (credit +, debit −, reversal − what it recovered, recovery −) and is never
// negative, the account's balance is the last one, and the API shows it;
// per top-up, what its entries added to the balance is at most its amount,
// and exactly its amount while it is paid.
func (r *run) checkLedger(s *state) {
	last := map[string]int64{}
	byIntent := map[string]int64{}
	for _, e := range s.entries {
		prev := last[e.account]
		var delta int64
		switch e.typ {
		case "credit":
			delta = e.cents
		case "debit":
			delta = -e.cents
		case "reversal":
			delta = -(e.cents - e.unrecovered)
		case "recovery":
			// A re-credit settling what a reversal could not take back.
			delta = -e.cents
		default:
			r.violate(Invariants[6], "account %s entry %s has unknown type %q", e.account, e.id, e.typ)
		}
		if prev+delta != e.after {
			r.violate(Invariants[6], "account %s entry %s (%s %d, unrecovered %d): balance %d -> %d, expected %d", e.account, e.id, e.typ, e.cents, e.unrecovered, prev, e.after, prev+delta)
		}
		if e.after < 0 {
			r.violate(Invariants[6], "account %s balance %d after entry %s", e.account, e.after, e.id)
		}
		last[e.account] = e.after
		if e.intent != "" {
			byIntent[e.intent] += e.after - prev
		}
	}
	for a, b := range s.balances {
		if last[a] != b {
			r.violate(Invariants[6], "account %s balance %d, entries sum to %d", a, b, last[a])
		}
	}
	perPayable := map[int64]int64{}
	for id, d := range byIntent {
		if i, ok := s.intents[id]; ok {
			perPayable[i.payable] += d
		}
	}
	for id, p := range s.payables {
		if p.kind != "topup" {
			continue
		}
		got := perPayable[id]
		if got > p.cents || got < 0 {
			r.violate(Invariants[5], "top-up %s (%s USD) added %s USD to the balance", p.ref, payment.Cents(p.cents), payment.Cents(got))
		}
		if p.paid && got != p.cents {
			r.violate(Invariants[5], "top-up %s is paid but added %s USD of %s to the balance", p.ref, payment.Cents(got), payment.Cents(p.cents))
		}
	}
}

// checkBalancesAPI: the API shows every account's balance as the ledger has it.
func (r *run) checkBalancesAPI(s *state) {
	last := map[string]int64{}
	for _, e := range s.entries {
		last[e.account] = e.after
	}
	for a := range last {
		shop, name := unqualified(a)
		st, body := r.w.do("GET", "/v1/accounts/"+name+"/balance", "storefront", nil, named(shop)...)
		var v struct {
			Available string `json:"available_usd"`
		}
		if st != 200 || json.Unmarshal(body, &v) != nil {
			r.violate(Invariants[6], "GET balance %s: %d %s", a, st, body)
			continue
		}
		if want := payment.Cents(last[a]).String(); v.Available != want {
			r.violate(Invariants[6], "API shows account %s available %s, ledger says %s", a, v.Available, want)
		}
	}
}

func (r *run) checkResolved(s *state) {
	for _, t := range s.transfers {
		res, ok := r.res[t.id]
		if !ok || res.action == finance.ActionCreditIntent || paysClass(res.classBefore) {
			continue
		}
		if paysClass(t.class) {
			r.violate(Invariants[10], "transfer %s (tx %s) was resolved %s as %s and now %s intent %s", t.id, r.txName(t.txid), res.action, res.classBefore, t.class, t.intent)
		}
	}
	// Each credit_account decision's credit stands exactly once net while
	// its transfer is confirmed, none while it is off the chain (a transfer
	// may carry one for its surplus and one for the rest); what the
	// entries added to the balance is never more than the credits, and
	// exactly them while they stand (a re-credit recovers what its
	// reversal could not take back).
	type byTransfer struct {
		net, added    int64
		account, last string
	}
	per := map[string]*byTransfer{}
	prev := map[string]int64{}
	for _, e := range s.entries {
		p := prev[e.account]
		prev[e.account] = e.after
		if e.transfer == "" {
			continue
		}
		b := per[e.transfer]
		if b == nil {
			b = &byTransfer{account: e.account}
			per[e.transfer] = b
		}
		switch e.typ {
		case "credit":
			b.net++
		case "reversal":
			b.net--
		}
		b.added += e.after - p
		b.last = e.id
	}
	for _, t := range s.transfers {
		want, cents := s.accountCredits[t.id].n, s.accountCredits[t.id].cents
		b := per[t.id]
		if b == nil {
			if want > 0 && t.status == "confirmed" {
				r.violate(Invariants[11], "transfer %s (tx %s) was credited to an account by finance but has no credit entry", t.id, r.txName(t.txid))
			}
			continue
		}
		if b.net < 0 || b.net > want {
			r.violate(Invariants[11], "account %s: transfer %s (tx %s) is credited %d times net for %d decisions", b.account, t.id, r.txName(t.txid), b.net, want)
		}
		if t.status == "orphaned" && b.net > 0 {
			r.violate(Invariants[11], "account %s keeps credit %s for transfer %s (tx %s), which left the chain", b.account, b.last, t.id, r.txName(t.txid))
		}
		if t.status == "confirmed" && b.net != want {
			r.violate(Invariants[11], "account %s: transfer %s (tx %s) is confirmed again but its credits do not stand (net %d of %d)", b.account, t.id, r.txName(t.txid), b.net, want)
		}
		if b.added < 0 || b.added > cents || (b.net == want && b.added != cents) {
			r.violate(Invariants[11], "account %s: transfer %s (tx %s) credited %s USD added %s USD to the balance (net %d)", b.account, t.id, r.txName(t.txid), payment.Cents(cents), payment.Cents(b.added), b.net)
		}
	}
}

// checkRecon checks each store's reconciliation against its transfers.
func (r *run) checkRecon(s *state) {
	// Every store's reconciliation, in one round trip.
	now := r.w.e.Clock.Now()
	reps, err := r.w.e.Reports.ReconcileEach(r.ctx, shops, time.Unix(0, 0), now.Add(48*time.Hour), now)
	if err != nil {
		r.violate(Invariants[7], "reconciliation of %v: %v", shops, err)
		return
	}
	for i, shop := range shops {
		r.checkReconOf(s, shop, reps[i])
	}
}

func (r *run) checkReconOf(s *state, shop string, rep reports.Reconciliation) {
	all := map[string]*big.Int{}
	n := 0
	for _, t := range s.transfers {
		if t.shop != shop {
			continue
		}
		n++
		m := t.network + "/"
		for _, tt := range rep.Rows {
			if tt.TransferID == t.id {
				m = tt.Method
			}
		}
		if all[m] == nil {
			all[m] = new(big.Int)
		}
		all[m].Add(all[m], t.amount)
	}
	for _, row := range rep.Rows {
		if row.Excluded {
			continue
		}
		want := r.covered[row.TransferID]
		if want == nil {
			want = new(big.Int)
		}
		if got := rowResolved(row); got.Cmp(want) != 0 {
			r.violate(Invariants[invCovers], "transfer %s (%s, %s): the reconciliation counts %s resolved, finance's decisions covered %s",
				row.TransferID, row.Classification, row.Status, got, want)
		}
	}
	if len(rep.Rows) != n {
		r.violate(Invariants[7], "the reconciliation of %s lists %d transfers, %d of that store's are recorded", shop, len(rep.Rows), n)
	}
	for _, mt := range rep.Totals {
		parse := func(x string) *big.Int { v, _ := new(big.Int).SetString(x, 10); return v }
		total, settled, unres, resolved, excl := parse(mt.Total), parse(mt.Settled), parse(mt.Unresolved), parse(mt.Resolved), parse(mt.Excluded)
		sum := new(big.Int).Add(settled, unres)
		sum.Add(sum, resolved)
		if total.Cmp(sum) != 0 {
			r.violate(Invariants[7], "%s: total %s != settled %s + unresolved %s + resolved %s", mt.Method, total, settled, unres, resolved)
		}
		if a := all[mt.Method]; a == nil || new(big.Int).Add(total, excl).Cmp(a) != 0 {
			r.violate(Invariants[7], "%s: total %s + excluded %s != recorded %v", mt.Method, total, excl, a)
		}
	}
}

// checkEvents reads the events appended since the last check.
func (r *run) checkEvents(s *state) {
	evs := s.events
	lastBody := map[string][]byte{}
	for _, e := range evs {
		if e.seq <= r.chk.lastSeq || e.at.Before(r.chk.lastAt) {
			r.violate(Invariants[8], "event %d %s at %s after event %d at %s", e.seq, e.typ, e.at.Format(time.RFC3339), r.chk.lastSeq, r.chk.lastAt.Format(time.RFC3339))
		}
		r.chk.lastSeq, r.chk.lastAt = e.seq, e.at
		switch {
		case e.typ == "intent.created":
			r.chk.evStatus[e.intent] = "awaiting_payment"
			// A renewal announces the old intent's superseded status with
			// the new intent (its intent.superseded is in the same commit).
			var v struct {
				RenewedFrom *string `json:"renewed_from"`
			}
			if json.Unmarshal(e.data, &v) == nil && v.RenewedFrom != nil {
				// Its own intent.superseded event follows in the same commit.
				prev := r.chk.evStatus[*v.RenewedFrom]
				if !edge(prev, "superseded") {
					r.violate(Invariants[8], "event %d renews intent %s whose last status event is %q", e.seq, *v.RenewedFrom, prev)
				}
			}
		case strings.HasPrefix(e.typ, "intent.") && e.typ != "intent.reported":
			st := strings.TrimPrefix(e.typ, "intent.")
			prev := r.chk.evStatus[e.intent]
			if !edge(prev, st) {
				r.violate(Invariants[8], "event %d %s for intent %s after its status event %q: not one per state change along the lifecycle", e.seq, e.typ, e.intent, prev)
			}
			r.chk.evStatus[e.intent] = st
			lastBody[e.intent] = e.data
		case strings.HasPrefix(e.typ, "ledger."):
			var v struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(e.data, &v)
			r.chk.evLedger[v.ID]++
		}
	}
	for id, i := range s.intents {
		if es, ok := r.chk.evStatus[id]; !ok {
			r.violate(Invariants[8], "intent %s has no intent.created event", id)
		} else if es != i.status {
			r.violate(Invariants[8], "intent %s is %s but its last status event says %s", id, i.status, es)
		}
	}
	ids := make([]string, 0, len(lastBody))
	for id := range lastBody {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		var ev, api views.Intent
		_ = json.Unmarshal(lastBody[id], &ev)
		st, body := r.w.do("GET", "/v1/intents/"+id, "storefront", nil, named(s.intents[id].shop)...)
		if st != 200 || json.Unmarshal(body, &api) != nil {
			r.violate(Invariants[8], "GET intent %s: %d", id, st)
			continue
		}
		// Only what cannot change without another status event: a later
		// partial payment changes received, a late one the late flag,
		// without one (and a step may commit several transactions).
		if ev.ID != api.ID || ev.Status != api.Status || ev.AmountBaseUnits != api.AmountBaseUnits || ev.Address != api.Address ||
			!timeEq(ev.PaidAt, api.PaidAt) || !ev.ExpiresAt.Equal(api.ExpiresAt) || ev.Method != api.Method || ev.Reference != api.Reference {
			r.violate(Invariants[8], "intent %s last event body (status %s paid_at %v amount %s) differs from the API (status %s paid_at %v amount %s)",
				id, ev.Status, ev.PaidAt, ev.AmountBaseUnits, api.Status, api.PaidAt, api.AmountBaseUnits)
		}
	}
	for _, e := range s.entries {
		if r.chk.evLedger[e.id] != 1 {
			r.violate(Invariants[8], "ledger entry %s (%s %s) has %d events", e.id, e.typ, e.ref, r.chk.evLedger[e.id])
		}
	}
}

func timeEq(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

// snapshot is the state a rescan must reproduce.
func (r *run) snapshot() (string, error) {
	s, err := r.load()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	ids := make([]string, 0, len(s.intents))
	for id := range s.intents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		i := s.intents[id]
		fmt.Fprintf(&b, "intent %s %s overpaid=%v late=%v\n", id, i.status, i.overpaid, i.late)
	}
	for _, t := range s.transfers {
		fmt.Fprintf(&b, "transfer %s %s:%d %s %s %s credited=%v\n", t.network, r.txName(t.txid), t.idx, t.intent, t.status, t.class, t.credited)
	}
	for _, e := range s.entries {
		fmt.Fprintf(&b, "entry %s %s %d %s after=%d\n", e.account, e.typ, e.cents, e.ref, e.after)
	}
	return b.String(), nil
}

func diff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	in := func(l []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range l {
			m[x] = true
		}
		return m
	}
	am, bm := in(al), in(bl)
	var out []string
	for _, x := range al {
		if !bm[x] {
			out = append(out, "- "+x)
		}
	}
	for _, x := range bl {
		if !am[x] {
			out = append(out, "+ "+x)
		}
	}
	return strings.Join(out, "; ")
}
