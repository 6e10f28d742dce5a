package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/daemon"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

const storesUsage = "Usage: paywatch stores list [--json]\n" +
	"       paywatch stores create ID [--name N] [--display-name D] [--logo-url U] [--colour #rrggbb] [--languages en,de]\n" +
	"                [--return-hosts h1,h2] [--confirmations BTC=3,...] [--tolerance-bps N]\n" +
	"       paywatch stores add-key ID NETWORK ACCOUNT_KEY"

func runStores(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, err := subcommand(args, stderr, storesUsage, "list", "create", "add-key")
	if err != nil {
		return err
	}
	synopsis := map[string]string{"list": "stores list [--json] [--config FILE]",
		"create":  "stores create ID [--name N] [--display-name D] [--logo-url U] [--colour #rrggbb] [--languages L,L] [--return-hosts H,H] [--confirmations M=N,...] [--tolerance-bps N] [--config FILE]",
		"add-key": "stores add-key ID NETWORK ACCOUNT_KEY [--config FILE]"}[sub]
	fs := newFlags("stores "+sub, synopsis, stderr)
	cfgPath := configFlag(fs)
	var asJSON *bool
	var look struct {
		name, display, logo, colour, confs *string
		languages, hosts                   multiFlag
		tolerance                          *int
	}
	switch sub {
	case "list":
		asJSON = fs.Bool("json", false, "print JSON")
	case "create":
		look.name = fs.String("name", "", "the operator's name of the store (default: the id)")
		look.display = fs.String("display-name", "", "the name the payment page shows")
		look.logo = fs.String("logo-url", "", "the logo the payment page shows (https://)")
		look.colour = fs.String("colour", "", "the payment page's colour, #rrggbb")
		fs.Var(&look.languages, "languages", "the page languages offered, of en, de, fr, id (default: all)")
		fs.Var(&look.hosts, "return-hosts", "the hosts a return_url may name (default: checkout.return_hosts)")
		look.confs = fs.String("confirmations", "", "confirmations per method where they differ, like BTC=3,USDT-TRC20=1")
		look.tolerance = fs.Int("tolerance-bps", -1, "underpayment tolerance in basis points of the amount (default: the networks')")
	}
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	cfg, st, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return err
	}
	switch sub {
	case "list":
		if len(pos) != 0 {
			return errors.New("stores list takes no arguments")
		}
		return storesList(ctx, cfg, st, *asJSON, stdout)
	case "create":
		if len(pos) != 1 {
			return errors.New("stores create needs the store's ID (1 to 40 of a-z, 0-9, - and _)")
		}
		s := config.Store{ID: pos[0], Name: *look.name, DisplayName: *look.display, LogoURL: *look.logo, Colour: *look.colour,
			Languages: look.languages, ReturnHosts: look.hosts}
		if *look.tolerance >= 0 {
			s.ToleranceBPS = look.tolerance
		}
		if *look.confs != "" {
			s.Confirmations = map[payment.Method]int{}
			for _, kv := range strings.Split(*look.confs, ",") {
				m, n, ok := strings.Cut(strings.TrimSpace(kv), "=")
				v, err := strconv.Atoi(n)
				if !ok || err != nil {
					return fmt.Errorf("--confirmations: %q is not METHOD=N, like BTC=3", kv)
				}
				s.Confirmations[payment.Method(m)] = v
			}
		}
		return storesCreate(ctx, cfg, st, s, stdout)
	case "add-key":
		if len(pos) != 3 {
			return errors.New("stores add-key needs ID NETWORK ACCOUNT_KEY")
		}
		return storesAddKey(ctx, cfg, st, pos[0], payment.Network(pos[1]), pos[2], stdout)
	}
	return nil
}

// parseInterspersed parses flags that may come after the positional
// arguments (`stores create shop-b --name "Shop B"`) and returns the
// positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// cliField makes a config error name the command's flag, without the
// config file's "invalid config" wording.
func cliField(err error) error {
	var msg = err.Error()
	msg = strings.TrimPrefix(msg, config.ErrInvalid.Error()+": ")
	return errors.New(msg)
}

func storesCreate(ctx context.Context, cfg *config.Config, st *store.Store, s config.Store, stdout io.Writer) error {
	if s.ID == store.DefaultStore {
		return errors.New("the store \"default\" exists always; its look is set in the config file's stores list")
	}
	if err := cfg.CheckStore("store "+s.ID, s); err != nil {
		return cliField(err)
	}
	name := s.Name
	if name == "" {
		name = s.ID
	}
	sh := store.Shop{ID: s.ID, Name: name, DisplayName: s.DisplayName, LogoURL: s.LogoURL, Colour: s.Colour,
		Languages: s.Languages, ReturnHosts: s.ReturnHosts, Settings: store.ShopSettings{ToleranceBPS: s.ToleranceBPS}}
	if len(s.Confirmations) > 0 {
		sh.Settings.Confirmations = map[string]int{}
		for m, n := range s.Confirmations {
			sh.Settings.Confirmations[string(m)] = n
		}
	}
	if _, err := st.CreateShop(ctx, sh, time.Now().UTC()); errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("a store %q exists already", s.ID)
	} else if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created store %s; add its keys with `paywatch stores add-key %s NETWORK ACCOUNT_KEY`, its API keys with "+
		"`paywatch apikey create --store %s`\n", s.ID, s.ID, s.ID)
	return nil
}

