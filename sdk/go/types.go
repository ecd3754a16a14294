package conformance

// The message types of protocol v1, one Go type per definition of
// conformance/schemas/protocol-v1.schema.json. schema_test.go checks every one
// of them against the schema (keys, required keys, nullable keys, enums), so a
// change on either side fails the test until the other follows.

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// ProtocolVersion is the only version of the protocol this package speaks.
const ProtocolVersion = 1

// Capability names what an implementation may declare it serves.
type Capability string

const (
	CapOffice               Capability = "office"
	CapWorkRequests         Capability = "work_requests"
	CapHookCountReadFailure Capability = "hook:count_read_failure"
	CapHookKeylessAssign    Capability = "hook:keyless_assignment"
	CapRestart              Capability = "restart"
	CapConcurrency          Capability = "concurrency"
	CapReset                Capability = "reset"
	CapMultiprocess         Capability = "multiprocess"
	CapPrelaunch            Capability = "prelaunch"
)

// AllCapabilities lists the Capability enumeration, in the schema's order.
var AllCapabilities = []Capability{
	CapOffice, CapWorkRequests, CapHookCountReadFailure, CapHookKeylessAssign,
	CapRestart, CapConcurrency, CapReset, CapMultiprocess, CapPrelaunch,
}

// ErrorCode is the closed list of typed errors.
type ErrorCode string

const (
	CodeInvalidInput         ErrorCode = "invalid_input"
	CodeNotFound             ErrorCode = "not_found"
	CodeForbidden            ErrorCode = "forbidden"
	CodeInsufficientBudget   ErrorCode = "insufficient_budget"
	CodePermissionEscalation ErrorCode = "permission_escalation"
	CodeDepthCap             ErrorCode = "depth_cap"
	CodeCountCap             ErrorCode = "count_cap"
	CodeNotAssignee          ErrorCode = "not_assignee"
	CodeLeaseHeld            ErrorCode = "lease_held"
	CodeLeaseExpired         ErrorCode = "lease_expired"
	CodeStaleGeneration      ErrorCode = "stale_generation"
	CodeAlreadyCompleted     ErrorCode = "already_completed"
	CodeUsageExceedsSlice    ErrorCode = "usage_exceeds_slice"
	CodeNotSupported         ErrorCode = "not_supported"
	CodeIndeterminate        ErrorCode = "indeterminate"
	CodeInternal             ErrorCode = "internal"
)

// AllErrorCodes lists the ErrorCode enumeration, in the schema's order.
var AllErrorCodes = []ErrorCode{
	CodeInvalidInput, CodeNotFound, CodeForbidden, CodeInsufficientBudget,
	CodePermissionEscalation, CodeDepthCap, CodeCountCap, CodeNotAssignee,
	CodeLeaseHeld, CodeLeaseExpired, CodeStaleGeneration, CodeAlreadyCompleted,
	CodeUsageExceedsSlice, CodeNotSupported, CodeIndeterminate, CodeInternal,
}

// Outcome is what became of a wake.
type Outcome string

const (
	OutcomeQueued       Outcome = "queued"
	OutcomeCoalesced    Outcome = "coalesced"
	OutcomeDeduplicated Outcome = "deduplicated"
	OutcomeRateLimited  Outcome = "rate_limited"
	OutcomeNone         Outcome = "none"
)

// AllOutcomes lists the Outcome enumeration.
var AllOutcomes = []Outcome{OutcomeQueued, OutcomeCoalesced, OutcomeDeduplicated, OutcomeRateLimited, OutcomeNone}

// RunStatus is a run's life-cycle state (the schema types it as a string; the
// protocol document lists these values).
type RunStatus string

const (
	RunQueued    RunStatus = "queued"
	RunClaimed   RunStatus = "claimed"
	RunRunning   RunStatus = "running"
	RunFinished  RunStatus = "finished"
	RunFailed    RunStatus = "failed"
	RunCancelled RunStatus = "cancelled"
)

// AllRunStatuses lists the run statuses.
var AllRunStatuses = []RunStatus{RunQueued, RunClaimed, RunRunning, RunFinished, RunFailed, RunCancelled}

// DelegationKind is how a work request was delegated.
type DelegationKind string

const (
	KindSpawn    DelegationKind = "spawn"
	KindSubagent DelegationKind = "subagent"
)

// AllDelegationKinds lists the DelegationKind enumeration.
var AllDelegationKinds = []DelegationKind{KindSpawn, KindSubagent}

// RequestState is a work request's state.
type RequestState string

