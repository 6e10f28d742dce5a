package payment

// The closed sets of states every package shares: an intent's status, a
// transfer's classification and status, a payable's kind, a ledger entry's
// type and an event's type. Each is a named string type whose values are
// the constants below and nothing else; the store's CHECK constraints hold
// the same sets (a store test compares them on PostgreSQL).

// IntentStatus is the state of an intent in the lifecycle of docs/behaviour.md.
type IntentStatus string

// The intent statuses.
const (
	// IntentAwaiting: nothing that counts has been seen and the deadline has
	// not passed.
	IntentAwaiting IntentStatus = "awaiting_payment"
	// IntentDetected: transfers that count were seen in time but the amount
	// is not yet covered by confirmed transfers.
	IntentDetected IntentStatus = "detected"
	// IntentPaid: the paying set covers the amount and every member of it is
	// confirmed.
	IntentPaid IntentStatus = "paid"
	// IntentExpired: the deadline passed and nothing counts.
	IntentExpired IntentStatus = "expired"
	// IntentUnderpaid: the deadline passed and what counts does not cover
	// the amount (final unless finance resolves).
	IntentUnderpaid IntentStatus = "underpaid"
	// IntentSuperseded: the intent was renewed; only transfers finance
	// credits to it can still pay it.
	IntentSuperseded IntentStatus = "superseded"
	// IntentReverted: the intent was paid and a reorg removed part of what
	// paid it.
	IntentReverted IntentStatus = "reverted"
)

// IntentStatuses lists every intent status.
func IntentStatuses() []IntentStatus {
	return []IntentStatus{IntentAwaiting, IntentDetected, IntentPaid, IntentExpired, IntentUnderpaid, IntentSuperseded, IntentReverted}
}

// Valid reports whether s is one of the intent statuses.
func (s IntentStatus) Valid() bool { return in(s, IntentStatuses()) }

// Final reports whether an intent in status s no longer awaits money by
// itself: paid, expired, underpaid, superseded and reverted are final;
// awaiting_payment and detected are not. A final intent still changes when
// a reorg or a finance resolution changes its transfers.
func (s IntentStatus) Final() bool {
	switch s {
	case IntentPaid, IntentExpired, IntentUnderpaid, IntentSuperseded, IntentReverted:
		return true
	}
	return false
}

// Waiting reports whether an intent in status s still waits for (the rest
// of) its payment: awaiting_payment and detected.
func (s IntentStatus) Waiting() bool { return s == IntentAwaiting || s == IntentDetected }

// Classification is what one transfer means for the intent whose address it
// paid.
type Classification string

// The transfer classifications of docs/behaviour.md.
const (
	// Settles: the transfer is part of the set that pays the intent.
	Settles Classification = "settles"
	// Partial: the transfer counts but, with the others, does not yet cover
	// the amount.
	Partial Classification = "partial"
	// Overpaid: the last transfer of a paying set whose sum exceeds the
	// amount; the surplus is the matcher decision's Surplus.
	Overpaid Classification = "overpaid"
	// Late: first seen after the deadline, or sent to a superseded intent.
	Late Classification = "late"
	// Duplicate: sent after the intent was already covered, or after its
	// payable was paid by another intent.
	Duplicate Classification = "duplicate"
	// WrongAsset: our address, another asset of the same network.
	WrongAsset Classification = "wrong_asset"
	// UnknownAddress: sent to an address of ours that has no intent (e.g. a
	// pool address not handed out yet). The scanner sink classifies such
	// transfers itself: there is no intent to decide about, so the matcher
	// never returns it.
	UnknownAddress Classification = "unknown_address"
	// Dust: a zero amount or one below the intent's dust minimum
	// (address-poisoning transfers).
	Dust Classification = "dust"
	// Reverted: the transfer was removed by a reorg (or vanished from the
	// mempool) after it had paid the intent, or before it was ever
	// classified.
	Reverted Classification = "reverted"
	// Unexplained: an increase of an open intent's address balance that no
	// recorded transfer explains (the balance check); it never pays an
	// intent by itself, finance reviews it.
	Unexplained Classification = "unexplained"
)

// Classifications lists every transfer classification.
func Classifications() []Classification {
	return []Classification{Settles, Partial, Overpaid, Late, Duplicate, WrongAsset, UnknownAddress, Dust, Reverted, Unexplained}
}

// Valid reports whether c is one of the classifications.
func (c Classification) Valid() bool { return in(c, Classifications()) }

