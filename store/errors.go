package store

import (
	"errors"
	"fmt"
)

// Errors a store returns, matched with [errors.Is]. Each comes wrapped in
// an [*Error] that names the database.
var (
	// ErrUnknownServer is a server name the store does not know.
	ErrUnknownServer = errors.New("unknown server")
	// ErrForeign is a file or schema that is not a gsq monitor database:
	// not SQLite at all, the SQLite database of another application, or a
	// PostgreSQL schema holding other tables. The store never touches it.
	ErrForeign = errors.New("not a gsq monitor database")
	// ErrCorrupt is a database whose engine reports it damaged.
	ErrCorrupt = errors.New("database is corrupt")
	// ErrNewerSchema is a database written by a newer gsq, whose schema
	// this one does not know.
	ErrNewerSchema = errors.New("database schema is newer than this gsq knows")
	// ErrFull is a write refused for lack of space on the disk (or under
	// the database's size limit). Nothing of the write was kept; the
	// store works again once there is space.
	ErrFull = errors.New("disk or database full")
	// ErrReadOnly is a database the store may not write: a read-only
	// file, directory or file system, or a read-only PostgreSQL server.
	ErrReadOnly = errors.New("database is read-only")
	// ErrReplaced is a SQLite file that is no longer at its path: deleted,
	// moved away or replaced by another file while the store had it open
	// (its device and inode changed). What the store wrote after that
	// went to the old file, which the file system frees once the store
	// closes it: the store refuses to write any more, and Close reports
	// it, so that nobody is told the history was kept.
	ErrReplaced = errors.New("database file deleted or replaced while in use")
	// ErrClosed is a call on a closed store.
	ErrClosed = errors.New("store closed")
)

// Error is a failed store operation.
type Error struct {
	Op   string // what the store was doing: "open", "write", "history", ...
	DB   string // the database: a file's path, or a PostgreSQL DSN without its password
	Kind error  // one of the Err* values above, or nil
	Err  error  // the cause, or nil
}

func (e *Error) Error() string {
	msg := "store: " + e.Op + " " + e.DB + ": "
	switch {
	case e.Kind != nil && e.Err != nil:
		return msg + e.Kind.Error() + ": " + e.Err.Error()
	case e.Kind != nil:
		return msg + e.Kind.Error()
	case e.Err != nil:
		return msg + e.Err.Error()
	}
	return msg + "failed"
}

// Unwrap returns the kind and the cause.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// serverError is the cause of an error about a named server.
func serverError(name string) error {
	return fmt.Errorf("%w %q", ErrUnknownServer, name)
}
