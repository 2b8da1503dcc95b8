package main

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestSMTPFlags(t *testing.T) {
	parse := func(args ...string) (smtpFlags, error) {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := addSMTPFlags(fs)
		return f, fs.Parse(args)
	}
	f, _ := parse()
	if m, err := f.mailer(); m != nil || err != nil {
		t.Errorf("no --smtp-addr: %+v %v", m, err)
	}
	t.Setenv("PITCHTANK_SMTP_PASSWORD", "pw")
	f, _ = parse("--smtp-addr", "mail.example.org:587", "--smtp-from", "pt@example.org", "--smtp-to", "a@example.org, b@example.org",
		"--smtp-user", "pt", "--smtp-events", "regression.found,run.failed")
	m, err := f.mailer()
	if err != nil || m == nil || len(m.To) != 2 || m.To[1] != "b@example.org" || m.Password != "pw" || len(m.Events) != 2 {
		t.Fatalf("mailer: %+v %v", m, err)
	}
	for _, bad := range [][]string{
		{"--smtp-addr", "mail.example.org"},                                                                // no port
		{"--smtp-addr", "m:25", "--smtp-from", "pt@example.org"},                                           // no recipients
		{"--smtp-addr", "m:25", "--smtp-from", "pt@example.org", "--smtp-to", "a@b", "--smtp-events", "x"}, // unknown event
	} {
		f, _ := parse(bad...)
		if _, err := f.mailer(); err == nil || !strings.Contains(err.Error(), "smtp") {
			t.Errorf("%v: %v", bad, err)
		}
	}
}
