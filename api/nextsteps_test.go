package api_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/api"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// A method that is off: the core says so in its own words, and the API's
// answer adds where to look (its own route), which the core does not know.
func TestDisabledMethodAnswerNamesWhereToLook(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin, payment.Solana))
	e.Config.Methods["SOL"].Enabled = false
	req := map[string]string{"kind": "order", "reference": "ORD-OFF", "amount_usd": "10.00", "method": "SOL"}
	status, body := e.Do("POST", "/v1/intents", "storefront", req)
	var answer struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		t.Fatal(err)
	}
	if status != 400 || answer.Error.Code != "method_disabled" || !strings.Contains(answer.Error.Message, "SOL is disabled") ||
		!strings.HasSuffix(answer.Error.Message, "; GET /v1/methods lists the enabled ones") {
		t.Fatalf("disabled method: %d %s", status, body)
	}
	_, err := e.Service.Create(t.Context(), intents.CreateRequest{Kind: "order", Reference: "ORD-OFF-2", AmountUSD: "10.00", Method: "SOL"}, nil)
	var ie *intents.Error
	if !errors.As(err, &ie) || ie.Kind != intents.MethodDisabled || strings.Contains(ie.Message, "/v1/") {
		t.Fatalf("the core's error: %v", err)
	}
	if got := api.MessageOf(ie); got != ie.Message+"; GET /v1/methods lists the enabled ones" {
		t.Fatalf("MessageOf = %q", got)
	}
}
