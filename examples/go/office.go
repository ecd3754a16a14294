package main

// Kandev Office, reduced to what the assignment-wake rate limit touches: tasks
// and their assignee mutation, the producers of task_assigned wakes, and the
// run queue's enqueue pipeline: the recent-duplicate lookup, then coalescing,
// then the per-task allowance, then the insert under the durable unique key.

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	conformance "conformancekit/sdk"
	"github.com/mattn/go-sqlite3"
)

// The capability's fixed values, stated once: the handshake reports these very
// constants and the code below enforces them.
const (
	allowance            = 5                // N: admitted agent-initiated assignment wakes per task per window
	window               = 10 * time.Minute // W: the rolling window (t - W, t]
	coalesceWindow       = 5 * time.Second  // a queued run this young absorbs a matching wake
	dedupLookback        = 24 * time.Hour   // a keyed wake seen this recently is a redelivery
	taskAssigned         = "task_assigned"
	agentActor           = "agent"
	noCoalescePrefix     = "task_comment:" // comment wakes never merge
	activeSession        = "active"
	assigneeMutation     = "assignee_mutation"
	generationUnresolved = "generation_unresolved"
)

// An allowance of 0 would refuse every agent-initiated wake; the spec forbids it.
var _ = [allowance - 1]struct{}{}

// The producers other than the mutation act for nobody, so their wakes carry no
// actor type; each names its dedup keys with its own prefix. The task-created
// subscriber shares the mutation's, so that its redelivery of the wake of the
// assignment that created a task is recognised as the same occurrence.
var actorlessProducers = map[string]string{
	"task_created_subscriber": taskAssigned,
	"onboarding":              "onboarding",
	"unstarted_task_recovery": "unstarted_task_recovery",
	"workflow_auto_start":     "workflow_auto_start",
}

var producers = conformance.Strings{
	assigneeMutation, "task_created_subscriber", "onboarding", "unstarted_task_recovery", "workflow_auto_start",
}

var runStatuses = map[conformance.RunStatus]bool{}

func init() {
	for _, s := range conformance.AllRunStatuses {
		runStatuses[s] = true
	}
}

func officeConstants() *conformance.OfficeConstants {
	v := vocabulary
	return &conformance.OfficeConstants{
		Allowance:             allowance,
		WindowSeconds:         window.Seconds(),
		CoalesceWindowSeconds: coalesceWindow.Seconds(),
		DedupLookbackSeconds:  dedupLookback.Seconds(),
		Producers:             producers,
		Vocabulary:            &v,
	}
}

// memory is what a process holds outside the store: lost at a restart,
// emptied by a reset.
type memory struct {
	mu              sync.Mutex
	telemetry       *telemetry
	warnings        []conformance.WarningLog
	events          []conformance.PublishedEvent
	interrupts      []conformance.SessionInterrupt
	failNextCountRd bool
}

func newMemory() *memory { return &memory{telemetry: newTelemetry()} }

// wake is one wake on its way through the pipeline, with what was read off its payload.
type wake struct {
	agentID, reason, payload string
	dedupKey                 *string
	facts                    payloadFacts
}

// payloadFacts is what the pipeline reads off a payload text, which may be any
// text at all. The gate, the coalescer and the count read it the same way:
// each run stores these beside its payload.
type payloadFacts struct {
	isObject      bool
	taskKey       string  // the task_id when it is a non-empty string, else ""
	actorType     *string // the actor_type when it is a string
	actingAgentID string  // the actor_id when it is a non-empty string
}

func readPayload(text string) payloadFacts {
	var parsed map[string]any
	decoder := json.NewDecoder(strings.NewReader(text))
	if err := decoder.Decode(&parsed); err != nil || parsed == nil || decoder.More() {
		return payloadFacts{}
	}
	facts := payloadFacts{isObject: true}
	if s, ok := parsed["task_id"].(string); ok {
		facts.taskKey = s
	}
	if s, ok := parsed["actor_type"].(string); ok {
		facts.actorType = &s
	}
	if s, ok := parsed["actor_id"].(string); ok {
		facts.actingAgentID = s
	}
	return facts
}

