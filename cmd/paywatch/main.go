package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/paywatch/paywatch/config"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	cmds := map[string]command{
		"serve":     {"run the daemon: API, scanners, deadline sweep, webhooks", runServe},
		"migrate":   {"apply database migrations and exit", runMigrate},
		"apikey":    {"manage API keys: create, list, revoke, rotate", runAPIKey},
		"stores":    {"stores: list (with their keys, pools and networks' health), create, add-key", runStores},
		"pool":      {"manage the Solana address pool: import, count", runPool},
		"status":    {"print each network's scanner status", runStatus},
		"rescan":    {"rescan a network from a height (idempotent)", runRescan},
		"reconcile": {"check a network's recorded transfers against the node's own view now (-request: ask the daemon)", runReconcile},
		"sessions":  {"console sessions: list, end one", runSessions},
		// Finance and webhooks (money.go).
		"transfers": {"finance inbox: list transfers to review, resolve one", runTransfers},
		"report":    {"reports: `report reconcile --from --to [--as-of] --format csv|json`, `report close --from --to`, `report closes`", runReport},
		"webhooks":  {"webhook deliveries: log, endpoints, redeliver", runWebhooks},
	}
	return cmds
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "paywatch:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmds := commands()
	if len(args) == 0 {
		// Nothing asked: the usage, as an error (a script that forgot the
		// command must not read success).
		usage(stderr, cmds)
		return errors.New("no command given; see the usage above")
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" {
		usage(stdout, cmds)
		return nil
	}
	if args[0] == "--version" || args[0] == "-version" || args[0] == "version" {
		fmt.Fprintln(stdout, "paywatch", versionString())
		return nil
	}
	c, ok := cmds[args[0]]
	if !ok {
		usage(stderr, cmds)
		return fmt.Errorf("unknown command %q", args[0])
	}
	if err := checkArgs(args[1:]); err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

// checkArgs refuses an argument that is not valid UTF-8 or holds a control
// character (a URL or id with a newline, an escape sequence), before any
// command sends it to the database or a node. Only a --note may span lines.
// The error names the argument's position, not its value.
func checkArgs(args []string) error {
	for i, a := range args {
		multiline := strings.HasPrefix(a, "--note=") || strings.HasPrefix(a, "-note=") ||
			(i > 0 && (args[i-1] == "--note" || args[i-1] == "-note"))
		if !utf8.ValidString(a) {
			return fmt.Errorf("argument %d is not valid UTF-8", i+1)
		}
		for _, r := range a {
			if multiline && (r == '\n' || r == '\t') {
				continue
			}
			if unicode.IsControl(r) {
				return fmt.Errorf("argument %d contains a control character (%U)", i+1, r)
			}
		}
	}
	return nil
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "paywatch: a watch-only crypto payment watcher.\n\nUsage: paywatch <command> [flags]\n\nCommands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun `paywatch <command> --help` for the flags of a command, `paywatch --version` for the version.")
}

// version is the release, set at build time with
// -ldflags "-X main.version=v1.2.3"; empty, the module's build information
// says what was built.
var version string

// versionString is the version, the VCS revision the binary was built from
// (with "+dirty" for uncommitted changes) and the Go version.
func versionString() string {
	v, rev, dirty := version, "", false
	bi, ok := debug.ReadBuildInfo()
	if ok {
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && dirty {
		rev += "+dirty"
	}
	out := v
	if rev != "" {
		out += " " + rev
	}
	return out + " " + runtime.Version()
}

// newFlags returns a flag set that prints its usage to stderr.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: paywatch %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// configFlag adds --config with its environment default.
func configFlag(fs *flag.FlagSet) *string {
	def := os.Getenv("PAYWATCH_CONFIG")
	if def == "" {
		def = "paywatch.yaml"
	}
	return fs.String("config", def, "config file (env PAYWATCH_CONFIG)")
}

// loadConfig loads the config file; commands that only need the database
// accept PAYWATCH_DATABASE_URL without a file.
func loadConfig(path string, dbOnly bool) (*config.Config, error) {
	if _, err := os.Stat(path); err != nil && dbOnly && os.Getenv("PAYWATCH_DATABASE_URL") != "" {
		c := config.Default()
		c.DatabaseURL = os.Getenv("PAYWATCH_DATABASE_URL")
		return c, nil
	}
	return config.Load(path)
}

// newLogger returns a JSON slog logger at the configured level.
func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(strings.ToUpper(level)))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}
