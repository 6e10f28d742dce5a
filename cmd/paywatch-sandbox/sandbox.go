package main

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"
	solbase58 "github.com/mr-tron/base58"
	"golang.org/x/sync/errgroup"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// Sandbox chain settings: small enough to see a payment confirm in seconds.
const (
	// sandboxBlockInterval is how often the simulated Tron and Solana nodes
	// produce a block.
	sandboxBlockInterval = time.Second
	// sandboxTronSolidifiedLag replaces mainnet's 19 blocks.
	sandboxTronSolidifiedLag = 3
	// sandboxSolanaPoolSize is how many Solana pool keys the sandbox imports.
	sandboxSolanaPoolSize = 200
	// sandboxTokenSupply is minted (in base units, 6 decimals) to anvil's
	// first dev account and to the sandbox payer: 1,000,000,000 tokens. The
	// Tron and Solana test wallets get as much USDT-TRC20 and SPL token.
	sandboxTokenSupply = 1_000_000_000_000_000
	// sandboxTronFunds is the Tron test wallet's TRX (1,000,000 TRX in sun).
	sandboxTronFunds = 1_000_000_000_000
	// sandboxSolanaFunds is the Solana test wallet's SOL (10,000 SOL in lamports).
	sandboxSolanaFunds = 10_000_000_000_000
)

// sandboxEthPayer is anvil's dev account 9 (of the standard test mnemonic),
// which `paywatch-sandbox pay` pays ETH and tokens from. Account 0 (0xf39F…) is index 0
// of the sandbox's own receiving key, so it is not used as the payer. Should
// an intent ever get index 9, paying it is a self-transfer, which still
// counts: paywatch looks at what arrives, not at who sends.
var sandboxEthPayer = common.HexToAddress("0xa0Ee7A142d267C1f36714E4a8F75612F20a79720")

// devOptions configures a sandbox.
type devOptions struct {
	// Dir holds everything (default .paywatch).
	Dir string
	// Listen is the API address; "" prefers 127.0.0.1:8080.
	Listen string
	// Out receives progress lines.
	Out io.Writer
	// Deadline is how long the sandbox's intents accept payment (default 30m).
	Deadline time.Duration
	// Daemon is the paywatch binary serve runs.
	Daemon string
}

// devState is what the sandbox remembers between runs (state.json).
type devState struct {
	APIKey string         `json:"api_key"`
	Ports  map[string]int `json:"ports"`
	USDT   string         `json:"usdt_contract"`
	USDC   string         `json:"usdc_contract"`
	Listen string         `json:"listen"`
}

// sandbox is a running sandbox: nodes, fakes, database and config.
type sandbox struct {
	dir, relDir string
	out         io.Writer
	state       devState
	env         sandboxEnv
	cfg         *config.Config
	cfgPath     string
	daemonBin   string

	pg    *devnet.Postgres
	btcd  *devnet.Btcd
	ltc   *devnet.Litecoind
	anvil *ethdev.Anvil
	tron  *tronfake.Node
	sol   *solanafake.Node

	lock       *os.File
	servers    []*http.Server
	fakeCancel context.CancelFunc
	fakeWG     sync.WaitGroup
	stopOnce   sync.Once
}

// sandboxReady is passed to serve's callback once the API answers.
type sandboxReady struct {
	// URL is the API base URL.
	URL string
	// SignInLink is a one-time console sign-in link ("" when the console is
	// off or the link could not be made).
	SignInLink string
	// Example is the intent the sandbox created for the banner (ID ""
	// when it could not make one).
	Example example
	// Unavailable lists networks that did not become available in time.
	Unavailable []string
}

// terminal is where progress and daemon warnings are shown.
func (s *sandbox) terminal() io.Writer {
	if s.out == nil {
		return io.Discard
	}
	return s.out
}

func (s *sandbox) say(format string, args ...any) {
	if s.out != nil {
		fmt.Fprintf(s.out, format+"\n", args...)
	}
}