const (
	StateOpen       RequestState = "open"
	StateInProgress RequestState = "in_progress"
	StateCompleted  RequestState = "completed"
)

// AllRequestStates lists the RequestState enumeration.
var AllRequestStates = []RequestState{StateOpen, StateInProgress, StateCompleted}

// ConcurrentOperations are the operations a run_concurrently batch may hold.
var ConcurrentOperations = []string{"assign_task", "claim", "heartbeat", "publish", "delegate", "record_usage"}

// Strings is a list of strings that is written as [] when empty, never null.
type Strings []string

// MarshalJSON writes an empty list as [].
func (s Strings) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]string(s))
}

// Instant is a point in time on the wire: ISO 8601, UTC, six fractional digits, Z.
type Instant struct{ time.Time }

// InstantLayout is the harness's own form of an instant.
const InstantLayout = "2006-01-02T15:04:05.000000Z07:00"

// MarshalJSON writes the harness's form.
func (t Instant) MarshalJSON() ([]byte, error) {
	return json.Marshal(FormatInstant(t.Time))
}

// UnmarshalJSON accepts an ISO 8601 instant with a zone and at most six fractional digits.
func (t *Instant) UnmarshalJSON(b []byte) error {
	var text string
	if err := json.Unmarshal(b, &text); err != nil {
		return err
	}
	parsed, err := ParseInstant(text)
	if err != nil {
		return err
	}
	t.Time = parsed
	return nil
}

// FormatInstant renders t in UTC with exactly six fractional digits and Z.
func FormatInstant(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format("2006-01-02T15:04:05.000000Z")
}

// ParseInstant reads an instant as the schema's pattern allows it: a zone is
// required (Z or an offset), fractional seconds have at most six digits.
func ParseInstant(text string) (time.Time, error) {
	main := text
	if i := strings.IndexAny(text, "Z+"); i >= 0 {
		main = text[:i]
	} else if len(text) >= 6 && text[len(text)-6] == '-' {
		main = text[:len(text)-6]
	} else {
		return time.Time{}, fmt.Errorf("instant %q has no zone", text)
	}
	if dot := strings.IndexByte(main, '.'); dot >= 0 && len(main)-dot-1 > 6 {
		return time.Time{}, fmt.Errorf("instant %q has more than six fractional digits", text)
	}
	parsed, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return time.Time{}, fmt.Errorf("not an instant: %q", text)
	}
	return parsed.UTC(), nil
}

// At wraps a time as an Instant.
func At(t time.Time) Instant { return Instant{t.UTC().Truncate(time.Microsecond)} }

// AtPtr wraps a time as a nullable Instant.
func AtPtr(t time.Time) *Instant { i := At(t); return &i }

// ---- handshake ------------------------------------------------------------

// ImplementationName names the implementation (the schema's Implementation).
type ImplementationName struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ReasonLabels are the label values of the three rate-limit reasons.
type ReasonLabels struct {
	AllowanceExhausted string `json:"allowance_exhausted"`
	CountReadFailed    string `json:"count_read_failed"`
	TaskUnattributed   string `json:"task_unattributed"`
}

// OfficeVocabulary declares the names the Office spec leaves open.
type OfficeVocabulary struct {
	RateLimitCounter        string       `json:"rate_limit_counter"`
	ReasonLabel             string       `json:"reason_label"`
	Reasons                 ReasonLabels `json:"reasons"`
	DedupCounters           Strings      `json:"dedup_counters"`
	TaskUpdatedEvent        string       `json:"task_updated_event"`
	InterruptedSessionState *string      `json:"interrupted_session_state"`
}

// DefaultVocabulary is the vocabulary of Kandev's own design.
func DefaultVocabulary() OfficeVocabulary {
	return OfficeVocabulary{
		RateLimitCounter: "office_assignment_rate_limit_total",
		ReasonLabel:      "reason",
		Reasons: ReasonLabels{
			AllowanceExhausted: "allowance_exhausted",
			CountReadFailed:    "count_read_failed",
			TaskUnattributed:   "task_unattributed",
		},
		DedupCounters:    Strings{"office_run_dedup_total", "office_run_dedup_keyless_total"},
		TaskUpdatedEvent: "task.updated",
	}
}

