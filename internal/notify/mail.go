package notify

import (
	"encoding/json"
	"fmt"
	"net"
	"net/smtp"
	"strings"
	"time"
)

// Mailer sends events by e-mail over SMTP (net/smtp: STARTTLS when the
// server offers it; PLAIN auth when a user is set, which net/smtp allows
// only over TLS or to localhost).
type Mailer struct {
	Addr     string   // host:port of the SMTP server
	From     string   // the envelope and header sender
	To       []string // recipients
	Username string   // empty: no auth
	Password string
	// Events limits the mail to these event types; empty: every event.
	Events []string
	// send is smtp.SendMail; tests may replace it.
	send func(addr string, a smtp.Auth, from string, to []string, msg []byte) error
}

// Check reports a configuration that cannot send, naming the field.
func (m *Mailer) Check() error {
	if _, _, err := net.SplitHostPort(m.Addr); err != nil {
		return fmt.Errorf("smtp address %q: want host:port", m.Addr)
	}
	if !strings.Contains(m.From, "@") {
		return fmt.Errorf("smtp from %q: want an e-mail address", m.From)
	}
	if len(m.To) == 0 {
		return fmt.Errorf("smtp to: no recipients")
	}
	for _, t := range m.To {
		if !strings.Contains(t, "@") || strings.ContainsAny(t, "\r\n") {
			return fmt.Errorf("smtp to %q: want an e-mail address", t)
		}
	}
	if strings.ContainsAny(m.From, "\r\n") {
		return fmt.Errorf("smtp from: line breaks are not allowed")
	}
	return nil
}

// Message is the mail for ev: a subject naming the event and the event's
// JSON as the text.
func (m *Mailer) Message(ev Event) []byte {
	body, _ := json.MarshalIndent(ev, "", "  ")
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\n", m.From)
	fmt.Fprintf(&b, "To: %s\r\n", strings.Join(m.To, ", "))
	fmt.Fprintf(&b, "Subject: [pitchtank] %s\r\n", subject(ev))
	fmt.Fprintf(&b, "Date: %s\r\n", ev.CreatedAt.Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Message-ID: <%s@pitchtank>\r\n", ev.ID)
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n")
	b.WriteString(strings.ReplaceAll(string(body), "\n", "\r\n"))
	b.WriteString("\r\n")
	return []byte(b.String())
}

func subject(ev Event) string {
	switch ev.Type {
	case EventRunFinished:
		return "run finished"
	case EventRunFailed:
		return "run failed"
	case EventRegression:
		return "regression found"
	case EventRoundStatus:
		return "round status changed"
	}
	return ev.Type
}

// Send mails ev when the mailer takes its type.
func (m *Mailer) Send(ev Event) error {
	if len(m.Events) > 0 && !contains(m.Events, ev.Type) {
		return nil
	}
	var auth smtp.Auth
	if m.Username != "" {
		host, _, _ := net.SplitHostPort(m.Addr)
		auth = smtp.PlainAuth("", m.Username, m.Password, host)
	}
	send := m.send
	if send == nil {
		send = smtp.SendMail
	}
	if err := send(m.Addr, auth, m.From, m.To, m.Message(ev)); err != nil {
		return fmt.Errorf("notify: mail %s to %s: %w", ev.Type, strings.Join(m.To, ","), err)
	}
	return nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
