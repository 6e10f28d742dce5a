package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/payment"
)

// writeConfig writes paywatch.yaml for this run and loads it back, so the
// daemon runs exactly what the file says.
func (s *sandbox) writeConfig(listen string, deadline time.Duration) error {
	if deadline <= 0 {
		deadline = 30 * time.Minute
	}
	if listen == "" {
		if s.state.Listen != "" && addrFree(s.state.Listen) {
			listen = s.state.Listen
		} else if addrFree("127.0.0.1:8080") {
			listen = "127.0.0.1:8080"
		} else {
			p, err := devnet.FreePort()
			if err != nil {
				return err
			}
			listen = fmt.Sprintf("127.0.0.1:%d", p)
		}
	}
	s.state.Listen = listen
	p := s.state.Ports
	url := func(name string) string { return fmt.Sprintf("http://127.0.0.1:%d", p[name]) }
	tronUSDT := config.Default().Methods[payment.USDTTRC20].Contract
	// Each network: the faulty proxy (preferred), then the node itself.
	eps := func(n payment.Network) []any { return []any{s.proxies[n].url, s.nodeURL(n)} }
	args := []any{time.Now().UTC().Format(time.RFC3339), listen, s.pg.URL("paywatch"), deadline, "http://" + listen,
		s.state.USDT, s.state.USDC, tronUSDT}
	args = append(append(args, eps(payment.Bitcoin)...), addresses.SandboxKeys[payment.Bitcoin])
	args = append(append(args, eps(payment.Litecoin)...), addresses.SandboxKeys[payment.Litecoin])
	args = append(append(args, eps(payment.Ethereum)...), "ws://"+strings.TrimPrefix(s.anvil.RPCURL, "http://"), sandboxEthereumKey)
	args = append(append(args, eps(payment.Tron)...), addresses.SandboxKeys[payment.Tron])
	args = append(append(args, eps(payment.Solana)...), fmt.Sprintf("ws://127.0.0.1:%d", p["solana"]+1))
	y := fmt.Sprintf(sandboxConfig, args...)
	y += webhooksConfig(s.webhooks)
	s.cfgPath = filepath.Join(s.dir, "paywatch.yaml")
	if err := writeFileAtomic(s.cfgPath, []byte(y), 0o600); err != nil {
		return err
	}
	// The file is the whole truth: no PAYWATCH_* environment override.
	cfg, err := config.Parse(strings.NewReader(y), func(string) string { return "" })
	if err != nil {
		return fmt.Errorf("sandbox config %s: %w", s.cfgPath, err)
	}
	s.cfg = cfg
	tw, sw := sandboxTronWallet(), sandboxSolanaWallet()
	keypair := filepath.Join(s.dir, "solana-wallet.json")
	if err := writeSolanaKeypair(keypair, sw); err != nil {
		return err
	}
	mint := sandboxSolanaMint()
	s.env = sandboxEnv{
		envURL: "http://" + listen, envBitcoin: s.btcd.RPCURL, envLitecoin: s.ltc.RPCURL,
		envEthereum: s.anvil.RPCURL, envUSDT: s.state.USDT, envUSDC: s.state.USDC,
		envTron: url("tron"), envSolana: url("solana"), envTronUSDT: tronUSDT,
		envTronControl: url("tron_control"), envSolanaControl: url("solana_control"),
		envTronKey: tw.KeyHex(), envTronAddress: tw.Base58(),
		envSolanaWS: fmt.Sprintf("ws://127.0.0.1:%d", p["solana"]+1), envSolanaKeypair: keypair,
		envSolanaAddress: solanaAddress(publicKey32(sw)), envSolanaMint: solanaAddress(mint),
		envFaults: s.faultsURL,
	}
	if len(s.webhooks) > 0 {
		secret, err := s.webhookSecret()
		if err != nil {
			return err
		}
		s.env[envWebhookSecret], s.env[envWebhookURLs] = secret, strings.Join(s.webhooks, " ")
	}
	return nil
}