// OfficeConstants are the constants and names an Office implementation enforces.
type OfficeConstants struct {
	Allowance             int               `json:"allowance"`
	WindowSeconds         float64           `json:"window_seconds"`
	CoalesceWindowSeconds float64           `json:"coalesce_window_seconds"`
	DedupLookbackSeconds  float64           `json:"dedup_lookback_seconds"`
	Producers             Strings           `json:"producers"`
	Vocabulary            *OfficeVocabulary `json:"vocabulary,omitempty"`
}

// WorkRequestLimits are a work-request implementation's limits.
type WorkRequestLimits struct {
	MaxDepth              int     `json:"max_depth"`
	MaxChildrenPerSession int     `json:"max_children_per_session"`
	LeaseSeconds          float64 `json:"lease_seconds"`
}

// Description is what the handshake declares.
type Description struct {
	Name         string             `json:"name"`
	Version      string             `json:"version"`
	Capabilities []Capability       `json:"capabilities"`
	Office       *OfficeConstants   `json:"office"`
	WorkRequests *WorkRequestLimits `json:"work_requests"`
	// Readings names, per open question of the kit's interpretation register
	// (an ID such as "WR-3"), the reading the implementation follows: "kit" or
	// one of the alternatives the register lists. A question not named is
	// judged by the kit's reading; leave it empty to follow the kit everywhere.
	Readings map[string]string `json:"readings,omitempty"`
}

// HandshakeResult answers the handshake.
type HandshakeResult struct {
	ProtocolVersion int                `json:"protocol_version"`
	Implementation  ImplementationName `json:"implementation"`
	Description     Description        `json:"description"`
}

// ---- envelope -------------------------------------------------------------

// Request is one request line.
type Request struct {
	Protocol int             `json:"protocol"`
	Seq      int64           `json:"seq"`
	Op       string          `json:"op"`
	Args     json.RawMessage `json:"args"`
}

// ErrorBody is the error of an error reply.
type ErrorBody struct {
	Code     ErrorCode `json:"code"`
	Definite bool      `json:"definite"`
	Message  string    `json:"message"`
}

// OkReply is the reply of an operation that happened.
type OkReply struct {
	Seq    int64 `json:"seq"`
	Ok     bool  `json:"ok"`
	Result any   `json:"result"`
}

// ErrorReply is the reply of a typed refusal or failure.
type ErrorReply struct {
	Seq   int64     `json:"seq"`
	Ok    bool      `json:"ok"`
	Error ErrorBody `json:"error"`
}

// NotSupportedReply says an operation is not offered.
type NotSupportedReply struct {
	Seq          int64  `json:"seq"`
	NotSupported bool   `json:"not_supported"`
	Message      string `json:"message"`
}

// ---- arguments ------------------------------------------------------------

// NoArgs is the argument object of operations without arguments.
type NoArgs struct{}

// SetClockArgs are set_clock's arguments.
type SetClockArgs struct {
	Instant Instant `json:"instant"`
}

// AdvanceClockArgs are advance_clock's arguments.
type AdvanceClockArgs struct {
	DeltaMicroseconds int64 `json:"delta_microseconds"`
}

// MaxAdvanceMicroseconds is the largest advance the schema allows (one century).
const MaxAdvanceMicroseconds int64 = 3162240000000000

// WorkspaceArgs are create_workspace's arguments.
type WorkspaceArgs struct {
	WorkspaceID string `json:"workspace_id"`
}

// CreateAgentArgs are create_agent's arguments.
type CreateAgentArgs struct {
	WorkspaceID    string `json:"workspace_id"`
	AgentID        string `json:"agent_id"`
	CanAssignTasks bool   `json:"can_assign_tasks"`
}

// CreateTaskArgs are create_task's arguments.
type CreateTaskArgs struct {
	WorkspaceID     string `json:"workspace_id"`
	TaskID          string `json:"task_id"`
	AssigneeAgentID string `json:"assignee_agent_id"`
}

// AgentTaskArgs are open_office_session's arguments.
type AgentTaskArgs struct {
	AgentID string `json:"agent_id"`
	TaskID  string `json:"task_id"`
}

// AssignTaskArgs are assign_task's (and assign_task_keyless's) arguments.
type AssignTaskArgs struct {
	TaskID          string `json:"task_id"`
	AssigneeAgentID string `json:"assignee_agent_id"`
	ActingAgentID   string `json:"acting_agent_id"`
}

// ProduceWakeArgs are produce_wake's arguments.
type ProduceWakeArgs struct {
	Producer string `json:"producer"`
	TaskID   string `json:"task_id"`
	AgentID  string `json:"agent_id"`
}

