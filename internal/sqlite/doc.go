// Package sqlite stores pitchtank's domain in one SQLite file and implements
// pitches.Service on it, using the pure-Go driver modernc.org/sqlite (no cgo,
// so the binary cross-compiles and the tests need no C toolchain).
//
// Configuration, and why:
//
//   - WAL journal mode: readers never block the writer and the writer never
//     blocks readers, so page renders keep going while a scorecard is saved
//     and a backup (VACUUM INTO, a read) runs while writes continue.
//   - One writer: SQLite allows one write transaction at a time anyway. A
//     dedicated *sql.DB with one connection queues writers inside the process
//     instead of letting them collide on the file lock and spin on
//     SQLITE_BUSY. Its transactions start with BEGIN IMMEDIATE (_txlock), so
//     a transaction that reads state and then writes cannot fail half way on
//     a lock upgrade.
//   - A read pool of max(4, NumCPU) connections, opened with query_only, for
//     every read outside a write transaction. Backup (VACUUM INTO) needs a
//     connection without query_only, so it opens one of its own per backup.
//   - Pragmas in the DSN, in this order: busy_timeout(10000) first so that
//     even switching to WAL waits for a lock instead of failing,
//     journal_mode(WAL), synchronous(NORMAL) (in WAL mode this loses at most
//     the last transactions on power loss, never corrupts, and avoids an
//     fsync per commit), foreign_keys(ON) (off by default in SQLite). The
//     driver runs them on every new connection.
//
// Every mutating method validates its input (package pitches), checks the
// permission and the state, and writes in ONE transaction, so a refused
// request changes nothing. Migrations are embedded SQL files applied in order
// at Open, each in its own transaction, recorded in schema_migrations.
package sqlite
