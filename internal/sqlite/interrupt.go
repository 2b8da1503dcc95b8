package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/pitchtank/pitchtank/internal/runner"
)

// MarkInterruptedExcept is MarkInterrupted for the running runs whose device
// is not one of keep: runs on a Slurm target go on without the server that
// submitted them, and the next one resumes them (runner.InterruptExceptStore).
func (db *DB) MarkInterruptedExcept(ctx context.Context, keep []string) ([]int64, error) {
	where := `status = 'running'`
	args := []any{}
	if len(keep) > 0 {
		where += ` AND device NOT IN (?` + strings.Repeat(`, ?`, len(keep)-1) + `)`
		for _, d := range keep {
			args = append(args, d)
		}
	}
	var ids []int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		var err error
		ids, err = queryAll(ctx, tx, "find interrupted runs", scanID, `SELECT id FROM runs WHERE `+where+` ORDER BY id`, args...)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE runs SET status = 'failed', reason = ?, finished_at = ? WHERE `+where,
			append([]any{runner.ReasonInterrupted, fmtTime(db.Now())}, args...)...)
		if err != nil {
			return fmt.Errorf("sqlite: mark runs interrupted: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}
