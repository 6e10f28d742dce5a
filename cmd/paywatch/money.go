package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/reports"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/webhooks"
)

// cliActor names who resolves from the command line.
func cliActor() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "cli:" + u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return "cli:" + u
	}
	return "cli:unknown"
}

// subcommand splits "cmd sub flags…" and prints usage for bad input.
func subcommand(args []string, stderr io.Writer, usage string, subs ...string) (string, error) {
	if len(args) > 0 {
		for _, s := range subs {
			if args[0] == s {
				return s, nil
			}
		}
	}
	fmt.Fprintln(stderr, usage)
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		return "", flag.ErrHelp // main exits 0 on it
	}
	return "", fmt.Errorf("unknown or missing subcommand; see the usage above")
}

func runTransfers(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	usage := "Usage: paywatch transfers list [--status unresolved|resolved|all] [--network N] [--classification C] [--limit N] [--json]\n" +
		"       paywatch transfers resolve ID --action credit_intent|credit_account|refunded|ignore --note TEXT\n" +
		"                [--intent pi_…] [--account A] [--refund-txid T] [--rate USD_PER_UNIT]"
	sub, err := subcommand(args, stderr, usage, "list", "resolve")
	if err != nil {
		return err
	}
	if sub == "list" {
		fs := newFlags("transfers list", "transfers list [--status unresolved|resolved|all] [--network N] [--classification C] [--limit N] [--json] [--config FILE]", stderr)
		return transfersList(ctx, fs, args[1:], stdout)
	}
	fs := newFlags("transfers resolve", "transfers resolve ID --action credit_intent|credit_account|refunded|ignore --note TEXT [flags]", stderr)
	if len(args) >= 2 && (args[1] == "-h" || args[1] == "-help" || args[1] == "--help") {
		return transfersResolve(ctx, fs, "", args[1:], stdout) // prints the flags
	}
	if len(args) < 2 || args[1] == "" || args[1][0] == '-' {
		fmt.Fprintln(stderr, usage)
		return errors.New("transfers resolve needs the transfer id first")
	}
	return transfersResolve(ctx, fs, args[1], args[2:], stdout)
}

// transfersList prints the finance inbox as a table or JSON.
func transfersList(ctx context.Context, fs *flag.FlagSet, args []string, stdout io.Writer) error {
	cfgPath := configFlag(fs)
	status := fs.String("status", "unresolved", "unresolved, resolved or all")
	network := fs.String("network", "", "only this network")
	class := fs.String("classification", "", "only this classification")
	limit := fs.Int("limit", 100, "at most this many, newest first")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	_, st, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer st.Close()
	page, err := finance.New(finance.Options{Store: st}).Inbox(ctx, store.InboxFilter{Status: *status, Network: *network, Classification: *class, Limit: *limit})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(page)
	}
	return printInbox(stdout, page)
}

// printInbox prints one table row per transfer.
func printInbox(stdout io.Writer, page finance.InboxPage) error {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSEEN\tNETWORK\tASSET\tAMOUNT\tCLASS\tSTATUS\tINTENT\tRESOLUTION")
	for _, t := range page.Transfers {
		intent, res := "-", "-"
		if t.IntentID != nil {
			intent = *t.IntentID
		}
		if t.Resolution != nil {
			res = t.Resolution.Action + " by " + t.Resolution.Actor
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.FirstSeenAt.Format(time.RFC3339), t.Network, t.Asset,
			t.Amount, t.Classification, t.Status, intent, res)
	}
	return tw.Flush()
}

