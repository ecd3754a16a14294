package main

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"
)

// The store: one SQLite file in CONFORMANCE_STORE, in WAL mode, so that several
// processes (and the goroutines of a concurrent batch, each on a connection of
// the pool) share it. Every decision that must not race is one IMMEDIATE
// transaction: it takes SQLite's write lock when it begins, so two claims of
// one request, or two delegations from one budget, are ordered by the database.
// Reads outside a transaction see the last committed state and never wait.

const schema = `
CREATE TABLE IF NOT EXISTS workspaces (id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS agents (
	id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, can_assign INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tasks (
	id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, assignee TEXT NOT NULL,
	generation INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS office_sessions (
	seq INTEGER PRIMARY KEY AUTOINCREMENT, agent_id TEXT NOT NULL, task_id TEXT NOT NULL,
	state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	agent_id TEXT NOT NULL, reason TEXT NOT NULL, payload TEXT NOT NULL,
	dedup_key TEXT UNIQUE,              -- the durable unique index on the dedup key
	requested_at INTEGER NOT NULL,      -- microseconds since the epoch, from the harness's clock
	status TEXT NOT NULL, coalesced_count INTEGER NOT NULL,
	task_key TEXT NOT NULL,             -- the payload's task_id when a non-empty string, else ''
	actor_type TEXT);                   -- the payload's actor_type when a string, else NULL
CREATE INDEX IF NOT EXISTS runs_by_task ON runs (task_key, reason, requested_at);
CREATE TABLE IF NOT EXISTS environments (id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS members (
	environment_id TEXT NOT NULL, principal TEXT NOT NULL, PRIMARY KEY (environment_id, principal));
CREATE TABLE IF NOT EXISTS campaigns (
	id TEXT PRIMARY KEY, environment_id TEXT NOT NULL, total INTEGER NOT NULL,
	available INTEGER NOT NULL, root_spent INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
	seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, campaign_id TEXT NOT NULL,
	principal TEXT NOT NULL, tools TEXT NOT NULL, devices TEXT NOT NULL, depth INTEGER NOT NULL,
	request_id TEXT, delegations INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS requests (
	seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL,
	environment_id TEXT NOT NULL, campaign_id TEXT NOT NULL, originating_session_id TEXT NOT NULL,
	child_session_id TEXT NOT NULL, deliverable TEXT NOT NULL, acceptance_checks TEXT NOT NULL,
	budget_slice INTEGER NOT NULL,
	remaining INTEGER NOT NULL,         -- the slice not yet spent nor handed on to children
	spent INTEGER NOT NULL,             -- usage charged by its own child session
	tools TEXT NOT NULL, devices TEXT NOT NULL, assignee TEXT,
	holder TEXT, generation INTEGER NOT NULL, expires_at INTEGER,
	completed_at INTEGER, result_ref TEXT, completed_holder TEXT, completed_generation INTEGER,
	budget_returned INTEGER);
CREATE INDEX IF NOT EXISTS requests_by_environment ON requests (environment_id);
`

var tables = []string{
	"workspaces", "agents", "tasks", "office_sessions", "runs", "environments", "members",
	"campaigns", "sessions", "requests",
}

// openStore opens (creating it if need be) the SQLite file at path.
func openStore(path string) (*sql.DB, error) {
	dsn := fmt.Sprintf("file:%s?_journal_mode=WAL&_busy_timeout=5000&_txlock=immediate&_synchronous=NORMAL", path)
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	db.SetConnMaxLifetime(0)
	err = retry(func() error { _, err := db.Exec(schema); return err })
	if err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// emptyStore deletes every row, in one transaction.
func emptyStore(db *sql.DB) error {
	return inTx(db, func(tx *sql.Tx) error {
		for _, table := range tables {
			if _, err := tx.Exec("DELETE FROM " + table); err != nil {
				return err
			}
		}
		_, err := tx.Exec("DELETE FROM sqlite_sequence")
		return err
	})
}

// busy tells a lock conflict the caller may retry, the transaction having written nothing.
func busy(err error) bool {
	var e sqlite3.Error
	if errors.As(err, &e) {
		return e.Code == sqlite3.ErrBusy || e.Code == sqlite3.ErrLocked
	}
	return err != nil && strings.Contains(err.Error(), "database is locked")
}

func retry(f func() error) error {
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		if err = f(); !busy(err) {
			return err
		}
		// A lock conflict beyond the busy timeout: back off a little (wall time
		// for the database's sake only; nothing the specs time reads it).
		time.Sleep(time.Duration(attempt+1) * time.Millisecond)
	}
	return err
}

// writer queues the write transactions of this process, first come first
// served: SQLite admits one writer at a time anyway, and a goroutine waiting
// here is handed the lock the moment it is released (a channel passes it to
// the longest waiting sender), where one polling SQLite's busy handler would
// sleep and one barging on a mutex could run its whole pipeline ahead of the
// others. Across processes, SQLite's own lock (with the busy timeout) orders
// the writers.
var writer = make(chan struct{}, 1)

// inTx runs f in an IMMEDIATE transaction, committing when f returns nil. A
// typed refusal from f rolls back (so a refusal writes nothing).
func inTx(db *sql.DB, f func(tx *sql.Tx) error) error {
	writer <- struct{}{}
	defer func() { <-writer }()
	return retry(func() error {
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		if err := f(tx); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
