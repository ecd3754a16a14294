package main

// Delegation work requests: a durable request per delegation, claimed under a
// generation-fenced lease, with its budget slice carved out of the
// originator's source and its permissions within the originator's. Every
// operation is one IMMEDIATE transaction, so concurrent claims, publishes,
// delegations and usage are ordered by SQLite's write lock, whichever process
// of the store makes them.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	conformance "conformancekit/sdk"
)

// The limits this implementation enforces, reported at the handshake.
const (
	maxDepth              = 3
	maxChildrenPerSession = 4
	leaseDuration         = 30 * time.Second
)

func workRequestLimits() *conformance.WorkRequestLimits {
	return &conformance.WorkRequestLimits{
		MaxDepth: maxDepth, MaxChildrenPerSession: maxChildrenPerSession, LeaseSeconds: leaseDuration.Seconds(),
	}
}

// ---- rows -----------------------------------------------------------------

type session struct {
	id, campaignID, principal string
	perms                     conformance.Permissions
	depth, delegations        int64
	requestID                 *string
}

type request struct {
	id, kind, environmentID, campaignID, origin, child, deliverable string
	checks                                                          conformance.Strings
	slice, remaining, spent                                         int64
	perms                                                           conformance.Permissions
	assignee, holder                                                *string
	generation                                                      int64
	expiresAt, completedAt                                          *int64
	resultRef, completedHolder                                      *string
	completedGeneration, budgetReturned                             *int64
}

func encodeSet(values conformance.Strings) string {
	sorted := append([]string{}, values...)
	sort.Strings(sorted)
	b, _ := json.Marshal(conformance.Strings(sorted))
	return string(b)
}

func decodeSet(text string) conformance.Strings {
	var values conformance.Strings
	_ = json.Unmarshal([]byte(text), &values)
	return values
}

func loadSession(q queryer, id string) (*session, error) {
	s := &session{id: id}
	var tools, devices string
	var requestID sql.NullString
	err := q.QueryRow(`SELECT campaign_id, principal, tools, devices, depth, request_id, delegations
		FROM sessions WHERE id = ?`, id).Scan(&s.campaignID, &s.principal, &tools, &devices, &s.depth, &requestID, &s.delegations)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, conformance.Refuse(conformance.CodeNotFound, "unknown session %q", id)
	}
	if err != nil {
		return nil, err
	}
	s.perms = conformance.Permissions{Tools: decodeSet(tools), Devices: decodeSet(devices)}
	if requestID.Valid {
		s.requestID = &requestID.String
	}
	return s, nil
}

const requestColumns = `id, kind, environment_id, campaign_id, originating_session_id, child_session_id,
	deliverable, acceptance_checks, budget_slice, remaining, spent, tools, devices, assignee, holder,
	generation, expires_at, completed_at, result_ref, completed_holder, completed_generation, budget_returned`

type scanner interface{ Scan(...any) error }

func scanRequest(row scanner) (*request, error) {
	r := &request{}
	var checks, tools, devices string
	var assignee, holder, resultRef, completedHolder sql.NullString
	var expiresAt, completedAt, completedGeneration, budgetReturned sql.NullInt64
	err := row.Scan(&r.id, &r.kind, &r.environmentID, &r.campaignID, &r.origin, &r.child, &r.deliverable,
		&checks, &r.slice, &r.remaining, &r.spent, &tools, &devices, &assignee, &holder, &r.generation,
		&expiresAt, &completedAt, &resultRef, &completedHolder, &completedGeneration, &budgetReturned)
	if err != nil {
		return nil, err
	}
	_ = json.Unmarshal([]byte(checks), &r.checks)
	r.perms = conformance.Permissions{Tools: decodeSet(tools), Devices: decodeSet(devices)}
	r.assignee, r.holder = nullString(assignee), nullString(holder)
	r.resultRef, r.completedHolder = nullString(resultRef), nullString(completedHolder)
	r.expiresAt, r.completedAt = nullInt(expiresAt), nullInt(completedAt)
	r.completedGeneration, r.budgetReturned = nullInt(completedGeneration), nullInt(budgetReturned)
	return r, nil
}

func nullString(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}

func nullInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

