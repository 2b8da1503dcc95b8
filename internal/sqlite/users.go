package sqlite

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// Secret prefixes make a leaked secret recognisable (and greppable) and tell
// sessions from API tokens at a glance.
const (
	sessionPrefix = "pts_"
	tokenPrefix   = "ptt_"
)

// dummyHashes are compared against when a login does not exist, so that an
// unknown login costs as much time as a wrong password. One per bcrypt cost:
// a dummy cheaper than the real hashes (bcrypt.MinCost takes ~1 ms against
// ~70 ms at the default cost) would tell a guesser which logins exist.
var dummyHashes sync.Map // cost -> []byte

func dummyHash(cost int) []byte {
	if h, ok := dummyHashes.Load(cost); ok {
		return h.([]byte)
	}
	h, err := bcrypt.GenerateFromPassword([]byte("pitchtank-no-such-user"), cost)
	if err != nil {
		// Only an out-of-range cost fails; CreateUser would have failed too.
		h, _ = bcrypt.GenerateFromPassword([]byte("pitchtank-no-such-user"), bcrypt.DefaultCost)
	}
	dummyHashes.Store(cost, h)
	return h
}

func (db *DB) CreateUser(ctx context.Context, login, displayName string, role pitches.Role, password string) (*pitches.User, error) {
	for _, err := range []error{pitches.ValidateLogin(login), pitches.ValidateDisplayName(displayName),
		pitches.ValidateRole(role), pitches.ValidatePassword(password)} {
		if err != nil {
			return nil, err
		}
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), db.BcryptCost)
	if err != nil {
		return nil, fmt.Errorf("sqlite: hash password: %w", err)
	}
	u := &pitches.User{Login: login, DisplayName: strings.TrimSpace(displayName), Role: role, CreatedAt: db.Now()}
	err = db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO users (login, display_name, role, password_hash, created_at) VALUES (?, ?, ?, ?, ?)`,
			u.Login, u.DisplayName, string(u.Role), string(hash), fmtTime(u.CreatedAt))
		if isUnique(err) {
			return pitches.Errorf(pitches.ECONFLICT, "login", "login %q is taken", login)
		}
		if err != nil {
			return fmt.Errorf("sqlite: insert user: %w", err)
		}
		u.ID, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

const userCols = `id, login, display_name, role, created_at, deactivated_at`

func scanUser(row interface{ Scan(...any) error }) (*pitches.User, error) {
	var u pitches.User
	var role, created string
	var deactivated sql.NullString
	if err := row.Scan(&u.ID, &u.Login, &u.DisplayName, &role, &created, &deactivated); err != nil {
		return nil, err
	}
	u.Role = pitches.Role(role)
	t, err := parseTime(created)
	if err != nil {
		return nil, err
	}
	u.CreatedAt = t
	if u.DeactivatedAt, err = parseNullTime(deactivated); err != nil {
		return nil, err
	}
	return &u, nil
}

// Authenticate checks a login and password. Every failure costs one bcrypt
// comparison at the cost of real hashes (unknown login, wrong password,
// deactivated user alike), so timing does not tell which logins exist.
func (db *DB) Authenticate(ctx context.Context, login, password string) (*pitches.User, error) {
	var hash string
	row := db.r.QueryRowContext(ctx, `SELECT password_hash, `+userCols+` FROM users WHERE login = ?`, login)
	u, err := scanUser(scanPrefix{row, &hash})
	if errors.Is(err, sql.ErrNoRows) {
		_ = bcrypt.CompareHashAndPassword(dummyHash(db.BcryptCost), []byte(password))
		return nil, pitches.ErrUnauthorized
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: authenticate %q: %w", login, err)
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) != nil || u.DeactivatedAt != nil {
		return nil, pitches.ErrUnauthorized
	}
	return u, nil
}

// scanPrefix scans leading columns into pre before handing the rest to
// scanUser's destinations.
type scanPrefix struct {
	row interface{ Scan(...any) error }
	pre any
}

func (p scanPrefix) Scan(dest ...any) error { return p.row.Scan(append([]any{p.pre}, dest...)...) }

// ChangePassword sets a user's own password; the old one must be given, so a
// session left open on a shared machine cannot be turned into a takeover.
func (db *DB) ChangePassword(ctx context.Context, by *pitches.User, oldPassword, newPassword string) error {
	if by == nil {
		return pitches.Errorf(pitches.EUNAUTHORIZED, "", "log in to change your password")
	}
	if err := pitches.ValidatePassword(newPassword); err != nil {
		return pitches.Errorf(pitches.EINVALID, "new_password", "new password %s", pitches.ErrorMessage(err))
	}
	if oldPassword == newPassword {
		return pitches.Errorf(pitches.EINVALID, "new_password", "the new password must differ from the current one")
	}
	var hash string
	err := db.r.QueryRowContext(ctx, `SELECT password_hash FROM users WHERE id = ?`, by.ID).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		return pitches.Errorf(pitches.ENOTFOUND, "", "user %d not found", by.ID)
	}
	if err != nil {
		return fmt.Errorf("sqlite: change password of user %d: load: %w", by.ID, err)
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(oldPassword)) != nil {
		return pitches.Errorf(pitches.EINVALID, "old_password", "the current password is wrong")
	}
	newHash, err := bcrypt.GenerateFromPassword([]byte(newPassword), db.BcryptCost)
	if err != nil {
		return fmt.Errorf("sqlite: change password of user %d: hash: %w", by.ID, err)
	}
	return db.writeAuth(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, string(newHash), by.ID); err != nil {
			return fmt.Errorf("sqlite: change password of user %d: %w", by.ID, err)
		}
		return nil
	})
}

// SetUserActive deactivates or reactivates a user (admins only). A
// deactivated user's sessions are deleted and their tokens stop working;
// their pitches, scorecards and votes stay. Admins cannot deactivate
// themselves, so there is always someone left to undo it.
func (db *DB) SetUserActive(ctx context.Context, by *pitches.User, userID int64, active bool) error {
	if err := pitches.Can(by, pitches.ActManageUsers, pitches.Target{}); err != nil {
		return err
	}
	if !active && by.ID == userID {
		return pitches.Errorf(pitches.ECONFLICT, "user", "you cannot deactivate yourself; ask another admin")
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		if _, err := userByID(ctx, tx, userID); err != nil {
			return err
		}
		if active {
			if _, err := tx.ExecContext(ctx, `UPDATE users SET deactivated_at = NULL WHERE id = ?`, userID); err != nil {
				return fmt.Errorf("sqlite: reactivate user %d: %w", userID, err)
			}
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET deactivated_at = coalesce(deactivated_at, ?) WHERE id = ?`,
			fmtTime(db.Now()), userID); err != nil {
			return fmt.Errorf("sqlite: deactivate user %d: %w", userID, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ?`, userID); err != nil {
			return fmt.Errorf("sqlite: deactivate user %d: delete sessions: %w", userID, err)
		}
		return nil
	})
}

// UserByLogin finds a user by login (the command line names users so).
func (db *DB) UserByLogin(ctx context.Context, login string) (*pitches.User, error) {
	u, err := scanUser(db.r.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE login = ?`, login))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, pitches.Errorf(pitches.ENOTFOUND, "login", "no user with login %q", login)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: load user %q: %w", login, err)
	}
	return u, nil
}

