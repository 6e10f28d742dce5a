package matcher

import (
	"math/big"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
)

// FuzzDecide checks the properties of checkDecision (and, for a payable of
// two intents, checkPayable) on arbitrary facts. Each 6 bytes of data
// describe one transfer:
//
//	flags (bit 0 confirmed, 1 orphaned, 2 credited, 3-4 asset, 5 second intent),
//	amount (2 bytes), first seen (minutes from the deadline, signed),
//	recorded (minutes after first seen), resolved part (0-255).
//
// The seeds run in every `go test`; `go test -fuzz FuzzDecide ./matcher/`
// explores further.
func FuzzDecide(f *testing.F) {
	f.Add(uint16(100), uint16(0), uint16(0), uint8(0), int8(-10), []byte{1, 0, 100, 0xf6, 0, 0})
	f.Add(uint16(100), uint16(2), uint16(10), uint8(1), int8(30), []byte{1, 0, 40, 0xf0, 2, 0, 0, 0, 60, 0xf5, 0, 0, 4, 0, 5, 3, 0, 0})
	f.Add(uint16(100), uint16(0), uint16(0), uint8(2), int8(60), []byte{3, 0, 100, 0xf0, 1, 0, 1, 0, 100, 0xf5, 5, 0})
	// Issue 21: a resolved surplus, its partner gone and back; a credited
	// late overpayment; a second intent's earlier payment in progress.
	f.Add(uint16(100), uint16(0), uint16(0), uint8(1), int8(60), []byte{3, 0, 10, 0xf0, 0, 0, 1, 0, 95, 0xf1, 0, 5})
	f.Add(uint16(100), uint16(0), uint16(0), uint8(0), int8(60), []byte{5, 0, 110, 0x05, 0, 0})
	f.Add(uint16(100), uint16(0), uint16(0), uint8(0), int8(-5), []byte{0, 0, 100, 0xf0, 0, 0, 33, 0, 100, 0xf2, 0, 0})
	f.Fuzz(func(t *testing.T, amount, tolerance, dustMin uint16, flags uint8, now int8, data []byte) {
		in := Intent{
			Asset:      payment.USDT,
			Amount:     big.NewInt(int64(max(amount, 1))), // an intent asks for something
			Tolerance:  big.NewInt(int64(tolerance)),
			DustMin:    big.NewInt(int64(dustMin)),
			Deadline:   deadline,
			Superseded: flags&1 != 0,
			WasPaid:    flags&2 != 0,
		}
		assets := []payment.Asset{payment.USDT, payment.USDT, payment.USDC, payment.Native}
		var trs [2][]Transfer
		for ; len(data) >= 6 && len(trs[0])+len(trs[1]) < 20; data = data[6:] {
			seen := deadline.Add(time.Duration(int8(data[3])) * time.Minute)
			x := Transfer{
				Asset:     assets[(data[0]>>3)&3],
				Amount:    big.NewInt(int64(data[1])<<8 | int64(data[2])),
				FirstSeen: seen,
				Order:     orderAt(seen) + 60*int64(data[4]),
				Confirmed: data[0]&1 != 0,
				Orphaned:  data[0]&2 != 0,
				Credited:  data[0]&4 != 0,
			}
			if r := big.NewInt(int64(data[5])); r.Sign() > 0 && r.Cmp(x.Amount) <= 0 {
				x.Resolved = r
			}
			k := int(data[0]>>5) & 1
			trs[k] = append(trs[k], x)
		}
		at := deadline.Add(time.Duration(now) * time.Minute)
		d := Decide(in, trs[0], at)
		if err := checkDecision(in, trs[0], at, d); err != nil {
			t.Fatalf("%v\nintent %s\ntransfers %s", err, fmtIntent(in), fmtTransfers(trs[0]))
		}
		p := Payable{Payer: int(flags>>2)%3 - 1, PaidByDebit: flags&0x80 != 0}
		payer, ds := DecidePayable(p, []Intent{in, in}, trs[:], at)
		checkPayable(t, p, []Intent{in, in}, trs[:], at, payer, ds)
	})
}
