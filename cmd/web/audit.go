package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/pitchtank/pitchtank/internal/audit"
	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// cliActor names the command line in the audit log: whoever runs web user
// or web token holds the database file and is nobody in particular (ID 0).
const cliActor = "(command line)"

// auditCLI records a change made from the command line in the audit log
// that the server's admins read (/admin/audit), as the server records its
// own: the change is made already, so a failure to record it is reported
// on stderr and does not fail the command.
// A command that changed nothing (deactivating an inactive user) records
// nothing, as the server's own changes do (audit.Changed).
func auditCLI(ctx context.Context, db *sqlite.DB, stderr io.Writer, action, target string, before, after any) {
	if !audit.Changed(before, after) {
		return
	}
	e := pitches.AuditEntry{Actor: cliActor, Action: action, Target: target}
	var err error
	if before != nil {
		e.Before, err = json.Marshal(before)
	}
	if err == nil && after != nil {
		e.After, err = json.Marshal(after)
	}
	if err == nil {
		err = db.AppendAudit(ctx, e)
	}
	if err != nil {
		fmt.Fprintf(stderr, "web: the change is made, but recording it in the audit log failed: %v\n", err)
	}
}