func (db *DB) UserByID(ctx context.Context, id int64) (*pitches.User, error) {
	return userByID(ctx, db.r, id)
}

func userByID(ctx context.Context, q queryer, id int64) (*pitches.User, error) {
	u, err := scanUser(q.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, pitches.Errorf(pitches.ENOTFOUND, "", "user %d not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: load user %d: %w", id, err)
	}
	return u, nil
}

func (db *DB) Users(ctx context.Context) ([]pitches.User, error) {
	return queryAll(ctx, db.r, "list users", values(scanUser), `SELECT `+userCols+` FROM users ORDER BY id`)
}

func (db *DB) SetUserRole(ctx context.Context, by *pitches.User, userID int64, role pitches.Role) error {
	if err := pitches.Can(by, pitches.ActManageUsers, pitches.Target{}); err != nil {
		return err
	}
	if err := pitches.ValidateRole(role); err != nil {
		return err
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		u, err := userByID(ctx, tx, userID)
		if err != nil {
			return err
		}
		admins := 0
		if pitches.DemotesAdmin(u, role) {
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE role = 'admin'`).Scan(&admins); err != nil {
				return fmt.Errorf("sqlite: count admins: %w", err)
			}
		}
		if err := pitches.CheckRoleChange(u, role, admins); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET role = ? WHERE id = ?`, string(role), userID); err != nil {
			return fmt.Errorf("sqlite: set role of user %d: %w", userID, err)
		}
		return nil
	})
}

