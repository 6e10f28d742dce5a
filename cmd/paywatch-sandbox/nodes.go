package main

import (
	"context"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/payment"
	"golang.org/x/sync/errgroup"
)

// sandboxEthPayer is anvil's dev account 9 (of the standard test mnemonic),
// which `paywatch-sandbox pay` pays ETH and tokens from. Account 0 (0xf39F…) is index 0
// of the sandbox's own receiving key, so it is not used as the payer. Should
// an intent ever get index 9, paying it is a self-transfer, which still
// counts: paywatch looks at what arrives, not at who sends.
var sandboxEthPayer = common.HexToAddress("0xa0Ee7A142d267C1f36714E4a8F75612F20a79720")

// startNodes starts PostgreSQL, btcd, litecoind and anvil in parallel.
func (s *sandbox) startNodes(ctx context.Context) error {
	ports := map[string]int{}
	for _, n := range []string{"postgres", "btcd", "litecoind", "anvil"} {
		p, err := s.port(n, 0)
		if err != nil {
			return err
		}
		ports[n] = p
	}
	anvilBin, err := ethdev.FindAnvil()
	if err != nil {
		return err
	}
	s.say("starting PostgreSQL, btcd (regtest), litecoind (regtest) and anvil under %s …", s.relDir)
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		pg, err := devnet.StartPostgres(gctx, filepath.Join(s.dir, "postgres"), ports["postgres"])
		if err != nil {
			return fmt.Errorf("PostgreSQL: %w", err)
		}
		mu.Lock()
		s.pg = pg
		mu.Unlock()
		return pg.CreateDatabase(gctx, "paywatch")
	})
	g.Go(func() error {
		b, err := devnet.StartBtcd(gctx, filepath.Join(s.dir, "btcd"), ports["btcd"])
		if err != nil {
			return fmt.Errorf("btcd: %w", err)
		}
		mu.Lock()
		s.btcd = b
		mu.Unlock()
		return nil
	})
	g.Go(func() error {
		l, err := devnet.StartLitecoind(gctx, filepath.Join(s.dir, "litecoind"), ports["litecoind"], false)
		if err != nil {
			return fmt.Errorf("litecoind: %w", err)
		}
		mu.Lock()
		s.ltc = l
		mu.Unlock()
		return nil
	})
	g.Go(func() error {
		adir := filepath.Join(s.dir, "anvil")
		if err := os.MkdirAll(adir, 0o755); err != nil {
			return err
		}
		a, err := ethdev.StartAnvil(gctx, anvilBin, adir, ports["anvil"],
			"--state", filepath.Join(adir, "state.json"), "--state-interval", "10", "--preserve-historical-states",
			"--slots-in-an-epoch", "1")
		if err != nil {
			return fmt.Errorf("anvil: %w", err)
		}
		mu.Lock()
		s.anvil = a
		mu.Unlock()
		return nil
	})
	return g.Wait()
}

// ensureTokens deploys the sandbox USDT and USDC once (anvil keeps them in
// its state file) and mints them to anvil's first dev account and to the
// sandbox payer. A state file that was lost means a fresh deployment.
func (s *sandbox) ensureTokens(ctx context.Context) error {
	deployed := func(addr string) bool {
		if !common.IsHexAddress(addr) {
			return false
		}
		code, err := s.anvil.Eth.CodeAt(ctx, common.HexToAddress(addr), nil)
		return err == nil && len(code) > 0
	}
	for _, t := range []struct {
		name, symbol string
		addr         *string
	}{{"Sandbox Tether USD", "USDT", &s.state.USDT}, {"Sandbox USD Coin", "USDC", &s.state.USDC}} {
		if deployed(*t.addr) {
			continue
		}
		addr, err := s.anvil.DeployToken(ctx, t.name, t.symbol)
		if err != nil {
			return fmt.Errorf("deploy the sandbox %s: %w", t.symbol, err)
		}
		for _, to := range []common.Address{ethdev.AnvilDevAccount, sandboxEthPayer} {
			if err := s.anvil.Mint(ctx, addr, to, big.NewInt(sandboxTokenSupply)); err != nil {
				return fmt.Errorf("mint the sandbox %s: %w", t.symbol, err)
			}
		}
		*t.addr = addr.Hex()
		s.say("deployed the sandbox %s token at %s", t.symbol, addr.Hex())
	}
	return nil
}

// startFakes serves the simulated Tron and Solana nodes (in memory: a
// restart begins a new chain) and their control handlers, with the test
// wallets funded as genesis state. The Solana node also serves its pubsub
// websocket on the next port, as agave does (web3.js connects to RPC port
// + 1).
func (s *sandbox) startFakes() error {
	// Their blocks carry the sandbox clock's time, as a live chain's do: a
	// payment after its deadline is late, and the networks' lag is real.
	s.tron = tronfake.NewOn(clock.Or(s.clock))
	s.tron.SetSolidifiedLag(sandboxTronSolidifiedLag)
	s.sol = solanafake.NewOn(clock.Or(s.clock))
	// New signatures must never repeat those recorded from an earlier run.
	s.sol.Reseed(uint64(time.Now().UnixNano()))
	if err := s.fundWallets(); err != nil {
		return err
	}
	solPort, err := s.portPair("solana")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.fakeCancel = cancel
	for _, f := range []struct {
		name    string
		handler http.Handler
	}{
		{"tron", s.tron}, {"tron_control", s.tron.ControlHandler()},
		{"solana", s.sol}, {"solana_ws", s.sol}, {"solana_control", s.sol.ControlHandler()},
	} {
		var p int
		switch f.name {
		case "solana":
			p = solPort
		case "solana_ws":
			p = solPort + 1
		default:
			if p, err = s.port(f.name, 0); err != nil {
				return err
			}
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		srv := &http.Server{Handler: f.handler, ReadHeaderTimeout: 10 * time.Second}
		s.servers = append(s.servers, srv)
		s.fakeWG.Add(1)
		go func() {
			defer s.fakeWG.Done()
			_ = srv.Serve(ln)
		}()
	}
	s.fakeWG.Add(2)
	go func() { defer s.fakeWG.Done(); _ = s.tron.Produce(ctx, sandboxBlockInterval) }()
	go func() { defer s.fakeWG.Done(); _ = s.sol.Produce(ctx, sandboxBlockInterval) }()
	// A few blocks at once, so the solidified/finalized marks exist.
	s.tron.Mine(sandboxTronSolidifiedLag + 1)
	s.sol.Mine(1)
	return nil
}

// extend adds k blocks to the sandbox chain of network n.
func (s *sandbox) extend(ctx context.Context, n payment.Network, k int) error {
	const batch = 1000
	for k > 0 {
		m := min(k, batch)
		var err error
		switch n {
		case payment.Bitcoin:
			_, err = s.btcd.Generate(ctx, m)
		case payment.Litecoin:
			_, err = s.ltc.Generate(ctx, m)
		case payment.Ethereum:
			err = s.anvil.Mine(ctx, m)
		case payment.Tron:
			s.tron.Mine(m)
		case payment.Solana:
			// Skipped slots cost nothing; the last two slots have blocks,
			// so the scanner starts right below the tip, not below the gap.
			s.sol.Skip(m - 1)
			s.sol.Mine(2)
		}
		if err != nil {
			return err
		}
		k -= m
	}
	return nil
}
