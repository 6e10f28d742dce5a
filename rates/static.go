package rates

import (
	"context"
	"fmt"
	"math/big"
	"time"
)

// static is a fixed price table for the local sandbox and tests. It is used
// only when an operator configures it by name; it is never a fallback.
type static struct {
	prices map[string]*big.Rat
	bad    map[string]string
}

var _ Provider = (*static)(nil)

// NewStatic returns a provider named "static" that answers the given decimal
// prices ("BTC": "97000.12"). A symbol that is not in the table fails with
// ErrUnsupportedSymbol; a value that is not a positive plain decimal fails
// with ErrInvalidResponse when asked for, so a typo never becomes a rate.
func NewStatic(prices map[string]string) Provider {
	s := &static{prices: map[string]*big.Rat{}, bad: map[string]string{}}
	for sym, v := range prices {
		r, err := parsePrice("static", sym, v)
		if err != nil {
			s.bad[sym] = v
			continue
		}
		s.prices[sym] = r
	}
	return s
}

// NewStaticPrices is NewStatic over prices already parsed (config's
// rates.static, resolved at load).
func NewStaticPrices(prices map[string]*big.Rat) Provider {
	s := &static{prices: map[string]*big.Rat{}, bad: map[string]string{}}
	for sym, r := range prices {
		s.prices[sym] = new(big.Rat).Set(r)
	}
	return s
}

func (s *static) Name() string { return "static" }

func (s *static) Price(ctx context.Context, symbol string) (Price, error) {
	if err := ctx.Err(); err != nil {
		return Price{}, fail("static", symbol, err)
	}
	if v, ok := s.bad[symbol]; ok {
		return parseFailure(symbol, v)
	}
	r, ok := s.prices[symbol]
	if !ok {
		return Price{}, fail("static", symbol, fmt.Errorf("%w: no static price for %s", ErrUnsupportedSymbol, symbol))
	}
	return Price{Source: "static", USDPerUnit: new(big.Rat).Set(r), At: time.Now()}, nil
}

func parseFailure(symbol, v string) (Price, error) {
	_, err := parsePrice("static", symbol, v)
	return Price{}, err
}
