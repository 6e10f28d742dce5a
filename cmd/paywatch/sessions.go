package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/paywatch/paywatch/store"
)

// runSessions lists the console's sessions and ends one.
func runSessions(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, err := subcommand(args, stderr, "Usage: paywatch sessions list | end ID", "list", "end")
	if err != nil {
		return err
	}
	synopsis := map[string]string{"list": "sessions list [--config FILE]", "end": "sessions end [--config FILE] ID   (ID: cs_…, from `paywatch sessions list`)"}[sub]
	fs := newFlags("sessions "+sub, synopsis, stderr)
	cfgPath := configFlag(fs)
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
	now := time.Now().UTC()
	if sub == "end" {
		if fs.NArg() != 1 {
			return errors.New("sessions end needs exactly one session id (cs_…, from `paywatch sessions list`)")
		}
		id := fs.Arg(0)
		if err := st.EndConsoleSession(ctx, id); errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no console session %s (ended, expired, or never was)", id)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "session %s ended\n", id)
		return nil
	}
	ss, err := st.ConsoleSessions(ctx, now)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKEY\tSIGNED_IN\tLAST_USED\tEXPIRES")
	for _, s := range ss {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, s.Key.Name, s.CreatedAt.UTC().Format(time.RFC3339),
			s.LastSeenAt.UTC().Format(time.RFC3339), s.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}