// transfersResolve records a finance decision on transfer id and prints the
// resolved transfer as JSON.
func transfersResolve(ctx context.Context, fs *flag.FlagSet, id string, args []string, stdout io.Writer) error {
	cfgPath := configFlag(fs)
	action := fs.String("action", "", "credit_intent, credit_account, refunded or ignore")
	note := fs.String("note", "", "why (required; kept with the decision)")
	intent := fs.String("intent", "", "intent to credit (credit_intent)")
	account := fs.String("account", "", "account to credit (credit_account)")
	refund := fs.String("refund-txid", "", "refund transaction id (refunded)")
	rate := fs.String("rate", "", "USD per unit for credit_account when the transfer has no locked rate (late, unknown address, wrong asset; refused when it has one)")
	override := fs.String("override", "", "reason to credit_account at a --rate the rate book does not confirm (capped by finance.max_override_credit_usd)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, st, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer st.Close()
	// A credit_intent decides the intent again, as the daemon would.
	svc := finance.New(finance.Options{Store: st, Redecider: intents.New(intents.Options{Store: st, Config: cfg}), Bounds: finance.BoundsOf(cfg)})
	req := finance.ResolveRequest{Action: *action, Note: *note, IntentID: *intent,
		Account: *account, RefundTxID: *refund, USDPerUnit: *rate}
	if *override != "" {
		req.Override = &finance.Override{Reason: *override}
	}
	res, err := svc.Resolve(ctx, id, req, cliActor(), nil)
	if err != nil {
		return err
	}
	body, err := json.Marshal(res.View)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", body)
	return err
}

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	usage := "Usage: paywatch report reconcile --from 2026-11-01 --to 2026-12-01 [--as-of TIME] [--format csv|json]\n" +
		"       paywatch report close --from 2026-11-01 --to 2026-12-01   (stores the period's report; served as stored from then on)\n" +
		"       paywatch report closes"
	sub, err := subcommand(args, stderr, usage, "reconcile", "close", "closes")
	if err != nil {
		return err
	}
	fs := newFlags("report "+sub, "report "+sub+" [flags]", stderr)
	cfgPath := configFlag(fs)
	fromS := fs.String("from", "", "first day (2026-11-01) or RFC 3339 time, inclusive")
	toS := fs.String("to", "", "last bound (2026-12-01) or RFC 3339 time, exclusive")
	asOfS := fs.String("as-of", "", "show the records as they stood at this RFC 3339 time (default: now, or the stored report of a closed period)")
	format := fs.String("format", "csv", "csv (one row per transfer) or json (rows and totals per method)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	var from, to, asOf time.Time
	if sub != "closes" {
		if from, err = reports.ParseReportTime(*fromS); err != nil {
			return fmt.Errorf("--from: %w", err)
		}
		if to, err = reports.ParseReportTime(*toS); err != nil {
			return fmt.Errorf("--to: %w", err)
		}
	}
	if *asOfS != "" {
		if asOf, err = reports.ParseReportTime(*asOfS); err != nil {
			return fmt.Errorf("--as-of: %w", err)
		}
	}
	if *format != reports.FormatCSV && *format != reports.FormatJSON {
		return errors.New("--format must be csv or json")
	}
	_, st, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := reports.New(reports.Options{Store: st})
	switch sub {
	case "close":
		c, created, err := svc.ClosePeriod(ctx, "", from, to, cliActor())
		if err != nil {
			return err
		}
		if !created {
			fmt.Fprintf(stderr, "the period was already closed by %s at %s; its stored report is unchanged\n", c.ClosedBy, c.ClosedAt.Format(time.RFC3339))
		}
		return json.NewEncoder(stdout).Encode(c)
	case "closes":
		cs, err := svc.ReportCloses(ctx, "")
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tFROM\tTO\tAS_OF\tCLOSED_BY\tCLOSED_AT")
		for _, c := range cs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.From.Format(time.RFC3339), c.To.Format(time.RFC3339),
				c.AsOf.Format(time.RFC3339Nano), c.ClosedBy, c.ClosedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	}
	// The same bytes as GET /v1/reports/reconciliation.
	body, _, err := svc.RenderReconciliation(ctx, "", from, to, asOf, *format)
	if err != nil {
		return err
	}
	if _, err := stdout.Write(body); err != nil {
		return err
	}
	if *format == reports.FormatJSON {
		_, err = io.WriteString(stdout, "\n")
	}
	return err
}

func runWebhooks(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	usage := "Usage: paywatch webhooks log [--endpoint NAME] [--limit N]\n" +
		"       paywatch webhooks endpoints\n" +
		"       paywatch webhooks redeliver --endpoint NAME --from-seq N   (moves the cursor back: events from N are sent again)"
	sub, err := subcommand(args, stderr, usage, "log", "endpoints", "redeliver")
	if err != nil {
		return err
	}
	synopsis := map[string]string{"log": "webhooks log [--endpoint NAME] [--limit N] [--config FILE]",
		"endpoints": "webhooks endpoints [--config FILE]",
		"redeliver": "webhooks redeliver --endpoint NAME --from-seq N [--config FILE]"}[sub]
	fs := newFlags("webhooks "+sub, synopsis, stderr)
	cfgPath := configFlag(fs)
	endpoint, limit, fromSeq := new(string), new(int), new(int64)
	switch sub {
	case "log":
		endpoint = fs.String("endpoint", "", "only this endpoint's deliveries")
		limit = fs.Int("limit", 50, "at most this many log lines, newest first")
	case "redeliver":
		endpoint = fs.String("endpoint", "", "endpoint name")
		fromSeq = fs.Int64("from-seq", 0, "redeliver every event from this seq on")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	_, st, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer st.Close()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	switch sub {
	case "log":
		as, err := st.WebhookAttempts(ctx, *endpoint, 0, *limit)
		if err != nil {
			return err
		}
		fmt.Fprintln(tw, "ID\tAT\tENDPOINT\tSEQ\tEVENT\tATTEMPT\tOUTCOME\tSTATUS\tMS\tERROR")
		for _, a := range as {
			code := "-"
			if a.StatusCode != nil {
				code = strconv.Itoa(*a.StatusCode)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%d\t%s\t%s\t%d\t%s\n", a.ID, a.CreatedAt.UTC().Format(time.RFC3339), a.Endpoint,
				a.EventSeq, a.EventID, a.Attempt, a.Outcome, code, a.DurationMS, webhooks.RedactText(a.Error))
		}
	case "endpoints":
		eps, err := st.WebhookEndpoints(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(tw, "NAME\tURL\tLAST_SEQ\tATTEMPTS\tNEXT_ATTEMPT\tLAST_ERROR")
		for _, e := range eps {
			next := "-"
			if e.NextAttemptAt != nil {
				next = e.NextAttemptAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", e.Name, webhooks.RedactURL(e.URL), e.LastSeq, e.Attempts, next, webhooks.RedactText(e.LastError))
		}
	case "redeliver":
		if *endpoint == "" || *fromSeq < 1 {
			return errors.New("webhooks redeliver needs --endpoint and --from-seq (>= 1)")
		}
		e, err := st.RedeliverWebhook(ctx, *endpoint, *fromSeq, time.Now().UTC())
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no webhook endpoint %q (it appears once `paywatch serve` has run with it configured)", *endpoint)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "endpoint %s will redeliver every event after seq %d (at least once: receivers dedupe on the event id)\n", e.Name, e.LastSeq)
	}
	return tw.Flush()
}
