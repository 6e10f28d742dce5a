package matcher

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
)

// deadline is the deadline of every intent in these tests.
var deadline = time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)

// Instants relative to the deadline.
var (
	before  = deadline.Add(-10 * time.Minute) // "now" while the intent is open
	early   = deadline.Add(-20 * time.Minute) // a first transfer
	middle  = deadline.Add(-15 * time.Minute) // a second one
	later   = deadline.Add(-12 * time.Minute) // a third one
	after   = deadline.Add(time.Hour)         // "now" once the deadline passed
	tooLate = deadline.Add(5 * time.Minute)   // first seen after the deadline
)

// usdt100 is an intent for 100 USDT token units, in status st.
func usdt100(st payment.IntentStatus) Intent {
	return Intent{Asset: payment.USDT, Amount: big.NewInt(100), Deadline: deadline, Status: st}
}

func with(in Intent, f func(*Intent)) Intent { f(&in); return in }

func tx(amount int64, seen time.Time) Transfer {
	return Transfer{Asset: payment.USDT, Amount: big.NewInt(amount), FirstSeen: seen}
}

func conf(t Transfer) Transfer { t.Confirmed = true; return t }

func credited(t Transfer) Transfer { t.Credited = true; return t }

func resolved(t Transfer) Transfer { t.Resolved = true; return t }

func orphan(t Transfer, previous payment.Classification) Transfer {
	t.Orphaned = true
	t.Previous = previous
	return t
}

func prev(t Transfer, previous payment.Classification) Transfer { t.Previous = previous; return t }

func asset(t Transfer, a payment.Asset) Transfer { t.Asset = a; return t }

// want is the expected decision, with small integers.
type want struct {
	status              payment.IntentStatus
	classes             []payment.Classification
	overpaid, late      bool
	received, confirmed int64
	surplus             int64
}