// sandboxConfig is the sandbox's paywatch.yaml; see config/paywatch.example.yaml
// for every setting.
const sandboxConfig = `# paywatch SANDBOX config, written by ` + "`paywatch-sandbox`" + ` at %s.
# Sandbox only: static rates, the public test mnemonic's keys, throwaway chains.
# Edits are overwritten on the next start; copy config/paywatch.example.yaml instead.
listen: %q
database_url: %q
instance: sandbox
deadline: %s
expiry_sweep: "@every 5s"
log_level: info
reconcile:
  schedule: "@every 5m"  # the reconciler, more often than production's hourly
console:
  signin_links: true   # the banner's one-time sign-in link
checkout:
  enabled: true        # the hosted payment page; its secret is checkout.secret beside this file
  public_base_url: %q
  storefront_name: "Sandbox shop"
  return_hosts: [localhost, 127.0.0.1]
rates:
  sources: [static]
  refresh: "@every 30s"
  max_age: 10m
  min_sources: 1
  static: {BTC: "60000", LTC: "80", ETH: "3000", USDT: "1", USDC: "1", TRX: "0.25", SOL: "150"}
methods:
  BTC:        {enabled: true, confirmations: 2}
  LTC:        {enabled: true, confirmations: 2}
  ETH:        {enabled: true, confirmations: 3}
  USDT-ERC20: {enabled: true, confirmations: 3, contract: %q}
  USDC-ERC20: {enabled: true, confirmations: 3, contract: %q}
  TRX:        {enabled: true, confirmations: 0}   # 0 = solidified (3 blocks in the sandbox)
  USDT-TRC20: {enabled: true, confirmations: 0, contract: %q}
  SOL:        {enabled: true, confirmations: 0}   # 0 = finalized
networks:
  bitcoin:
    enabled: true
    chain: regtest
    endpoints:        # "proxy" fails on command (paywatch-sandbox fault bitcoin KIND); "node" is the node
      - {name: proxy, url: %q, priority: 0}
      - {name: node, url: %q, priority: 1}
    large_amount_usd: "1000"   # from 1000 USD an intent is paid only once the other endpoint verifies it
    account_key: %q
    poll_interval: 1s
    max_lag_blocks: 50
  litecoin:
    enabled: true
    chain: regtest
    endpoints:        # "proxy" fails on command (paywatch-sandbox fault litecoin KIND); "node" is the node
      - {name: proxy, url: %q, priority: 0}
      - {name: node, url: %q, priority: 1}
    large_amount_usd: "1000"   # from 1000 USD an intent is paid only once the other endpoint verifies it
    account_key: %q
    poll_interval: 1s
    max_lag_blocks: 50
  ethereum:
    enabled: true
    chain: regtest
    endpoints:        # "proxy" fails on command (paywatch-sandbox fault ethereum KIND); "node" is the node
      - {name: proxy, url: %q, priority: 0}
      - {name: node, url: %q, priority: 1}
    large_amount_usd: "1000"   # from 1000 USD an intent is paid only once the other endpoint verifies it
    notify_url: %q    # anvil's websocket, on the node itself
    account_key: %q
    poll_interval: 1s
    max_lag_blocks: 50
  tron:
    enabled: true
    chain: regtest
    endpoints:        # "proxy" fails on command (paywatch-sandbox fault tron KIND); "node" is the node
      - {name: proxy, url: %q, priority: 0}
      - {name: node, url: %q, priority: 1}
    large_amount_usd: "1000"   # from 1000 USD an intent is paid only once the other endpoint verifies it
    account_key: %q
    poll_interval: 1s
    max_lag_blocks: 50
  solana:
    enabled: true
    chain: regtest
    endpoints:        # "proxy" fails on command (paywatch-sandbox fault solana KIND); "node" is the node
      - {name: proxy, url: %q, priority: 0}
      - {name: node, url: %q, priority: 1}
    large_amount_usd: "1000"   # from 1000 USD an intent is paid only once the other endpoint verifies it
    notify_url: %q    # the pubsub websocket, on the node itself
    poll_interval: 1s
    max_lag_blocks: 300
    mode: block
`
