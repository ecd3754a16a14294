package conformance

import (
	"bufio"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// rendezvous is a work-request stub whose claims return only once every claim
// of the batch has started: a batch served one call at a time would never get
// past the first.
type rendezvous struct {
	everything
	mu      sync.Mutex
	entered int
	all     chan struct{}
	want    int
}

func (r *rendezvous) Claim(args ClaimArgs) (Lease, error) {
	r.mu.Lock()
	r.entered++
	if r.entered == r.want {
		close(r.all)
	}
	r.mu.Unlock()
	select {
	case <-r.all:
	case <-time.After(5 * time.Second):
		return Lease{}, Indeterminate("the other calls of the batch never started")
	}
	if args.Holder == "mallory" {
		return Lease{}, Refuse(CodeNotFound, "no such request")
	}
	holder := args.Holder
	return Lease{Holder: &holder, Generation: 1}, nil
}

// listsNothing holds no request: its listing is nil, which the wire writes as [].
type listsNothing struct{ everything }

func (listsNothing) ListRequests(ListRequestsArgs) ([]WorkRequest, error) { return nil, nil }

func exchange(t *testing.T, impl Implementation, desc Description, lines ...string) []map[string]any {
	t.Helper()
	t.Setenv(StoreEnv, t.TempDir())
	var out strings.Builder
	if err := Serve(desc, impl, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	var replies []map[string]any
	scanner := bufio.NewScanner(strings.NewReader(out.String()))
	for scanner.Scan() {
		var reply map[string]any
		if err := json.Unmarshal(scanner.Bytes(), &reply); err != nil {
			t.Fatalf("reply is not JSON: %q", scanner.Text())
		}
		replies = append(replies, reply)
	}
	return replies
}

func TestTheLoopEchoesSeqAndAnswersEachForm(t *testing.T) {
	desc := fullDescription()
	desc.Capabilities = []Capability{CapWorkRequests}
	replies := exchange(t, listsNothing{}, desc,
		`{"protocol":1,"seq":1,"op":"get_request","args":{"request_id":"x"}}`,
		`{"protocol":1,"seq":2,"op":"handshake","args":{}}`,
		`{"protocol":1,"seq":3,"op":"advance_clock","args":{"delta_microseconds":2500000}}`,
		`{"protocol":1,"seq":4,"op":"get_task","args":{"task_id":"t"}}`,
		`not json`,
		`{"protocol":1,"seq":6,"op":"list_requests","args":{"environment_id":"e","principal":"p"}}`,
		`{"protocol":1,"seq":7,"op":"claim","args":{"request_id":"r","holder":"h","extra":1}}`,
	)
	if len(replies) != 7 {
		t.Fatalf("%d replies", len(replies))
	}
	if replies[0]["ok"] != false || replies[0]["seq"] != 1.0 {
		t.Errorf("a request before the handshake: %v", replies[0])
	}
	result := replies[1]["result"].(map[string]any)
	if result["protocol_version"] != 1.0 || result["description"].(map[string]any)["office"] != nil {
		t.Errorf("handshake: %v", replies[1])
	}
	if replies[2]["result"] != "2026-01-01T00:00:02.500000Z" {
		t.Errorf("advance_clock: %v", replies[2])
	}
	if replies[3]["not_supported"] != true || replies[3]["seq"] != 4.0 {
		t.Errorf("an operation of an undeclared capability: %v", replies[3])
	}
	if replies[4]["seq"] != 0.0 || replies[4]["ok"] != false {
		t.Errorf("garbage: %v", replies[4])
	}
	if list, ok := replies[5]["result"].([]any); !ok || len(list) != 0 {
		t.Errorf("an empty listing must be [], got %v", replies[5])
	}
	body := replies[6]["error"].(map[string]any)
	if body["code"] != "invalid_input" || body["definite"] != true {
		t.Errorf("an unknown argument: %v", replies[6])
	}
}

func TestRunConcurrentlyOverlapsItsCalls(t *testing.T) {
	const n = 8
	impl := &rendezvous{all: make(chan struct{}), want: n}
	desc := fullDescription()
	desc.Capabilities = []Capability{CapWorkRequests, CapConcurrency}
	calls := make([]string, n)
	for i := range calls {
		holder := "bob"
		if i == 0 {
			holder = "mallory"
		}
		calls[i] = `{"operation":"claim","arguments":{"request_id":"r","holder":"` + holder + `"}}`
	}
	replies := exchange(t, impl, desc,
		`{"protocol":1,"seq":1,"op":"handshake","args":{}}`,
		`{"protocol":1,"seq":2,"op":"run_concurrently","args":{"calls":[`+strings.Join(calls, ",")+`]}}`,
	)
	outcomes := replies[1]["result"].([]any)
	if len(outcomes) != n {
		t.Fatalf("%d outcomes", len(outcomes))
	}
	var latestStart, earliestEnd float64 = 0, 1e18
	for i, o := range outcomes {
		outcome := o.(map[string]any)
		if i == 0 {
			if outcome["ok"] != false || outcome["error"] != "not_found" || outcome["definite"] != true {
				t.Errorf("a refusal must be an outcome: %v", outcome)
			}
		} else if outcome["ok"] != true {
			t.Errorf("call %d: %v", i, outcome)
		}
		start, end := outcome["invoked_at_ns"].(float64), outcome["completed_at_ns"].(float64)
		if end < start {
			t.Errorf("call %d ended before it began", i)
		}
		if start > latestStart {
			latestStart = start
		}
		if end < earliestEnd {
			earliestEnd = end
		}
	}
	if latestStart > earliestEnd {
		t.Errorf("the calls did not all overlap: the last began at %v, the first ended at %v", latestStart, earliestEnd)
	}
}

func TestADescriptionThatDoesNotMatchIsRefused(t *testing.T) {
	type officeOnly struct{ everything }
	desc := Description{Name: "x", Version: "0", Capabilities: []Capability{CapOffice}}
	if _, err := newServer(desc, officeOnly{}); err == nil {
		t.Error("office declared without constants must be refused")
	}
	desc.Capabilities = []Capability{"teleport"}
	if _, err := newServer(desc, officeOnly{}); err == nil {
		t.Error("an unknown capability must be refused")
	}
}

func TestInstants(t *testing.T) {
	for _, bad := range []string{"2026-01-01T00:00:00", "2026-01-01T00:00:00.1234567Z", "yesterday"} {
		if _, err := ParseInstant(bad); err == nil {
			t.Errorf("%q must be refused", bad)
		}
	}
	got, err := ParseInstant("2026-01-01T01:00:00.5+01:00")
	if err != nil || FormatInstant(got) != "2026-01-01T00:00:00.500000Z" {
		t.Errorf("offset instant: %v %v", FormatInstant(got), err)
	}
}

func TestTheStoreMarkerTellsAFirstLaunchFromARestart(t *testing.T) {
	store := Store{Dir: t.TempDir()}
	fresh, err := store.Fresh()
	if err != nil || !fresh {
		t.Fatalf("an empty store directory must read as a first launch: %v %v", fresh, err)
	}
	if err := store.MarkInitialised(); err != nil {
		t.Fatal(err)
	}
	if fresh, err := store.Fresh(); err != nil || fresh {
		t.Fatalf("a marked store must read as a restart: %v %v", fresh, err)
	}
}

func TestTheStoreIsOpenedAtTheHandshakeAndOnlyOnce(t *testing.T) {
	opened := 0
	impl := &counting{opened: &opened}
	desc := Description{Name: "x", Version: "0", Capabilities: []Capability{}}
	exchange(t, impl, desc,
		`{"protocol":1,"seq":1,"op":"set_clock","args":{"instant":"2026-01-01T00:00:00.000000Z"}}`,
		`{"protocol":1,"seq":2,"op":"handshake","args":{}}`,
		`{"protocol":1,"seq":3,"op":"handshake","args":{}}`,
	)
	if opened != 1 {
		t.Errorf("Open was called %d times", opened)
	}
}

type counting struct{ opened *int }

func (c *counting) Open(Store, *Clock) error { *c.opened++; return nil }