func TestDecide(t *testing.T) {
	tests := []struct {
		name string
		in   Intent
		tr   []Transfer
		now  time.Time
		want want
	}{
		// Nothing seen.
		{"nothing yet", usdt100(payment.IntentAwaiting), nil, before,
			want{status: payment.IntentAwaiting, classes: []payment.Classification{}}},
		{"nothing, deadline passed", usdt100(payment.IntentAwaiting), nil, after,
			want{status: payment.IntentExpired, classes: []payment.Classification{}}},
		{"nothing, exactly at the deadline", usdt100(payment.IntentAwaiting), nil, deadline,
			want{status: payment.IntentAwaiting, classes: []payment.Classification{}}},

		// One exact payment.
		{"exact, unconfirmed", usdt100(payment.IntentAwaiting), []Transfer{tx(100, early)}, before,
			want{status: payment.IntentDetected, classes: []payment.Classification{payment.Settles}, received: 100}},
		{"exact, confirmed", usdt100(payment.IntentDetected), []Transfer{conf(tx(100, early))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles}, received: 100, confirmed: 100}},
		{"exact, confirmed after the deadline", usdt100(payment.IntentDetected), []Transfer{conf(tx(100, early))}, after,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles}, received: 100, confirmed: 100}},
		{"exact, unconfirmed, deadline passed: seen in time", usdt100(payment.IntentDetected), []Transfer{tx(100, early)}, after,
			want{status: payment.IntentDetected, classes: []payment.Classification{payment.Settles}, received: 100}},
		{"exact, seen in time but found after expiry", usdt100(payment.IntentExpired), []Transfer{tx(100, early)}, after,
			want{status: payment.IntentDetected, classes: []payment.Classification{payment.Settles}, received: 100}},

		// The deadline instant.
		{"first seen exactly at the deadline counts", usdt100(payment.IntentDetected), []Transfer{conf(tx(100, deadline))}, after,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles}, received: 100, confirmed: 100}},
		{"first seen one nanosecond after the deadline is late", usdt100(payment.IntentAwaiting),
			[]Transfer{conf(tx(100, deadline.Add(time.Nanosecond)))}, after,
			want{status: payment.IntentExpired, classes: []payment.Classification{payment.Late}, late: true}},
		{"late transfer to an expired intent", usdt100(payment.IntentExpired), []Transfer{tx(100, tooLate)}, after,
			want{status: payment.IntentExpired, classes: []payment.Classification{payment.Late}, late: true}},
		{"late transfer after a partial one: underpaid", usdt100(payment.IntentDetected),
			[]Transfer{conf(tx(40, early)), conf(tx(60, tooLate))}, after,
			want{status: payment.IntentUnderpaid, classes: []payment.Classification{payment.Partial, payment.Late}, late: true, received: 40, confirmed: 40}},

		// Several transfers add up.
		{"first of two parts", usdt100(payment.IntentAwaiting), []Transfer{conf(tx(40, early))}, before,
			want{status: payment.IntentDetected, classes: []payment.Classification{payment.Partial}, received: 40, confirmed: 40}},
		{"two parts, one confirmed", usdt100(payment.IntentDetected), []Transfer{conf(tx(40, early)), tx(60, middle)}, before,
			want{status: payment.IntentDetected, classes: []payment.Classification{payment.Settles, payment.Settles}, received: 100, confirmed: 40}},
		{"two parts, both confirmed", usdt100(payment.IntentDetected), []Transfer{conf(tx(40, early)), conf(tx(60, middle))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles, payment.Settles}, received: 100, confirmed: 100}},
		{"three parts", usdt100(payment.IntentDetected),
			[]Transfer{conf(tx(20, early)), conf(tx(30, middle)), conf(tx(50, later))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles, payment.Settles, payment.Settles}, received: 100, confirmed: 100}},
		{"partial, deadline passed: underpaid", usdt100(payment.IntentDetected), []Transfer{conf(tx(40, early))}, after,
			want{status: payment.IntentUnderpaid, classes: []payment.Classification{payment.Partial}, received: 40, confirmed: 40}},
		{"partial unconfirmed, deadline passed: underpaid", usdt100(payment.IntentDetected), []Transfer{tx(40, early)}, after,
			want{status: payment.IntentUnderpaid, classes: []payment.Classification{payment.Partial}, received: 40}},
		{"underpaid, the rest was seen in time", usdt100(payment.IntentUnderpaid),
			[]Transfer{conf(tx(40, early)), conf(tx(60, middle))}, after,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles, payment.Settles}, received: 100, confirmed: 100}},

		// Tolerance.
		{"amount minus tolerance pays", with(usdt100(payment.IntentDetected), func(in *Intent) { in.Tolerance = big.NewInt(2) }),
			[]Transfer{conf(tx(98, early))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles}, received: 98, confirmed: 98}},
		{"one less than amount minus tolerance does not", with(usdt100(payment.IntentDetected), func(in *Intent) { in.Tolerance = big.NewInt(2) }),
			[]Transfer{conf(tx(97, early))}, before,
			want{status: payment.IntentDetected, classes: []payment.Classification{payment.Partial}, received: 97, confirmed: 97}},
		{"one less than amount minus tolerance, deadline passed", with(usdt100(payment.IntentDetected), func(in *Intent) { in.Tolerance = big.NewInt(2) }),
			[]Transfer{conf(tx(97, early))}, after,
			want{status: payment.IntentUnderpaid, classes: []payment.Classification{payment.Partial}, received: 97, confirmed: 97}},
		{"tolerance with two parts", with(usdt100(payment.IntentDetected), func(in *Intent) { in.Tolerance = big.NewInt(2) }),
			[]Transfer{conf(tx(50, early)), conf(tx(48, middle)), conf(tx(2, later))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles, payment.Settles, payment.Duplicate}, received: 98, confirmed: 98}},
		{"tolerance above the amount: any positive amount pays", with(usdt100(payment.IntentDetected), func(in *Intent) { in.Tolerance = big.NewInt(500) }),
			[]Transfer{conf(tx(1, early))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles}, received: 1, confirmed: 1}},

		// Overpayment.
		{"one transfer above the amount", usdt100(payment.IntentDetected), []Transfer{conf(tx(150, early))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Overpaid}, overpaid: true, received: 150, confirmed: 150, surplus: 50}},
		{"overpaid, unconfirmed", usdt100(payment.IntentAwaiting), []Transfer{tx(101, early)}, before,
			want{status: payment.IntentDetected, classes: []payment.Classification{payment.Overpaid}, overpaid: true, received: 101, surplus: 1}},
		{"two parts above the amount: the last is overpaid", usdt100(payment.IntentDetected),
			[]Transfer{conf(tx(60, early)), conf(tx(70, middle))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles, payment.Overpaid}, overpaid: true, received: 130, confirmed: 130, surplus: 30}},
		{"overpaid within tolerance", with(usdt100(payment.IntentDetected), func(in *Intent) { in.Tolerance = big.NewInt(5) }),
			[]Transfer{conf(tx(90, early)), conf(tx(16, middle))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles, payment.Overpaid}, overpaid: true, received: 106, confirmed: 106, surplus: 6}},
		{"covered within tolerance, not overpaid", with(usdt100(payment.IntentDetected), func(in *Intent) { in.Tolerance = big.NewInt(5) }),
			[]Transfer{conf(tx(96, early)), conf(tx(4, middle))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles, payment.Duplicate}, received: 96, confirmed: 96}},

		// Duplicates.
		{"second payment to a paid intent", usdt100(payment.IntentPaid),
			[]Transfer{conf(tx(100, early)), tx(100, middle)}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles, payment.Duplicate}, received: 100, confirmed: 100}},
		{"duplicate after the deadline is late, not duplicate", usdt100(payment.IntentPaid),
			[]Transfer{conf(tx(100, early)), conf(tx(100, tooLate))}, after,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles, payment.Late}, late: true, received: 100, confirmed: 100}},
		{"unconfirmed first payer, confirmed duplicate", usdt100(payment.IntentDetected),
			[]Transfer{tx(100, early), conf(tx(100, middle))}, before,
			want{status: payment.IntentDetected, classes: []payment.Classification{payment.Settles, payment.Duplicate}, received: 100}},
		{"payable paid elsewhere", with(usdt100(payment.IntentAwaiting), func(in *Intent) { in.PayablePaidElsewhere = true }),
			[]Transfer{conf(tx(100, early))}, before,
			want{status: payment.IntentAwaiting, classes: []payment.Classification{payment.Duplicate}}},
		{"payable paid elsewhere, deadline passed", with(usdt100(payment.IntentExpired), func(in *Intent) { in.PayablePaidElsewhere = true }),
			[]Transfer{conf(tx(100, early))}, after,
			want{status: payment.IntentExpired, classes: []payment.Classification{payment.Duplicate}}},
		// Issue 9 item 1: a credit never pays a payable paid elsewhere (this
		// case said paid, the bug: the payable's one-paid constraint then
		// failed every scan step).
		{"payable paid elsewhere, credited anyway", with(usdt100(payment.IntentAwaiting), func(in *Intent) { in.PayablePaidElsewhere = true }),
			[]Transfer{conf(credited(tx(100, early)))}, before,
			want{status: payment.IntentAwaiting, classes: []payment.Classification{payment.Duplicate}}},
		{"payable paid elsewhere, credited to an expired intent", with(usdt100(payment.IntentExpired), func(in *Intent) { in.PayablePaidElsewhere = true }),
			[]Transfer{conf(credited(tx(100, tooLate)))}, after,
			want{status: payment.IntentExpired, classes: []payment.Classification{payment.Duplicate}}},
		// Issue 14 item 1: the payment did not vanish, so no awaiting_payment.
		{"detected, then the payable is paid elsewhere", with(usdt100(payment.IntentDetected), func(in *Intent) { in.PayablePaidElsewhere = true }),
			[]Transfer{prev(conf(tx(100, early)), payment.Settles)}, before,
			want{status: payment.IntentDetected, classes: []payment.Classification{payment.Duplicate}}},
		{"detected, paid elsewhere, deadline passed", with(usdt100(payment.IntentDetected), func(in *Intent) { in.PayablePaidElsewhere = true }),
			[]Transfer{prev(tx(100, early), payment.Settles)}, after,
			want{status: payment.IntentExpired, classes: []payment.Classification{payment.Duplicate}}},
		{"detected, paid elsewhere, the payment vanished", with(usdt100(payment.IntentDetected), func(in *Intent) { in.PayablePaidElsewhere = true }),
			[]Transfer{orphan(tx(100, early), payment.Duplicate)}, before,
			want{status: payment.IntentAwaiting, classes: []payment.Classification{payment.Duplicate}}},

		// Issue 9 item 2 (invariant 6): a paid intent keeps its paying set.
		{"paid, a later transfer stamped earlier and unconfirmed", usdt100(payment.IntentPaid),
			[]Transfer{prev(conf(tx(100, middle)), payment.Settles), tx(100, early)}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles, payment.Duplicate}, received: 100, confirmed: 100}},
		{"paid, a later transfer stamped earlier and confirmed", usdt100(payment.IntentPaid),
			[]Transfer{prev(conf(tx(100, middle)), payment.Settles), conf(tx(100, early))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles, payment.Duplicate}, received: 100, confirmed: 100}},
		{"paid in two parts, a later one stamped first", usdt100(payment.IntentPaid),
			[]Transfer{prev(conf(tx(60, middle)), payment.Settles), prev(conf(tx(70, later)), payment.Overpaid), tx(100, early)}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles, payment.Overpaid, payment.Duplicate}, overpaid: true, received: 130, confirmed: 130, surplus: 30}},
		{"paid, its payer left the chain: recomputed", usdt100(payment.IntentPaid),
			[]Transfer{orphan(tx(100, middle), payment.Settles), tx(100, early)}, before,
			want{status: payment.IntentReverted, classes: []payment.Classification{payment.Reverted, payment.Settles}, received: 100}},

		// Issue 9 item 4 (invariant 7): a resolved transfer never counts on its own.
		{"refunded duplicate, the payer vanished", usdt100(payment.IntentDetected),
			[]Transfer{orphan(tx(100, early), payment.Settles), resolved(prev(tx(100, middle), payment.Duplicate))}, before,
			want{status: payment.IntentAwaiting, classes: []payment.Classification{payment.Settles, payment.Duplicate}}},
		{"refunded duplicate, confirmed, the payer vanished, deadline passed", usdt100(payment.IntentDetected),
			[]Transfer{orphan(tx(100, early), payment.Settles), resolved(prev(conf(tx(100, middle)), payment.Duplicate))}, after,
			want{status: payment.IntentExpired, classes: []payment.Classification{payment.Settles, payment.Duplicate}}},
		{"refunded partial does not complete with a credit", usdt100(payment.IntentUnderpaid),
			[]Transfer{resolved(prev(conf(tx(40, early)), payment.Partial)), conf(credited(tx(60, tooLate)))}, after,
			want{status: payment.IntentUnderpaid, classes: []payment.Classification{payment.Partial, payment.Partial}, received: 60, confirmed: 60}},
		{"overpayment whose surplus was resolved still pays", usdt100(payment.IntentPaid),
			[]Transfer{resolved(prev(conf(tx(150, early)), payment.Overpaid)), conf(tx(100, middle))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Overpaid, payment.Duplicate}, overpaid: true, received: 150, confirmed: 150, surplus: 50}},
		{"resolved overpayment alone cannot pay: counts for nothing", usdt100(payment.IntentPaid),
			[]Transfer{orphan(tx(60, early), payment.Settles), resolved(prev(conf(tx(70, middle)), payment.Overpaid))}, before,
			want{status: payment.IntentReverted, classes: []payment.Classification{payment.Reverted, payment.Partial}}},
		{"credit_intent wins over the resolution flag", usdt100(payment.IntentExpired),
			[]Transfer{resolved(conf(credited(prev(tx(100, tooLate), payment.Late))))}, after,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles}, received: 100, confirmed: 100}},

		// Wrong asset.
		{"USDC to a USDT intent", usdt100(payment.IntentAwaiting), []Transfer{conf(asset(tx(100, early), payment.USDC))}, before,
			want{status: payment.IntentAwaiting, classes: []payment.Classification{payment.WrongAsset}}},
		{"ETH to a USDT intent, deadline passed", usdt100(payment.IntentAwaiting), []Transfer{conf(asset(tx(100, early), payment.Native))}, after,
			want{status: payment.IntentExpired, classes: []payment.Classification{payment.WrongAsset}}},
		{"wrong asset stays wrong when credited", usdt100(payment.IntentAwaiting),
			[]Transfer{conf(credited(asset(tx(100, early), payment.USDC)))}, before,
			want{status: payment.IntentAwaiting, classes: []payment.Classification{payment.WrongAsset}}},
		{"wrong asset beside the right payment", usdt100(payment.IntentDetected),
			[]Transfer{conf(asset(tx(100, early), payment.USDC)), conf(tx(100, middle))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.WrongAsset, payment.Settles}, received: 100, confirmed: 100}},
		{"wrong asset does not complete a partial payment", usdt100(payment.IntentDetected),
			[]Transfer{conf(tx(50, early)), conf(asset(tx(50, middle), payment.USDC))}, after,
			want{status: payment.IntentUnderpaid, classes: []payment.Classification{payment.Partial, payment.WrongAsset}, received: 50, confirmed: 50}},

		// Dust.
		{"zero-value transfer", usdt100(payment.IntentAwaiting), []Transfer{conf(tx(0, early))}, before,
			want{status: payment.IntentAwaiting, classes: []payment.Classification{payment.Dust}}},
		{"below the dust minimum", with(usdt100(payment.IntentAwaiting), func(in *Intent) { in.DustMin = big.NewInt(10) }),
			[]Transfer{conf(tx(9, early))}, before,
			want{status: payment.IntentAwaiting, classes: []payment.Classification{payment.Dust}}},
		{"exactly the dust minimum counts", with(usdt100(payment.IntentAwaiting), func(in *Intent) { in.DustMin = big.NewInt(10) }),
			[]Transfer{conf(tx(10, early))}, before,
			want{status: payment.IntentDetected, classes: []payment.Classification{payment.Partial}, received: 10, confirmed: 10}},
		{"dust among real payments", with(usdt100(payment.IntentDetected), func(in *Intent) { in.DustMin = big.NewInt(10) }),
			[]Transfer{conf(tx(1, early)), conf(tx(100, middle)), conf(tx(0, later))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Dust, payment.Settles, payment.Dust}, received: 100, confirmed: 100}},
		{"credited dust counts", with(usdt100(payment.IntentDetected), func(in *Intent) { in.DustMin = big.NewInt(10) }),
			[]Transfer{conf(tx(95, early)), conf(credited(tx(5, middle)))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles, payment.Settles}, received: 100, confirmed: 100}},
		{"credited zero counts for nothing", usdt100(payment.IntentAwaiting), []Transfer{conf(credited(tx(0, early)))}, before,
			want{status: payment.IntentDetected, classes: []payment.Classification{payment.Partial}}},
		{"nil amount is dust", usdt100(payment.IntentAwaiting), []Transfer{{Asset: payment.USDT, FirstSeen: early, Confirmed: true, Credited: true}}, before,
			want{status: payment.IntentAwaiting, classes: []payment.Classification{payment.Dust}}},
		{"negative amount is dust", usdt100(payment.IntentAwaiting), []Transfer{conf(credited(tx(-100, early)))}, before,
			want{status: payment.IntentAwaiting, classes: []payment.Classification{payment.Dust}}},
		{"dust after the deadline is dust", usdt100(payment.IntentExpired), []Transfer{tx(0, tooLate)}, after,
			want{status: payment.IntentExpired, classes: []payment.Classification{payment.Dust}}},

		// Reorgs and vanished transfers before the intent was paid.
		{"only transfer orphaned before paid", usdt100(payment.IntentDetected), []Transfer{orphan(tx(100, early), payment.Settles)}, before,
			want{status: payment.IntentAwaiting, classes: []payment.Classification{payment.Settles}}},
		{"only transfer orphaned before paid, deadline passed", usdt100(payment.IntentDetected), []Transfer{orphan(tx(100, early), payment.Settles)}, after,
			want{status: payment.IntentExpired, classes: []payment.Classification{payment.Settles}}},
		{"orphaned part of a partial payment", usdt100(payment.IntentDetected),
			[]Transfer{orphan(tx(40, early), payment.Partial), conf(tx(30, middle))}, before,
			want{status: payment.IntentDetected, classes: []payment.Classification{payment.Partial, payment.Partial}, received: 30, confirmed: 30}},
		{"orphaned before ever classified", usdt100(payment.IntentAwaiting), []Transfer{orphan(tx(100, early), "")}, before,
			want{status: payment.IntentAwaiting, classes: []payment.Classification{payment.Reverted}}},
		{"orphaned late transfer keeps late but flags nothing", usdt100(payment.IntentExpired), []Transfer{orphan(tx(100, tooLate), payment.Late)}, after,
			want{status: payment.IntentExpired, classes: []payment.Classification{payment.Late}}},
		{"replaced transfer, the replacement pays", usdt100(payment.IntentDetected),
			[]Transfer{orphan(tx(100, early), payment.Settles), conf(tx(100, middle))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Reverted, payment.Settles}, received: 100, confirmed: 100}},
		{"replaced transfer, the replacement is unconfirmed", usdt100(payment.IntentDetected),
			[]Transfer{orphan(tx(100, early), payment.Settles), tx(100, middle)}, before,
			want{status: payment.IntentDetected, classes: []payment.Classification{payment.Settles, payment.Settles}, received: 100}},

		// Reorgs after the intent was paid.
		{"payer orphaned after paid", usdt100(payment.IntentPaid), []Transfer{orphan(tx(100, early), payment.Settles)}, before,
			want{status: payment.IntentReverted, classes: []payment.Classification{payment.Reverted}}},
		{"overpaying payer orphaned after paid", usdt100(payment.IntentPaid),
			[]Transfer{conf(tx(60, early)), orphan(tx(70, middle), payment.Overpaid)}, after,
			want{status: payment.IntentReverted, classes: []payment.Classification{payment.Partial, payment.Reverted}, received: 60, confirmed: 60}},
		{"reverted stays reverted", usdt100(payment.IntentReverted), []Transfer{orphan(tx(100, early), payment.Reverted)}, after,
			want{status: payment.IntentReverted, classes: []payment.Classification{payment.Reverted}}},
		{"payer orphaned, a confirmed duplicate covers", usdt100(payment.IntentPaid),
			[]Transfer{orphan(tx(100, early), payment.Settles), conf(tx(100, middle))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Reverted, payment.Settles}, received: 100, confirmed: 100}},
		{"payer orphaned, the duplicate is unconfirmed", usdt100(payment.IntentPaid),
			[]Transfer{orphan(tx(100, early), payment.Settles), tx(100, middle)}, before,
			want{status: payment.IntentReverted, classes: []payment.Classification{payment.Reverted, payment.Settles}, received: 100}},
		{"payer lost its confirmations", usdt100(payment.IntentPaid), []Transfer{tx(100, early)}, before,
			want{status: payment.IntentReverted, classes: []payment.Classification{payment.Settles}, received: 100}},
		{"reverted intent paid again", usdt100(payment.IntentReverted),
			[]Transfer{orphan(tx(100, early), payment.Reverted), conf(tx(100, middle))}, after,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Reverted, payment.Settles}, received: 100, confirmed: 100}},
		{"reverted intent, nothing left, deadline passed", usdt100(payment.IntentReverted),
			[]Transfer{orphan(tx(100, early), payment.Reverted)}, after,
			want{status: payment.IntentReverted, classes: []payment.Classification{payment.Reverted}}},

		// Superseded intents.
		{"payment to a superseded intent is late", usdt100(payment.IntentSuperseded), []Transfer{conf(tx(100, tooLate))}, after,
			want{status: payment.IntentSuperseded, classes: []payment.Classification{payment.Late}, late: true}},
		{"superseded, even when seen before the deadline", usdt100(payment.IntentSuperseded), []Transfer{conf(tx(100, early))}, after,
			want{status: payment.IntentSuperseded, classes: []payment.Classification{payment.Late}, late: true}},
		{"superseded, nothing seen", usdt100(payment.IntentSuperseded), nil, after,
			want{status: payment.IntentSuperseded, classes: []payment.Classification{}}},
		{"superseded, paid by credit", usdt100(payment.IntentSuperseded), []Transfer{conf(credited(tx(100, tooLate)))}, after,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles}, received: 100, confirmed: 100}},
		{"superseded, credit unconfirmed", usdt100(payment.IntentSuperseded), []Transfer{credited(tx(100, tooLate))}, after,
			want{status: payment.IntentSuperseded, classes: []payment.Classification{payment.Settles}, received: 100}},
		{"paid by credit, an uncredited late transfer stays late", usdt100(payment.IntentPaid),
			[]Transfer{prev(conf(tx(100, early)), payment.Late), conf(credited(tx(100, tooLate)))}, after,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Late, payment.Settles}, late: true, received: 100, confirmed: 100}},

		// Finance credits.
		{"credited late transfer pays an expired intent", usdt100(payment.IntentExpired), []Transfer{conf(credited(tx(100, tooLate)))}, after,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles}, received: 100, confirmed: 100}},
		{"credited late transfer, unconfirmed", usdt100(payment.IntentExpired), []Transfer{credited(tx(100, tooLate))}, after,
			want{status: payment.IntentDetected, classes: []payment.Classification{payment.Settles}, received: 100}},
		{"credited late transfer completes an underpaid intent", usdt100(payment.IntentUnderpaid),
			[]Transfer{conf(tx(60, early)), conf(credited(tx(40, tooLate)))}, after,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles, payment.Settles}, received: 100, confirmed: 100}},
		{"credited late transfer too small: still underpaid", usdt100(payment.IntentUnderpaid),
			[]Transfer{conf(tx(50, early)), conf(credited(tx(40, tooLate)))}, after,
			want{status: payment.IntentUnderpaid, classes: []payment.Classification{payment.Partial, payment.Partial}, received: 90, confirmed: 90}},

		// Order.
		{"input out of FirstSeen order", usdt100(payment.IntentDetected),
			[]Transfer{conf(tx(70, middle)), conf(tx(60, early)), conf(tx(100, later))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Overpaid, payment.Settles, payment.Duplicate}, overpaid: true, received: 130, confirmed: 130, surplus: 30}},
		{"same FirstSeen: input order decides", usdt100(payment.IntentDetected),
			[]Transfer{conf(tx(50, early)), conf(tx(60, early))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles, payment.Overpaid}, overpaid: true, received: 110, confirmed: 110, surplus: 10}},
		{"same FirstSeen, swapped", usdt100(payment.IntentDetected),
			[]Transfer{conf(tx(60, early)), conf(tx(50, early))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Settles, payment.Overpaid}, overpaid: true, received: 110, confirmed: 110, surplus: 10}},

		// Degenerate intents.
		{"nil amount: any positive transfer pays", Intent{Asset: payment.USDT, Deadline: deadline, Status: payment.IntentAwaiting},
			[]Transfer{conf(tx(7, early))}, before,
			want{status: payment.IntentPaid, classes: []payment.Classification{payment.Overpaid}, overpaid: true, received: 7, confirmed: 7, surplus: 7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := decideChecked(t, tc.in, tc.tr, tc.now)
			if d.Status != tc.want.status {
				t.Errorf("Status = %q, want %q", d.Status, tc.want.status)
			}
			if !slices.Equal(d.Classes, tc.want.classes) {
				t.Errorf("Classes = %v, want %v", d.Classes, tc.want.classes)
			}
			if d.Overpaid != tc.want.overpaid {
				t.Errorf("payment.Overpaid = %v, want %v", d.Overpaid, tc.want.overpaid)
			}
			if d.Late != tc.want.late {
				t.Errorf("payment.Late = %v, want %v", d.Late, tc.want.late)
			}
			wantInt(t, "Received", d.Received, tc.want.received)
			wantInt(t, "ConfirmedSum", d.ConfirmedSum, tc.want.confirmed)
			wantInt(t, "Surplus", d.Surplus, tc.want.surplus)
		})
	}
}

