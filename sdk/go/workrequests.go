package conformance

// The work-request capability in one place: its interface, the stand-in that
// answers not-supported, the operations the server dispatches to it, and its
// message types. Adding a work-request operation touches this file alone.

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

// addWorkRequests dispatches each work-request operation of docs/protocol.md.
func addWorkRequests(s *server, workRequests WorkRequests) {
	s.add(CapWorkRequests, "create_environment", unit(workRequests.CreateEnvironment))
	s.add(CapWorkRequests, "create_campaign", unit(workRequests.CreateCampaign))
	s.add(CapWorkRequests, "create_session", unit(workRequests.CreateSession))
	s.add(CapWorkRequests, "delegate", with(workRequests.Delegate))
	s.add(CapWorkRequests, "claim", with(workRequests.Claim))
	s.add(CapWorkRequests, "heartbeat", with(workRequests.Heartbeat))
	s.add(CapWorkRequests, "publish", with(workRequests.Publish))
	s.add(CapWorkRequests, "record_usage", unit(workRequests.RecordUsage))
	s.add(CapWorkRequests, "get_request", with(workRequests.GetRequest))
	s.add(CapWorkRequests, "list_requests", withList(workRequests.ListRequests))
	s.add(CapWorkRequests, "budget", with(workRequests.Budget))
	s.add(CapWorkRequests, "list_sessions", withList(workRequests.ListSessions))
}

// ---- the work-request capability's messages -------------------------------

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
