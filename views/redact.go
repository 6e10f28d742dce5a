package views

import (
	"bytes"
	"encoding/json"

	"github.com/paywatch/paywatch/store"
)

// financeOnly are the fields of a resolution that are finance's internal
// record (issue 22, item 11): the note, the clerk's key name and an
// override's reason. Storefront-scoped answers, the event feed of keys
// without the finance scope and webhook bodies leave them out.
var financeOnly = []string{"note", "actor", "override_reason"}

// ForStorefront returns body (a JSON document: a transfer, an intent, a
// payable, an event page, an event) without the finance-only fields of any
// resolution in it, at any depth ("resolution" objects and the elements of
// "resolutions" arrays). A body without a "note" is returned as is (the
// same bytes); one that is not JSON too.
func ForStorefront(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"note"`)) {
		return body
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return body
	}
	if !strip(doc, false) {
		return body
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	if len(body) > 0 && body[len(body)-1] == '\n' {
		out = append(out, '\n')
	}
	return out
}

// strip walks v; inResolution says v is a resolution object. It reports
// whether it removed anything.
func strip(v any, inResolution bool) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		if inResolution {
			for _, k := range financeOnly {
				if _, ok := x[k]; ok {
					delete(x, k)
					changed = true
				}
			}
		}
		for k, c := range x {
			switch k {
			case "resolution":
				changed = strip(c, true) || changed
			case "resolutions":
				if arr, ok := c.([]any); ok {
					for _, r := range arr {
						changed = strip(r, true) || changed
					}
				}
			default:
				changed = strip(c, false) || changed
			}
		}
	case []any:
		for _, c := range x {
			changed = strip(c, false) || changed
		}
	}
	return changed
}

// StorefrontEventOf is EventOf without the finance-only fields in its data
// (ForStorefront): the event as a storefront key or a webhook receiver gets
// it.
func StorefrontEventOf(e store.Event) Event {
	v := EventOf(e)
	v.Data = ForStorefront(v.Data)
	return v
}