func storesAddKey(ctx context.Context, cfg *config.Config, st *store.Store, id string, n payment.Network, key string, stdout io.Writer) error {
	if id == store.DefaultStore {
		return fmt.Errorf("the default store's keys are networks.<network>.account_key in the config file")
	}
	if !store.ValidStoreID(id) {
		return fmt.Errorf("%q is not a store id (1 to 40 of a-z, 0-9, - and _)", id)
	}
	if _, err := st.Shop(ctx, id); errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no store %q: create it with `paywatch stores create %s`", id, id)
	} else if err != nil {
		return err
	}
	fp, err := cfg.CheckStoreKey("ACCOUNT_KEY", n, key)
	if err != nil {
		return cliField(err)
	}
	keys, err := st.ShopKeys(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		switch {
		case k.Store == id && k.Network == string(n) && k.Fingerprint == fp:
			fmt.Fprintf(stdout, "store %s has this %s key already (fingerprint %s)\n", id, n, fp)
			return nil
		case k.Store == id && k.Network == string(n):
			return fmt.Errorf("store %s has another %s key already (fingerprint %s): the addresses derived from it would change owner; "+
				"a new key is a new store", id, n, k.Fingerprint)
		case k.Network == string(n) && k.Fingerprint == fp:
			return errors.New("ACCOUNT_KEY is another store's key (one key, one store)")
		}
	}
	err = st.AddShopKey(ctx, store.ShopKey{Store: id, Network: string(n), AccountKey: key, Fingerprint: fp}, time.Now().UTC())
	if errors.Is(err, store.ErrConflict) {
		return errors.New("ACCOUNT_KEY is another store's key, or the store got a key for the network meanwhile")
	} else if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "added store %s's %s key (fingerprint %s); a running daemon derives from it within %s\n", id, n, fp, daemon.StoresReloadEvery)
	return nil
}

// storeNetworkRow is one network of one store in `stores list`.
type storeNetworkRow struct {
	Network string `json:"network"`
	// Source is "key FINGERPRINT", "pool: N free" or "none".
	Source string `json:"source"`
	// Health is the network's, as `paywatch status` reads it: "healthy" or
	// why not.
	Health string `json:"health"`
}

type storeRow struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	DisplayName string            `json:"display_name,omitempty"`
	Networks    []storeNetworkRow `json:"networks"`
}

func storesList(ctx context.Context, cfg *config.Config, st *store.Store, asJSON bool, stdout io.Writer) error {
	shops, err := st.Shops(ctx)
	if err != nil {
		return err
	}
	keys, err := st.ShopKeys(ctx)
	if err != nil {
		return err
	}
	nets, err := (&availability.Networks{Store: st, Config: cfg}).Networks(ctx)
	if err != nil {
		return err
	}
	health := map[string]string{}
	for _, n := range nets {
		h := "healthy"
		switch {
		case !n.Enabled:
			h = "not enabled"
		case n.Critical != "":
			h = "critical: " + n.Critical
		case n.Available != "":
			h = n.Available
		case !n.Healthy:
			h = "unhealthy"
		}
		health[n.Network] = h
	}
	held := map[string]string{}
	for _, k := range keys {
		held[k.Store+"/"+k.Network] = k.Fingerprint
	}
	var rows []storeRow
	for _, sh := range shops {
		r := storeRow{ID: sh.ID, Name: sh.Name, DisplayName: sh.DisplayName, Networks: []storeNetworkRow{}}
		for _, n := range payment.Networks {
			nc := cfg.Networks[n]
			enabled := nc != nil && nc.Enabled
			src := "none"
			switch {
			case n == payment.Solana:
				free, err := st.PoolLaneRemaining(ctx, string(n), store.PoolLane(sh.ID))
				if err != nil {
					return err
				}
				if !enabled && free == 0 {
					continue
				}
				src = fmt.Sprintf("pool: %d free", free)
			case sh.ID == store.DefaultStore:
				if !enabled {
					continue
				}
				src = "key networks." + string(n) + ".account_key"
				if fp, err := addresses.Fingerprint(nc.AccountKey); err == nil {
					src = "key " + fp + " (networks." + string(n) + ".account_key)"
				}
			default:
				fp, ok := held[sh.ID+"/"+string(n)]
				if !ok && !enabled {
					continue
				}
				if ok {
					src = "key " + fp
				}
			}
			h := health[string(n)]
			if h == "" {
				h = "not enabled"
			}
			r.Networks = append(r.Networks, storeNetworkRow{Network: string(n), Source: src, Health: h})
		}
		rows = append(rows, r)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"stores": rows})
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STORE\tNAME\tNETWORK\tKEY/POOL\tHEALTH")
	for _, r := range rows {
		if len(r.Networks) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\n", r.ID, r.Name)
		}
		for _, n := range r.Networks {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Name, n.Network, n.Source, n.Health)
		}
	}
	return tw.Flush()
}