func newWake(agentID, reason, payload string, key *string) wake {
	return wake{agentID: agentID, reason: reason, payload: payload, dedupKey: key, facts: readPayload(payload)}
}

type scope int

const (
	outOfScope scope = iota
	attributed
	unattributed
)

// gateScope checks, in the spec's order, the reason, then the actor type
// (exactly "agent"), then the task.
func gateScope(w wake) scope {
	if w.reason != taskAssigned || !w.facts.isObject || w.facts.actorType == nil || *w.facts.actorType != agentActor {
		return outOfScope
	}
	if w.facts.taskKey == "" {
		return unattributed
	}
	return attributed
}

// ---- setup --------------------------------------------------------------

func requireID(value, what string) error {
	if strings.TrimSpace(value) == "" {
		return conformance.Refuse(conformance.CodeInvalidInput, "%s id must be a non-blank string", what)
	}
	return nil
}

func uniqueViolation(err error) bool {
	var e sqlite3.Error
	return errors.As(err, &e) && e.Code == sqlite3.ErrConstraint
}

func (a *app) CreateWorkspace(args conformance.WorkspaceArgs) error {
	if err := requireID(args.WorkspaceID, "workspace"); err != nil {
		return err
	}
	return inTx(a.db, func(tx *sql.Tx) error {
		_, err := tx.Exec("INSERT INTO workspaces (id) VALUES (?)", args.WorkspaceID)
		if uniqueViolation(err) {
			return conformance.Refuse(conformance.CodeInvalidInput, "workspace %q already exists", args.WorkspaceID)
		}
		return err
	})
}

