package config

import (
	"bytes"
	"crypto/sha256"
	"net/url"
	"strings"
	"time"

	"github.com/btcsuite/btcd/btcutil/base58"

	"github.com/paywatch/paywatch/payment"
)

// Network configures one network.
type Network struct {
	// Enabled runs the network's scanner.
	Enabled bool `yaml:"enabled"`
	// Chain is mainnet, testnet or regtest (address formats).
	Chain string `yaml:"chain"`
	// RPCURL is the node URL, credentials included;
	// PAYWATCH_<NETWORK>_RPC_URL overrides it.
	RPCURL string `yaml:"rpc_url"`
	// NotifyURL is where the node pushes its changes, when that is not
	// where paywatch looks by default: the Ethereum eth_subscribe websocket
	// (ws:// or wss://; default the RPC URL with http made ws), the Solana
	// pubsub websocket (default likewise; a bare agave node serves it on
	// the RPC port + 1), or a Bitcoin Core / Litecoin Core ZMQ publisher
	// (tcp://host:port publishing hashblock and hashtx or rawtx; default
	// none: waitfornewblock and a mempool peek). btcd's websocket is found
	// on the RPC URL; Tron pushes nothing. PAYWATCH_<NETWORK>_NOTIFY_URL
	// overrides it.
	NotifyURL string `yaml:"notify_url"`
	// EndpointList is the network's endpoints (networks.<n>.endpoints),
	// several nodes or providers in a pool; rpc_url is the one-endpoint
	// form. Use Endpoints, which Validate resolves from either.
	EndpointList []Endpoint `yaml:"endpoints"`
	// CookieFile is the node's RPC cookie file (Bitcoin Core, Litecoin
	// Core), used when rpc_url carries no user:password.
	CookieFile string `yaml:"cookie_file"`
	// APIKeyEnv names the environment variable holding a node API key
	// (Tron: TRON-PRO-API-KEY).
	APIKeyEnv string `yaml:"api_key_env"`
	// AccountKey is the account-level extended public key (xpub, zpub, …)
	// addresses are derived from. Never a private key.
	AccountKey string `yaml:"account_key"`
	// Gap is how many addresses beyond the last handed out are watched.
	Gap int `yaml:"gap"`
	// PollInterval between tip checks.
	PollInterval Duration `yaml:"poll_interval"`
	// MaxLagBlocks: new intents are refused when the scanner is further
	// behind the node than this, or the node is unreachable.
	MaxLagBlocks int64 `yaml:"max_lag_blocks"`
	// SafetyDepth: a reorg deeper than this is a critical, sticky failure.
	SafetyDepth int64 `yaml:"safety_depth"`
	// StartHeight is where a fresh scanner starts; default the node's tip.
	StartHeight *int64 `yaml:"start_height"`
	// Parallel blocks fetched at once when catching up.
	Parallel int `yaml:"parallel"`
	// Mode selects Solana scanning: block, address or auto.
	Mode string `yaml:"mode"`
	// Trace selects Ethereum internal-transfer detection: auto, on, off.
	Trace string `yaml:"trace"`
	// InternalTxProbe (Tron) is a transaction of the chain that has
	// internal transactions: with the TRX method enabled, a node whose
	// answer for it has none (java-tron vm.saveInternalTx = false) is
	// refused. Empty: Nile's known one on Nile, else unchecked (a warning).
	InternalTxProbe string `yaml:"internal_tx_probe"`
	// LargeAmountUSD (a decimal, e.g. "1000.00"; empty: off): an intent
	// of at least this many US dollars is paid only once an endpoint of
	// another provider than the one that served the scan (role verify, or
	// both under another name) confirms its transfers by transaction at
	// the required depth on its best chain (issue 33 item 5). Without such
	// an endpoint these intents are held (a warning at start, a critical
	// metric). Unlike methods.<m>.large_amount_usd, which asks for more
	// confirmations, this asks for a second source.
	LargeAmountUSD string `yaml:"large_amount_usd"`

	endpoints []Endpoint // resolved by Validate: EndpointList or rpc_url
	large     bool
	largeUSD  payment.Cents
}

// LargeAmount is large_amount_usd in cents; false when it is off.
func (n *Network) LargeAmount() (payment.Cents, bool) { return n.largeUSD, n.large }

func defaultNetwork(n payment.Network) *Network {
	nw := &Network{Chain: "mainnet", Gap: 20, PollInterval: Duration{5 * time.Second}, Parallel: 4, MaxLagBlocks: 3, SafetyDepth: 100}
	switch n {
	case payment.Bitcoin:
		nw.PollInterval = Duration{10 * time.Second}
		nw.MaxLagBlocks = 2
		nw.Parallel = 8 // catch-up is round-trip bound: fetch 8 raw blocks at once
	case payment.Litecoin:
		nw.MaxLagBlocks = 4
		nw.Parallel = 8
	case payment.Ethereum:
		nw.PollInterval = Duration{4 * time.Second}
		nw.MaxLagBlocks = 10
		nw.SafetyDepth = 64
		nw.Trace = "auto"
	case payment.Tron:
		nw.PollInterval = Duration{3 * time.Second}
		nw.MaxLagBlocks = 20
		nw.SafetyDepth = 19
	case payment.Solana:
		nw.PollInterval = Duration{2 * time.Second}
		nw.MaxLagBlocks = 150
		nw.SafetyDepth = 0
		nw.Mode = "auto"
	}
	return nw
}

