package finance_test

import (
	"github.com/paywatch/paywatch/paywatchtest"
)

// The helpers of intents' money-core tests (money_core_test.go) these
// finance tests share.

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func resolveTransfer(e *paywatchtest.Env, id string, req map[string]string) (int, []byte) {
	return e.Do("POST", "/v1/transfers/"+id+"/resolve", "finance", req)
}
