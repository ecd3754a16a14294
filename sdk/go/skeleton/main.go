// Command skeleton is the smallest start of an Office implementation on the
// SDK: tasks in memory and the assignee mutation with its wake, every other
// operation not yet supported. It is a first step, not a conforming system:
// run the kit against it to see where to go next.
package main

import (
	"fmt"
	"sync"

	conformance "conformancekit/sdk"
)

type system struct {
	conformance.UnimplementedOffice // every operation not written yet answers "not supported"

	mu    sync.Mutex
	clock *conformance.Clock
	tasks map[string]*conformance.TaskView
	runs  []conformance.Run
}

// Open is called at the handshake: keep your store in store.Dir and read time from clock.
func (s *system) Open(store conformance.Store, clock *conformance.Clock) error {
	s.clock, s.tasks = clock, map[string]*conformance.TaskView{}
	return nil
}

func (s *system) CreateWorkspace(conformance.WorkspaceArgs) error { return nil }
func (s *system) CreateAgent(conformance.CreateAgentArgs) error   { return nil }

func (s *system) CreateTask(a conformance.CreateTaskArgs) (conformance.TaskView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	task := conformance.TaskView{TaskID: a.TaskID, WorkspaceID: a.WorkspaceID, AssigneeAgentID: a.AssigneeAgentID}
	s.tasks[a.TaskID] = &task
	return task, nil
}

func (s *system) GetTask(a conformance.TaskArgs) (conformance.TaskView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	task, ok := s.tasks[a.TaskID]
	if !ok {
		return conformance.TaskView{}, conformance.Refuse(conformance.CodeNotFound, "unknown task %q", a.TaskID)
	}
	return *task, nil
}

// AssignTask commits the new assignee and generation, then queues a wake (no gate yet).
func (s *system) AssignTask(a conformance.AssignTaskArgs) (conformance.AssignmentResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	task, ok := s.tasks[a.TaskID]
	if !ok {
		return conformance.AssignmentResult{}, conformance.Refuse(conformance.CodeNotFound, "unknown task %q", a.TaskID)
	}
	task.AssigneeAgentID = a.AssigneeAgentID
	task.AssignmentGeneration++
	result := conformance.AssignmentResult{TaskID: a.TaskID, AssigneeAgentID: a.AssigneeAgentID, Generation: task.AssignmentGeneration}
	if a.AssigneeAgentID == "" {
		return result, nil // an unassignment wakes nobody
	}
	id := fmt.Sprint(len(s.runs) + 1)
	key := fmt.Sprintf("task_assigned:%s:%s:%d", a.TaskID, a.AssigneeAgentID, task.AssignmentGeneration)
	s.runs = append(s.runs, conformance.Run{
		RunID: id, AgentID: a.AssigneeAgentID, Reason: "task_assigned", Payload: "{}",
		DedupKey: &key, RequestedAt: conformance.At(s.clock.Now()), Status: conformance.RunQueued,
	})
	result.Wake = &conformance.WakeResult{Outcome: conformance.OutcomeQueued, RunID: &id}
	return result, nil
}

func (s *system) ListRuns() ([]conformance.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]conformance.Run{}, s.runs...), nil
}

// Nothing is counted, logged or published yet.
func (s *system) Telemetry() (string, error)                     { return "", nil }
func (s *system) WarningLogs() ([]conformance.WarningLog, error) { return nil, nil }
func (s *system) MutationEffects() (conformance.MutationEffects, error) {
	return conformance.MutationEffects{}, nil
}

func main() {
	conformance.Main(conformance.Description{
		Name:         "skeleton",
		Version:      "0.0.1",
		Capabilities: []conformance.Capability{conformance.CapOffice},
		Office: &conformance.OfficeConstants{
			Allowance: 5, WindowSeconds: 600, CoalesceWindowSeconds: 5, DedupLookbackSeconds: 86400,
			Producers: conformance.Strings{"assignee_mutation", "task_created_subscriber", "onboarding",
				"unstarted_task_recovery", "workflow_auto_start"},
		},
	}, &system{})
}