func (c *Config) validateNetwork(name payment.Network) error {
	n := c.Networks[name]
	f := "networks." + string(name)
	switch n.Chain {
	case "mainnet", "testnet", "regtest":
	default:
		return invalid(f+".chain", "must be mainnet, testnet or regtest")
	}
	if n.PollInterval.Duration < 10*time.Millisecond {
		return invalid(f+".poll_interval", "must be at least 10ms")
	}
	if n.Gap < 0 || n.Gap > 10000 {
		return invalid(f+".gap", "must be between 0 and 10000")
	}
	if n.Parallel < 1 || n.Parallel > 64 {
		return invalid(f+".parallel", "must be between 1 and 64")
	}
	if n.MaxLagBlocks < 0 || n.SafetyDepth < 0 {
		return invalid(f+".max_lag_blocks", "must not be negative")
	}
	if n.StartHeight != nil && *n.StartHeight < 0 {
		return invalid(f+".start_height", "must not be negative")
	}
	if n.CookieFile != "" && name != payment.Bitcoin && name != payment.Litecoin {
		return invalid(f+".cookie_file", "only Bitcoin and Litecoin nodes use an RPC cookie")
	}
	if err := n.validateEndpoints(name); err != nil {
		return err
	}
	n.large, n.largeUSD = false, 0
	if n.LargeAmountUSD != "" {
		v, err := payment.ParseUSD(n.LargeAmountUSD)
		if err != nil {
			return invalid(f+".large_amount_usd", "%v", err)
		}
		if v <= 0 {
			return invalid(f+".large_amount_usd", "must be more than 0 (leave it empty to verify no intent)")
		}
		n.large, n.largeUSD = true, v
	}
	if !n.Enabled {
		return nil
	}
	if len(n.EndpointList) == 0 {
		if u, err := url.Parse(n.RPCURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return invalid(f+".rpc_url", "must be an http(s) URL of the node (or PAYWATCH_%s_RPC_URL), or list endpoints", strings.ToUpper(string(name)))
		}
	}
	if err := validateNotifyURL(name, n.NotifyURL); err != nil {
		return err
	}
	if name == payment.Solana {
		switch n.Mode {
		case "block", "address", "auto":
		default:
			return invalid(f+".mode", "must be block, address or auto")
		}
		if n.AccountKey != "" {
			return invalid(f+".account_key", "Solana has no public derivation: import a pool with `paywatch pool import`")
		}
		return nil
	}
	if n.InternalTxProbe != "" && (name != payment.Tron || len(n.InternalTxProbe) != 64 || strings.Trim(n.InternalTxProbe, "0123456789abcdef") != "") {
		return invalid(f+".internal_tx_probe", "must be a Tron transaction id (64 lower-case hex digits), and only for tron")
	}
	if name == payment.Ethereum {
		switch n.Trace {
		case "auto", "on", "off":
		default:
			return invalid(f+".trace", "must be auto, on or off")
		}
	}
	if n.AccountKey == "" {
		return invalid(f+".account_key", "must be the account-level extended public key")
	}
	if looksPrivate(n.AccountKey) {
		return invalid(f+".account_key", "is a PRIVATE extended key; paywatch is watch-only and needs the public key (xpub)")
	}
	return nil
}

// validateKeyVersions refuses, for every enabled derived network, an account
// key of another coin or network (checkKeyVersion). It runs after the
// production checks, which name a well-known test key more precisely.
func (c *Config) validateKeyVersions() error {
	for _, name := range payment.Networks {
		n := c.Networks[name]
		if n == nil || !n.Enabled || name == payment.Solana {
			continue
		}
		if err := checkKeyVersion(name, n.Chain, n.AccountKey); err != nil {
			return err
		}
	}
	return nil
}

// validateNotifyURL checks networks.<name>.notify_url by what the network's
// node pushes on.
func validateNotifyURL(name payment.Network, raw string) error {
	if raw == "" {
		return nil
	}
	f := "networks." + string(name) + ".notify_url"
	u, err := url.Parse(raw)
	switch name {
	case payment.Ethereum, payment.Solana:
		if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
			return invalid(f, "must be a ws(s) URL of the node's websocket (or PAYWATCH_%s_NOTIFY_URL)", strings.ToUpper(string(name)))
		}
	case payment.Bitcoin, payment.Litecoin:
		if err != nil || u.Scheme != "tcp" || u.Hostname() == "" || u.Port() == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return invalid(f, "must be the node's ZMQ publisher as tcp://host:port (its -zmqpubhashblock and -zmqpubhashtx address)")
		}
	default:
		return invalid(f, "%s nodes push no changes: leave it empty", name)
	}
	return nil
}