func loadRequest(q queryer, id string) (*request, error) {
	r, err := scanRequest(q.QueryRow("SELECT "+requestColumns+" FROM requests WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, conformance.Refuse(conformance.CodeNotFound, "unknown work request %q", id)
	}
	return r, err
}

func (r *request) completed() bool { return r.completedAt != nil }

// live tells whether a lease is held at now: on [granted or renewed, expiry).
func (r *request) live(now time.Time) bool {
	return !r.completed() && r.holder != nil && r.expiresAt != nil && micros(now) < *r.expiresAt
}

func (r *request) view(now time.Time) conformance.WorkRequest {
	state := conformance.StateOpen
	switch {
	case r.completed():
		state = conformance.StateCompleted
	case r.live(now):
		state = conformance.StateInProgress
	}
	return conformance.WorkRequest{
		RequestID: r.id, Kind: conformance.DelegationKind(r.kind), EnvironmentID: r.environmentID,
		CampaignID: r.campaignID, OriginatingSessionID: r.origin, ChildSessionID: r.child,
		Deliverable: r.deliverable, AcceptanceChecks: r.checks, BudgetSlice: r.slice, BudgetSpent: r.spent,
		Permissions: r.perms, Assignee: r.assignee, Lease: r.lease(), State: state, ResultRef: r.resultRef,
	}
}

func (r *request) lease() conformance.Lease {
	lease := conformance.Lease{Holder: r.holder, Generation: r.generation}
	if r.expiresAt != nil {
		lease.ExpiresAt = conformance.AtPtr(fromMicros(*r.expiresAt))
	}
	if r.completedAt != nil {
		lease.ClosedAt = conformance.AtPtr(fromMicros(*r.completedAt))
	}
	return lease
}

func (r *request) completion() conformance.Completion {
	return conformance.Completion{
		RequestID: r.id, Holder: *r.completedHolder, Generation: *r.completedGeneration,
		ResultRef: *r.resultRef, CompletedAt: conformance.At(fromMicros(*r.completedAt)),
		BudgetReturned: *r.budgetReturned,
	}
}

func isMember(q queryer, environmentID, principal string) (bool, error) {
	return exists(q, "SELECT 1 FROM members WHERE environment_id = ? AND principal = ?", environmentID, principal)
}

func distinctNonBlank(values conformance.Strings, what string) error {
	seen := map[string]bool{}
	for _, v := range values {
		if strings.TrimSpace(v) == "" {
			return conformance.Refuse(conformance.CodeInvalidInput, "a blank %s", what)
		}
		if seen[v] {
			return conformance.Refuse(conformance.CodeInvalidInput, "%s %q given twice", what, v)
		}
		seen[v] = true
	}
	return nil
}

func within(inner, outer conformance.Strings) bool {
	held := map[string]bool{}
	for _, v := range outer {
		held[v] = true
	}
	for _, v := range inner {
		if !held[v] {
			return false
		}
	}
	return true
}

// ---- setup ----------------------------------------------------------------

func (a *app) CreateEnvironment(args conformance.CreateEnvironmentArgs) error {
	if err := requireID(args.EnvironmentID, "environment"); err != nil {
		return err
	}
	if len(args.Members) == 0 {
		return conformance.Refuse(conformance.CodeInvalidInput, "an environment needs members")
	}
	if err := distinctNonBlank(args.Members, "member"); err != nil {
		return err
	}
	return inTx(a.db, func(tx *sql.Tx) error {
		if _, err := tx.Exec("INSERT INTO environments (id) VALUES (?)", args.EnvironmentID); err != nil {
			if uniqueViolation(err) {
				return conformance.Refuse(conformance.CodeInvalidInput, "environment %q already exists", args.EnvironmentID)
			}
			return err
		}
		for _, member := range args.Members {
			if _, err := tx.Exec("INSERT INTO members (environment_id, principal) VALUES (?, ?)", args.EnvironmentID, member); err != nil {
				return err
			}
		}
		return nil
	})
}

func (a *app) CreateCampaign(args conformance.CreateCampaignArgs) error {
	if err := requireID(args.CampaignID, "campaign"); err != nil {
		return err
	}
	if args.Budget <= 0 {
		return conformance.Refuse(conformance.CodeInvalidInput, "a campaign's budget must be positive")
	}
	return inTx(a.db, func(tx *sql.Tx) error {
		if ok, err := exists(tx, "SELECT 1 FROM environments WHERE id = ?", args.EnvironmentID); err != nil || !ok {
			return orRefuse(err, conformance.CodeNotFound, "unknown environment %q", args.EnvironmentID)
		}
		_, err := tx.Exec("INSERT INTO campaigns (id, environment_id, total, available, root_spent) VALUES (?, ?, ?, ?, 0)",
			args.CampaignID, args.EnvironmentID, args.Budget, args.Budget)
		if uniqueViolation(err) {
			return conformance.Refuse(conformance.CodeInvalidInput, "campaign %q already exists", args.CampaignID)
		}
		return err
	})
}

func (a *app) CreateSession(args conformance.CreateSessionArgs) error {
	if err := requireID(args.SessionID, "session"); err != nil {
		return err
	}
	if err := distinctNonBlank(args.Permissions.Tools, "tool"); err != nil {
		return err
	}
	if err := distinctNonBlank(args.Permissions.Devices, "device"); err != nil {
		return err
	}
	return inTx(a.db, func(tx *sql.Tx) error {
		var environmentID string
		err := tx.QueryRow("SELECT environment_id FROM campaigns WHERE id = ?", args.CampaignID).Scan(&environmentID)
		if errors.Is(err, sql.ErrNoRows) {
			return conformance.Refuse(conformance.CodeNotFound, "unknown campaign %q", args.CampaignID)
		}
		if err != nil {
			return err
		}
		if ok, err := isMember(tx, environmentID, args.Principal); err != nil || !ok {
			return orRefuse(err, conformance.CodeNotFound, "%q is not a member of the campaign's environment", args.Principal)
		}
		_, err = tx.Exec(`INSERT INTO sessions (id, campaign_id, principal, tools, devices, depth, request_id, delegations)
			VALUES (?, ?, ?, ?, ?, 0, NULL, 0)`, args.SessionID, args.CampaignID, args.Principal,
			encodeSet(args.Permissions.Tools), encodeSet(args.Permissions.Devices))
		if uniqueViolation(err) {
			return conformance.Refuse(conformance.CodeInvalidInput, "session %q already exists", args.SessionID)
		}
		return err
	})
}

// ---- delegation -------------------------------------------------------------

func (a *app) Delegate(args conformance.DelegateArgs) (conformance.WorkRequest, error) {
	var zero conformance.WorkRequest
	if args.Kind != conformance.KindSpawn && args.Kind != conformance.KindSubagent {
		return zero, conformance.Refuse(conformance.CodeInvalidInput, "unknown delegation kind %q", args.Kind)
	}
	if args.Deliverable == "" {
		return zero, conformance.Refuse(conformance.CodeInvalidInput, "a delegation needs a deliverable")
	}
	if args.BudgetSlice < 1 {
		return zero, conformance.Refuse(conformance.CodeInvalidInput, "a budget slice must be positive")
	}
	if err := distinctNonBlank(args.Permissions.Tools, "tool"); err != nil {
		return zero, err
	}
	if err := distinctNonBlank(args.Permissions.Devices, "device"); err != nil {
		return zero, err
	}
	now := a.clock.Now()
	var created *request
	err := inTx(a.db, func(tx *sql.Tx) error {
		origin, err := loadSession(tx, args.OriginatingSessionID)
		if err != nil {
			return err
		}
		var environmentID string
		var campaignAvailable int64
		if err := tx.QueryRow("SELECT environment_id, available FROM campaigns WHERE id = ?", origin.campaignID).
			Scan(&environmentID, &campaignAvailable); err != nil {
			return err
		}
		if args.Assignee != nil {
			if ok, err := isMember(tx, environmentID, *args.Assignee); err != nil || !ok {
				return orRefuse(err, conformance.CodeInvalidInput, "assignee %q is not a member of the environment", *args.Assignee)
			}
		}
		available := campaignAvailable
		if origin.requestID != nil {
			served, err := loadRequest(tx, *origin.requestID)
			if err != nil {
				return err
			}
			if served.completed() {
				return conformance.Refuse(conformance.CodeAlreadyCompleted, "the originating session's request is completed")
			}
			available = served.remaining
		}
		if origin.depth+1 > maxDepth {
			return conformance.Refuse(conformance.CodeDepthCap, "a delegation from depth %d would exceed the depth cap of %d", origin.depth, maxDepth)
		}
		if origin.delegations >= maxChildrenPerSession {
			return conformance.Refuse(conformance.CodeCountCap, "session %q has delegated its %d requests", origin.id, maxChildrenPerSession)
		}
		if !within(args.Permissions.Tools, origin.perms.Tools) || !within(args.Permissions.Devices, origin.perms.Devices) {
			return conformance.Refuse(conformance.CodePermissionEscalation, "the delegation asks for a grant its originator lacks")
		}
		if args.BudgetSlice > available {
			return conformance.Refuse(conformance.CodeInsufficientBudget, "a slice of %d exceeds the %d available", args.BudgetSlice, available)
		}
		// Carve the slice out of the originator's source: the campaign for a root
		// session, the remainder of its own slice for a child.
		if origin.requestID == nil {
			if _, err := tx.Exec("UPDATE campaigns SET available = available - ? WHERE id = ?", args.BudgetSlice, origin.campaignID); err != nil {
				return err
			}
		} else if _, err := tx.Exec("UPDATE requests SET remaining = remaining - ? WHERE id = ?", args.BudgetSlice, *origin.requestID); err != nil {
			return err
		}
		if _, err := tx.Exec("UPDATE sessions SET delegations = delegations + 1 WHERE id = ?", origin.id); err != nil {
			return err
		}
		checks := args.AcceptanceChecks
		if checks == nil {
			checks = conformance.Strings{}
		}
		encodedChecks, _ := json.Marshal(checks)
		// Identifiers from the store's own sequence, read under the write lock: unique across
		// the processes of one store, and the same from one run of a program to the next.
		var next int64
		if err := tx.QueryRow("SELECT COALESCE(MAX(seq), 0) + 1 FROM requests").Scan(&next); err != nil {
			return err
		}
		created = &request{
			id: fmt.Sprintf("wr-%d", next), kind: string(args.Kind), environmentID: environmentID, campaignID: origin.campaignID,
			origin: origin.id, child: fmt.Sprintf("cs-%d", next), deliverable: args.Deliverable, checks: checks,
			slice: args.BudgetSlice, remaining: args.BudgetSlice, perms: args.Permissions, assignee: args.Assignee,
		}
		if _, err := tx.Exec(`INSERT INTO requests (id, kind, environment_id, campaign_id, originating_session_id,
			child_session_id, deliverable, acceptance_checks, budget_slice, remaining, spent, tools, devices, assignee,
			generation) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, 0)`,
			created.id, created.kind, created.environmentID, created.campaignID, created.origin, created.child,
			created.deliverable, string(encodedChecks), created.slice, created.remaining,
			encodeSet(args.Permissions.Tools), encodeSet(args.Permissions.Devices), args.Assignee); err != nil {
			return err
		}
		principal := origin.principal
		if args.Assignee != nil {
			principal = *args.Assignee
		}
		_, err = tx.Exec(`INSERT INTO sessions (id, campaign_id, principal, tools, devices, depth, request_id, delegations)
			VALUES (?, ?, ?, ?, ?, ?, ?, 0)`, created.child, origin.campaignID, principal,
			encodeSet(args.Permissions.Tools), encodeSet(args.Permissions.Devices), origin.depth+1, created.id)
		return err
	})
	if err != nil {
		return zero, err
	}
	return created.view(now), nil
}

// ---- the lease ----------------------------------------------------------------

func (a *app) Claim(args conformance.ClaimArgs) (conformance.Lease, error) {
	now := a.clock.Now()
	var lease conformance.Lease
	err := inTx(a.db, func(tx *sql.Tx) error {
		r, err := loadRequest(tx, args.RequestID)
		if err != nil {
			return err
		}
		if ok, err := isMember(tx, r.environmentID, args.Holder); err != nil || !ok {
			return orRefuse(err, conformance.CodeNotFound, "unknown work request %q", args.RequestID)
		}
		if r.completed() {
			return conformance.Refuse(conformance.CodeAlreadyCompleted, "work request %q is completed", r.id)
		}
		if r.assignee != nil && *r.assignee != args.Holder {
			return conformance.Refuse(conformance.CodeNotAssignee, "%q is not the assignee of %q", args.Holder, r.id)
		}
		if r.live(now) {
			return conformance.Refuse(conformance.CodeLeaseHeld, "work request %q is held under a live lease", r.id)
		}
		// A new grant: the generation moves on by one, from the persisted value.
		expires := micros(now.Add(leaseDuration))
		r.generation++
		r.holder, r.expiresAt = &args.Holder, &expires
		if _, err := tx.Exec("UPDATE requests SET holder = ?, generation = ?, expires_at = ? WHERE id = ?",
			args.Holder, r.generation, expires, r.id); err != nil {
			return err
		}
		lease = r.lease()
		return nil
	})
	return lease, err
}

// fence refuses a heartbeat or publish by anyone but the current live lease.
func (a *app) fence(tx *sql.Tx, r *request, holder string, generation int64, now time.Time) error {
	if ok, err := isMember(tx, r.environmentID, holder); err != nil || !ok {
		return orRefuse(err, conformance.CodeNotFound, "unknown work request %q", r.id)
	}
	if r.completed() {
		return conformance.Refuse(conformance.CodeAlreadyCompleted, "work request %q is completed", r.id)
	}
	current := r.holder != nil && *r.holder == holder && r.generation == generation
	if a.defects.staleFence {
		// The defect: any generation of the same holder up to the current one passes.
		current = r.holder != nil && *r.holder == holder && generation >= 1 && generation <= r.generation
	}
	if !current {
		return conformance.Refuse(conformance.CodeStaleGeneration, "(%s, %d) is not the current lease of %q", holder, generation, r.id)
	}
	if !r.live(now) {
		return conformance.Refuse(conformance.CodeLeaseExpired, "the lease of %q has expired", r.id)
	}
	return nil
}

func (a *app) Heartbeat(args conformance.HeartbeatArgs) (conformance.Lease, error) {
	now := a.clock.Now()
	var lease conformance.Lease
	err := inTx(a.db, func(tx *sql.Tx) error {
		r, err := loadRequest(tx, args.RequestID)
		if err != nil {
			return err
		}
		if err := a.fence(tx, r, args.Holder, args.Generation, now); err != nil {
			return err
		}
		expires := micros(now.Add(leaseDuration))
		r.expiresAt = &expires
		if _, err := tx.Exec("UPDATE requests SET expires_at = ? WHERE id = ?", expires, r.id); err != nil {
			return err
		}
		lease = r.lease()
		return nil
	})
	return lease, err
}

func (a *app) Publish(args conformance.PublishArgs) (conformance.Completion, error) {
	now := a.clock.Now()
	var completion conformance.Completion
	err := inTx(a.db, func(tx *sql.Tx) error {
		r, err := loadRequest(tx, args.RequestID)
		if err != nil {
			return err
		}
		if r.completed() && *r.completedHolder == args.Holder && *r.completedGeneration == args.Generation && *r.resultRef == args.ResultRef {
			completion = r.completion() // an exact retry answers the recorded completion
			return nil
		}
		if args.ResultRef == "" {
			return conformance.Refuse(conformance.CodeInvalidInput, "a publish needs a result reference")
		}
		if err := a.fence(tx, r, args.Holder, args.Generation, now); err != nil {
			return err
		}
		returned := r.remaining
		if err := giveBack(tx, r, returned); err != nil {
			return err
		}
		at := micros(now)
		if _, err := tx.Exec(`UPDATE requests SET remaining = 0, completed_at = ?, result_ref = ?, completed_holder = ?,
			completed_generation = ?, budget_returned = ? WHERE id = ?`,
			at, args.ResultRef, args.Holder, args.Generation, returned, r.id); err != nil {
			return err
		}
		r.completedAt, r.resultRef, r.completedHolder = &at, &args.ResultRef, &args.Holder
		r.completedGeneration, r.budgetReturned = &args.Generation, &returned
		completion = r.completion()
		return nil
	})
	return completion, err
}

// giveBack hands a completing request's unspent slice to its nearest ancestor
// request not yet completed, or, when there is none, back to the campaign.
func giveBack(tx *sql.Tx, r *request, amount int64) error {
	sessionID := r.origin
	for {
		origin, err := loadSession(tx, sessionID)
		if err != nil {
			return err
		}
		if origin.requestID == nil {
			_, err := tx.Exec("UPDATE campaigns SET available = available + ? WHERE id = ?", amount, r.campaignID)
			return err
		}
		ancestor, err := loadRequest(tx, *origin.requestID)
		if err != nil {
			return err
		}
		if !ancestor.completed() {
			_, err := tx.Exec("UPDATE requests SET remaining = remaining + ? WHERE id = ?", amount, ancestor.id)
			return err
		}
		sessionID = ancestor.origin
	}
}

// ---- budget ---------------------------------------------------------------------

func (a *app) RecordUsage(args conformance.RecordUsageArgs) error {
	if args.Amount < 1 {
		return conformance.Refuse(conformance.CodeInvalidInput, "usage must be at least 1")
	}
	return inTx(a.db, func(tx *sql.Tx) error {
		s, err := loadSession(tx, args.SessionID)
		if err != nil {
			return err
		}
		if s.requestID == nil {
			// A root session draws on its campaign directly.
			var available int64
			if err := tx.QueryRow("SELECT available FROM campaigns WHERE id = ?", s.campaignID).Scan(&available); err != nil {
				return err
			}
			if args.Amount > available {
				return conformance.Refuse(conformance.CodeInsufficientBudget, "usage of %d exceeds the %d available", args.Amount, available)
			}
			_, err := tx.Exec("UPDATE campaigns SET available = available - ?, root_spent = root_spent + ? WHERE id = ?",
				args.Amount, args.Amount, s.campaignID)
			return err
		}
		r, err := loadRequest(tx, *s.requestID)
		if err != nil {
			return err
		}
		if r.completed() {
			return conformance.Refuse(conformance.CodeAlreadyCompleted, "the session's request is completed")
		}
		if args.Amount > r.remaining {
			return conformance.Refuse(conformance.CodeUsageExceedsSlice, "usage of %d exceeds the %d left of the slice", args.Amount, r.remaining)
		}
		_, err = tx.Exec("UPDATE requests SET remaining = remaining - ?, spent = spent + ? WHERE id = ?", args.Amount, args.Amount, r.id)
		return err
	})
}

func (a *app) Budget(args conformance.CampaignArgs) (conformance.BudgetSnapshot, error) {
	snapshot := conformance.BudgetSnapshot{CampaignID: args.CampaignID}
	var rootSpent int64
	err := readTx(a.db, func(tx *sql.Tx) error {
		err := tx.QueryRow("SELECT total, available, root_spent FROM campaigns WHERE id = ?", args.CampaignID).
			Scan(&snapshot.Total, &snapshot.Available, &rootSpent)
		if errors.Is(err, sql.ErrNoRows) {
			return conformance.Refuse(conformance.CodeNotFound, "unknown campaign %q", args.CampaignID)
		}
		if err != nil {
			return err
		}
		return tx.QueryRow(`SELECT COALESCE(SUM(CASE WHEN completed_at IS NULL THEN remaining ELSE 0 END), 0),
			COALESCE(SUM(spent), 0) FROM requests WHERE campaign_id = ?`, args.CampaignID).
			Scan(&snapshot.Reserved, &snapshot.Spent)
	})
	snapshot.Spent += rootSpent
	return snapshot, err
}

// readTx reads in one (deferred) transaction: one consistent snapshot.
func readTx(db *sql.DB, f func(tx *sql.Tx) error) error {
	return retry(func() error {
		tx, err := db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return err
		}
		defer tx.Rollback()
		return f(tx)
	})
}