func wantInt(t *testing.T, name string, got *big.Int, want int64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s is nil, want %d", name, want)
		return
	}
	if got.Cmp(big.NewInt(want)) != 0 {
		t.Errorf("%s = %s, want %d", name, got, want)
	}
}

// TestDecideLifecycle walks intents through several decisions, feeding each
// decision back as the next one's status and previous classes, as the
// caller does.
func TestDecideLifecycle(t *testing.T) {
	type step struct {
		what    string
		tr      []Transfer // Previous is filled in from the last decision
		now     time.Time
		status  payment.IntentStatus
		classes []payment.Classification
	}
	a, b := tx(100, early), tx(100, middle)
	tests := []struct {
		name  string
		in    Intent
		steps []step
	}{
		{"seen, confirmed, reorged out, paid again", usdt100(payment.IntentAwaiting), []step{
			{"nothing", nil, early, payment.IntentAwaiting, []payment.Classification{}},
			{"a in mempool", []Transfer{a}, early, payment.IntentDetected, []payment.Classification{payment.Settles}},
			{"a confirmed", []Transfer{conf(a)}, middle, payment.IntentPaid, []payment.Classification{payment.Settles}},
			{"a confirmed, deadline passed", []Transfer{conf(a)}, after, payment.IntentPaid, []payment.Classification{payment.Settles}},
			{"a reorged out", []Transfer{orphan(a, "")}, after, payment.IntentReverted, []payment.Classification{payment.Reverted}},
			{"a stays out", []Transfer{orphan(a, "")}, after, payment.IntentReverted, []payment.Classification{payment.Reverted}},
			{"a mined again in another block", []Transfer{a}, after, payment.IntentReverted, []payment.Classification{payment.Settles}},
			{"a confirmed again", []Transfer{conf(a)}, after, payment.IntentPaid, []payment.Classification{payment.Settles}},
		}},
		{"seen, dropped from the mempool, expired, credited", usdt100(payment.IntentAwaiting), []step{
			{"a in mempool", []Transfer{a}, early, payment.IntentDetected, []payment.Classification{payment.Settles}},
			{"a vanished", []Transfer{orphan(a, "")}, before, payment.IntentAwaiting, []payment.Classification{payment.Settles}},
			{"deadline passed", []Transfer{orphan(a, "")}, after, payment.IntentExpired, []payment.Classification{payment.Settles}},
			{"late transfer", []Transfer{orphan(a, ""), conf(tx(100, tooLate))}, after, payment.IntentExpired,
				[]payment.Classification{payment.Settles, payment.Late}},
			{"finance credits it", []Transfer{orphan(a, ""), conf(credited(tx(100, tooLate)))}, after, payment.IntentPaid,
				[]payment.Classification{payment.Reverted, payment.Settles}},
		}},
		{"superseded, one transfer seen in time, the other credited", usdt100(payment.IntentSuperseded), []step{
			{"b found late", []Transfer{conf(b)}, after, payment.IntentSuperseded, []payment.Classification{payment.Late}},
			{"c credited", []Transfer{conf(b), conf(credited(tx(100, tooLate)))}, after, payment.IntentPaid,
				[]payment.Classification{payment.Late, payment.Settles}},
			{"again", []Transfer{conf(b), conf(credited(tx(100, tooLate)))}, after, payment.IntentPaid,
				[]payment.Classification{payment.Late, payment.Settles}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			var last []payment.Classification
			for _, s := range tc.steps {
				tr := slices.Clone(s.tr)
				for i := range tr {
					if i < len(last) {
						tr[i].Previous = last[i]
					}
				}
				d := decideChecked(t, in, tr, s.now)
				if d.Status != s.status || !slices.Equal(d.Classes, s.classes) {
					t.Fatalf("%s: got %q %v, want %q %v", s.what, d.Status, d.Classes, s.status, s.classes)
				}
				in.Status, last = d.Status, d.Classes
			}
		})
	}
}

func TestDecideMany(t *testing.T) {
	// More transfers than the scratch block and the stack order hold,
	// shuffled: twenty parts of five pay the intent, the 21st is a duplicate.
	in := usdt100(payment.IntentDetected)
	var tr []Transfer
	for i := range 21 {
		tr = append(tr, conf(tx(5, early.Add(time.Duration(i)*time.Second))))
	}
	tr = append(tr, conf(asset(tx(100, early), payment.USDC)), tx(0, early))
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(tr), func(i, j int) { tr[i], tr[j] = tr[j], tr[i] })
	d := decideChecked(t, in, tr, before)
	if d.Status != payment.IntentPaid {
		t.Fatalf("Status = %q, want paid", d.Status)
	}
	for i, c := range d.Classes {
		var want payment.Classification
		switch {
		case tr[i].Asset != payment.USDT:
			want = payment.WrongAsset
		case tr[i].Amount.Sign() == 0:
			want = payment.Dust
		case tr[i].FirstSeen.Equal(early.Add(20 * time.Second)):
			want = payment.Duplicate
		default:
			want = payment.Settles
		}
		if c != want {
			t.Errorf("transfer %d (%v): %q, want %q", i, tr[i].FirstSeen, c, want)
		}
	}
	wantInt(t, "Received", d.Received, 100)
}