// startSandbox starts (or restarts on the same directory) every component
// and prepares the database. Nothing is served yet: call serve.
func startSandbox(ctx context.Context, o devOptions) (_ *sandbox, err error) {
	if o.Dir == "" {
		o.Dir = devDir
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	s := &sandbox{dir: dir, relDir: o.Dir, out: o.Out, daemonBin: o.Daemon}
	for _, d := range []string{dir, filepath.Join(dir, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := s.lockDir(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.stop()
		}
	}()
	if err := s.loadState(); err != nil {
		return nil, err
	}
	if err := s.install(ctx); err != nil {
		return nil, err
	}
	s.stopStale()
	if err := s.startNodes(ctx); err != nil {
		return nil, err
	}
	if err := s.ensureTokens(ctx); err != nil {
		return nil, err
	}
	if err := s.startFakes(); err != nil {
		return nil, err
	}
	if err := s.writeConfig(o.Listen, o.Deadline); err != nil {
		return nil, err
	}
	if err := s.prepareDatabase(ctx); err != nil {
		return nil, err
	}
	if err := s.saveState(); err != nil {
		return nil, err
	}
	s.linkLogs()
	return s, nil
}

// lockDir takes an exclusive lock on the sandbox directory for the life of
// this process (released by stop or by the process's end), so that a second
// `paywatch-sandbox` on the same directory refuses to start instead of taking
// over its nodes.
func (s *sandbox) lockDir() error {
	f, err := os.OpenFile(filepath.Join(s.dir, "dev.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid, _ := os.ReadFile(f.Name())
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("the sandbox in %s is already running (pid %s): use it, or stop it with Ctrl-C first",
				s.relDir, strings.TrimSpace(string(pid)))
		}
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	s.lock = f
	return nil
}

func (s *sandbox) statePath() string { return filepath.Join(s.dir, "state.json") }

func (s *sandbox) loadState() error {
	s.state = devState{Ports: map[string]int{}}
	b, err := os.ReadFile(s.statePath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &s.state); err != nil {
		return fmt.Errorf("%s: %w (delete it to start afresh)", s.statePath(), err)
	}
	if s.state.Ports == nil {
		s.state.Ports = map[string]int{}
	}
	return nil
}

func (s *sandbox) saveState() error {
	b, err := json.MarshalIndent(s.state, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(s.statePath(), append(b, '\n'), 0o600)
}

// port returns the remembered port of name when it is still free, else
// preferred when free, else a free one; and remembers it.
func (s *sandbox) port(name string, preferred int) (int, error) {
	for _, p := range []int{s.state.Ports[name], preferred} {
		if p > 0 && portFree(p) {
			s.state.Ports[name] = p
			return p, nil
		}
	}
	p, err := devnet.FreePort()
	if err != nil {
		return 0, err
	}
	s.state.Ports[name] = p
	return p, nil
}

// portPair is port for name whose next port is free too (the Solana
// node's RPC and pubsub ports, agave's 8899 and 8900).
func (s *sandbox) portPair(name string) (int, error) {
	if p := s.state.Ports[name]; p > 0 && portFree(p) && portFree(p+1) {
		return p, nil
	}
	for range 100 {
		p, err := devnet.FreePort()
		if err != nil {
			return 0, err
		}
		if p < 65535 && portFree(p+1) {
			s.state.Ports[name] = p
			return p, nil
		}
	}
	return 0, fmt.Errorf("no two free consecutive ports for %s", name)
}

func portFree(p int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// install installs the missing peers: PostgreSQL and litecoind from Debian
// (as root), btcd with go install, anvil from npm.
func (s *sandbox) install(ctx context.Context) error {
	if _, err := devnet.PostgresBinDir(); err != nil {
		if os.Geteuid() != 0 {
			return fmt.Errorf("%w; install it (as root: apt-get install -y postgresql) and run again", err)
		}
		s.say("installing PostgreSQL (apt-get install postgresql) …")
		if err := aptInstall(ctx, "postgresql"); err != nil {
			return err
		}
	}
	if err := devnet.InstallBtcd(ctx); err != nil {
		return err
	}
	if _, err := os.Stat(devnet.LitecoindPath); err != nil {
		s.say("installing litecoind (apt-get install litecoind) …")
	}
	if err := devnet.InstallLitecoind(ctx); err != nil {
		return err
	}
	if _, err := ethdev.FindAnvil(); err != nil {
		if _, err := exec.LookPath("npm"); err != nil && os.Geteuid() == 0 {
			s.say("installing npm (apt-get install npm) to install anvil …")
			if err := aptInstall(ctx, "npm"); err != nil {
				return err
			}
		}
		s.say("installing anvil from npm into %s …", ethdev.AnvilCacheDir())
		if _, err := ethdev.InstallAnvil(ctx, ethdev.AnvilCacheDir()); err != nil {
			return err
		}
	}
	return nil
}

// stopStale ends nodes left running by an earlier run of this sandbox that
// was killed before it could stop them (its nodes run in their own process
// groups, so a SIGKILL or a closed terminal can orphan them). Only btcd,
// litecoind, anvil and paywatch processes whose command line names a path
// inside this sandbox's directory are stopped: SIGTERM, then SIGKILL after
// 15 s.
// PostgreSQL needs nothing: StartPostgres stops a stale server itself.
func (s *sandbox) stopStale() {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		switch filepath.Base(args[0]) {
		case "btcd", "litecoind", "anvil", "paywatch":
		default:
			continue
		}
		ours := false
		for _, a := range args[1:] {
			if i := strings.Index(a, s.dir+string(filepath.Separator)); i >= 0 {
				ours = true
				break
			}
		}
		if !ours {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil || pid == os.Getpid() {
			continue
		}
		s.say("stopping %s (pid %d) left running by an earlier sandbox run", filepath.Base(args[0]), pid)
		_ = syscall.Kill(pid, syscall.SIGTERM)
		deadline := time.Now().Add(15 * time.Second)
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if syscall.Kill(pid, 0) == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// aptInstall installs Debian packages, updating the package lists when the
// first attempt fails (a fresh image has none).
func aptInstall(ctx context.Context, pkgs ...string) error {
	install := func() ([]byte, error) {
		cmd := exec.CommandContext(ctx, "apt-get", append([]string{"install", "-y", "--no-install-recommends"}, pkgs...)...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.CombinedOutput()
	}
	if _, err := install(); err == nil {
		return nil
	}
	if out, err := exec.CommandContext(ctx, "apt-get", "update").CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get update: %w\n%s", err, out)
	}
	if out, err := install(); err != nil {
		return fmt.Errorf("apt-get install %s: %w\n%s", strings.Join(pkgs, " "), err, out)
	}
	return nil
}

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
	s.tron = tronfake.New()
	s.tron.SetSolidifiedLag(sandboxTronSolidifiedLag)
	s.sol = solanafake.New()
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
	tronUSDT := config.Default().Methods[string(payment.USDTTRC20)].Contract
	y := fmt.Sprintf(sandboxConfig, time.Now().UTC().Format(time.RFC3339), listen, s.pg.URL("paywatch"), deadline, "http://"+listen,
		s.state.USDT, s.state.USDC, tronUSDT,
		s.btcd.RPCURL, addresses.SandboxKeys[payment.Bitcoin],
		s.ltc.RPCURL, addresses.SandboxKeys[payment.Litecoin],
		s.anvil.RPCURL, addresses.SandboxKeys[payment.Ethereum],
		url("tron"), addresses.SandboxKeys[payment.Tron],
		url("solana"))
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
	}
	return nil
}

func addrFree(addr string) bool {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	l.Close()
	return true
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
    rpc_url: %q
    account_key: %q
    poll_interval: 1s
    max_lag_blocks: 50
  litecoin:
    enabled: true
    chain: regtest
    rpc_url: %q
    account_key: %q
    poll_interval: 1s
    max_lag_blocks: 50
  ethereum:
    enabled: true
    chain: regtest
    rpc_url: %q
    account_key: %q
    poll_interval: 1s
    max_lag_blocks: 50
  tron:
    enabled: true
    chain: regtest
    rpc_url: %q
    account_key: %q
    poll_interval: 1s
    max_lag_blocks: 50
  solana:
    enabled: true
    chain: regtest
    rpc_url: %q
    poll_interval: 1s
    max_lag_blocks: 300
    mode: block
`

// prepareDatabase migrates, resets the scanner state of chains that were
// started afresh, imports the Solana pool and makes sure of the API key.
func (s *sandbox) prepareDatabase(ctx context.Context) error {
	st, err := store.Open(ctx, s.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return err
	}
	if err := s.resetStaleCursors(ctx, st); err != nil {
		return err
	}
	if err := importSolanaPool(ctx, st, sandboxSolanaPool(sandboxSolanaPoolSize)); err != nil {
		return fmt.Errorf("import the sandbox Solana pool: %w", err)
	}
	return s.ensureAPIKey(ctx, st)
}

// resetStaleCursors handles the chains a restart replaces: btcd wipes its
// regtest chain on every start and the simulated Tron and Solana nodes live
// in memory, so a stored cursor can point at a block that no longer exists.
// For such a network (the block at the cursor's height is missing or has
// another hash) the sandbox
//
//  1. extends the new chain past every height the database knows for the
//     network (its cursor and its recorded transfers), so that no block of
//     the new chain ever replaces a height holding an old transfer — the
//     scanner would rightly orphan that transfer as a reorg and revert what
//     it paid;
//  2. forgets the scanner state — its cursor and block refs — so that the
//     scanner starts again at the new chain's tip.
//
// SANDBOX ONLY. Intents, transfers, payments and the ledger are kept: what
// was paid stays paid, even though the old chain is gone. A production
// paywatch never does this: a vanished chain there is a reorg deeper than
// the safety depth, reported as critical.
func (s *sandbox) resetStaleCursors(ctx context.Context, st *store.Store) error {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, n := range payment.Networks {
		cur, err := st.GetCursor(ctx, string(n))
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		src, err := checkSource(ctx, s.cfg, n, log)
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		b, err := src.Block(ctx, chains.Height(cur.Height), noneWatched{})
		switch {
		case err == nil && b.Hash == cur.Hash:
			continue
		case err == nil, errors.Is(err, chains.ErrBlockNotFound), errors.Is(err, chains.ErrSkipped):
		default:
			return fmt.Errorf("%s: check the stored cursor at height %d: %w", n, cur.Height, err)
		}
		top := cur.Height
		var maxTransfer int64
		var anyTransfer bool
		err = st.InTx(ctx, func(tx *store.Tx) (err error) {
			maxTransfer, anyTransfer, err = tx.MaxTransferHeight(ctx, string(n))
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		if anyTransfer && maxTransfer > top {
			top = maxTransfer
		}
		tip, err := src.Tip(ctx)
		if err != nil {
			return fmt.Errorf("%s: node tip: %w", n, err)
		}
		if int64(tip) <= top {
			if err := s.extend(ctx, n, int(top-int64(tip)+1)); err != nil {
				return fmt.Errorf("%s: extend the new chain to height %d: %w", n, top+1, err)
			}
		}
		err = st.InTx(ctx, func(tx *store.Tx) error { return tx.ForgetScanState(ctx, string(n)) })
		if err != nil {
			return fmt.Errorf("%s: reset the scanner: %w", n, err)
		}
		s.say("%s: a new chain after the restart (block %d is gone); extended past height %d, scanning resumes at its tip (sandbox only)",
			n, cur.Height, top)
	}
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

// sandboxSolanaPool returns the first n sandbox Solana pool keys: key i is
// the public key of ed25519.NewKeyFromSeed(sha256("paywatch sandbox solana
// " + i)), the recipe of addresses.SandboxSolanaPool (its first 20 keys).
func sandboxSolanaPool(n int) []string {
	out := make([]string, n)
	for i := range n {
		seed := sha256.Sum256([]byte("paywatch sandbox solana " + strconv.Itoa(i)))
		pub := ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey)
		out[i] = solbase58.Encode(pub)
	}
	return out
}

// ensureAPIKey reuses the remembered key when the database still has it,
// else creates one with every scope.
func (s *sandbox) ensureAPIKey(ctx context.Context, st *store.Store) error {
	if s.state.APIKey != "" {
		k, err := st.APIKeyByPlain(ctx, s.state.APIKey)
		if err == nil && k.HasScope("storefront") && k.HasScope("finance") && k.HasScope("operator") {
			s.env[envAPIKey] = s.state.APIKey
			return nil
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	scopes := []string{"storefront", "finance", "operator"}
	now := time.Now().UTC()
	plain, _, err := st.CreateAPIKey(ctx, "sandbox", scopes, now)
	if errors.Is(err, store.ErrConflict) {
		plain, _, err = st.CreateAPIKey(ctx, fmt.Sprintf("sandbox-%d", now.UnixNano()), scopes, now)
	}
	if err != nil {
		return fmt.Errorf("create the sandbox API key: %w", err)
	}
	s.state.APIKey = plain
	s.env[envAPIKey] = plain
	s.say("created the sandbox API key (scopes storefront, finance, operator)")
	return nil
}

// linkLogs gathers every log under logs/ (symbolic links to the nodes' own
// log files).
func (s *sandbox) linkLogs() {
	for name, target := range map[string]string{
		"postgres.log":  filepath.Join("..", "postgres", "server.log"),
		"btcd.log":      filepath.Join("..", "btcd", "btcd.log"),
		"litecoind.log": filepath.Join("..", "litecoind", "litecoind.log"),
		"anvil.log":     filepath.Join("..", "anvil", "anvil.log"),
	} {
		link := filepath.Join(s.dir, "logs", name)
		if cur, err := os.Readlink(link); err == nil && cur == target {
			continue
		}
		_ = os.Remove(link)
		_ = os.Symlink(target, link)
	}
}

// waitAvailable polls GET /v1/status until every enabled network accepts
// intents, and returns the reasons of those that still do not at timeout.
func waitAvailable(ctx context.Context, url, key string, timeout time.Duration) []string {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last []string
	for {
		var st struct {
			Networks []struct {
				Network     string `json:"network"`
				Enabled     bool   `json:"enabled"`
				Unavailable string `json:"unavailable_reason"`
			} `json:"networks"`
		}
		err := apiCall(ctx, url, key, http.MethodGet, "/v1/status", nil, &st)
		last = last[:0]
		if err != nil {
			last = append(last, "API: "+err.Error())
		}
		for _, n := range st.Networks {
			if n.Enabled && n.Unavailable != "" {
				last = append(last, n.Network+": "+n.Unavailable)
			}
		}
		if err == nil && len(last) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return last
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// stop stops the fakes, then the nodes, then PostgreSQL. Calling it twice is
// harmless.
func (s *sandbox) stop() {
	s.stopOnce.Do(func() {
		if s.fakeCancel != nil {
			s.fakeCancel()
		}
		for _, srv := range s.servers {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = srv.Shutdown(sctx)
			cancel()
		}
		s.fakeWG.Wait()
		var wg sync.WaitGroup
		for _, stop := range []func(){
			func() {
				if s.btcd != nil {
					s.btcd.Stop()
				}
			},
			func() {
				if s.ltc != nil {
					s.ltc.Stop()
				}
			},
			func() {
				if s.anvil != nil {
					s.anvil.Stop()
				}
			},
		} {
			wg.Add(1)
			go func() { defer wg.Done(); stop() }()
		}
		wg.Wait()
		if s.pg != nil {
			if err := s.pg.Stop(); err != nil {
				s.say("PostgreSQL stop: %v", err)
			}
		}
		if s.lock != nil {
			s.lock.Close() // releases the flock
		}
	})
}
