package sim

import (
	"math/big"

	"github.com/paywatch/paywatch/reports"
)

// rowResolved is what a reconciliation row counts as resolved.
func rowResolved(row reports.ReconRow) *big.Int {
	v, _ := new(big.Int).SetString(row.Resolved, 10)
	if v == nil {
		v = new(big.Int)
	}
	return v
}

// unresolvedNow is the part of transfer id no intent settles and no
// decision covers: what a decision made now covers.
func (r *run) unresolvedNow(id string) (*big.Int, error) {
	var s string
	err := r.w.e.Store.Pool().QueryRow(r.ctx, `SELECT amount - settled - resolved FROM transfers WHERE id = $1`, id).Scan(&s)
	if err != nil {
		return nil, err
	}
	v, _ := new(big.Int).SetString(s, 10)
	return v, nil
}