func TestDecideHugeAmounts(t *testing.T) {
	// Beyond the scratch words: 10^80 wei.
	huge, _ := new(big.Int).SetString("1"+strings.Repeat("0", 80), 10)
	in := Intent{Asset: payment.Native, Amount: huge, Deadline: deadline, Status: payment.IntentDetected}
	half := new(big.Int).Rsh(huge, 1)
	rest := new(big.Int).Sub(huge, half)
	rest.Add(rest, big.NewInt(3))
	tr := []Transfer{
		{Asset: payment.Native, Amount: half, FirstSeen: early, Confirmed: true},
		{Asset: payment.Native, Amount: rest, FirstSeen: middle, Confirmed: true},
	}
	d := decideChecked(t, in, tr, before)
	if d.Status != payment.IntentPaid || !slices.Equal(d.Classes, []payment.Classification{payment.Settles, payment.Overpaid}) {
		t.Fatalf("got %q %v", d.Status, d.Classes)
	}
	wantInt(t, "Surplus", d.Surplus, 3)
	if want := new(big.Int).Add(huge, big.NewInt(3)); d.Received.Cmp(want) != 0 {
		t.Errorf("Received = %s, want %s", d.Received, want)
	}
}

func TestDecisionsDoNotShareIntegers(t *testing.T) {
	in := usdt100(payment.IntentDetected)
	tr := []Transfer{conf(tx(150, early))}
	d1 := Decide(in, tr, before)
	d2 := Decide(in, tr, before)
	d1.Received.Add(d1.Received, big.NewInt(1000))
	d1.Surplus.SetInt64(0)
	wantInt(t, "d2.Received", d2.Received, 150)
	wantInt(t, "d2.ConfirmedSum", d2.ConfirmedSum, 150)
	wantInt(t, "d2.Surplus", d2.Surplus, 50)
	wantInt(t, "d1.ConfirmedSum", d1.ConfirmedSum, 150)
}

