package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/paywatch/paywatch/payment"
)

// devDir is the sandbox's directory, relative to the repository root.
const devDir = ".paywatch"

// signInLinkTTL is how long the sandbox's one-time console link works.
const signInLinkTTL = 10 * time.Minute

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "paywatch-sandbox:", err)
		os.Exit(1)
	}
}

// run starts the sandbox, or with `pay` pays a sandbox intent, or with
// `fault` makes a network's proxy endpoint misbehave.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "pay" {
		return runPay(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "fault" {
		return runFault(ctx, args[1:], stdout, stderr)
	}
	return runSandbox(ctx, args, stdout, stderr)
}

// newFlags returns a flag set that prints its usage to stderr.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: paywatch-sandbox %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

func runSandbox(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("", "[--dir DIR] [--listen ADDR] [--deadline 30m] [--paywatch BIN] [--webhook URL]\n       paywatch-sandbox pay <intent-id> [--amount X] [--dir DIR]\n       paywatch-sandbox fault NETWORK KIND [ARG] [--dir DIR]\n\n"+
		"paywatch-sandbox starts the local sandbox: PostgreSQL, btcd and litecoind (regtest),\n"+
		"anvil, simulated Tron and Solana nodes, and the paywatch daemon (`paywatch serve`)\n"+
		"with every method enabled. Everything lives under DIR; a second run reuses it.\n"+
		"Ctrl-C stops it. pay pays a sandbox intent from the sandbox's coins (X in the\n"+
		"asset's units, default the intent's exact amount) and mines the blocks it needs.\n"+
		"Each network has two node endpoints, \"proxy\" (preferred) and \"node\"; fault makes\n"+
		"the proxy misbehave (lag, 429, 503, drop, …; none heals) to watch paywatch fail over.", stderr)
	dir := fs.String("dir", devDir, "sandbox directory (data, logs, config, sandbox.env)")
	listen := fs.String("listen", "", "API listen address (default 127.0.0.1:8080 when free, else a free port; remembered)")
	deadline := fs.Duration("deadline", 30*time.Minute, "how long sandbox intents accept payment (e.g. 2m to see late and underpaid transfers soon)")
	daemon := fs.String("paywatch", "", "the paywatch daemon binary (default: paywatch beside this binary, else on PATH)")
	var hooks urlList
	fs.Var(&hooks, "webhook", "deliver every event, signed, to this URL (http only to this host; repeat for more receivers); the secret is PAYWATCH_WEBHOOK_SECRET in sandbox.env")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected argument %q (did you mean `paywatch-sandbox pay %s`?)", fs.Arg(0), fs.Arg(0))
	}
	bin, err := daemonBinary(*daemon)
	if err != nil {
		return err
	}
	start := time.Now()
	sb, err := startSandbox(ctx, devOptions{Dir: *dir, Listen: *listen, Out: stdout, Deadline: *deadline, Daemon: bin, Webhooks: hooks})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(stdout, "stopping the sandbox: daemon, nodes, PostgreSQL …")
		sb.stop()
		fmt.Fprintln(stdout, "sandbox stopped; `make run` starts it again with the same data")
	}()
	return sb.serve(ctx, func(r sandboxReady) {
		printBanner(stdout, sb, r, time.Since(start))
	})
}

// daemonBinary finds the paywatch binary the sandbox runs: flag, else the
// paywatch beside this executable (make run builds both into bin/), else
// PATH.
func daemonBinary(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if self, err := os.Executable(); err == nil {
		bin := filepath.Join(filepath.Dir(self), "paywatch")
		if st, err := os.Stat(bin); err == nil && !st.IsDir() {
			return bin, nil
		}
	}
	if bin, err := exec.LookPath("paywatch"); err == nil {
		return bin, nil
	}
	return "", errors.New("no paywatch binary beside this one or on PATH: run `make run` (it builds both), or pass --paywatch")
}

