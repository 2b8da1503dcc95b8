package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/notify"
	"github.com/pitchtank/pitchtank/internal/sqlite"
	"github.com/pitchtank/pitchtank/internal/tracking"
)

// smtpFlags are `web serve`'s e-mail settings: notifications go out by
// mail too when --smtp-addr is set.
type smtpFlags struct {
	addr, from, to, user, events *string
}

func addSMTPFlags(fs *flag.FlagSet) smtpFlags {
	return smtpFlags{
		addr:   fs.String("smtp-addr", "", "SMTP server (host:port) to mail notifications through; empty: no e-mail"),
		from:   fs.String("smtp-from", "", "sender address of notification mail"),
		to:     fs.String("smtp-to", "", "recipients of notification mail, comma-separated"),
		user:   fs.String("smtp-user", "", "SMTP login (its password comes from $PITCHTANK_SMTP_PASSWORD)"),
		events: fs.String("smtp-events", "", "events to mail, comma-separated (default: "+strings.Join(notify.Events, ", ")+")"),
	}
}

// mailer is the configured Mailer, nil without --smtp-addr.
func (f smtpFlags) mailer() (*notify.Mailer, error) {
	if *f.addr == "" {
		return nil, nil
	}
	m := &notify.Mailer{Addr: *f.addr, From: *f.from, Username: *f.user, Password: os.Getenv("PITCHTANK_SMTP_PASSWORD")}
	for _, t := range strings.Split(*f.to, ",") {
		if t = strings.TrimSpace(t); t != "" {
			m.To = append(m.To, t)
		}
	}
	for _, e := range strings.Split(*f.events, ",") {
		if e = strings.TrimSpace(e); e != "" {
			if !notify.KnownEvent(e) {
				return nil, fmt.Errorf("--smtp-events: unknown event %q (events: %s)", e, strings.Join(notify.Events, ", "))
			}
			m.Events = append(m.Events, e)
		}
	}
	if err := m.Check(); err != nil {
		return nil, err
	}
	return m, nil
}

// serveTracking builds the notifier and the run tracker over db. The
// returned stop waits up to 30 s for deliveries in flight.
func serveTracking(db *sqlite.DB, mail *notify.Mailer, log *slog.Logger, stderr io.Writer) (*tracking.Tracker, func()) {
	n := notify.New(notify.Config{Store: db, Mail: mail, Logger: log})
	tr := tracking.New(tracking.Config{Store: db, Runs: db, Pitches: db, Notifier: n, Logger: log})
	log.Info("run tracking", slog.String("app_build", tracking.AppBuild()), slog.Bool("mail", mail != nil))
	return tr, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := n.Close(ctx); err != nil {
			fmt.Fprintf(stderr, "web serve: %v\n", err)
		}
	}
}