func TestClassificationNeedsReview(t *testing.T) {
	for _, c := range allClasses {
		if got, want := c.NeedsReview(), c != payment.Settles; got != want {
			t.Errorf("%q.NeedsReview() = %v, want %v", c, got, want)
		}
	}
	if !payment.Classification("").NeedsReview() {
		t.Error(`"".NeedsReview() = false`)
	}
}

func TestStatusFinal(t *testing.T) {
	want := map[payment.IntentStatus]bool{
		payment.IntentAwaiting: false, payment.IntentDetected: false,
		payment.IntentPaid: true, payment.IntentExpired: true, payment.IntentUnderpaid: true, payment.IntentSuperseded: true, payment.IntentReverted: true,
	}
	for _, s := range allStatuses {
		if got := s.Final(); got != want[s] {
			t.Errorf("%q.Final() = %v, want %v", s, got, want[s])
		}
	}
	if len(want) != len(allStatuses) {
		t.Errorf("allStatuses has %d entries, want %d", len(allStatuses), len(want))
	}
}

var allStatuses = []payment.IntentStatus{payment.IntentAwaiting, payment.IntentDetected, payment.IntentPaid, payment.IntentExpired, payment.IntentUnderpaid, payment.IntentSuperseded, payment.IntentReverted}

var allClasses = []payment.Classification{payment.Settles, payment.Partial, payment.Overpaid, payment.Late, payment.Duplicate, payment.WrongAsset, payment.UnknownAddress, payment.Dust, payment.Reverted}

