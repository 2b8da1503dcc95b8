//go:build linux

package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/demo"
	"github.com/pitchtank/pitchtank/internal/sqlite"
)

// cloneRule says how one table's rows are copied: which columns are ids
// shifted by a table's offset in each copy, and which text column marks a
// copy.
type cloneRule struct {
	table string
	id    string            // the table's own id column shifted by its offset ("" if none)
	refs  map[string]string // column -> table whose offset it takes
	extra map[string]string // column -> SQL expression (may use :k)
}

// cloneRules are in foreign-key order. Users, sessions, tokens and kernel
// sources are shared by every copy: the copies are more rounds of the same
// team.
var cloneRules = []cloneRule{
	{table: "rounds", id: "id", extra: map[string]string{
		"number": "number + 10*:k",
		"title":  "title || ' (copy ' || :k || ')'",
	}},
	{table: "criteria", id: "id", refs: map[string]string{"round_id": "rounds"}},
	{table: "personal_weights", refs: map[string]string{"round_id": "rounds"}},
	{table: "pitches", id: "id", refs: map[string]string{"round_id": "rounds", "repitch_of": "pitches"}},
	{table: "scorecard_versions", id: "id", refs: map[string]string{"pitch_id": "pitches"}},
	{table: "scorecard_scores", refs: map[string]string{"version_id": "scorecard_versions"}},
	{table: "vote_versions", id: "id", refs: map[string]string{"round_id": "rounds", "pitch_id": "pitches"}},
	{table: "runs", id: "id", refs: map[string]string{"pitch_id": "pitches", "requeue_of": "runs"}},
	{table: "run_shapes", refs: map[string]string{"run_id": "runs"}},
	{table: "kernel_versions", refs: map[string]string{"pitch_id": "pitches"}},
}

// seed writes the demo tournament into a new database at path, then copies
// its rounds (with their criteria, pitches, scorecards, votes, runs and
// shapes) scale-1 times in one transaction, and returns a session secret
// and an API token for login; writerToken (package level) gets a token of
// writerLogin, the shark whose votes the mixed pass casts.
// writerLogin is the demo shark that votes in round 5 (judging) during the
// mixed pass; writerToken is its token once seeded.
const writerLogin = "pragmatist"

var writerToken string

func seed(ctx context.Context, path string, scale int, login string) (session, token string, err error) {
	db, err := sqlite.Open(path)
	if err != nil {
		return "", "", err
	}
	db.BcryptCost = 4 // the demo's passwords are public; hashing them slowly buys nothing here
	if _, err := demo.Load(ctx, db); err != nil {
		db.Close()
		return "", "", fmt.Errorf("load demo: %w", err)
	}
	users, err := db.Users(ctx)
	if err != nil {
		db.Close()
		return "", "", err
	}
	var uid int64
	for _, u := range users {
		if u.Login == login {
			uid = u.ID
		}
	}
	if uid == 0 {
		db.Close()
		return "", "", fmt.Errorf("no demo login %q", login)
	}
	if session, err = db.CreateSession(ctx, uid, 24*time.Hour); err != nil {
		db.Close()
		return "", "", err
	}
	if token, _, err = db.CreateToken(ctx, uid, "loadbench"); err != nil {
		db.Close()
		return "", "", err
	}
	for _, u := range users {
		if u.Login == writerLogin {
			if writerToken, _, err = db.CreateToken(ctx, u.ID, "loadbench writer"); err != nil {
				db.Close()
				return "", "", err
			}
		}
	}
	if err := db.Close(); err != nil {
		return "", "", err
	}
	if scale > 1 {
		if err := cloneRounds(ctx, path, scale); err != nil {
			return "", "", fmt.Errorf("clone rounds: %w", err)
		}
	}
	return session, token, nil
}

// cloneRounds copies every original row of cloneRules' tables scale-1
// times with direct SQL in one transaction: copy k shifts each id by k times
// its table's largest original id.
func cloneRounds(ctx context.Context, path string, scale int) error {
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(ON)")
	if err != nil {
		return err
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()

	offset := map[string]int64{}
	cols := map[string][]string{}
	for _, r := range cloneRules {
		rows, err := tx.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, r.table)
		if err != nil {
			return err
		}
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return err
			}
			cols[r.table] = append(cols[r.table], c)
		}
		rows.Close()
		if r.id != "" {
			var m sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT max(`+r.id+`) FROM `+r.table).Scan(&m); err != nil {
				return err
			}
			offset[r.table] = m.Int64
		}
	}
	// Which rows are originals: those of the demo's rounds, or (for tables
	// keyed by their own id) ids up to the original maximum.
	for k := 1; k < scale; k++ {
		for _, r := range cloneRules {
			var sel []string
			for _, c := range cols[r.table] {
				e := c
				switch {
				case r.extra[c] != "":
					e = strings.ReplaceAll(r.extra[c], ":k", fmt.Sprint(k))
				case c == r.id:
					e = fmt.Sprintf("%s + %d", c, int64(k)*offset[r.table])
				case r.refs[c] != "":
					e = fmt.Sprintf("%s + %d", c, int64(k)*offset[r.refs[c]]) // NULL stays NULL
				}
				sel = append(sel, e)
			}
			where := originalRows(r, offset)
			q := fmt.Sprintf(`INSERT INTO %s (%s) SELECT %s FROM %s WHERE %s`,
				r.table, strings.Join(cols[r.table], ", "), strings.Join(sel, ", "), r.table, where)
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("copy %d of %s: %w", k, r.table, err)
			}
		}
	}
	return tx.Commit()
}

// originalRows is the WHERE clause picking a table's demo rows.
func originalRows(r cloneRule, offset map[string]int64) string {
	if r.id != "" {
		return fmt.Sprintf("%s <= %d", r.id, offset[r.table])
	}
	for c, t := range r.refs {
		return fmt.Sprintf("%s <= %d", c, offset[t])
	}
	return "0"
}
