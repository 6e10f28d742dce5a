package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/daemon"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// openStore loads the config and opens the database.
func openStore(ctx context.Context, cfgPath string) (*config.Config, *store.Store, error) {
	cfg, err := loadConfig(cfgPath, true)
	if err != nil {
		return nil, nil, err
	}
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, nil, err
	}
	return cfg, st, nil
}

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("migrate", "migrate [--config FILE]   (or PAYWATCH_DATABASE_URL)", stderr)
	cfgPath := configFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	_, st, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer st.Close()
	n, err := st.Migrate(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d migrations applied\n", n)
	return nil
}

func runAPIKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, err := subcommand(args, stderr, "Usage: paywatch apikey create --scope S[,S] --name N [--account-prefix P] [--store ID] | list | revoke --name N | rotate --name N",
		"create", "list", "revoke", "rotate")
	if err != nil {
		return err
	}
	synopsis := map[string]string{"create": "apikey create --scope S[,S] --name N [--account-prefix P] [--store ID] [--config FILE]",
		"list": "apikey list [--config FILE]", "revoke": "apikey revoke --name N [--config FILE]",
		"rotate": "apikey rotate --name N [--config FILE]"}[sub]
	fs := newFlags("apikey "+sub, synopsis, stderr)
	cfgPath := configFlag(fs)
	var scopes multiFlag
	prefix, name, shop := new(string), new(string), new(string)
	if sub == "create" {
		fs.Var(&scopes, "scope", "scope of the key: storefront (= read, intents, debit), read, intents, debit, finance or operator (repeat or comma-separate)")
		prefix = fs.String("account-prefix", "", "bind the key to the accounts starting with this (storefront scopes only)")
		shop = fs.String("store", "", "the store the key belongs to, which it alone sees (default: every store, an operator's key)")
	}
	if sub != "list" {
		name = fs.String("name", "", "name of the key (shown as the actor of finance decisions)")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	_, st, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return err
	}
	switch sub {
	case "create":
		return apiKeyCreate(ctx, st, *name, scopes, *prefix, *shop, stdout, stderr)
	case "list":
		return apiKeyList(ctx, st, stdout)
	case "revoke":
		return apiKeyRevoke(ctx, st, *name, stdout)
	case "rotate":
		return apiKeyRotate(ctx, st, *name, stdout, stderr)
	}
	return nil
}

// apiKeyCreate creates the key and prints only it on stdout, so that
// scripts can capture it.
func apiKeyCreate(ctx context.Context, st *store.Store, name string, scopes []string, prefix, shop string, stdout, stderr io.Writer) error {
	if name == "" || len(scopes) == 0 {
		return errors.New("apikey create needs --name and at least one --scope")
	}
	list, err := apiKeyScopes(scopes)
	if err != nil {
		return err
	}
	if prefix != "" {
		if !intents.ValidName(prefix) {
			return fmt.Errorf("--account-prefix %q: use 1-200 characters of letters, digits and ._:/#-", prefix)
		}
		for _, s := range list {
			if s == "finance" || s == "operator" {
				return fmt.Errorf("--account-prefix binds storefront keys only; a %s key sees every account", s)
			}
		}
	}
	if shop != "" {
		if !store.ValidStoreID(shop) {
			return fmt.Errorf("--store %q is not a store id (1 to 40 of a-z, 0-9, - and _)", shop)
		}
		if _, err := st.Shop(ctx, shop); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("--store: no store %q (`paywatch stores list` lists them)", shop)
		} else if err != nil {
			return err
		}
	}
	plain, _, err := st.CreateStoreAPIKey(ctx, name, list, shop, prefix, time.Now().UTC())
	if errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("an API key named %q exists already", name)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, plain)
	bound := ""
	if prefix != "" {
		bound = fmt.Sprintf(", bound to the accounts starting with %q", prefix)
	}
	if shop != "" {
		bound += fmt.Sprintf(", of store %s only", shop)
	}
	fmt.Fprintf(stderr, "created API key %q with scopes %s%s; it is shown once and stored hashed\n", name, strings.Join(list, ","), bound)
	return nil
}