func exists(q interface {
	QueryRow(string, ...any) *sql.Row
}, query string, args ...any) (bool, error) {
	var one int
	err := q.QueryRow(query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (a *app) CreateAgent(args conformance.CreateAgentArgs) error {
	if err := requireID(args.WorkspaceID, "workspace"); err != nil {
		return err
	}
	if err := requireID(args.AgentID, "agent"); err != nil {
		return err
	}
	return inTx(a.db, func(tx *sql.Tx) error {
		if ok, err := exists(tx, "SELECT 1 FROM workspaces WHERE id = ?", args.WorkspaceID); err != nil || !ok {
			return orRefuse(err, conformance.CodeNotFound, "unknown workspace %q", args.WorkspaceID)
		}
		_, err := tx.Exec("INSERT INTO agents (id, workspace_id, can_assign) VALUES (?, ?, ?)",
			args.AgentID, args.WorkspaceID, args.CanAssignTasks)
		if uniqueViolation(err) {
			return conformance.Refuse(conformance.CodeInvalidInput, "agent %q already exists", args.AgentID)
		}
		return err
	})
}

// orRefuse returns err when there is one, else a refusal.
func orRefuse(err error, code conformance.ErrorCode, format string, args ...any) error {
	if err != nil {
		return err
	}
	return conformance.Refuse(code, format, args...)
}

func (a *app) CreateTask(args conformance.CreateTaskArgs) (conformance.TaskView, error) {
	if err := requireID(args.WorkspaceID, "workspace"); err != nil {
		return conformance.TaskView{}, err
	}
	if err := requireID(args.TaskID, "task"); err != nil {
		return conformance.TaskView{}, err
	}
	err := inTx(a.db, func(tx *sql.Tx) error {
		if ok, err := exists(tx, "SELECT 1 FROM workspaces WHERE id = ?", args.WorkspaceID); err != nil || !ok {
			return orRefuse(err, conformance.CodeNotFound, "unknown workspace %q", args.WorkspaceID)
		}
		if args.AssigneeAgentID != "" {
			if ok, err := exists(tx, "SELECT 1 FROM agents WHERE id = ?", args.AssigneeAgentID); err != nil || !ok {
				return orRefuse(err, conformance.CodeNotFound, "unknown agent %q", args.AssigneeAgentID)
			}
		}
		// Creating a task wakes nobody.
		_, err := tx.Exec("INSERT INTO tasks (id, workspace_id, assignee, generation) VALUES (?, ?, ?, 0)",
			args.TaskID, args.WorkspaceID, args.AssigneeAgentID)
		if uniqueViolation(err) {
			return conformance.Refuse(conformance.CodeInvalidInput, "task %q already exists", args.TaskID)
		}
		return err
	})
	if err != nil {
		return conformance.TaskView{}, err
	}
	return conformance.TaskView{TaskID: args.TaskID, WorkspaceID: args.WorkspaceID, AssigneeAgentID: args.AssigneeAgentID}, nil
}

func (a *app) OpenOfficeSession(args conformance.AgentTaskArgs) error {
	return inTx(a.db, func(tx *sql.Tx) error {
		if err := requireAgent(tx, args.AgentID); err != nil {
			return err
		}
		if _, err := readTask(tx, args.TaskID); err != nil {
			return err
		}
		_, err := tx.Exec("INSERT INTO office_sessions (agent_id, task_id, state) VALUES (?, ?, ?)",
			args.AgentID, args.TaskID, activeSession)
		return err
	})
}

type queryer interface {
	QueryRow(string, ...any) *sql.Row
	Query(string, ...any) (*sql.Rows, error)
	Exec(string, ...any) (sql.Result, error)
}

func requireAgent(q queryer, id string) error {
	if err := requireID(id, "agent"); err != nil {
		return err
	}
	ok, err := exists(q, "SELECT 1 FROM agents WHERE id = ?", id)
	if err != nil || !ok {
		return orRefuse(err, conformance.CodeNotFound, "unknown agent %q", id)
	}
	return nil
}

func readTask(q queryer, id string) (conformance.TaskView, error) {
	if err := requireID(id, "task"); err != nil {
		return conformance.TaskView{}, err
	}
	view := conformance.TaskView{TaskID: id}
	err := q.QueryRow("SELECT workspace_id, assignee, generation FROM tasks WHERE id = ?", id).
		Scan(&view.WorkspaceID, &view.AssigneeAgentID, &view.AssignmentGeneration)
	if errors.Is(err, sql.ErrNoRows) {
		return view, conformance.Refuse(conformance.CodeNotFound, "unknown task %q", id)
	}
	return view, err
}

// ---- the assignee mutation ---------------------------------------------

func (a *app) AssignTask(args conformance.AssignTaskArgs) (conformance.AssignmentResult, error) {
	return a.assign(args, false)
}

// AssignTaskKeyless is the fault hook: the mutation with its generation made
// unresolvable, so that its wake goes out without a dedup key.
func (a *app) AssignTaskKeyless(args conformance.AssignTaskArgs) (conformance.AssignmentResult, error) {
	return a.assign(args, true)
}

// assign commits the mutation (new assignee, next generation, the displaced
// assignee's office session rows moved on) in one transaction before its wake
// is enqueued, so that no fate of the wake (merged, deduplicated, refused,
// failed) can undo it. An unassignment wakes nobody.
func (a *app) assign(args conformance.AssignTaskArgs, keyless bool) (conformance.AssignmentResult, error) {
	var task conformance.TaskView
	var previous string
	err := inTx(a.db, func(tx *sql.Tx) error {
		var err error
		if task, err = readTask(tx, args.TaskID); err != nil {
			return err
		}
		if args.ActingAgentID != "" {
			var canAssign bool
			err := tx.QueryRow("SELECT can_assign FROM agents WHERE id = ?", args.ActingAgentID).Scan(&canAssign)
			if errors.Is(err, sql.ErrNoRows) || (err == nil && !canAssign) {
				return conformance.Refuse(conformance.CodeForbidden, "agent %q may not assign tasks", args.ActingAgentID)
			}
			if err != nil {
				return err
			}
		}
		if args.AssigneeAgentID != "" {
			if err := requireAgent(tx, args.AssigneeAgentID); err != nil {
				return err
			}
		}
		previous = task.AssigneeAgentID
		task.AssigneeAgentID = args.AssigneeAgentID
		task.AssignmentGeneration++
		if _, err := tx.Exec("UPDATE tasks SET assignee = ?, generation = ? WHERE id = ?",
			task.AssigneeAgentID, task.AssignmentGeneration, task.TaskID); err != nil {
			return err
		}
		if previous != "" && previous != args.AssigneeAgentID {
			_, err := tx.Exec("UPDATE office_sessions SET state = ? WHERE agent_id = ? AND task_id = ? AND state = ?",
				*vocabulary.InterruptedSessionState, previous, task.TaskID, activeSession)
			return err
		}
		return nil
	})
	if err != nil {
		return conformance.AssignmentResult{}, err
	}
	// Published only once committed: an event never announces a change that was lost.
	a.mem.mu.Lock()
	a.mem.events = append(a.mem.events, conformance.PublishedEvent{
		EventType: vocabulary.TaskUpdatedEvent, TaskID: task.TaskID,
		Fields: conformance.Strings{"assignee_agent_id", "assignment_generation"},
	})
	if previous != "" && previous != args.AssigneeAgentID {
		a.mem.interrupts = append(a.mem.interrupts, conformance.SessionInterrupt{AgentID: previous, TaskID: task.TaskID})
	}
	a.mem.mu.Unlock()

	result := conformance.AssignmentResult{TaskID: task.TaskID, AssigneeAgentID: task.AssigneeAgentID, Generation: task.AssignmentGeneration}
	if args.AssigneeAgentID == "" {
		return result, nil
	}
	var key *string
	if keyless {
		a.mem.telemetry.keylessEnqueue(taskAssigned, generationUnresolved)
	} else {
		key = strPtr(fmt.Sprintf("%s:%s:%s:%d", taskAssigned, task.TaskID, args.AssigneeAgentID, task.AssignmentGeneration))
	}
	actorType := "user"
	if args.ActingAgentID != "" {
		actorType = agentActor
	}
	// The wake carries the actor type itself, so the gate classifies it without
	// re-reading the mutation; an empty acting agent is a user or internal caller.
	payload, _ := json.Marshal(struct {
		TaskID      string `json:"task_id"`
		WorkspaceID string `json:"workspace_id"`
		ActorType   string `json:"actor_type"`
		ActorID     string `json:"actor_id"`
	}{task.TaskID, task.WorkspaceID, actorType, args.ActingAgentID})
	outcome := a.enqueueSafely(newWake(args.AssigneeAgentID, taskAssigned, string(payload), key))
	result.Wake = &outcome
	return result, nil
}

// ---- the other producers, and raw wakes ---------------------------------

func (a *app) ProduceWake(args conformance.ProduceWakeArgs) (conformance.WakeResult, error) {
	prefix, known := actorlessProducers[args.Producer]
	if !known {
		if args.Producer == assigneeMutation {
			return conformance.WakeResult{}, conformance.Refuse(conformance.CodeInvalidInput, "the assignee mutation wakes only through assign_task")
		}
		return conformance.WakeResult{}, conformance.Refuse(conformance.CodeInvalidInput, "unknown producer %q", args.Producer)
	}
	task, err := readTask(a.db, args.TaskID)
	if err != nil {
		return conformance.WakeResult{}, err
	}
	if err := requireAgent(a.db, args.AgentID); err != nil {
		return conformance.WakeResult{}, err
	}
	payload, _ := json.Marshal(struct {
		TaskID      string `json:"task_id"`
		WorkspaceID string `json:"workspace_id"`
	}{task.TaskID, task.WorkspaceID})
	key := fmt.Sprintf("%s:%s:%s:%d", prefix, task.TaskID, args.AgentID, task.AssignmentGeneration)
	return a.enqueueSafely(newWake(args.AgentID, taskAssigned, string(payload), &key)), nil
}

func (a *app) EnqueueWake(args conformance.EnqueueWakeArgs) (conformance.WakeResult, error) {
	if err := requireAgent(a.db, args.AgentID); err != nil {
		return conformance.WakeResult{}, err
	}
	if strings.TrimSpace(args.Reason) == "" {
		return conformance.WakeResult{}, conformance.Refuse(conformance.CodeInvalidInput, "a wake needs a reason")
	}
	if args.DedupKey != nil && strings.TrimSpace(*args.DedupKey) == "" {
		return conformance.WakeResult{}, conformance.Refuse(conformance.CodeInvalidInput, "a dedup key must not be blank; send null for none")
	}
	return a.enqueueSafely(newWake(args.AgentID, args.Reason, args.Payload, args.DedupKey)), nil
}

// ---- the enqueue pipeline ----------------------------------------------

// enqueueSafely reports an unexpected failure as the outcome none, not as an
// error: the producer's own work (an assignment, say) is committed and stands.
func (a *app) enqueueSafely(w wake) conformance.WakeResult {
	result, err := a.enqueue(w)
	if err != nil {
		logf("enqueue failed: %v", err)
		return conformance.WakeResult{Outcome: conformance.OutcomeNone}
	}
	return result
}

// enqueue decides a wake's fate. The order is the contract: a redelivery, or
// a wake that can merge, is decided before the allowance, so it is neither
// refused nor counted against it. (The defect gate-before-dedup swaps it.)
func (a *app) enqueue(w wake) (conformance.WakeResult, error) {
	now := a.clock.Now()
	if a.defects.gateBeforeDedup {
		if admitted, err := a.allowanceAdmits(w, now); err != nil || !admitted {
			return conformance.WakeResult{Outcome: conformance.OutcomeRateLimited}, err
		}
	}
	if runID, found, err := a.recentDuplicate(w, now); err != nil || found {
		if found {
			a.mem.telemetry.deduplicated(w.reason, "windowed")
			return conformance.WakeResult{Outcome: conformance.OutcomeDeduplicated, RunID: &runID}, nil
		}
		return conformance.WakeResult{}, err
	}
	if runID, merged, err := a.coalesce(w, now); err != nil || merged {
		if merged {
			return conformance.WakeResult{Outcome: conformance.OutcomeCoalesced, RunID: &runID}, nil
		}
		return conformance.WakeResult{}, err
	}
	if !a.defects.gateBeforeDedup {
		admitted, err := a.allowanceAdmits(w, now)
		if err != nil {
			return conformance.WakeResult{}, err
		}
		if !admitted {
			return conformance.WakeResult{Outcome: conformance.OutcomeRateLimited}, nil // nothing inserted, nothing merged
		}
	}
	// The count above was read outside this transaction: wakes evaluated at the
	// same time may each see room and each be admitted, the over-admission the
	// spec allows, bounded by the number evaluated at once. The insert itself is
	// decided by the durable unique index on the key.
	var runID string
	var duplicateOf *string
	err := inTx(a.db, func(tx *sql.Tx) error {
		result, err := tx.Exec(`INSERT INTO runs (agent_id, reason, payload, dedup_key, requested_at, status,
			coalesced_count, task_key, actor_type) VALUES (?, ?, ?, ?, ?, 'queued', 0, ?, ?)`,
			w.agentID, w.reason, w.payload, w.dedupKey, micros(now), w.facts.taskKey, w.facts.actorType)
		if uniqueViolation(err) {
			var holder int64
			if err := tx.QueryRow("SELECT seq FROM runs WHERE dedup_key = ?", *w.dedupKey).Scan(&holder); err != nil {
				return err
			}
			duplicateOf = strPtr(strconv.FormatInt(holder, 10))
			return nil
		}
		if err != nil {
			return err
		}
		id, err := result.LastInsertId()
		runID = strconv.FormatInt(id, 10)
		return err
	})
	if err != nil {
		return conformance.WakeResult{}, err
	}
	if duplicateOf != nil {
		a.mem.telemetry.deduplicated(w.reason, "durable")
		return conformance.WakeResult{Outcome: conformance.OutcomeDeduplicated, RunID: duplicateOf}, nil
	}
	return conformance.WakeResult{Outcome: conformance.OutcomeQueued, RunID: &runID}, nil
}

// recentDuplicate finds the run carrying the wake's key requested within (now - lookback, now].
func (a *app) recentDuplicate(w wake, now time.Time) (string, bool, error) {
	if w.dedupKey == nil {
		return "", false, nil
	}
	var seq int64
	err := a.db.QueryRow("SELECT seq FROM runs WHERE dedup_key = ? AND requested_at > ? AND requested_at <= ?",
		*w.dedupKey, micros(now.Add(-dedupLookback)), micros(now)).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strconv.FormatInt(seq, 10), true, nil
}

// coalesce merges the wake into the newest still-queued run of the same agent,
// reason and task requested within (now - 5 s, now]. The match ignores the
// actor type and the merge keeps the newer payload, so a merge can move a run
// into or out of the allowance's count: the spec's accepted relabel.
func (a *app) coalesce(w wake, now time.Time) (string, bool, error) {
	if w.dedupKey != nil && strings.HasPrefix(*w.dedupKey, noCoalescePrefix) {
		return "", false, nil
	}
	// The candidate is looked up outside the write transaction; the merge then
	// takes it only if it is still queued when the write lock is held.
	var seq int64
	err := a.db.QueryRow(`SELECT seq FROM runs WHERE agent_id = ? AND reason = ? AND task_key = ?
		AND status = 'queued' AND requested_at > ? AND requested_at <= ?
		ORDER BY requested_at DESC, seq DESC LIMIT 1`,
		w.agentID, w.reason, w.facts.taskKey, micros(now.Add(-coalesceWindow)), micros(now)).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	merged := false
	err = inTx(a.db, func(tx *sql.Tx) error {
		result, err := tx.Exec(`UPDATE runs SET payload = ?, task_key = ?, actor_type = ?, coalesced_count = coalesced_count + 1
			WHERE seq = ? AND status = 'queued'`, w.payload, w.facts.taskKey, w.facts.actorType, seq)
		if err != nil {
			return err
		}
		n, err := result.RowsAffected()
		merged = n == 1
		return err
	})
	if err != nil {
		return "", false, err
	}
	return strconv.FormatInt(seq, 10), merged, nil
}

// allowanceAdmits is the gate. It keeps no state of its own: the count is read
// from the stored runs at every decision. Out-of-scope wakes pass untouched
// and uncounted; the gate fails open, and says so, when it cannot apply.
func (a *app) allowanceAdmits(w wake, now time.Time) (bool, error) {
	switch gateScope(w) {
	case outOfScope:
		return true, nil
	case unattributed:
		// No task_id field: it is by definition what could not be determined.
		fields := map[string]any{}
		if w.facts.actingAgentID != "" {
			fields["acting_agent_id"] = w.facts.actingAgentID
		}
		a.warn(vocabulary.Reasons.TaskUnattributed, "assignment wake admitted unchecked: its payload names no task", fields)
		return true, nil
	}
	who := map[string]any{
		"task_id":                   w.facts.taskKey,
		"assignee_agent_profile_id": w.agentID,
		"acting_agent_id":           w.facts.actingAgentID,
	}
	observed, err := a.countAgentWakes(w.facts.taskKey, now)
	if err != nil {
		// No observed_count: the failed read did not produce one.
		who["error"] = err.Error()
		a.warn(vocabulary.Reasons.CountReadFailed, "assignment wake admitted unchecked: the allowance count could not be read", who)
		return true, nil
	}
	if observed < allowance {
		return true, nil // an ordinary admission moves no counter
	}
	who["observed_count"] = observed
	a.warn(vocabulary.Reasons.AllowanceExhausted, "assignment wake refused: the task's allowance is exhausted", who)
	return false, nil
}

// countAgentWakes counts the task's agent-initiated assignment runs requested
// in (now - W, now], whatever their status. Runs sharing an instant simply all
// count: nothing here depends on order.
func (a *app) countAgentWakes(taskID string, now time.Time) (int, error) {
	a.mem.mu.Lock()
	armed := a.mem.failNextCountRd
	a.mem.failNextCountRd = false
	a.mem.mu.Unlock()
	if armed {
		return 0, errors.New("injected failure of the allowance count read")
	}
	var count int
	err := a.db.QueryRow(`SELECT COUNT(*) FROM runs WHERE task_key = ? AND reason = ? AND actor_type = ?
		AND requested_at > ? AND requested_at <= ?`,
		taskID, taskAssigned, agentActor, micros(now.Add(-window)), micros(now)).Scan(&count)
	return count, err
}

// warn counts under the reason and logs a warning: a refusal or a degraded
// admission is never silent. Log fields use the protocol's names.
func (a *app) warn(reasonLabel, message string, fields map[string]any) {
	a.mem.telemetry.rateLimited(reasonLabel)
	fields["reason"] = reasonLabel
	fields["allowance"] = allowance
	a.mem.mu.Lock()
	a.mem.warnings = append(a.mem.warnings, conformance.WarningLog{Message: message, Fields: fields})
	a.mem.mu.Unlock()
	encoded, _ := json.Marshal(fields)
	logf("WARNING %s %s", message, encoded)
}

func (a *app) FailNextCountRead() error {
	a.mem.mu.Lock()
	a.mem.failNextCountRd = true
	a.mem.mu.Unlock()
	return nil
}

// ---- runs and observation ----------------------------------------------

func (a *app) SetRunStatus(args conformance.SetRunStatusArgs) error {
	if !runStatuses[args.Status] {
		return conformance.Refuse(conformance.CodeInvalidInput, "unknown run status %q", args.Status)
	}
	return inTx(a.db, func(tx *sql.Tx) error {
		result, err := tx.Exec("UPDATE runs SET status = ? WHERE seq = ?", args.Status, runSeq(args.RunID))
		if err != nil {
			return err
		}
		if n, _ := result.RowsAffected(); n == 0 {
			return conformance.Refuse(conformance.CodeNotFound, "unknown run %q", args.RunID)
		}
		return nil
	})
}

func (a *app) DeleteRun(args conformance.RunArgs) error {
	return inTx(a.db, func(tx *sql.Tx) error {
		result, err := tx.Exec("DELETE FROM runs WHERE seq = ?", runSeq(args.RunID))
		if err != nil {
			return err
		}
		if n, _ := result.RowsAffected(); n == 0 {
			return conformance.Refuse(conformance.CodeNotFound, "unknown run %q", args.RunID)
		}
		return nil
	})
}

// runSeq reads a run id; an id this implementation never made names no row.
func runSeq(id string) int64 {
	seq, err := strconv.ParseInt(id, 10, 64)
	if err != nil || strconv.FormatInt(seq, 10) != id {
		return -1
	}
	return seq
}

func (a *app) GetTask(args conformance.TaskArgs) (conformance.TaskView, error) {
	return readTask(a.db, args.TaskID)
}

func (a *app) ListRuns() ([]conformance.Run, error) {
	rows, err := a.db.Query(`SELECT seq, agent_id, reason, payload, dedup_key, requested_at, status, coalesced_count
		FROM runs ORDER BY seq`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var runs []conformance.Run
	for rows.Next() {
		var r conformance.Run
		var seq, at int64
		var key sql.NullString
		if err := rows.Scan(&seq, &r.AgentID, &r.Reason, &r.Payload, &key, &at, &r.Status, &r.CoalescedCount); err != nil {
			return nil, err
		}
		r.RunID = strconv.FormatInt(seq, 10)
		if key.Valid {
			r.DedupKey = strPtr(key.String)
		}
		r.RequestedAt = conformance.At(fromMicros(at))
		runs = append(runs, r)
	}
	return runs, rows.Err()
}

func (a *app) Telemetry() (string, error) { return a.mem.telemetry.render(), nil }

func (a *app) WarningLogs() ([]conformance.WarningLog, error) {
	a.mem.mu.Lock()
	defer a.mem.mu.Unlock()
	return append([]conformance.WarningLog{}, a.mem.warnings...), nil
}

func (a *app) MutationEffects() (conformance.MutationEffects, error) {
	rows, err := a.db.Query("SELECT agent_id, task_id, state FROM office_sessions ORDER BY seq")
	if err != nil {
		return conformance.MutationEffects{}, err
	}
	defer rows.Close()
	var sessions []conformance.OfficeSession
	for rows.Next() {
		var s conformance.OfficeSession
		if err := rows.Scan(&s.AgentID, &s.TaskID, &s.State); err != nil {
			return conformance.MutationEffects{}, err
		}
		sessions = append(sessions, s)
	}
	if err := rows.Err(); err != nil {
		return conformance.MutationEffects{}, err
	}
	a.mem.mu.Lock()
	defer a.mem.mu.Unlock()
	return conformance.MutationEffects{
		Interrupts:     append([]conformance.SessionInterrupt{}, a.mem.interrupts...),
		OfficeSessions: sessions,
		Events:         append([]conformance.PublishedEvent{}, a.mem.events...),
	}, nil
}