// NeedsReview reports whether a transfer classified c goes to the finance
// inbox: everything except Settles does.
func (c Classification) NeedsReview() bool { return c != Settles }

// TransferStatus is where a transfer stands on its chain.
type TransferStatus string

// The transfer statuses.
const (
	// TransferPending: seen in the mempool, not in a block.
	TransferPending TransferStatus = "pending"
	// TransferConfirming: in a block, fewer confirmations than required.
	TransferConfirming TransferStatus = "confirming"
	// TransferConfirmed: in a block with the required confirmations.
	TransferConfirmed TransferStatus = "confirmed"
	// TransferOrphaned: its block left the best chain, or it vanished from
	// the mempool.
	TransferOrphaned TransferStatus = "orphaned"
)

// TransferStatuses lists every transfer status.
func TransferStatuses() []TransferStatus {
	return []TransferStatus{TransferPending, TransferConfirming, TransferConfirmed, TransferOrphaned}
}

// Valid reports whether s is one of the transfer statuses.
func (s TransferStatus) Valid() bool { return in(s, TransferStatuses()) }

// PayableKind is what a payable pays for.
type PayableKind string

// The payable kinds.
const (
	// Order: a storefront order, paid once by an intent or a balance debit.
	Order PayableKind = "order"
	// Topup: money credited to an account's balance.
	Topup PayableKind = "topup"
)

// PayableKinds lists every payable kind.
func PayableKinds() []PayableKind { return []PayableKind{Order, Topup} }

// Valid reports whether k is one of the payable kinds.
func (k PayableKind) Valid() bool { return in(k, PayableKinds()) }

// LedgerEntryType is what a ledger entry does to an account's balance.
type LedgerEntryType string

// The ledger entry types.
const (
	// EntryCredit adds to the balance.
	EntryCredit LedgerEntryType = "credit"
	// EntryDebit takes from the balance (never below zero).
	EntryDebit LedgerEntryType = "debit"
	// EntryReversal takes back a credit whose money left the chain; what
	// the balance cannot cover stays unrecovered.
	EntryReversal LedgerEntryType = "reversal"
	// EntryRecovery takes back a reversal's unrecovered rest when the money
	// returns.
	EntryRecovery LedgerEntryType = "recovery"
)

// LedgerEntryTypes lists every ledger entry type.
func LedgerEntryTypes() []LedgerEntryType {
	return []LedgerEntryType{EntryCredit, EntryDebit, EntryReversal, EntryRecovery}
}

// Valid reports whether t is one of the ledger entry types.
func (t LedgerEntryType) Valid() bool { return in(t, LedgerEntryTypes()) }

// EventType names an event of the feed and of webhooks.
type EventType string

// The event types that are not an intent entering a status (see
// IntentEvent).
const (
	EventIntentCreated     EventType = "intent.created"
	EventIntentReported    EventType = "intent.reported"
	EventTransferUnmatched EventType = "transfer.unmatched"
	EventTransferResolved  EventType = "transfer.resolved"
	EventLedgerCredited    EventType = "ledger.credited"
	EventLedgerDebited     EventType = "ledger.debited"
	EventLedgerReversed    EventType = "ledger.reversed"
	EventLedgerRecovered   EventType = "ledger.recovered"
)

// IntentEvent is the event of an intent entering status s: "intent.<s>".
func IntentEvent(s IntentStatus) EventType { return EventType("intent." + string(s)) }

// LedgerEvent is the event of a ledger entry of type t.
func LedgerEvent(t LedgerEntryType) EventType {
	switch t {
	case EntryDebit:
		return EventLedgerDebited
	case EntryReversal:
		return EventLedgerReversed
	case EntryRecovery:
		return EventLedgerRecovered
	}
	return EventLedgerCredited
}

// EventTypes lists every event type.
func EventTypes() []EventType {
	out := []EventType{EventIntentCreated, EventIntentReported}
	for _, s := range IntentStatuses() {
		out = append(out, IntentEvent(s))
	}
	return append(out, EventTransferUnmatched, EventTransferResolved,
		EventLedgerCredited, EventLedgerDebited, EventLedgerReversed, EventLedgerRecovered)
}

// Valid reports whether t is one of the event types.
func (t EventType) Valid() bool { return in(t, EventTypes()) }

func in[T comparable](v T, set []T) bool {
	for _, s := range set {
		if s == v {
			return true
		}
	}
	return false
}