// apiKeyRotate replaces the active key called name by a new one with its
// scopes, accounts and store, revoking the old one, and prints only the new
// key on stdout.
func apiKeyRotate(ctx context.Context, st *store.Store, name string, stdout, stderr io.Writer) error {
	if name == "" {
		return errors.New("apikey rotate needs --name")
	}
	plain, k, err := st.RotateAPIKey(ctx, name, time.Now().UTC())
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no active API key named %q", name)
	} else if err != nil {
		return err
	}
	fmt.Fprintln(stdout, plain)
	fmt.Fprintf(stderr, "rotated API key %q (scopes %s): the old key is revoked (running daemons refuse it within 5 s); the new one is shown once and stored hashed\n",
		name, strings.Join(k.Scopes, ","))
	return nil
}

// apiKeyScopes refuses an unknown scope and drops repeats, keeping order.
func apiKeyScopes(scopes []string) ([]string, error) {
	seen := map[string]bool{}
	var list []string
	for _, s := range scopes {
		switch s {
		case "storefront", "read", "intents", "debit", "finance", "operator":
		default:
			return nil, fmt.Errorf("unknown scope %q: use storefront (= read, intents, debit), read, intents, debit, finance or operator", s)
		}
		if !seen[s] {
			seen[s] = true
			list = append(list, s)
		}
	}
	return list, nil
}

// apiKeyList prints every key, revoked ones with their revocation time.
func apiKeyList(ctx context.Context, st *store.Store, stdout io.Writer) error {
	keys, err := st.ListAPIKeys(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCOPES\tACCOUNTS\tCREATED\tREVOKED\tSTORE")
	for _, k := range keys {
		rev := "-"
		if k.RevokedAt != nil {
			rev = k.RevokedAt.UTC().Format(time.RFC3339)
		}
		accounts := "all"
		if k.AccountPrefix != "" {
			accounts = k.AccountPrefix + "*"
		}
		shop := "every store"
		if k.Store != "" {
			shop = k.Store
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.Name, strings.Join(k.Scopes, ","), accounts, k.CreatedAt.UTC().Format(time.RFC3339), rev, shop)
	}
	return tw.Flush()
}

// apiKeyRevoke revokes the active key called name.
func apiKeyRevoke(ctx context.Context, st *store.Store, name string, stdout io.Writer) error {
	if err := st.RevokeAPIKey(ctx, name, time.Now().UTC()); errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no active API key named %q", name)
	} else if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revoked %s\n", name)
	return nil
}

// multiFlag collects repeated or comma-separated values.
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }

func (m *multiFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*m = append(*m, s)
		}
	}
	return nil
}

func runPool(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, err := subcommand(args, stderr, "Usage: paywatch pool import --network solana [--store ID] FILE | pool count --network solana [--store ID]",
		"import", "count")
	if err != nil {
		return err
	}
	fs := newFlags("pool "+sub, "pool "+sub+" --network solana [--store ID] [FILE]", stderr)
	cfgPath := configFlag(fs)
	network := fs.String("network", "solana", "network of the pool (only solana has one)")
	shop := fs.String("store", "", "the store whose pool it is (default: the default store)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *network != string(payment.Solana) {
		return fmt.Errorf("only solana uses an imported pool; %s addresses are derived from its account key", *network)
	}
	cfg, st, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return err
	}
	id := store.StoreOr(*shop)
	if !store.ValidStoreID(id) {
		return fmt.Errorf("--store %q is not a store id (1 to 40 of a-z, 0-9, - and _)", *shop)
	}
	if _, err := st.Shop(ctx, id); errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("--store: no store %q (`paywatch stores list` lists them)", id)
	} else if err != nil {
		return err
	}
	if sub == "import" {
		if fs.NArg() != 1 {
			return errors.New("pool import needs exactly one FILE (one base58 public key a line; - for stdin)")
		}
		var r io.Reader = os.Stdin
		if fs.Arg(0) != "-" {
			f, err := os.Open(fs.Arg(0))
			if err != nil {
				return err
			}
			defer f.Close()
			r = f
		}
		keys, err := addresses.ParseSolanaPool(r)
		if err != nil {
			return err
		}
		if err := daemon.RefuseWellKnownPool(cfg, keys); err != nil {
			return err
		}
		added, err := insertStorePool(ctx, st, id, keys)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d keys imported\n", added)
	}
	n, err := st.PoolLaneRemaining(ctx, string(payment.Solana), store.PoolLane(id))
	if err != nil {
		return err
	}
	if id == store.DefaultStore {
		fmt.Fprintf(stdout, "%d solana pool addresses free\n", n)
	} else {
		fmt.Fprintf(stdout, "%d solana pool addresses free in store %s\n", n, id)
	}
	return nil
}

