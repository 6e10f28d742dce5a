package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/console"
)

// heldStatus is the environment's network status with a second source's
// verification on bitcoin, one intent held by a disagreement.
type heldStatus struct{ console.Status }

var _ console.Status = (*heldStatus)(nil)

func (h *heldStatus) Networks(ctx context.Context) ([]availability.NetworkStatus, error) {
	nets, err := h.Status.Networks(ctx)
	for i := range nets {
		if nets[i].Network == "bitcoin" {
			nets[i].Verification = &availability.VerificationStatus{LargeAmountUSD: "1000.00", Verifiers: []string{"checker"}, Held: 1,
				HeldIntents: []availability.HeldIntent{{IntentID: "in_held1", State: "disagrees"}}, Disagreements: 2}
		}
	}
	return nets, err
}

// Issue 33 item 5: the console's networks page shows a network's second
// source (its threshold, verifiers and disagreements) and, as a critical
// banner, the large payments it holds, each linked to its intent.
func TestNetworksShowsPaymentsHeldForASecondSource(t *testing.T) {
	hs := &heldStatus{}
	s := newSiteWith(t, console.Options{Status: hs})
	hs.Status = s.Nets
	c := s.client(t)
	c.signIn(t, s.Keys["operator"])
	resp, page := c.get(t, "/console/networks")
	if resp.StatusCode != 200 {
		t.Fatalf("networks: %d", resp.StatusCode)
	}
	for _, want := range []string{`id="verification-held-bitcoin"`, "bitcoin: 1 large payment held for a second source",
		`href="/console/intents/in_held1"`, "disagrees", "second source from 1000.00 USD: checker; 2 disagreements"} {
		if !strings.Contains(page, want) {
			t.Fatalf("the networks page lacks %q:\n%s", want, page)
		}
	}
}
