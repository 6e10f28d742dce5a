package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paywatch/paywatch/chains/solana/solanafake"
	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/ethdev"
	"github.com/paywatch/paywatch/payment"
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
	// Webhooks are the URLs every event is delivered to (--webhook).
	Webhooks []string
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
	webhooks    []string

	pg    *devnet.Postgres
	btcd  *devnet.Btcd
	ltc   *devnet.Litecoind
	anvil *ethdev.Anvil
	tron  *tronfake.Node
	sol   *solanafake.Node
	// proxies are the faulty proxies of the networks' "proxy" endpoints
	// (faults.go); faultsURL is their control.
	proxies   map[payment.Network]*sandboxProxy
	faultsURL string
	// clock stamps the simulated Tron and Solana blocks (nil: the wall
	// clock); a test may pin it.
	clock clock.Clock

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
	s := &sandbox{dir: dir, relDir: o.Dir, out: o.Out, daemonBin: o.Daemon, webhooks: o.Webhooks}
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
	if err := s.startProxies(); err != nil {
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
		s.closeProxies()
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
