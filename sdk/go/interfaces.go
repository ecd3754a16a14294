package conformance

// Implementation is what every implementation provides. Open is called once,
// at the first handshake, with the store directory and the clock the harness
// controls: an implementation that touches the store only there may declare
// the capability prelaunch.
type Implementation interface {
	Open(store Store, clock *Clock) error
}

// Resetter is implemented by an implementation that declares reset: Reset
// empties the store and forgets everything held in memory (counters, logs,
// armed hooks), so that the process is indistinguishable from a fresh launch
// on an empty store. The package sets the clock back to StartInstant after it.
type Resetter interface {
	Reset() error
}

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

// WorkRequests is the work-request capability: delegation with
// generation-fenced leases, budget slices and permission narrowing.
type WorkRequests interface {
	CreateEnvironment(CreateEnvironmentArgs) error
	CreateCampaign(CreateCampaignArgs) error
	CreateSession(CreateSessionArgs) error
	Delegate(DelegateArgs) (WorkRequest, error)
	Claim(ClaimArgs) (Lease, error)
	Heartbeat(HeartbeatArgs) (Lease, error)
	Publish(PublishArgs) (Completion, error)
	RecordUsage(RecordUsageArgs) error
	GetRequest(RequestArgs) (WorkRequest, error)
	ListRequests(ListRequestsArgs) ([]WorkRequest, error)
	Budget(CampaignArgs) (BudgetSnapshot, error)
	ListSessions(CampaignArgs) ([]SessionView, error)
}