// decideChecked calls Decide and checks every property a decision must have
// whatever its input (see checkDecision).
func decideChecked(t *testing.T, in Intent, tr []Transfer, now time.Time) Decision {
	t.Helper()
	d := Decide(in, tr, now)
	if err := checkDecision(in, tr, now, d); err != nil {
		t.Fatalf("%v\nintent %s\ntransfers %s", err, fmtIntent(in), fmtTransfers(tr))
	}
	return d
}

// checkDecision verifies the invariants of d = Decide(in, tr, now): shape,
// sums, flags, idempotence, independence from the input order and that the
// inputs were left untouched.
func checkDecision(in Intent, tr []Transfer, now time.Time, d Decision) error {
	inCopy, trCopy := fmtIntent(in), fmtTransfers(tr)
	if len(d.Classes) != len(tr) {
		return fmt.Errorf("%d classes for %d transfers", len(d.Classes), len(tr))
	}
	if d.Received == nil || d.ConfirmedSum == nil || d.Surplus == nil {
		return fmt.Errorf("nil integer in %+v", d)
	}
	if !slices.Contains(allStatuses, d.Status) {
		return fmt.Errorf("unknown status %q", d.Status)
	}
	received, confirmed, paying := new(big.Int), new(big.Int), new(big.Int)
	overpaidCount, late, settles := 0, false, false
	for i, c := range d.Classes {
		x := tr[i]
		if x.Orphaned {
			if c != payment.Reverted && c != x.Previous {
				return fmt.Errorf("orphaned transfer %d: class %q, previous %q", i, c, x.Previous)
			}
			continue
		}
		if !slices.Contains(allClasses, c) || c == payment.UnknownAddress {
			return fmt.Errorf("transfer %d: class %q", i, c)
		}
		if (x.Asset != in.Asset) != (c == payment.WrongAsset) {
			return fmt.Errorf("transfer %d: asset %q, intent %q, class %q", i, x.Asset, in.Asset, c)
		}
		switch c {
		case payment.Reverted:
			return fmt.Errorf("transfer %d is not orphaned but reverted", i)
		case payment.Late:
			late = true
		case payment.Overpaid:
			overpaidCount++
		}
		if x.Credited && in.PayablePaidElsewhere && c != payment.WrongAsset && c != payment.Dust && c != payment.Duplicate {
			return fmt.Errorf("transfer %d credited to a payable paid elsewhere: class %q", i, c)
		}
		held := x.Resolved && !x.Credited && c == payment.Partial // resolved: keeps payment.Partial, counts for nothing
		if x.Resolved && !x.Credited && (c == payment.Settles || c == payment.Overpaid) && x.Previous != payment.Settles && x.Previous != payment.Overpaid {
			return fmt.Errorf("resolved transfer %d (previous %q) pays: class %q", i, x.Previous, c)
		}
		if (c == payment.Settles || c == payment.Overpaid || c == payment.Partial) && !held {
			received.Add(received, x.Amount)
			if x.Confirmed {
				confirmed.Add(confirmed, x.Amount)
			}
		}
		if c == payment.Settles || c == payment.Overpaid {
			settles = true
			paying.Add(paying, x.Amount)
			if d.Status == payment.IntentPaid && !x.Confirmed {
				return fmt.Errorf("paid with unconfirmed transfer %d", i)
			}
		}
	}
	if d.Status == payment.IntentPaid && in.PayablePaidElsewhere {
		return fmt.Errorf("paid although the payable was paid elsewhere")
	}
	// Invariant 6: a paid intent whose paying set still counts, is
	// confirmed and covers the amount stays paid by that set; nothing else
	// pays it.
	if in.Status == payment.IntentPaid && !in.PayablePaidElsewhere && keepsPayingSetOf(in, tr) {
		if d.Status != payment.IntentPaid {
			return fmt.Errorf("paid intent with its paying set intact became %q", d.Status)
		}
		for i, c := range d.Classes {
			if p := tr[i].Previous; p != payment.Settles && p != payment.Overpaid && (c == payment.Settles || c == payment.Overpaid) {
				return fmt.Errorf("transfer %d (previous %q) joined an intact paying set as %q", i, p, c)
			}
		}
	}
	if received.Cmp(d.Received) != 0 {
		return fmt.Errorf("Received = %s, classes sum to %s", d.Received, received)
	}
	if confirmed.Cmp(d.ConfirmedSum) != 0 {
		return fmt.Errorf("ConfirmedSum = %s, classes sum to %s", d.ConfirmedSum, confirmed)
	}
	if d.Late != late {
		return fmt.Errorf("payment.Late = %v, classes say %v", d.Late, late)
	}
	amount := orZero(in.Amount)
	required := new(big.Int).Sub(amount, orZero(in.Tolerance))
	if required.Sign() < 1 {
		required.SetInt64(1)
	}
	if d.Status == payment.IntentPaid && d.ConfirmedSum.Cmp(required) < 0 {
		return fmt.Errorf("paid with ConfirmedSum %s < required %s", d.ConfirmedSum, required)
	}
	if settles && paying.Cmp(required) < 0 {
		return fmt.Errorf("settling transfers sum to %s < required %s", paying, required)
	}
	if overpaidCount > 1 || d.Overpaid != (overpaidCount == 1) || d.Overpaid != (d.Surplus.Sign() > 0) {
		return fmt.Errorf("payment.Overpaid = %v, %d overpaid classes, Surplus %s", d.Overpaid, overpaidCount, d.Surplus)
	}
	if d.Overpaid {
		if s := new(big.Int).Sub(paying, amount); s.Cmp(d.Surplus) != 0 {
			return fmt.Errorf("Surplus = %s, paying set minus amount is %s", d.Surplus, s)
		}
	}

	// Idempotent: its own output fed back decides the same.
	again := in
	again.Status = d.Status
	tr2 := slices.Clone(tr)
	for i := range tr2 {
		tr2[i].Previous = d.Classes[i]
	}
	if d2 := Decide(again, tr2, now); !sameDecision(d, d2) {
		return fmt.Errorf("not idempotent: %s, then %s", fmtDecision(d), fmtDecision(d2))
	}

	// Order-independent: reversed input, same per-transfer classes (when
	// FirstSeen ties do not make the input order meaningful).
	if distinctFirstSeen(tr) {
		rev := slices.Clone(tr)
		slices.Reverse(rev)
		d3 := Decide(in, rev, now)
		slices.Reverse(d3.Classes)
		if !sameDecision(d, d3) {
			return fmt.Errorf("depends on input order: %s, reversed %s", fmtDecision(d), fmtDecision(d3))
		}
	}

	if fmtIntent(in) != inCopy || fmtTransfers(tr) != trCopy {
		return fmt.Errorf("inputs modified")
	}
	return nil
}

