package store_test

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/paywatch/paywatch/payment"
)

// The CHECK constraints of the schema hold exactly the Go sets of package
// payment: a state added on one side only fails here, not in production.
func TestCheckConstraintsEqualTheGoStateSets(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	cases := []struct {
		constraint string
		want       []string
	}{
		{"intents_status_check", strs(payment.IntentStatuses())},
		{"transfers_status_check", strs(payment.TransferStatuses())},
		{"transfers_classification_check", strs(payment.Classifications())},
		{"payables_kind_check", strs(payment.PayableKinds())},
		{"ledger_entries_type_check", strs(payment.LedgerEntryTypes())},
	}
	quoted := regexp.MustCompile(`'([^']*)'`)
	for _, c := range cases {
		var def string
		if err := s.Pool().QueryRow(ctx, `SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = $1 AND contype = 'c'`,
			c.constraint).Scan(&def); err != nil {
			t.Errorf("%s: %v", c.constraint, err)
			continue
		}
		var got []string
		for _, m := range quoted.FindAllStringSubmatch(def, -1) {
			got = append(got, m[1])
		}
		slices.Sort(got)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s holds %v (%s), the Go set is %v", c.constraint, got, def, want)
		}
	}
}

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