// newSecret returns prefix + 32 random bytes in base64url, and the SHA-256
// that is stored. A fast hash is enough: the secret has 256 bits of entropy,
// unlike a password.
func newSecret(prefix string) (string, []byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("sqlite: random secret: %w", err)
	}
	s := prefix + base64.RawURLEncoding.EncodeToString(b)
	return s, hashSecret(s), nil
}

func hashSecret(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

func (db *DB) CreateSession(ctx context.Context, userID int64, ttl time.Duration) (string, error) {
	if ttl <= 0 {
		return "", pitches.Errorf(pitches.EINVALID, "ttl", "session lifetime must be positive")
	}
	secret, hash, err := newSecret(sessionPrefix)
	if err != nil {
		return "", err
	}
	now := db.Now()
	err = db.writeAuth(ctx, func(tx *sql.Tx) error {
		if _, err := userByID(ctx, tx, userID); err != nil {
			return err
		}
		// Expired sessions are swept here, on the write path, rather than
		// by a background job.
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, fmtTime(now)); err != nil {
			return fmt.Errorf("sqlite: sweep sessions: %w", err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (user_id, secret_hash, created_at, expires_at) VALUES (?, ?, ?, ?)`,
			userID, hash, fmtTime(now), fmtTime(now.Add(ttl)))
		if err != nil {
			return fmt.Errorf("sqlite: insert session: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

func (db *DB) UserBySession(ctx context.Context, secret string) (*pitches.User, error) {
	if !strings.HasPrefix(secret, sessionPrefix) {
		return nil, pitches.ErrUnauthorized
	}
	u, err := scanUser(db.r.QueryRowContext(ctx, `SELECT u.id, u.login, u.display_name, u.role, u.created_at, u.deactivated_at
		FROM sessions s JOIN users u ON u.id = s.user_id
		WHERE s.secret_hash = ? AND s.expires_at > ? AND u.deactivated_at IS NULL`,
		hashSecret(secret), fmtTime(db.Now())))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, pitches.ErrUnauthorized
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: look up session: %w", err)
	}
	return u, nil
}

func (db *DB) DeleteSession(ctx context.Context, secret string) error {
	return db.writeAuth(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE secret_hash = ?`, hashSecret(secret)); err != nil {
			return fmt.Errorf("sqlite: delete session: %w", err)
		}
		return nil
	})
}

func (db *DB) CreateToken(ctx context.Context, userID int64, label string) (string, *pitches.Token, error) {
	if err := pitches.ValidateTokenLabel(label); err != nil {
		return "", nil, err
	}
	secret, hash, err := newSecret(tokenPrefix)
	if err != nil {
		return "", nil, err
	}
	tok := &pitches.Token{UserID: userID, Label: strings.TrimSpace(label), CreatedAt: db.Now()}
	err = db.writeAuth(ctx, func(tx *sql.Tx) error {
		if _, err := userByID(ctx, tx, userID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO api_tokens (user_id, label, secret_hash, created_at) VALUES (?, ?, ?, ?)`,
			userID, tok.Label, hash, fmtTime(tok.CreatedAt))
		if err != nil {
			return fmt.Errorf("sqlite: insert token: %w", err)
		}
		tok.ID, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return "", nil, err
	}
	return secret, tok, nil
}

func (db *DB) Tokens(ctx context.Context, userID int64) ([]pitches.Token, error) {
	return queryAll(ctx, db.r, "list tokens", func(r *sql.Rows) (pitches.Token, error) {
		var t pitches.Token
		var created string
		var revoked, used sql.NullString
		err := r.Scan(&t.ID, &t.UserID, &t.Label, &created, &revoked, &used)
		if err == nil {
			t.CreatedAt, err = parseTime(created)
		}
		if err == nil {
			t.RevokedAt, err = parseNullTime(revoked)
		}
		if err == nil {
			t.LastUsed, err = parseNullTime(used)
		}
		return t, err
	}, `SELECT id, user_id, label, created_at, revoked_at, last_used_at
		FROM api_tokens WHERE user_id = ? ORDER BY id`, userID)
}

// RevokeToken: the token's owner or an admin. Revoking twice is not an error.
func (db *DB) RevokeToken(ctx context.Context, by *pitches.User, tokenID int64) error {
	_, err := db.RevokeTokenChanged(ctx, by, tokenID)
	return err
}

// RevokeTokenChanged is RevokeToken, saying whether this call revoked the
// token (false: it was revoked already, and nothing changed), so that the
// audit log records a revocation once (internal/audit).
func (db *DB) RevokeTokenChanged(ctx context.Context, by *pitches.User, tokenID int64) (bool, error) {
	if by == nil {
		return false, pitches.Errorf(pitches.EUNAUTHORIZED, "", "log in to revoke tokens")
	}
	changed := false
	err := db.writeAuth(ctx, func(tx *sql.Tx) error {
		var owner int64
		err := tx.QueryRowContext(ctx, `SELECT user_id FROM api_tokens WHERE id = ?`, tokenID).Scan(&owner)
		if errors.Is(err, sql.ErrNoRows) {
			return pitches.Errorf(pitches.ENOTFOUND, "", "token %d not found", tokenID)
		}
		if err != nil {
			return fmt.Errorf("sqlite: load token %d: %w", tokenID, err)
		}
		if err := pitches.Can(by, pitches.ActRevokeToken, pitches.Target{TokenOwner: owner}); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`,
			fmtTime(db.Now()), tokenID)
		if err != nil {
			return fmt.Errorf("sqlite: revoke token %d: %w", tokenID, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlite: revoke token %d: %w", tokenID, err)
		}
		changed = n > 0
		return nil
	})
	return changed && err == nil, err
}

// UserByToken resolves an API token and records its use. The lookup runs on
// the read pool; last_used is written only when it is more than a minute
// old, so a busy API client does not queue a write per request behind the
// single writer.
func (db *DB) UserByToken(ctx context.Context, secret string) (*pitches.User, error) {
	if !strings.HasPrefix(secret, tokenPrefix) {
		return nil, pitches.ErrUnauthorized
	}
	var tokID int64
	var u pitches.User
	var role, created string
	var used sql.NullString
	err := db.r.QueryRowContext(ctx, `SELECT t.id, t.last_used_at, u.id, u.login, u.display_name, u.role, u.created_at
		FROM api_tokens t JOIN users u ON u.id = t.user_id
		WHERE t.secret_hash = ? AND t.revoked_at IS NULL AND u.deactivated_at IS NULL`,
		hashSecret(secret)).Scan(&tokID, &used, &u.ID, &u.Login, &u.DisplayName, &role, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, pitches.ErrUnauthorized
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: look up token: %w", err)
	}
	u.Role = pitches.Role(role)
	if u.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	now := db.Now()
	last, err := parseNullTime(used)
	if err != nil {
		return nil, err
	}
	if last == nil || now.Sub(*last) > time.Minute {
		err := db.writeAuth(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `UPDATE api_tokens SET last_used_at = ? WHERE id = ?`, fmtTime(now), tokID); err != nil {
				return fmt.Errorf("sqlite: record token use: %w", err)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return &u, nil
}