// keepsPayingSetOf is the precondition of invariant 6, from the inputs
// alone: the transfers last classified Settles or Overpaid exist, are
// confirmed, would count (right asset, not dust, not held by a resolution)
// and cover the amount.
func keepsPayingSetOf(in Intent, tr []Transfer) bool {
	required := new(big.Int).Sub(orZero(in.Amount), orZero(in.Tolerance))
	if required.Sign() < 1 {
		required.SetInt64(1)
	}
	sum, n := new(big.Int), 0
	for _, x := range tr {
		if x.Previous != payment.Settles && x.Previous != payment.Overpaid {
			continue
		}
		if x.Orphaned || !x.Confirmed || x.Asset != in.Asset || x.Amount == nil || x.Amount.Sign() < 0 {
			return false
		}
		if !x.Credited && (x.Amount.Sign() == 0 || x.Amount.Cmp(orZero(in.DustMin)) < 0 || x.FirstSeen.After(in.Deadline) || in.Status == payment.IntentSuperseded) {
			return false
		}
		sum.Add(sum, x.Amount)
		n++
	}
	return n > 0 && sum.Cmp(required) >= 0
}

func distinctFirstSeen(tr []Transfer) bool {
	for i := range tr {
		for j := range i {
			if tr[i].FirstSeen.Equal(tr[j].FirstSeen) {
				return false
			}
		}
	}
	return true
}