// looksPrivate spots private extended keys by their well-known prefixes.
func looksPrivate(k string) bool {
	for _, p := range []string{"xprv", "yprv", "zprv", "tprv", "uprv", "vprv", "Ltpv", "Mtpv", "ttpv"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// MainnetNetworks returns the enabled networks on chain mainnet, in
// payment.Networks order: where real money is watched.
func (c *Config) MainnetNetworks() []payment.Network {
	var out []payment.Network
	for _, n := range payment.Networks {
		if nc := c.Networks[n]; nc != nil && nc.Enabled && nc.Chain == "mainnet" {
			out = append(out, n)
		}
	}
	return out
}

// keyVersion is what an extended public key's version bytes (its prefix)
// say it is for.
type keyVersion struct {
	litecoin bool // Ltub, Mtub, ttub: Litecoin's own versions
	testnet  bool // tpub, upub, vpub, ttub: testnet (and regtest)
	segwit   bool // y/z/u/v/Y/Z/U/V pub: BIP49 and BIP84, Bitcoin and Litecoin only
}

var keyVersions = map[string]keyVersion{
	"xpub": {}, "ypub": {segwit: true}, "zpub": {segwit: true}, "Ypub": {segwit: true}, "Zpub": {segwit: true},
	"tpub": {testnet: true}, "upub": {testnet: true, segwit: true}, "vpub": {testnet: true, segwit: true},
	"Upub": {testnet: true, segwit: true}, "Vpub": {testnet: true, segwit: true},
	"Ltub": {litecoin: true}, "Mtub": {litecoin: true, segwit: true}, "ttub": {litecoin: true, testnet: true},
}

// checkKeyVersion refuses an account key whose version bytes say it is for
// another coin or network than networks.<name> (a Litecoin Ltub on
// bitcoin, a testnet vpub on a mainnet litecoin, a BIP84 zpub on
// ethereum; on bitcoin, whose versions tell mainnet from testnet, an xpub
// on regtest). A key of no known version, or not a well-formed extended
// key, is left to the deriver. An account xpub does not say its coin type:
// an Ethereum xpub on a mainnet bitcoin reads as a Bitcoin BIP44 key.
func checkKeyVersion(name payment.Network, chain, key string) error {
	raw := base58.Decode(key)
	if len(raw) != 82 || len(key) < 4 {
		return nil
	}
	sum := sha256.Sum256(raw[:78])
	sum = sha256.Sum256(sum[:])
	if !bytes.Equal(sum[:4], raw[78:]) {
		return nil
	}
	prefix := key[:4]
	v, ok := keyVersions[prefix]
	if !ok {
		return nil
	}
	f := "networks." + string(name) + ".account_key"
	mainnet := chain == "mainnet"
	refuse := func(what string) error {
		return invalid(f, "%s… is %s, not a key for %s on %s: export the account key of this network's wallet", prefix, what, name, chain)
	}
	switch name {
	case payment.Bitcoin:
		switch {
		case v.litecoin:
			return refuse("a Litecoin key")
		case mainnet && v.testnet:
			return refuse("a testnet key")
		case !mainnet && !v.testnet:
			return refuse("a mainnet key (an Ethereum or Tron xpub, or a Bitcoin mainnet key)")
		}
	case payment.Litecoin:
		if mainnet && v.testnet {
			return refuse("a testnet key")
		}
	case payment.Ethereum, payment.Tron:
		switch {
		case v.litecoin:
			return refuse("a Litecoin key")
		case v.segwit:
			return refuse("a Bitcoin or Litecoin SegWit (BIP49/84) key")
		case mainnet && v.testnet:
			return refuse("a testnet key")
		}
	}
	return nil
}

// VerifyWarnings says, for each enabled network with large_amount_usd,
// when no endpoint of another provider can verify its large intents: they
// would be held, never paid (issue 33 item 5). The daemon logs them at
// start; they do not stop it.
func (c *Config) VerifyWarnings() []string {
	var out []string
	for _, name := range payment.Networks {
		n := c.Networks[name]
		if n == nil || !n.Enabled || !n.large {
			continue
		}
		eps := n.Endpoints()
		verify := false
		for _, e := range eps {
			verify = verify || e.Role == RoleVerify
		}
		if !verify && len(eps) < 2 {
			out = append(out, "networks."+string(name)+".large_amount_usd is set but the network has no second endpoint to verify with "+
				"(an endpoint of role verify, or another of role both): intents from "+n.largeUSD.String()+" USD will be held, never paid")
		}
	}
	return out
}
