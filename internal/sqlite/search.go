package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// Searches of runs and pitches: text, prefixes, people, rounds, dates and
// a sort order, with the number of matches for paging.

// likeEscape makes s a literal LIKE pattern part (ESCAPE '\').
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

var runSortCols = map[string]string{"id": "runs.id", "created": "runs.created_at", "status": "runs.status", "variant": "runs.variant",
	"device": "runs.device", "problem": "runs.problem", "speedup": "runs.geomean"}

// SearchRuns returns one page of the runs matching q, and how many match.
func (db *DB) SearchRuns(ctx context.Context, q runner.Query) ([]runner.Run, int, error) {
	var where []string
	var args []any
	add := func(cond string, v ...any) { where = append(where, cond); args = append(args, v...) }
	f := q.Filter
	for _, c := range []struct{ col, v string }{{"problem", f.Problem}, {"variant", f.Variant}, {"baseline", f.Baseline},
		{"device", f.Device}, {"suite", f.Suite}, {"status", string(f.Status)}} {
		if c.v != "" {
			add("runs."+c.col+" = ?", c.v)
		}
	}
	if f.PitchID != 0 {
		add("runs.pitch_id = ?", f.PitchID)
	}
	if f.Imported != nil {
		add("runs.imported = ?", *f.Imported)
	}
	if f.BeforeID > 0 {
		add("runs.id < ?", f.BeforeID)
	}
	if q.Text != "" {
		pat := "%" + likeEscape(strings.ToLower(q.Text)) + "%"
		add(`(lower(runs.variant) LIKE ? ESCAPE '\' OR lower(runs.problem) LIKE ? ESCAPE '\' OR lower(runs.baseline) LIKE ? ESCAPE '\'
			OR lower(runs.device) LIKE ? ESCAPE '\' OR lower(runs.suite) LIKE ? ESCAPE '\'
			OR runs.pitch_id IN (SELECT id FROM pitches WHERE lower(title) LIKE ? ESCAPE '\'))`, pat, pat, pat, pat, pat, pat)
	}
	if q.VariantPrefix != "" {
		add(`runs.variant LIKE ? ESCAPE '\'`, likeEscape(q.VariantPrefix)+"%")
	}
	if q.Person != "" {
		add("runs.requested_by IN (SELECT id FROM users WHERE lower(login) = lower(?))", q.Person)
	}
	if q.Round > 0 {
		add("runs.pitch_id IN (SELECT p.id FROM pitches p JOIN rounds r ON r.id = p.round_id WHERE r.number = ?)", q.Round)
	}
	if !q.From.IsZero() {
		add("runs.created_at >= ?", fmtTime(q.From))
	}
	if !q.To.IsZero() {
		add("runs.created_at < ?", fmtTime(q.To))
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	var total int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM runs`+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("sqlite: count runs: %w", err)
	}
	col, ok := runSortCols[q.Sort]
	if !ok {
		col = "runs.id"
	}
	dir := " ASC"
	if q.Desc {
		dir = " DESC"
	}
	order := col + dir
	if col == "runs.geomean" {
		order = "runs.geomean IS NULL, " + order // runs without a result last either way
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	query := `SELECT ` + runCols + ` FROM runs` + cond + ` ORDER BY ` + order + `, runs.id` + dir + ` LIMIT ? OFFSET ?`
	runs, err := queryAll(ctx, db.r, "search runs", func(r *sql.Rows) (runner.Run, error) {
		run, err := scanRun(r, false)
		if err != nil {
			return runner.Run{}, err
		}
		return *run, nil
	}, query, append(args, min(limit, 1000), max(q.Offset, 0))...)
	if err != nil {
		return nil, 0, err
	}
	return runs, total, nil
}

var pitchSortCols = map[string]string{"filed": "p.created_at", "title": "lower(p.title)", "round": "r.number", "status": "p.status",
	"variant": "p.variant", "contestant": "lower(u.display_name)"}

// SearchPitches returns one page of the pitches matching q, and how many
// match.
func (db *DB) SearchPitches(ctx context.Context, q pitches.PitchQuery) ([]pitches.Pitch, int, error) {
	var where []string
	var args []any
	add := func(cond string, v ...any) { where = append(where, cond); args = append(args, v...) }
	if q.Text != "" {
		pat := "%" + likeEscape(strings.ToLower(q.Text)) + "%"
		add(`(lower(p.title) LIKE ? ESCAPE '\' OR lower(p.category) LIKE ? ESCAPE '\' OR lower(p.body) LIKE ? ESCAPE '\')`, pat, pat, pat)
	}
	if q.Status != "" {
		add("p.status = ?", string(q.Status))
	}
	if q.VariantPrefix != "" {
		add(`p.variant LIKE ? ESCAPE '\'`, likeEscape(q.VariantPrefix)+"%")
	}
	if q.Person != "" {
		add("lower(u.login) = lower(?)", q.Person)
	}
	if q.Round > 0 {
		add("r.number = ?", q.Round)
	}
	if !q.From.IsZero() {
		add("p.created_at >= ?", fmtTime(q.From))
	}
	if !q.To.IsZero() {
		add("p.created_at < ?", fmtTime(q.To))
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	var total int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM pitches p JOIN rounds r ON r.id = p.round_id JOIN users u ON u.id = p.contestant_id`+cond,
		args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("sqlite: count pitches: %w", err)
	}
	col, ok := pitchSortCols[q.Sort]
	if !ok {
		col = "p.created_at"
	}
	dir := " ASC"
	if q.Desc {
		dir = " DESC"
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	ps, err := queryAll(ctx, db.r, "search pitches", values(scanPitch), pitchSelect+cond+` ORDER BY `+col+dir+`, p.id`+dir+` LIMIT ? OFFSET ?`,
		append(args, min(limit, 500), max(q.Offset, 0))...)
	if err != nil {
		return nil, 0, err
	}
	return ps, total, nil
}
