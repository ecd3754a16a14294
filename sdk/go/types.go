package conformance

// The message types of protocol v1 that every capability shares (each
// capability's own are in its file: office.go, workrequests.go), one Go type
// per definition of conformance/schemas/protocol-v1.schema.json. schema_test.go checks every one
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
