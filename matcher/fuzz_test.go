package matcher

import (
	"math/big"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
)

// FuzzDecide checks the invariants of checkDecision on arbitrary intents and
// transfers. Each 5 bytes of data describe one transfer:
//
//	flags (bit 0 confirmed, 1 orphaned, 2 credited, 3-4 asset, 5 resolved),
//	amount (2 bytes), first seen (minutes from the deadline, signed),
//	previous class.
//
// The seeds run in every `go test`; `go test -fuzz FuzzDecide ./matcher/`
// explores further.
func FuzzDecide(f *testing.F) {
	f.Add(uint16(100), uint16(0), uint16(0), uint8(0), false, int8(-10), []byte{1, 0, 100, 0xf6, 0})
	f.Add(uint16(100), uint16(2), uint16(10), uint8(1), false, int8(30), []byte{1, 0, 40, 0xf0, 2, 0, 0, 60, 0xf5, 0, 4, 0, 5, 3, 0})
	f.Add(uint16(100), uint16(0), uint16(0), uint8(2), false, int8(60), []byte{3, 0, 100, 0xf0, 1, 1, 0, 100, 0xf5, 5})
	f.Add(uint16(100), uint16(0), uint16(0), uint8(5), true, int8(60), []byte{1, 0, 100, 0xf0, 0, 5, 0, 100, 0x05, 0, 9, 0, 100, 0, 0})
	f.Add(uint16(50), uint16(0), uint16(1), uint8(3), false, int8(1), []byte{1, 0, 30, 0xf0, 0, 1, 0, 30, 0xf0, 0, 1, 0, 0, 0xf1, 0})
	f.Add(uint16(100), uint16(0), uint16(0), uint8(6), false, int8(60), []byte{3, 0, 100, 0xf0, 4, 5, 0, 100, 0xf8, 0})
	f.Add(uint16(100), uint16(0), uint16(0), uint8(5), false, int8(60), []byte{1, 0, 100, 0xf0, 0, 5, 0, 100, 0x05, 0})
	f.Add(uint16(111), uint16(2), uint16(10), uint8(1), false, int8(48), []byte{16, 48, 48, 48, 8, 18, 48, 48, 48, 7})
	// Issue 9 items 1, 2 and 4: a credit to a payable paid elsewhere, a paid
	// intent's later transfer stamped before its payer, a resolved duplicate.
	f.Add(uint16(100), uint16(0), uint16(0), uint8(3), true, int8(60), []byte{5, 0, 100, 0x05, 7})
	f.Add(uint16(100), uint16(0), uint16(0), uint8(2), false, int8(-5), []byte{1, 0, 100, 0xf6, 1, 0, 0, 100, 0xf0, 0})
	f.Add(uint16(100), uint16(0), uint16(0), uint8(1), false, int8(-5), []byte{2, 0, 100, 0xf0, 1, 32, 0, 100, 0xf4, 5})
	f.Add(uint16(100), uint16(0), uint16(0), uint8(2), false, int8(-5), []byte{2, 0, 60, 0xf0, 1, 33, 0, 70, 0xf4, 3})
	f.Fuzz(func(t *testing.T, amount, tolerance, dustMin uint16, status uint8, elsewhere bool, now int8, data []byte) {
		in := Intent{
			Asset:                payment.USDT,
			Amount:               big.NewInt(int64(amount)),
			Tolerance:            big.NewInt(int64(tolerance)),
			DustMin:              big.NewInt(int64(dustMin)),
			Deadline:             deadline,
			Status:               allStatuses[int(status)%len(allStatuses)],
			PayablePaidElsewhere: elsewhere,
		}
		assets := []payment.Asset{payment.USDT, payment.USDT, payment.USDC, payment.Native}
		previous := append([]payment.Classification{""}, allClasses...)
		var tr []Transfer
		for ; len(data) >= 5 && len(tr) < 20; data = data[5:] {
			tr = append(tr, Transfer{
				Asset:     assets[(data[0]>>3)&3],
				Amount:    big.NewInt(int64(data[1])<<8 | int64(data[2])),
				FirstSeen: deadline.Add(time.Duration(int8(data[3])) * time.Minute),
				Confirmed: data[0]&1 != 0,
				Orphaned:  data[0]&2 != 0,
				Credited:  data[0]&4 != 0,
				Resolved:  data[0]&32 != 0,

				Previous: previous[int(data[4])%len(previous)],
			})
		}
		at := deadline.Add(time.Duration(now) * time.Minute)
		d := Decide(in, tr, at)
		if err := checkDecision(in, tr, at, d); err != nil {
			t.Fatalf("%v\nintent %s\ntransfers %s", err, fmtIntent(in), fmtTransfers(tr))
		}
	})
}