// printBanner tells the newcomer what runs and what to paste.
func printBanner(w io.Writer, sb *sandbox, r sandboxReady, took time.Duration) {
	env := sb.env
	fmt.Fprintf(w, "\npaywatch sandbox ready in %s\n\n", took.Round(100*time.Millisecond))
	fmt.Fprintf(w, "  API            %s   (key in %s)\n", env[envURL], filepath.Join(sb.relDir, "sandbox.env"))
	if r.SignInLink != "" {
		fmt.Fprintf(w, "  console        %s/console/\n", env[envURL])
		fmt.Fprintf(w, "                 one-time sign-in (sandbox only, valid %s): %s\n", signInLinkTTL, r.SignInLink)
	}
	fmt.Fprintf(w, "  bitcoin        btcd regtest       %s\n", env[envBitcoin])
	fmt.Fprintf(w, "  litecoin       litecoind regtest  %s\n", env[envLitecoin])
	fmt.Fprintf(w, "  ethereum       anvil              %s   USDT %s  USDC %s\n", env[envEthereum], env[envUSDT], env[envUSDC])
	fmt.Fprintf(w, "  tron           SIMULATED node     %s\n", env[envTron])
	fmt.Fprintf(w, "  solana         SIMULATED node     %s   (pubsub %s)\n", env[envSolana], env[envSolanaWS])
	fmt.Fprintf(w, "  endpoints      each network: \"proxy\" (preferred; bin/paywatch-sandbox fault NETWORK KIND breaks it) and \"node\"\n")
	fmt.Fprintf(w, "  logs           %s/\n", filepath.Join(sb.relDir, "logs"))
	if len(sb.webhooks) > 0 {
		fmt.Fprintf(w, "  webhooks       %s   (signed with %s in %s)\n", strings.Join(sb.webhooks, " "), envWebhookSecret, filepath.Join(sb.relDir, "sandbox.env"))
	}
	fmt.Fprintf(w, "\n  test wallets   well-known test keys, public knowledge: never send real money to them\n")
	fmt.Fprintf(w, "  tron           %s   %s TRX, %s USDT-TRC20\n", env[envTronAddress],
		wholeUnits(sandboxTronFunds, 6), wholeUnits(sandboxTokenSupply, 6))
	fmt.Fprintf(w, "                 private key %s\n", env[envTronKey])
	fmt.Fprintf(w, "  solana         %s   %s SOL, %s of the SPL token %s\n", env[envSolanaAddress],
		wholeUnits(sandboxSolanaFunds, 9), wholeUnits(sandboxTokenSupply, 6), env[envSolanaMint])
	fmt.Fprintf(w, "                 keypair %s\n", env[envSolanaKeypair])
	if len(r.Unavailable) > 0 {
		fmt.Fprintln(w, "\n  not ready yet (see the logs):")
		for _, u := range r.Unavailable {
			fmt.Fprintf(w, "    %s\n", u)
		}
	}
	if ex := r.Example; ex.ID != "" {
		fmt.Fprintf(w, "\nAn example order, %s (25.00 USD = %s), waits for payment. Open its payment page,\n", ex.Reference, ex.Amount)
		fmt.Fprintf(w, "the one a storefront sends its customer to:\n\n  %s\n\n", ex.PageURL)
		fmt.Fprintf(w, "and pay it from the sandbox's coins while you watch the page turn to paid:\n\n")
		fmt.Fprintf(w, "  bin/paywatch-sandbox pay %s        # --amount X pays part of it\n", ex.ID)
	}
	fmt.Fprintf(w, "\nCreate an intent (methods: BTC LTC ETH USDT-ERC20 USDC-ERC20 TRX USDT-TRC20 SOL);\n")
	fmt.Fprintf(w, "its payment_page_url is the customer's page:\n\n")
	fmt.Fprintf(w, "  %s\n\n", createCurl(env[envURL], env[envAPIKey], fmt.Sprintf("ORD-%d", time.Now().Unix()), "25.00", "BTC"))
	fmt.Fprintf(w, "Pay it from the sandbox's coins and watch it go awaiting_payment -> detected -> paid:\n\n")
	fmt.Fprintf(w, "  bin/paywatch-sandbox pay <intent id>        # optional: --amount 0.0001\n")
	fmt.Fprintf(w, "  (or from your own code: the README's sandbox section has a TronWeb and a web3.js script)\n")
	fmt.Fprintf(w, "  curl -s -H 'Authorization: Bearer %s' %s/v1/intents/<intent id>\n\n", env[envAPIKey], env[envURL])
	fmt.Fprintf(w, "Ctrl-C stops everything; the next `make run` keeps the data.\n")
}