// EnqueueWakeArgs are enqueue_wake's arguments.
type EnqueueWakeArgs struct {
	AgentID  string  `json:"agent_id"`
	Reason   string  `json:"reason"`
	Payload  string  `json:"payload"`
	DedupKey *string `json:"dedup_key"`
}

// SetRunStatusArgs are set_run_status's arguments.
type SetRunStatusArgs struct {
	RunID  string    `json:"run_id"`
	Status RunStatus `json:"status"`
}

// RunArgs name a run.
type RunArgs struct {
	RunID string `json:"run_id"`
}

// TaskArgs name a task.
type TaskArgs struct {
	TaskID string `json:"task_id"`
}

// CreateEnvironmentArgs are create_environment's arguments.
type CreateEnvironmentArgs struct {
	EnvironmentID string  `json:"environment_id"`
	Members       Strings `json:"members"`
}

// CreateCampaignArgs are create_campaign's arguments.
type CreateCampaignArgs struct {
	CampaignID    string `json:"campaign_id"`
	EnvironmentID string `json:"environment_id"`
	Budget        int64  `json:"budget"`
}

// Permissions are tool grants and device grants.
type Permissions struct {
	Tools   Strings `json:"tools"`
	Devices Strings `json:"devices"`
}

// CreateSessionArgs are create_session's arguments.
type CreateSessionArgs struct {
	SessionID   string      `json:"session_id"`
	CampaignID  string      `json:"campaign_id"`
	Principal   string      `json:"principal"`
	Permissions Permissions `json:"permissions"`
}

// DelegateArgs are delegate's arguments.
type DelegateArgs struct {
	Kind                 DelegationKind `json:"kind"`
	OriginatingSessionID string         `json:"originating_session_id"`
	Deliverable          string         `json:"deliverable"`
	AcceptanceChecks     Strings        `json:"acceptance_checks"`
	BudgetSlice          int64          `json:"budget_slice"`
	Permissions          Permissions    `json:"permissions"`
	Assignee             *string        `json:"assignee"`
}

// ClaimArgs are claim's arguments.
type ClaimArgs struct {
	RequestID string `json:"request_id"`
	Holder    string `json:"holder"`
}

// HeartbeatArgs are heartbeat's arguments.
type HeartbeatArgs struct {
	RequestID  string `json:"request_id"`
	Holder     string `json:"holder"`
	Generation int64  `json:"generation"`
}

// PublishArgs are publish's arguments.
type PublishArgs struct {
	RequestID  string `json:"request_id"`
	Holder     string `json:"holder"`
	Generation int64  `json:"generation"`
	ResultRef  string `json:"result_ref"`
}

// RecordUsageArgs are record_usage's arguments.
type RecordUsageArgs struct {
	SessionID string `json:"session_id"`
	Amount    int64  `json:"amount"`
}

// RequestArgs name a work request.
type RequestArgs struct {
	RequestID string `json:"request_id"`
}

// ListRequestsArgs are list_requests's arguments.
type ListRequestsArgs struct {
	EnvironmentID string `json:"environment_id"`
	Principal     string `json:"principal"`
}

// CampaignArgs name a campaign.
type CampaignArgs struct {
	CampaignID string `json:"campaign_id"`
}

// ConcurrentCall is one call of a concurrent batch.
type ConcurrentCall struct {
	Operation string          `json:"operation"`
	Arguments json.RawMessage `json:"arguments"`
}

// RunConcurrentlyArgs are run_concurrently's arguments.
type RunConcurrentlyArgs struct {
	Calls []ConcurrentCall `json:"calls"`
}

// ---- results --------------------------------------------------------------

// TaskView is a task as the harness sees it.
type TaskView struct {
	TaskID               string `json:"task_id"`
	WorkspaceID          string `json:"workspace_id"`
	AssigneeAgentID      string `json:"assignee_agent_id"`
	AssignmentGeneration int64  `json:"assignment_generation"`
}

// WakeResult is what became of one wake.
type WakeResult struct {
	Outcome Outcome `json:"outcome"`
	RunID   *string `json:"run_id"`
}

// AssignmentResult is the result of the assignee mutation.
type AssignmentResult struct {
	TaskID          string      `json:"task_id"`
	AssigneeAgentID string      `json:"assignee_agent_id"`
	Generation      int64       `json:"generation"`
	Wake            *WakeResult `json:"wake"`
}

