package store

import (
	"fmt"
	"math/big"
)

// num renders a base-unit amount as a NUMERIC parameter.
func num(v *big.Int) string {
	if v == nil {
		return "0"
	}
	return v.String()
}

// parseNum parses a NUMERIC(78,0) read as text.
func parseNum(s string) (*big.Int, error) {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, fmt.Errorf("store: bad numeric %q", s)
	}
	return v, nil
}
