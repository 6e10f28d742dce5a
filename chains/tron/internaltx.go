package tron

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/paywatch/paywatch/chains"
)

// NileInternalTxProbe is a Nile transaction whose TransactionInfo has
// internal_transactions (a contract calling itself at block 66985120;
// documentation-en gettransactioninfobyid.md): the probe VerifyChain uses on
// Nile when Config.InternalTxProbe is empty.
const NileInternalTxProbe = "01b4cde4197b9d1a1ff09ef5d2b1d939d3ec2401b3f002ebd0802c0f30a6e4ca"

// ErrInternalTxNotSaved is a node that does not write internal_transactions
// (java-tron's vm.saveInternalTx = false, its shipped default): TRX a
// contract sends to a watched address is not in anything it answers, so the
// TRX method cannot be served by it.
var ErrInternalTxNotSaved = errors.New("the node does not save internal transactions (java-tron vm.saveInternalTx = false)")

var txIDPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// checkInternalTx decides whether the node writes internal_transactions,
// when the TRX method needs them (Config.NeedInternalTx): it reads the
// TransactionInfo of a transaction known to have some (Config.
// InternalTxProbe, else NileInternalTxProbe on Nile). Without them the node
// is refused (ErrInternalTxNotSaved, naming the setting); without a probe
// on this chain it warns once that it cannot tell. A success is kept.
func (c *Client) checkInternalTx(ctx context.Context, genesis string) error {
	if !c.needInternal || c.internalOK.Load() {
		return nil
	}
	probe := c.probe
	if probe == "" && genesis == NileGenesis {
		probe = NileInternalTxProbe
	}
	if probe == "" {
		if c.warnedNoProbe.CompareAndSwap(false, true) {
			c.log.Warn("cannot check that the node saves internal transactions (java-tron vm.saveInternalTx = true): TRX sent by a contract is missed without it; "+
				"set networks.tron.internal_tx_probe to a transaction of this chain that has internal transactions", "method", "TRX")
		}
		return nil
	}
	body, err := c.post(ctx, "/wallet/gettransactioninfobyid", []byte(`{"value":"`+probe+`"}`))
	if err != nil {
		return fmt.Errorf("tron: internal transaction probe %s: %w", probe, err)
	}
	var info txInfoJSON
	if err := json.Unmarshal(body, &info); err != nil {
		return fmt.Errorf("tron: internal transaction probe %s: %w: %v", probe, chains.ErrInvalidResponse, err)
	}
	switch {
	case info.ID == "":
		return fmt.Errorf("tron: %w: it does not know the probe transaction %s (networks.tron.internal_tx_probe), which has internal transactions: "+
			"name a transaction of this chain that has some, and set vm.saveInternalTx = true in the node's config.conf, or disable methods.TRX",
			ErrInternalTxNotSaved, probe)
	case len(info.Internal) == 0:
		return fmt.Errorf("tron: %w: its answer for transaction %s (block %s) has no internal_transactions, and that transaction has some; "+
			"TRX sent to us by a contract would be missed: set vm.saveInternalTx = true in the node's config.conf and resync it from before that block, or disable methods.TRX",
			ErrInternalTxNotSaved, probe, info.BlockNumber)
	}
	c.internalOK.Store(true)
	return nil
}
