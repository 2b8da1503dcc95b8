package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/pitchtank/pitchtank/internal/pitches"
	"github.com/pitchtank/pitchtank/internal/runner"
)

// Searches of runs and pitches: text, prefixes, people, rounds, dates and
// a sort order, with the number of matches for paging.

// likeEscape makes s a literal LIKE pattern part (ESCAPE '\').
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// conds collects a query's WHERE conditions with their arguments, in
// order.
type conds struct {
	where []string
	args  []any
}

func (c *conds) add(cond string, v ...any) {
	c.where = append(c.where, cond)
	c.args = append(c.args, v...)
}

// contains adds "text occurs in one of exprs" (case folded, literal).
func (c *conds) contains(text string, exprs ...string) {
	pat := "%" + likeEscape(strings.ToLower(text)) + "%"
	ors := make([]string, len(exprs))
	for i, e := range exprs {
		ors[i] = e + ` LIKE ? ESCAPE '\'`
		c.args = append(c.args, pat)
	}
	c.where = append(c.where, "("+strings.Join(ors, " OR ")+")")
}

// window adds col's bounds: from (inclusive) and to (exclusive), each
// only where set.
func (c *conds) window(col string, from, to time.Time) {
	if !from.IsZero() {
		c.add(col+" >= ?", fmtTime(from))
	}
	if !to.IsZero() {
		c.add(col+" < ?", fmtTime(to))
	}
}

// sql is the WHERE clause, empty when there is no condition.
func (c *conds) sql() string {
	if len(c.where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c.where, " AND ")
}

// sortBy is the column cols names for key (def when none) and the
// direction, as SQL.
func sortBy(cols map[string]string, key, def string, desc bool) (col, dir string) {
	col, ok := cols[key]
	if !ok {
		col = def
	}
	if desc {
		return col, " DESC"
	}
	return col, " ASC"
}

var runSortCols = map[string]string{"id": "runs.id", "created": "runs.created_at", "status": "runs.status", "variant": "runs.variant",
	"device": "runs.device", "problem": "runs.problem", "speedup": "runs.geomean"}

// SearchRuns returns one page of the runs matching q, and how many match.
func (db *DB) SearchRuns(ctx context.Context, q runner.Query) ([]runner.Run, int, error) {
	var c conds
	add := c.add
	f := q.Filter
	for _, c := range []struct{ col, v string }{{"problem", f.Problem}, {"baseline", f.Baseline},
		{"device", f.Device}, {"suite", f.Suite}, {"status", string(f.Status)}} {
		if c.v != "" {
			add("runs."+c.col+" = ?", c.v)
		}
	}
	if f.Variant != "" {
		cond, vs := variantCond("runs.variant_key", f.Variant, f.VariantAsTyped)
		add(cond, vs...)
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
		c.contains(q.Text, "lower(runs.variant)", "lower(runs.problem)", "lower(runs.baseline)", "lower(runs.device)", "lower(runs.suite)",
			"lower(runs.device_name)", "lower((SELECT title FROM pitches WHERE id = runs.pitch_id))")
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
	c.window("runs.created_at", q.From, q.To)
	cond := c.sql()
	var total int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM runs`+cond, c.args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("sqlite: count runs: %w", err)
	}
	col, dir := sortBy(runSortCols, q.Sort, "runs.id", q.Desc)
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
	}, query, append(c.args, min(limit, 1000), max(q.Offset, 0))...)
	if err != nil {
		return nil, 0, err
	}
	if f.WithShapes {
		if err := db.fillShapes(ctx, runs); err != nil {
			return nil, 0, err
		}
	}
	return runs, total, nil
}

var pitchSortCols = map[string]string{"filed": "p.created_at", "title": "lower(p.title)", "round": "r.number", "status": "p.status",
	"variant": "p.variant", "contestant": "lower(u.display_name)"}

// SearchPitches returns one page of the pitches matching q, and how many
// match.
func (db *DB) SearchPitches(ctx context.Context, q pitches.PitchQuery) ([]pitches.Pitch, int, error) {
	var c conds
	add := c.add
	if q.Text != "" {
		c.contains(q.Text, "lower(p.title)", "lower(p.category)", "lower(p.body)")
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
	c.window("p.created_at", q.From, q.To)
	cond := c.sql()
	var total int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM pitches p JOIN rounds r ON r.id = p.round_id JOIN users u ON u.id = p.contestant_id`+cond,
		c.args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("sqlite: count pitches: %w", err)
	}
	col, dir := sortBy(pitchSortCols, q.Sort, "p.created_at", q.Desc)
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	ps, err := queryAll(ctx, db.r, "search pitches", values(scanPitch), pitchSelect+cond+` ORDER BY `+col+dir+`, p.id`+dir+` LIMIT ? OFFSET ?`,
		append(c.args, min(limit, 500), max(q.Offset, 0))...)
	if err != nil {
		return nil, 0, err
	}
	return ps, total, nil
}