// importPool validates the whole file first (nothing is imported when a line
// is bad) and then adds the keys in one transaction.
func importPool(ctx context.Context, st *store.Store, r io.Reader) (int, error) {
	keys, err := addresses.ParseSolanaPool(r)
	if err != nil {
		return 0, err
	}
	return insertPool(ctx, st, keys)
}

// insertPool adds parsed pool keys to the default store's pool (ones
// already there are skipped).
func insertPool(ctx context.Context, st *store.Store, keys []addresses.Address) (int, error) {
	return insertStorePool(ctx, st, store.DefaultStore, keys)
}

// insertStorePool adds parsed pool keys to a store's pool: addresses rows
// of the store, which the database puts in its lane (store.PoolLane). Keys
// already in it are skipped; a key another store watches is refused, and
// nothing is imported.
func insertStorePool(ctx context.Context, st *store.Store, shop string, keys []addresses.Address) (int, error) {
	raw := make([][]byte, len(keys))
	for i, k := range keys {
		raw[i] = k.Key
	}
	owners, err := st.AddressOwners(ctx, string(payment.Solana), raw)
	if err != nil {
		return 0, err
	}
	for i, k := range keys {
		if owner, ok := owners[k.String]; ok && owner != shop {
			return 0, fmt.Errorf("line %d: %s is another store's address already (one address, one store); nothing imported", i+1, k.String)
		}
	}
	now := time.Now().UTC()
	rows := make([]store.Address, len(keys))
	for i, k := range keys {
		rows[i] = store.Address{Network: string(payment.Solana), Key: k.Key, Address: k.String, Source: "pool", Index: -1,
			CreatedAt: now.Add(time.Duration(i) * time.Microsecond), Store: shop}
	}
	var added int
	err = st.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if added, err = tx.AddAddresses(ctx, rows); err != nil {
			return err
		}
		return tx.NotifyAddresses(ctx, string(payment.Solana))
	})
	return added, err
}

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("status", "status [--config FILE] [--json] [--check]", stderr)
	cfgPath := configFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON as GET /v1/status does")
	check := fs.Bool("check", false, "exit 1 unless a network is enabled and every enabled one is healthy (a container health check)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, st, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer st.Close()
	nets, err := (&availability.Networks{Store: st, Config: cfg}).Networks(ctx)
	if err != nil {
		return err
	}
	if *check {
		return checkHealthy(nets, stdout)
	}
	// Each network's endpoints as the instance that recorded them last saw
	// them in the last two minutes (names, never URLs).
	eps := map[string][]store.EndpointRow{}
	for _, n := range nets {
		rows, err := st.Endpoints(ctx, n.Network, time.Now().Add(-2*time.Minute))
		if err != nil {
			return err
		}
		if len(rows) > 0 {
			eps[n.Network] = rows
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"networks": nets, "endpoints": endpointsJSON(eps)})
	}
	sort.Slice(nets, func(i, j int) bool { return nets[i].Network < nets[j].Network })
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NETWORK\tENABLED\tNODE\tSCANNED\tLAG\tHEALTHY\tLEADER\tWATCHED\tNOTE")
	for _, n := range nets {
		note := n.Available
		if v := n.Verification; v != nil && v.Held > 0 {
			// Large payments a second source holds (issue 33 item 5).
			note = strings.TrimPrefix(note+"; ", "; ") + fmt.Sprintf("%d large payment(s) held for a second source", v.Held)
		}
		fmt.Fprintf(tw, "%s\t%v\t%d\t%d\t%d\t%v\t%s\t%d\t%s\n", n.Network, n.Enabled, n.NodeHeight, n.ScannedHeight,
			n.LagBlocks, n.Healthy, n.Leader, n.AddressesWatched, note)
	}
	if len(eps) > 0 {
		fmt.Fprintln(tw, "\nNETWORK\tENDPOINT\tSTATE\tHEAD\tLAG\tLATENCY\tTHROTTLES\tERRORS\tCALLS/MIN\tBUDGET USED\tSEEN BY")
		for _, n := range nets {
			for _, e := range eps[n.Network] {
				budget := fmt.Sprint(e.BudgetUsed)
				if e.DailyBudget > 0 {
					budget = fmt.Sprintf("%d/%d", e.BudgetUsed, e.DailyBudget)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%dms\t%d\t%d\t%d\t%s\t%s\n", n.Network, e.Name, e.State, e.Head, e.Lag,
					e.LatencyMillis, e.Throttles, e.Errors, e.CallsPerMinute, budget, e.Instance)
			}
		}
	}
	return tw.Flush()
}

