package conformance

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

// UnimplementedWorkRequests answers every work-request operation with the
// not-supported reply; embed it and replace its methods one at a time.
type UnimplementedWorkRequests struct{}

func (UnimplementedWorkRequests) CreateEnvironment(CreateEnvironmentArgs) error {
	return ErrNotSupported
}
func (UnimplementedWorkRequests) CreateCampaign(CreateCampaignArgs) error { return ErrNotSupported }
func (UnimplementedWorkRequests) CreateSession(CreateSessionArgs) error   { return ErrNotSupported }
func (UnimplementedWorkRequests) RecordUsage(RecordUsageArgs) error       { return ErrNotSupported }
func (UnimplementedWorkRequests) Delegate(DelegateArgs) (WorkRequest, error) {
	return WorkRequest{}, ErrNotSupported
}
func (UnimplementedWorkRequests) Claim(ClaimArgs) (Lease, error) { return Lease{}, ErrNotSupported }
func (UnimplementedWorkRequests) Heartbeat(HeartbeatArgs) (Lease, error) {
	return Lease{}, ErrNotSupported
}
func (UnimplementedWorkRequests) Publish(PublishArgs) (Completion, error) {
	return Completion{}, ErrNotSupported
}
func (UnimplementedWorkRequests) GetRequest(RequestArgs) (WorkRequest, error) {
	return WorkRequest{}, ErrNotSupported
}
func (UnimplementedWorkRequests) ListRequests(ListRequestsArgs) ([]WorkRequest, error) {
	return nil, ErrNotSupported
}
func (UnimplementedWorkRequests) Budget(CampaignArgs) (BudgetSnapshot, error) {
	return BudgetSnapshot{}, ErrNotSupported
}
func (UnimplementedWorkRequests) ListSessions(CampaignArgs) ([]SessionView, error) {
	return nil, ErrNotSupported
}
