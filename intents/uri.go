package intents

import (
	"net/url"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// PaymentURI builds the wallet link of an intent: BIP21 for BTC and LTC,
// EIP-681 for ETH and ERC-20, Solana Pay for SOL, and tron:<address>?amount=
// (&token=<contract> for TRC-20) for Tron.
func (s *Service) PaymentURI(in store.Intent) string {
	info, ok := payment.LookupMethod(payment.Method(in.Method))
	if !ok {
		return ""
	}
	amount := payment.TrimUnits(in.Amount, info.Decimals)
	contract := ""
	if m := s.cfg.Methods[info.Method]; m != nil {
		contract = m.Contract
	}
	switch info.Method {
	case payment.BTC:
		return "bitcoin:" + in.Address + "?amount=" + amount
	case payment.LTC:
		return "litecoin:" + in.Address + "?amount=" + amount
	case payment.ETH:
		return "ethereum:" + in.Address + "?value=" + in.Amount.String()
	case payment.USDTERC20, payment.USDCERC20:
		return "ethereum:" + contract + "/transfer?address=" + in.Address + "&uint256=" + in.Amount.String()
	case payment.TRX:
		return "tron:" + in.Address + "?amount=" + amount
	case payment.USDTTRC20:
		return "tron:" + in.Address + "?amount=" + amount + "&token=" + url.QueryEscape(contract)
	case payment.SOL:
		return "solana:" + in.Address + "?amount=" + amount + "&label=" + url.QueryEscape(in.Reference)
	}
	return ""
}