// endpointsJSON is the endpoints of `paywatch status --json`, by network.
func endpointsJSON(eps map[string][]store.EndpointRow) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for n, rows := range eps {
		for _, e := range rows {
			out[n] = append(out[n], map[string]any{"name": e.Name, "state": e.State, "head": e.Head, "lag": e.Lag,
				"latency_ms": e.LatencyMillis, "throttles": e.Throttles, "errors": e.Errors, "calls_per_minute": e.CallsPerMinute,
				"budget_used": e.BudgetUsed, "daily_budget": e.DailyBudget, "seen_by": e.Instance, "updated_at": e.UpdatedAt})
		}
	}
	return out
}

// checkHealthy is `status --check`: an error naming what is wrong unless
// at least one network is enabled and every enabled network is healthy.
func checkHealthy(nets []availability.NetworkStatus, stdout io.Writer) error {
	var enabled, bad []string
	for _, n := range nets {
		if !n.Enabled {
			continue
		}
		enabled = append(enabled, n.Network)
		if !n.Healthy || n.Critical != "" {
			why := n.LastError
			if n.Critical != "" {
				why = n.Critical
			}
			if why == "" {
				why = n.Available
			}
			if why == "" {
				why = "not scanning"
			}
			bad = append(bad, n.Network+" ("+why+")")
		}
	}
	sort.Strings(bad)
	switch {
	case len(enabled) == 0:
		return errors.New("unhealthy: no network is enabled, so nothing is watched")
	case len(bad) > 0:
		return fmt.Errorf("unhealthy: %s", strings.Join(bad, "; "))
	}
	sort.Strings(enabled)
	fmt.Fprintf(stdout, "healthy: %s\n", strings.Join(enabled, ", "))
	return nil
}

func runRescan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("rescan", "rescan --network N --from HEIGHT [--config FILE]", stderr)
	cfgPath := configFlag(fs)
	network := fs.String("network", "", "network to rescan (bitcoin, litecoin, ethereum, tron, solana)")
	from := fs.Int64("from", -1, "first height to rescan")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !payment.Network(*network).Valid() {
		return fmt.Errorf("--network must be one of bitcoin, litecoin, ethereum, tron, solana")
	}
	fromSet := false
	fs.Visit(func(f *flag.Flag) { fromSet = fromSet || f.Name == "from" })
	if !fromSet {
		return errors.New("--from must be a block height")
	}
	_, st, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer st.Close()
	var rerr *store.RescanRangeError
	if err := st.RequestRescan(ctx, *network, *from, time.Now().UTC()); errors.As(err, &rerr) {
		return fmt.Errorf("--from: %w", err)
	} else if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%s has not been scanned yet; nothing to rescan", *network)
	} else if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "rescan of %s from %d scheduled; the scanner replays from there (nothing is counted twice)\n", *network, *from)
	return nil
}
