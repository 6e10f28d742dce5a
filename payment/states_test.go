package payment

import "testing"

func TestStateSetsAreClosed(t *testing.T) {
	for _, s := range IntentStatuses() {
		if !s.Valid() {
			t.Errorf("intent status %q not valid", s)
		}
	}
	for _, c := range Classifications() {
		if !c.Valid() {
			t.Errorf("classification %q not valid", c)
		}
	}
	if IntentStatus("").Valid() || IntentStatus("pending").Valid() || Classification("settled").Valid() ||
		TransferStatus("paid").Valid() || PayableKind("gift").Valid() || LedgerEntryType("refund").Valid() ||
		EventType("intent.gone").Valid() {
		t.Error("a value outside its set is valid")
	}
	if IntentEvent(IntentPaid) != "intent.paid" || !IntentEvent(IntentAwaiting).Valid() {
		t.Errorf("intent event: %q", IntentEvent(IntentPaid))
	}
	for typ, want := range map[LedgerEntryType]EventType{EntryCredit: EventLedgerCredited, EntryDebit: EventLedgerDebited,
		EntryReversal: EventLedgerReversed, EntryRecovery: EventLedgerRecovered} {
		if got := LedgerEvent(typ); got != want || !got.Valid() {
			t.Errorf("LedgerEvent(%s) = %s, want %s", typ, got, want)
		}
	}
	if !IntentAwaiting.Waiting() || !IntentDetected.Waiting() || IntentPaid.Waiting() || IntentAwaiting.Final() || !IntentPaid.Final() {
		t.Error("waiting/final")
	}
}
