package payment

import "fmt"

// Network is a blockchain paywatch scans. Each network has exactly one scanner.
type Network string

// The networks paywatch watches.
const (
	Bitcoin  Network = "bitcoin"
	Litecoin Network = "litecoin"
	Ethereum Network = "ethereum"
	Tron     Network = "tron"
	Solana   Network = "solana"
)

// Networks lists every network in a stable order.
var Networks = []Network{Bitcoin, Litecoin, Ethereum, Tron, Solana}

// Valid reports whether n is one of the known networks.
func (n Network) Valid() bool {
	for _, k := range Networks {
		if k == n {
			return true
		}
	}
	return false
}

// Asset names what moves on a network: the network's native coin or a token.
type Asset string

// The assets paywatch knows. Native is the network's own coin (BTC, LTC, ETH,
// TRX, SOL); tokens are named by their symbol.
const (
	Native Asset = "native"
	USDT   Asset = "USDT"
	USDC   Asset = "USDC"
)

// Method is a payment method: one asset on one network, e.g. "USDT-TRC20".
type Method string

// The eight payment methods of the README.
const (
	BTC       Method = "BTC"
	LTC       Method = "LTC"
	ETH       Method = "ETH"
	USDTERC20 Method = "USDT-ERC20"
	USDCERC20 Method = "USDC-ERC20"
	TRX       Method = "TRX"
	USDTTRC20 Method = "USDT-TRC20"
	SOL       Method = "SOL"
)

// MethodInfo is the fixed description of a payment method. Operator settings
// (enabled, confirmations, contract addresses) live in config, not here.
type MethodInfo struct {
	// Method is the method's name as used in the API.
	Method Method
	// Network is the chain the method settles on.
	Network Network
	// Asset is Native or a token symbol.
	Asset Asset
	// Symbol is the ticker a rate is quoted for (BTC, USDT, ...).
	Symbol string
	// Decimals is the number of decimal places of one whole unit.
	Decimals int
	// MainnetContract is the token contract on mainnet; empty for native assets.
	MainnetContract string
	// DefaultConfirmations is the confirmation depth of config/paywatch.example.yaml; 0 means the
	// network's own finality (Tron solidified, Solana finalized).
	DefaultConfirmations int
}

// Methods lists the eight methods in a stable order.
var Methods = []MethodInfo{
	{Method: BTC, Network: Bitcoin, Asset: Native, Symbol: "BTC", Decimals: 8, DefaultConfirmations: 2},
	{Method: LTC, Network: Litecoin, Asset: Native, Symbol: "LTC", Decimals: 8, DefaultConfirmations: 6},
	{Method: ETH, Network: Ethereum, Asset: Native, Symbol: "ETH", Decimals: 18, DefaultConfirmations: 12},
	{Method: USDTERC20, Network: Ethereum, Asset: USDT, Symbol: "USDT", Decimals: 6,
		MainnetContract: "0xdAC17F958D2ee523a2206206994597C13D831ec7", DefaultConfirmations: 12},
	{Method: USDCERC20, Network: Ethereum, Asset: USDC, Symbol: "USDC", Decimals: 6,
		MainnetContract: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", DefaultConfirmations: 12},
	{Method: TRX, Network: Tron, Asset: Native, Symbol: "TRX", Decimals: 6, DefaultConfirmations: 0},
	{Method: USDTTRC20, Network: Tron, Asset: USDT, Symbol: "USDT", Decimals: 6,
		MainnetContract: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", DefaultConfirmations: 0},
	{Method: SOL, Network: Solana, Asset: Native, Symbol: "SOL", Decimals: 9, DefaultConfirmations: 0},
}

// LookupMethod returns the description of m, or false when m is not one of
// the eight methods.
func LookupMethod(m Method) (MethodInfo, bool) {
	for _, info := range Methods {
		if info.Method == m {
			return info, true
		}
	}
	return MethodInfo{}, false
}

// MustMethod is LookupMethod for names known at compile time.
func MustMethod(m Method) MethodInfo {
	info, ok := LookupMethod(m)
	if !ok {
		panic(fmt.Sprintf("payment: unknown method %q", m))
	}
	return info
}

// MethodFor returns the method that moves asset on network, or false when
// paywatch has no such method (e.g. USDC on Tron).
//
// a may be the stored name (Native) or the name the API shows (AssetName:
// the native coin's symbol, BTC, ETH…), so a caller holding either finds the
// method.
func MethodFor(n Network, a Asset) (MethodInfo, bool) {
	for _, info := range Methods {
		if info.Network == n && (info.Asset == a || info.Asset == Native && Asset(info.Symbol) == a) {
			return info, true
		}
	}
	return MethodInfo{}, false
}

// AssetName is the asset as every answer, event and report shows it: its
// symbol, as intents and GET /v1/methods name it (BTC, ETH, USDT…), never
// the stored "native". An asset of no method keeps its stored name.
func AssetName(n Network, a Asset) string {
	if info, ok := MethodFor(n, a); ok {
		return info.Symbol
	}
	return string(a)
}

// CoinbaseMaturity is the confirmations after which a coinbase output can be
// spent (Bitcoin's and Litecoin's COINBASE_MATURITY): a coinbase output paid
// to one of our addresses pays only then (issue 27).
const CoinbaseMaturity = 100

// PegoutMaturity is the confirmations after which a Litecoin MWEB peg-out
// can be spent (Litecoin Core's PEGOUT_MATURITY): a peg-out is an output of
// its block's HogEx transaction, and one paid to our address pays only then
// (issue 32 item 4).
const PegoutMaturity = 6