func sameDecision(a, b Decision) bool {
	return a.Status == b.Status && a.Overpaid == b.Overpaid && a.Late == b.Late &&
		a.Received.Cmp(b.Received) == 0 && a.ConfirmedSum.Cmp(b.ConfirmedSum) == 0 &&
		a.Surplus.Cmp(b.Surplus) == 0 && slices.Equal(a.Classes, b.Classes)
}

func fmtDecision(d Decision) string {
	return fmt.Sprintf("{%s overpaid=%v late=%v received=%s confirmed=%s surplus=%s %v}",
		d.Status, d.Overpaid, d.Late, d.Received, d.ConfirmedSum, d.Surplus, d.Classes)
}

func fmtIntent(in Intent) string {
	return fmt.Sprintf("{%s amount=%v tol=%v dust=%v deadline=%s %s elsewhere=%v}",
		in.Asset, in.Amount, in.Tolerance, in.DustMin, in.Deadline.Format(time.RFC3339Nano), in.Status, in.PayablePaidElsewhere)
}

func fmtTransfers(tr []Transfer) string {
	s := "["
	for _, x := range tr {
		s += fmt.Sprintf("{%s %v seen=%s conf=%v orph=%v cred=%v res=%v prev=%q} ",
			x.Asset, x.Amount, x.FirstSeen.Format(time.RFC3339Nano), x.Confirmed, x.Orphaned, x.Credited, x.Resolved, x.Previous)
	}
	return s + "]"
}