// ---- observation ------------------------------------------------------------------

func (a *app) GetRequest(args conformance.RequestArgs) (conformance.WorkRequest, error) {
	now := a.clock.Now()
	r, err := loadRequest(a.db, args.RequestID)
	if err != nil {
		return conformance.WorkRequest{}, err
	}
	return r.view(now), nil
}

func (a *app) ListRequests(args conformance.ListRequestsArgs) ([]conformance.WorkRequest, error) {
	now := a.clock.Now()
	var views []conformance.WorkRequest
	err := readTx(a.db, func(tx *sql.Tx) error {
		// A non-member is refused exactly as for an environment that does not exist.
		if ok, err := isMember(tx, args.EnvironmentID, args.Principal); err != nil || !ok {
			return orRefuse(err, conformance.CodeNotFound, "no such environment among those the principal belongs to")
		}
		rows, err := tx.Query("SELECT "+requestColumns+" FROM requests WHERE environment_id = ? AND completed_at IS NULL ORDER BY seq", args.EnvironmentID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanRequest(rows)
			if err != nil {
				return err
			}
			views = append(views, r.view(now))
		}
		return rows.Err()
	})
	return views, err
}

func (a *app) ListSessions(args conformance.CampaignArgs) ([]conformance.SessionView, error) {
	var views []conformance.SessionView
	err := readTx(a.db, func(tx *sql.Tx) error {
		if ok, err := exists(tx, "SELECT 1 FROM campaigns WHERE id = ?", args.CampaignID); err != nil || !ok {
			return orRefuse(err, conformance.CodeNotFound, "unknown campaign %q", args.CampaignID)
		}
		rows, err := tx.Query("SELECT id, request_id, depth, delegations FROM sessions WHERE campaign_id = ? ORDER BY seq", args.CampaignID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			v := conformance.SessionView{CampaignID: args.CampaignID}
			var requestID sql.NullString
			if err := rows.Scan(&v.SessionID, &requestID, &v.Depth, &v.Delegations); err != nil {
				return err
			}
			v.RequestID = nullString(requestID)
			views = append(views, v)
		}
		return rows.Err()
	})
	return views, err
}
