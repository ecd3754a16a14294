package conformance

// The Office capability in one place: its interface, its fault hooks, the
// stand-in that answers not-supported, the operations the server dispatches
// to it, and its message types. Adding an Office operation touches this file
// alone.

import "encoding/json"

// Office is the Office capability: the assignment-wake rate limit and the run
// queue around it. Each method is one operation of docs/protocol.md.
type Office interface {
	CreateWorkspace(WorkspaceArgs) error
	CreateAgent(CreateAgentArgs) error
	CreateTask(CreateTaskArgs) (TaskView, error)
	OpenOfficeSession(AgentTaskArgs) error
	AssignTask(AssignTaskArgs) (AssignmentResult, error)
	ProduceWake(ProduceWakeArgs) (WakeResult, error)
	EnqueueWake(EnqueueWakeArgs) (WakeResult, error)
	SetRunStatus(SetRunStatusArgs) error
	DeleteRun(RunArgs) error
	GetTask(TaskArgs) (TaskView, error)
	ListRuns() ([]Run, error)
	Telemetry() (string, error)
	WarningLogs() ([]WarningLog, error)
	MutationEffects() (MutationEffects, error)
}

// CountReadFailureHook is the fault hook of hook:count_read_failure: the next
// read of the allowance count fails, once.
type CountReadFailureHook interface {
	FailNextCountRead() error
}

// KeylessAssignmentHook is the fault hook of hook:keyless_assignment: the
// assignee mutation with the generation made unresolvable, so its wake has no
// dedup key.
type KeylessAssignmentHook interface {
	AssignTaskKeyless(AssignTaskArgs) (AssignmentResult, error)
}

// UnimplementedOffice answers every Office operation with the not-supported
// reply. Embed it in your type and replace its methods one at a time: the
// kit reports a scenario that needs a missing operation against that scenario.
type UnimplementedOffice struct{}

func (UnimplementedOffice) CreateWorkspace(WorkspaceArgs) error   { return ErrNotSupported }
func (UnimplementedOffice) CreateAgent(CreateAgentArgs) error     { return ErrNotSupported }
func (UnimplementedOffice) OpenOfficeSession(AgentTaskArgs) error { return ErrNotSupported }
func (UnimplementedOffice) SetRunStatus(SetRunStatusArgs) error   { return ErrNotSupported }
func (UnimplementedOffice) DeleteRun(RunArgs) error               { return ErrNotSupported }
func (UnimplementedOffice) ListRuns() ([]Run, error)              { return nil, ErrNotSupported }
func (UnimplementedOffice) Telemetry() (string, error)            { return "", ErrNotSupported }
func (UnimplementedOffice) WarningLogs() ([]WarningLog, error)    { return nil, ErrNotSupported }
func (UnimplementedOffice) CreateTask(CreateTaskArgs) (TaskView, error) {
	return TaskView{}, ErrNotSupported
}
func (UnimplementedOffice) AssignTask(AssignTaskArgs) (AssignmentResult, error) {
	return AssignmentResult{}, ErrNotSupported
}
func (UnimplementedOffice) ProduceWake(ProduceWakeArgs) (WakeResult, error) {
	return WakeResult{}, ErrNotSupported
}
func (UnimplementedOffice) EnqueueWake(EnqueueWakeArgs) (WakeResult, error) {
	return WakeResult{}, ErrNotSupported
}
func (UnimplementedOffice) GetTask(TaskArgs) (TaskView, error) { return TaskView{}, ErrNotSupported }
func (UnimplementedOffice) MutationEffects() (MutationEffects, error) {
	return MutationEffects{}, ErrNotSupported
}

// addOffice dispatches each Office operation of docs/protocol.md.
func addOffice(s *server, office Office) {
	s.add(CapOffice, "create_workspace", unit(office.CreateWorkspace))
	s.add(CapOffice, "create_agent", unit(office.CreateAgent))
	s.add(CapOffice, "create_task", with(office.CreateTask))
	s.add(CapOffice, "open_office_session", unit(office.OpenOfficeSession))
	s.add(CapOffice, "assign_task", with(office.AssignTask))
	s.add(CapOffice, "produce_wake", with(office.ProduceWake))
	s.add(CapOffice, "enqueue_wake", with(office.EnqueueWake))
	s.add(CapOffice, "set_run_status", unit(office.SetRunStatus))
	s.add(CapOffice, "delete_run", unit(office.DeleteRun))
	s.add(CapOffice, "get_task", with(office.GetTask))
	s.add(CapOffice, "list_runs", listing(office.ListRuns))
	s.add(CapOffice, "telemetry", noArgs[string](func() (any, error) { return office.Telemetry() }))
	s.add(CapOffice, "warning_logs", listing(office.WarningLogs))
	s.add(CapOffice, "mutation_effects", noArgs[MutationEffects](func() (any, error) { return office.MutationEffects() }))
}

func addCountReadFailureHook(s *server, countHook CountReadFailureHook) {
	s.add(CapHookCountReadFailure, "fail_next_count_read", noArgs[struct{}](func() (any, error) {
		return nil, countHook.FailNextCountRead()
	}))
}

func addKeylessAssignmentHook(s *server, keylessHook KeylessAssignmentHook) {
	s.add(CapHookKeylessAssign, "assign_task_keyless", with(keylessHook.AssignTaskKeyless))
}

// ---- the Office capability's messages -------------------------------------

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