// Run is one row of the run queue.
type Run struct {
	RunID          string    `json:"run_id"`
	AgentID        string    `json:"agent_id"`
	Reason         string    `json:"reason"`
	Payload        string    `json:"payload"`
	DedupKey       *string   `json:"dedup_key"`
	RequestedAt    Instant   `json:"requested_at"`
	Status         RunStatus `json:"status"`
	CoalescedCount int64     `json:"coalesced_count"`
}

// WarningLog is one captured warning.
type WarningLog struct {
	Message string         `json:"message"`
	Fields  map[string]any `json:"fields"`
}

// SessionInterrupt is one interrupt the mutations caused.
type SessionInterrupt struct {
	AgentID string `json:"agent_id"`
	TaskID  string `json:"task_id"`
}

// OfficeSession is an office session row and its state.
type OfficeSession struct {
	AgentID string `json:"agent_id"`
	TaskID  string `json:"task_id"`
	State   string `json:"state"`
}

// PublishedEvent is one published event.
type PublishedEvent struct {
	EventType string  `json:"event_type"`
	TaskID    string  `json:"task_id"`
	Fields    Strings `json:"fields"`
}

// MutationEffects are the effects of the mutations so far.
type MutationEffects struct {
	Interrupts     []SessionInterrupt `json:"interrupts"`
	OfficeSessions []OfficeSession    `json:"office_sessions"`
	Events         []PublishedEvent   `json:"events"`
}

// Lease is a work request's current (or last) lease.
type Lease struct {
	Holder     *string  `json:"holder"`
	Generation int64    `json:"generation"`
	ExpiresAt  *Instant `json:"expires_at"`
	ClosedAt   *Instant `json:"closed_at"`
}

// WorkRequest is every field of the delegation data contract.
type WorkRequest struct {
	RequestID            string         `json:"request_id"`
	Kind                 DelegationKind `json:"kind"`
	EnvironmentID        string         `json:"environment_id"`
	CampaignID           string         `json:"campaign_id"`
	OriginatingSessionID string         `json:"originating_session_id"`
	ChildSessionID       string         `json:"child_session_id"`
	Deliverable          string         `json:"deliverable"`
	AcceptanceChecks     Strings        `json:"acceptance_checks"`
	BudgetSlice          int64          `json:"budget_slice"`
	BudgetSpent          int64          `json:"budget_spent"`
	Permissions          Permissions    `json:"permissions"`
	Assignee             *string        `json:"assignee"`
	Lease                Lease          `json:"lease"`
	State                RequestState   `json:"state"`
	ResultRef            *string        `json:"result_ref"`
}

// Completion is the record of a completed request.
type Completion struct {
	RequestID      string  `json:"request_id"`
	Holder         string  `json:"holder"`
	Generation     int64   `json:"generation"`
	ResultRef      string  `json:"result_ref"`
	CompletedAt    Instant `json:"completed_at"`
	BudgetReturned int64   `json:"budget_returned"`
}

// BudgetSnapshot is a campaign's budget.
type BudgetSnapshot struct {
	CampaignID string `json:"campaign_id"`
	Total      int64  `json:"total"`
	Available  int64  `json:"available"`
	Reserved   int64  `json:"reserved"`
	Spent      int64  `json:"spent"`
}

// SessionView is a session of a campaign.
type SessionView struct {
	SessionID   string  `json:"session_id"`
	CampaignID  string  `json:"campaign_id"`
	RequestID   *string `json:"request_id"`
	Depth       int64   `json:"depth"`
	Delegations int64   `json:"delegations"`
}

// CallOutcome is how one call of a concurrent batch ended.
type CallOutcome struct {
	Ok            bool       `json:"ok"`
	Result        any        `json:"result"`
	Error         *ErrorCode `json:"error"`
	Definite      bool       `json:"definite"`
	Message       string     `json:"message"`
	InvokedAtNs   int64      `json:"invoked_at_ns"`
	CompletedAtNs int64      `json:"completed_at_ns"`
}

// MarshalJSON writes missing lists as [].
func (m MutationEffects) MarshalJSON() ([]byte, error) {
	type plain MutationEffects
	if m.Interrupts == nil {
		m.Interrupts = []SessionInterrupt{}
	}
	if m.OfficeSessions == nil {
		m.OfficeSessions = []OfficeSession{}
	}
	if m.Events == nil {
		m.Events = []PublishedEvent{}
	}
	return json.Marshal(plain(m))
}

// MarshalJSON writes missing fields as {}.
func (w WarningLog) MarshalJSON() ([]byte, error) {
	type plain WarningLog
	if w.Fields == nil {
		w.Fields = map[string]any{}
	}
	return json.Marshal(plain(w))
}
