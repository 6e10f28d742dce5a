package console

import (
	"slices"
	"testing"

	"github.com/paywatch/paywatch/payment"
)

// The inbox counts every classification there is, each once.
func TestInboxListsEveryClassification(t *testing.T) {
	want := names(payment.Classifications()...)
	got := slices.Clone(classifications)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("inbox classifications %v, want the set %v", got, want)
	}
}
