package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/intents"
)

// FuzzRequestBody decodes arbitrary bodies as every POST body type through
// the edge (checkBody, then the strict decoder): what it accepts holds no
// control character (a note may hold newlines and tabs), no text beyond its
// bound, and re-encodes to a body that decodes to the same request.
func FuzzRequestBody(f *testing.F) {
	for _, b := range []string{
		`{"kind":"order","reference":"ORD-7","account":"cust-1","amount_usd":"249.00","method":"BTC"}`,
		`{"reference":"D-1","amount_usd":"1.00"}`,
		`{"action":"credit_intent","note":"late by 3 min","intent_id":"pi_01JD3XKQ7V8Y4ZC9M2N5P6R7S8"}`,
		`{"action":"credit_account","note":"a\nb","account":"cust-1","usd_per_unit":"2500.10"}`,
		`{"from_height":120}`,
		`{"from_height":-0}`,
		`{"note":"\u0000"}`,
		`{"reference":"\ud800"}`,
		`{}`,
	} {
		f.Add(uint8(0), []byte(b))
	}
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		var v any
		switch kind % 4 {
		case 0:
			v = &intents.CreateRequest{}
		case 1:
			v = &finance.DebitRequest{}
		case 2:
			v = &finance.ResolveRequest{}
		default:
			v = &RescanRequest{}
		}
		if err := decodeStrict(body, v, true); err != nil {
			return
		}
		rv := reflect.ValueOf(v).Elem()
		for i := 0; i < rv.NumField(); i++ {
			if rv.Field(i).Kind() != reflect.String {
				continue
			}
			name := strings.Split(rv.Type().Field(i).Tag.Get("json"), ",")[0]
			s := rv.Field(i).String()
			max := maxText
			if r, ok := bodyFields[name]; ok {
				max = r.max
				if r.trimmed {
					s = strings.TrimSpace(s)
				}
			}
			if len(s) > max {
				t.Fatalf("%s: %d bytes accepted, bound %d", name, len(s), max)
			}
			for _, r := range s {
				if (unicode.IsControl(r) && !(name == "note" && (r == '\n' || r == '\t'))) || r == unicode.ReplacementChar {
					t.Fatalf("%s: accepted %q", name, s)
				}
			}
		}
		again, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		w := reflect.New(rv.Type()).Interface()
		if err := decodeStrict(again, w, true); err != nil {
			t.Fatalf("re-encoded %s refused: %v", again, err)
		}
		if !reflect.DeepEqual(v, w) {
			t.Fatalf("round trip: %+v became %+v", v, w)
		}
	})
}
