package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// Submitted kernels (migration 120): content-addressed, immutable sources
// and the versions of each pitch's kernel.

// UploadKernel stores a checked submission as pitch pitchID's next kernel
// version and points the pitch's variant at it, all in one transaction: a
// refused upload (permissions, limits, a locked variant) stores nothing. A
// submission already stored (same hash) is not stored twice; the new
// version names it.
func (db *DB) UploadKernel(ctx context.Context, by *pitches.User, pitchID int64, in pitches.KernelUpload) (*pitches.KernelVersion, error) {
	if by == nil {
		return nil, pitches.Errorf(pitches.EUNAUTHORIZED, "", "log in to upload a kernel")
	}
	if err := pitches.ValidateKernelUpload(in); err != nil {
		return nil, err
	}
	report, err := json.Marshal(in.Report)
	if err != nil {
		return nil, fmt.Errorf("sqlite: upload kernel: encode the compile report: %w", err)
	}
	var out *pitches.KernelVersion
	err = db.write(ctx, func(tx *sql.Tx) error {
		p, r, err := pitchAndRound(ctx, tx, pitchID)
		if err != nil {
			return err
		}
		if err := pitches.Can(by, pitches.ActUploadKernel, pitches.Target{Round: r, Pitch: p}); err != nil {
			return err
		}
		// The variant is locked once a run measured the pitch (EditPitch's
		// rule): a new kernel would not be what was measured.
		runID, err := measuredRun(ctx, tx, pitchID)
		if err != nil {
			return err
		}
		if runID != 0 {
			return pitches.Errorf(pitches.ECONFLICT, "files", "the pitch's kernel is locked: run #%d has measured it (file a re-pitch to try another kernel)", runID)
		}
		// The new variant is held to the one-pitch-per-variant rule: the
		// same submission and knobs as another pitch of the contestant's
		// in the round would be a second try at one result.
		variant := pitches.KernelVariant(in.Hash, in.Knobs)
		if !pitches.SameVariant(variant, p.Variant) {
			if err := checkVariantFree(ctx, tx, r, p.ContestantID, p.ID, variant); err != nil {
				return err
			}
		}
		now := fmtTime(db.Now())
		if err := insertKernelSource(ctx, tx, by.ID, in, now); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM kernel_versions WHERE pitch_id = ?`, pitchID).Scan(&n); err != nil {
			return fmt.Errorf("sqlite: upload kernel: count versions of pitch %d: %w", pitchID, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO kernel_versions (pitch_id, version, hash, uploaded_by, note, report, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, pitchID, n+1, in.Hash, by.ID, in.Note, string(report), now); err != nil {
			return fmt.Errorf("sqlite: upload kernel: insert version %d of pitch %d: %w", n+1, pitchID, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pitches SET variant = ?, updated_at = ? WHERE id = ?`,
			variant, now, pitchID); err != nil {
			return fmt.Errorf("sqlite: upload kernel: set the variant of pitch %d: %w", pitchID, err)
		}
		vs, err := kernelVersions(ctx, tx, `WHERE v.pitch_id = ? AND v.version = ?`, pitchID, n+1)
		if err != nil {
			return err
		}
		if len(vs) != 1 {
			return fmt.Errorf("sqlite: upload kernel: version %d of pitch %d not found after insert", n+1, pitchID)
		}
		out = &vs[0]
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// insertKernelSource stores the submission unless its hash is stored
// already (the same bytes: the hash covers every file and the manifest).
func insertKernelSource(ctx context.Context, tx *sql.Tx, by int64, in pitches.KernelUpload, now string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM kernel_sources WHERE hash = ?`, in.Hash).Scan(&n); err != nil {
		return fmt.Errorf("sqlite: upload kernel: look up %s: %w", in.Hash, err)
	}
	if n > 0 {
		return nil
	}
	var size int64
	names := make([]string, 0, len(in.Files))
	for name, data := range in.Files {
		size += int64(len(data))
		names = append(names, name)
	}
	sort.Strings(names)
	raw := in.Raw
	if len(raw) == 0 {
		raw = in.Files["manifest.json"]
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO kernel_sources (hash, name, problem, kind, manifest, size, created_by, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, in.Hash, in.Manifest.Name, in.Manifest.Problem, in.Manifest.Kind, string(raw), size, by, now); err != nil {
		return fmt.Errorf("sqlite: upload kernel: insert source %s: %w", in.Hash, err)
	}
	for _, name := range names {
		if _, err := tx.ExecContext(ctx, `INSERT INTO kernel_files (hash, name, data) VALUES (?, ?, ?)`, in.Hash, name, in.Files[name]); err != nil {
			return fmt.Errorf("sqlite: upload kernel: insert file %s of %s: %w", name, in.Hash, err)
		}
	}
	return nil
}

const kernelVersionSelect = `SELECT v.pitch_id, v.version, v.hash, v.uploaded_by, u.display_name, v.note, v.report, v.created_at,
	k.name, k.kind, k.size
	FROM kernel_versions v JOIN users u ON u.id = v.uploaded_by JOIN kernel_sources k ON k.hash = v.hash `

func scanKernelVersion(r *sql.Rows) (pitches.KernelVersion, error) {
	var v pitches.KernelVersion
	var report, created string
	if err := r.Scan(&v.PitchID, &v.Version, &v.Hash, &v.UploadedBy, &v.Uploader, &v.Note, &report, &created, &v.Name, &v.Kind, &v.Size); err != nil {
		return v, err
	}
	if err := json.Unmarshal([]byte(report), &v.Report); err != nil {
		return v, fmt.Errorf("compile report of pitch %d version %d: %w", v.PitchID, v.Version, err)
	}
	t, err := parseTime(created)
	v.CreatedAt = t
	return v, err
}

func kernelVersions(ctx context.Context, q queryer, where string, args ...any) ([]pitches.KernelVersion, error) {
	return queryAll(ctx, q, "list kernel versions", scanKernelVersion, kernelVersionSelect+where+` ORDER BY v.pitch_id, v.version`, args...)
}

// KernelVersions lists pitch pitchID's kernel uploads, oldest first, with
// their compile reports (the web layer shows a report only to those who may
// see the source: pitches.CanSeeKernelSource).
func (db *DB) KernelVersions(ctx context.Context, pitchID int64) ([]pitches.KernelVersion, error) {
	if _, err := pitchByID(ctx, db.r, pitchID); err != nil {
		return nil, err
	}
	return kernelVersions(ctx, db.r, `WHERE v.pitch_id = ?`, pitchID)
}

// KernelVersionsOf lists every upload of submission hash, to any pitch.
func (db *DB) KernelVersionsOf(ctx context.Context, hash string) ([]pitches.KernelVersion, error) {
	return kernelVersions(ctx, db.r, `WHERE v.hash = ?`, hash)
}

// KernelUses lists the pitch versions that carry submission hash.
func (db *DB) KernelUses(ctx context.Context, hash string) ([]pitches.KernelUse, error) {
	return kernelUses(ctx, db.r, hash)
}

func kernelUses(ctx context.Context, q queryer, hash string) ([]pitches.KernelUse, error) {
	return queryAll(ctx, q, "list uses of kernel "+hash, func(r *sql.Rows) (pitches.KernelUse, error) {
		var u pitches.KernelUse
		var status string
		err := r.Scan(&u.PitchID, &u.PitchTitle, &u.RoundNumber, &status, &u.ContestantID, &u.Version, &u.UploadedBy)
		u.RoundStatus = pitches.RoundStatus(status)
		return u, err
	}, `SELECT p.id, p.title, r.number, r.status, p.contestant_id, v.version, v.uploaded_by
		FROM kernel_versions v JOIN pitches p ON p.id = v.pitch_id JOIN rounds r ON r.id = p.round_id
		WHERE v.hash = ? ORDER BY p.id, v.version`, hash)
}

// KernelSource returns submission hash with its files when viewer may see
// them (pitches.CanSeeKernelSource), with the pitch versions that carry it
// either way; a viewer who may not gets the error saying who may and when.
func (db *DB) KernelSource(ctx context.Context, viewer *pitches.User, hash string) (*pitches.KernelSource, []pitches.KernelUse, error) {
	k, err := kernelSource(ctx, db.r, hash, false)
	if err != nil {
		return nil, nil, err
	}
	uses, err := kernelUses(ctx, db.r, hash)
	if err != nil {
		return nil, nil, err
	}
	if !pitches.CanSeeKernelSource(viewer, k.CreatedBy, uses) {
		return nil, uses, pitches.KernelSourceHidden(viewer, uses)
	}
	if k.Files, err = kernelFiles(ctx, db.r, hash); err != nil {
		return nil, nil, err
	}
	return k, uses, nil
}

// StoredKernel returns submission hash with its files, for the runner,
// which writes it to a run's folder (no viewer: no person reads it).
func (db *DB) StoredKernel(ctx context.Context, hash string) (*pitches.KernelSource, error) {
	return kernelSource(ctx, db.r, hash, true)
}

func kernelSource(ctx context.Context, q queryer, hash string, withFiles bool) (*pitches.KernelSource, error) {
	if !pitches.ValidKernelHash(hash) {
		return nil, pitches.Errorf(pitches.ENOTFOUND, "", "there is no kernel %q: a kernel is named by the 64 hex digits of its sha256", hash)
	}
	var k pitches.KernelSource
	var raw, created string
	err := q.QueryRowContext(ctx, `SELECT k.hash, k.manifest, k.size, k.created_by, u.display_name, k.created_at
		FROM kernel_sources k JOIN users u ON u.id = k.created_by WHERE k.hash = ?`, hash).
		Scan(&k.Hash, &raw, &k.Size, &k.CreatedBy, &k.Author, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, pitches.Errorf(pitches.ENOTFOUND, "", "kernel %s is not stored here", hash)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: load kernel %s: %w", hash, err)
	}
	k.Raw = json.RawMessage(raw)
	if err := json.Unmarshal(k.Raw, &k.Manifest); err != nil {
		return nil, fmt.Errorf("sqlite: load kernel %s: its stored manifest: %w", hash, err)
	}
	if k.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if withFiles {
		if k.Files, err = kernelFiles(ctx, q, hash); err != nil {
			return nil, err
		}
	}
	return &k, nil
}

func kernelFiles(ctx context.Context, q queryer, hash string) ([]pitches.KernelFile, error) {
	return queryAll(ctx, q, "load files of kernel "+hash, func(r *sql.Rows) (pitches.KernelFile, error) {
		var f pitches.KernelFile
		err := r.Scan(&f.Name, &f.Data)
		return f, err
	}, `SELECT name, data FROM kernel_files WHERE hash = ? ORDER BY name`, hash)
}