// wholeUnits prints base units as whole coins with thousands separators
// (the sandbox's funds are whole numbers of coins).
func wholeUnits(v int64, decimals int) string {
	s := payment.FormatUnits(big.NewInt(v), decimals)
	s, _, _ = strings.Cut(s, ".")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// createCurl returns a ready-to-paste curl that creates an intent.
func createCurl(url, key, reference, usd, method string) string {
	body, _ := json.Marshal(map[string]string{"kind": "order", "reference": reference, "amount_usd": usd, "method": method})
	return fmt.Sprintf("curl -s -X POST %s/v1/intents -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' -d '%s'",
		url, key, body)
}

// The lines of sandbox.env. Tools read them; `paywatch-sandbox pay` reads them too.
const (
	envURL           = "PAYWATCH_URL"
	envAPIKey        = "PAYWATCH_API_KEY"
	envBitcoin       = "BITCOIN_RPC_URL"
	envLitecoin      = "LITECOIN_RPC_URL"
	envEthereum      = "ETHEREUM_RPC_URL"
	envUSDT          = "USDT_CONTRACT"
	envUSDC          = "USDC_CONTRACT"
	envTron          = "TRON_URL"
	envSolana        = "SOLANA_URL"
	envTronUSDT      = "TRON_USDT_CONTRACT"
	envTronControl   = "TRON_CONTROL_URL"
	envSolanaControl = "SOLANA_CONTROL_URL"
	// The funded test wallets (wallets.go): public knowledge, never real money.
	envTronKey       = "TRON_PRIVATE_KEY"
	envTronAddress   = "TRON_ADDRESS"
	envSolanaWS      = "SOLANA_WS_URL"
	envSolanaKeypair = "SOLANA_KEYPAIR"
	envSolanaAddress = "SOLANA_ADDRESS"
	envSolanaMint    = "SOLANA_TOKEN_MINT"
)

var envOrder = []string{envURL, envAPIKey, envBitcoin, envLitecoin, envEthereum, envUSDT, envUSDC, envTron, envSolana,
	envTronUSDT, envTronControl, envSolanaControl,
	envTronKey, envTronAddress, envSolanaWS, envSolanaKeypair, envSolanaAddress, envSolanaMint, envFaults}

// sandboxEnv is the content of sandbox.env.
type sandboxEnv map[string]string

// write stores the env file (mode 0600: it holds the API key).
func (e sandboxEnv) write(path string) error {
	var b strings.Builder
	b.WriteString("# paywatch sandbox (written by `paywatch-sandbox` on every start; sandbox only).\n")
	b.WriteString("# The sandbox's nodes are throwaway regtest/dev chains; TRON_* and SOLANA_* are simulated nodes.\n")
	keys := append([]string(nil), envOrder...)
	for k := range e {
		if !contains(envOrder, k) {
			keys = append(keys, k)
		}
	}
	sort.SliceStable(keys[len(envOrder):], func(i, j int) bool { return keys[len(envOrder)+i] < keys[len(envOrder)+j] })
	for _, k := range keys {
		if v, ok := e[k]; ok {
			fmt.Fprintf(&b, "%s=%s\n", k, v)
		}
	}
	return writeFileAtomic(path, []byte(b.String()), 0o600)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// readSandboxEnv parses sandbox.env (KEY=VALUE lines, # comments).
func readSandboxEnv(path string) (sandboxEnv, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist: start the sandbox first (`make run` in the repository root)", path)
	}
	if err != nil {
		return nil, err
	}
	env := sandboxEnv{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want KEY=VALUE", path, i+1)
		}
		env[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	for _, k := range envOrder {
		if env[k] == "" {
			return nil, fmt.Errorf("%s: %s is missing: restart the sandbox (`make run`)", path, k)
		}
	}
	return env, nil
}

// writeFileAtomic writes path through a temporary file and a rename.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
