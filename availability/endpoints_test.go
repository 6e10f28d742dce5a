package availability

import (
	"strings"
	"testing"

	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/payment"
)

// Issue 33 item 2: new intents are refused only when no scanning endpoint
// can serve within the lag bound; a throttled one still serves.
func TestIntentsRefusedOnlyWhenNoEndpointServes(t *testing.T) {
	var eps []endpoints.Status
	n := &Networks{Endpoints: func(payment.Network) []endpoints.Status { return eps }}
	for _, tc := range []struct {
		name   string
		eps    []endpoints.Status
		refuse bool
	}{
		{"no pool", nil, false},
		{"one healthy", []endpoints.Status{{Name: "a", Scans: true, State: endpoints.Unreachable}, {Name: "b", Scans: true, State: endpoints.Healthy}}, false},
		{"throttled is not down", []endpoints.Status{{Name: "a", Scans: true, State: endpoints.Throttled}, {Name: "b", Scans: true, State: endpoints.Lagging}}, false},
		{"all lagging or down", []endpoints.Status{{Name: "a", Scans: true, State: endpoints.Lagging}, {Name: "b", Scans: true, State: endpoints.Unreachable}}, true},
		{"only a verifier healthy", []endpoints.Status{{Name: "a", Scans: true, State: endpoints.WrongChain}, {Name: "v", Scans: false, State: endpoints.Healthy}}, true},
	} {
		eps = tc.eps
		err := n.judgeEndpoints(payment.Tron)
		if (err != nil) != tc.refuse {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err != nil && !strings.Contains(err.Error(), "a ") {
			t.Errorf("%s: the reason names no endpoint: %v", tc.name, err)
		}
	}
}
