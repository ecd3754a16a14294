package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime/debug"
	"sort"
	"sync"
	"time"
)

// maxLine is the longest request line read (the harness's own limit).
const maxLine = 16 << 20

// Main serves protocol v1 on stdin and stdout for impl, described by desc, and
// exits: 0 when stdin closes, 2 when desc does not match impl. Call it from
// main. Anything the program writes to os.Stdout afterwards goes to stderr, so
// that stdout carries replies only.
func Main(desc Description, impl Implementation) {
	replies := os.Stdout
	os.Stdout = os.Stderr
	if err := Serve(desc, impl, os.Stdin, replies); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// Serve answers the requests read from in on out until in reaches end of file.
// It returns an error only when desc and impl disagree, before reading anything,
// or when out cannot be written.
func Serve(desc Description, impl Implementation, in io.Reader, out io.Writer) error {
	s, err := newServer(desc, impl)
	if err != nil {
		return err
	}
	reader := bufio.NewReaderSize(in, 1<<16)
	writer := bufio.NewWriter(out)
	for {
		line, readErr := readLine(reader)
		if len(bytes.TrimSpace(line)) > 0 {
			reply := s.answer(line)
			encoded, err := json.Marshal(reply)
			if err != nil {
				encoded, _ = json.Marshal(ErrorReply{Seq: replySeq(reply), Ok: false, Error: ErrorBody{
					Code: CodeInternal, Definite: false, Message: "the reply could not be encoded: " + err.Error(),
				}})
			}
			if _, err := writer.Write(append(encoded, '\n')); err != nil {
				return err
			}
			if err := writer.Flush(); err != nil {
				return err
			}
		}
		if readErr != nil {
			return nil
		}
	}
}

func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) <= maxLine {
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, err
	}
}

func replySeq(reply any) int64 {
	switch r := reply.(type) {
	case OkReply:
		return r.Seq
	case ErrorReply:
		return r.Seq
	case NotSupportedReply:
		return r.Seq
	}
	return 0
}

// operation is one entry of the dispatch table.
type operation struct {
	capability Capability // "" for the clock and the handshake
	call       func(raw json.RawMessage) (any, error)
	args       reflect.Type // the Go type its arguments decode into
	result     reflect.Type // the Go type of its result; nil for a null result
}

type server struct {
	desc       Description
	impl       Implementation
	declared   map[Capability]bool
	clock      *Clock
	handshaken bool
	ops        map[string]operation
}

// errNotOffered marks an operation behind a capability that is not declared.
var errNotOffered = errors.New("not offered")

func newServer(desc Description, impl Implementation) (*server, error) {
	s := &server{desc: desc, impl: impl, declared: map[Capability]bool{}, clock: NewClock()}
	known := map[Capability]bool{}
	for _, c := range AllCapabilities {
		known[c] = true
	}
	for _, c := range desc.Capabilities {
		if !known[c] {
			return nil, fmt.Errorf("unknown capability %q", c)
		}
		s.declared[c] = true
	}
	office, isOffice := impl.(Office)
	workRequests, isWorkRequests := impl.(WorkRequests)
	resetter, isResetter := impl.(Resetter)
	countHook, isCountHook := impl.(CountReadFailureHook)
	keylessHook, isKeylessHook := impl.(KeylessAssignmentHook)
	needs := []struct {
		capability Capability
		implements bool
		what       string
	}{
		{CapOffice, isOffice, "the Office interface"},
		{CapWorkRequests, isWorkRequests, "the WorkRequests interface"},
		{CapReset, isResetter, "the Resetter interface"},
		{CapHookCountReadFailure, isCountHook, "the CountReadFailureHook interface"},
		{CapHookKeylessAssign, isKeylessHook, "the KeylessAssignmentHook interface"},
	}
	for _, n := range needs {
		if s.declared[n.capability] && !n.implements {
			return nil, fmt.Errorf("capability %q is declared, but the implementation lacks %s", n.capability, n.what)
		}
	}
	if s.declared[CapOffice] && desc.Office == nil {
		return nil, errors.New("capability office is declared without its constants (Description.Office)")
	}
	if s.declared[CapWorkRequests] && desc.WorkRequests == nil {
		return nil, errors.New("capability work_requests is declared without its limits (Description.WorkRequests)")
	}
	if !s.declared[CapOffice] {
		desc.Office = nil
	}
	if !s.declared[CapWorkRequests] {
		desc.WorkRequests = nil
	}
	s.desc = desc

	s.ops = map[string]operation{
		"handshake":        {call: s.handshake, args: typeOf[NoArgs](), result: typeOf[HandshakeResult]()},
		"set_clock":        {call: s.setClock, args: typeOf[SetClockArgs]()},
		"advance_clock":    {call: s.advanceClock, args: typeOf[AdvanceClockArgs](), result: typeOf[Instant]()},
		"run_concurrently": {call: s.runConcurrently, args: typeOf[RunConcurrentlyArgs](), result: typeOf[[]CallOutcome]()},
	}
	if isResetter {
		s.add(CapReset, "reset", noArgs[struct{}](func() (any, error) {
			if err := resetter.Reset(); err != nil {
				return nil, err
			}
			s.clock.Set(StartInstant)
			return nil, nil
		}))
	}
	s.ops["run_concurrently"] = operation{capability: CapConcurrency, call: s.runConcurrently,
		args: typeOf[RunConcurrentlyArgs](), result: typeOf[[]CallOutcome]()}
	if isOffice {
		addOffice(s, office)
	}
	if isCountHook {
		addCountReadFailureHook(s, countHook)
	}
	if isKeylessHook {
		addKeylessAssignmentHook(s, keylessHook)
	}
	if isWorkRequests {
		addWorkRequests(s, workRequests)
	}
	return s, nil
}

func (s *server) add(c Capability, name string, op operation) {
	op.capability = c
	s.ops[name] = op
}

func typeOf[T any]() reflect.Type { return reflect.TypeOf((*T)(nil)).Elem() }

// decode reads an argument object strictly: unknown keys and wrong types are
// invalid input.
func decode(raw json.RawMessage, into any) error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage("{}")
	}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(into); err != nil {
		return Refuse(CodeInvalidInput, "malformed arguments: %v", err)
	}
	return nil
}

func with[A any, R any](f func(A) (R, error)) operation {
	return operation{args: typeOf[A](), result: typeOf[R](), call: func(raw json.RawMessage) (any, error) {
		var args A
		if err := decode(raw, &args); err != nil {
			return nil, err
		}
		result, err := f(args)
		if err != nil {
			return nil, err
		}
		return result, nil
	}}
}

func withList[A any, R any](f func(A) ([]R, error)) operation {
	return operation{args: typeOf[A](), result: typeOf[[]R](), call: func(raw json.RawMessage) (any, error) {
		var args A
		if err := decode(raw, &args); err != nil {
			return nil, err
		}
		result, err := f(args)
		if err != nil {
			return nil, err
		}
		if result == nil {
			result = []R{}
		}
		return result, nil
	}}
}

func unit[A any](f func(A) error) operation {
	return operation{args: typeOf[A](), call: func(raw json.RawMessage) (any, error) {
		var args A
		if err := decode(raw, &args); err != nil {
			return nil, err
		}
		return nil, f(args)
	}}
}

func listing[R any](f func() ([]R, error)) operation {
	op := noArgs[[]R](func() (any, error) {
		result, err := f()
		if err != nil {
			return nil, err
		}
		if result == nil {
			result = []R{}
		}
		return result, nil
	})
	return op
}

// noArgs is an operation without arguments whose result is of type R (use
// struct{} for a null result).
func noArgs[R any](f func() (any, error)) operation {
	op := operation{args: typeOf[NoArgs](), result: typeOf[R](), call: func(raw json.RawMessage) (any, error) {
		var args NoArgs
		if err := decode(raw, &args); err != nil {
			return nil, err
		}
		return f()
	}}
	if op.result == typeOf[struct{}]() {
		op.result = nil
	}
	return op
}

func (s *server) handshake(raw json.RawMessage) (any, error) {
	var args NoArgs
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	if !s.handshaken {
		store, err := StoreFromEnv()
		if err != nil {
			return nil, Refuse(CodeInternal, "%v", err)
		}
		if err := s.impl.Open(store, s.clock); err != nil {
			return nil, err
		}
		s.handshaken = true
	}
	capabilities := append([]Capability{}, s.desc.Capabilities...)
	return HandshakeResult{
		ProtocolVersion: ProtocolVersion,
		Implementation:  ImplementationName{Name: s.desc.Name, Version: s.desc.Version},
		Description: Description{
			Name: s.desc.Name, Version: s.desc.Version, Capabilities: capabilities,
			Office: s.desc.Office, WorkRequests: s.desc.WorkRequests, Readings: s.desc.Readings,
		},
	}, nil
}

func (s *server) setClock(raw json.RawMessage) (any, error) {
	var args SetClockArgs
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	if args.Instant.IsZero() {
		return nil, Refuse(CodeInvalidInput, "set_clock needs an instant")
	}
	s.clock.Set(args.Instant.Time)
	return nil, nil
}

func (s *server) advanceClock(raw json.RawMessage) (any, error) {
	var args AdvanceClockArgs
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	if args.DeltaMicroseconds < 0 || args.DeltaMicroseconds > MaxAdvanceMicroseconds {
		return nil, Refuse(CodeInvalidInput, "delta_microseconds must be 0 to one century")
	}
	return FormatInstant(s.clock.Advance(time.Duration(args.DeltaMicroseconds) * time.Microsecond)), nil
}

// perform runs one operation; notSupported is true when it is not offered.
func (s *server) perform(op string, raw json.RawMessage) (result any, notSupported bool, err error) {
	entry, known := s.ops[op]
	if !known || (entry.capability != "" && !s.declared[entry.capability]) {
		return nil, true, errNotOffered
	}
	if !s.handshaken && op != "handshake" {
		return nil, false, Refuse(CodeInvalidInput, "the first request must be handshake")
	}
	defer func() {
		if recovered := recover(); recovered != nil {
			fmt.Fprintf(os.Stderr, "%s panicked: %v\n%s", op, recovered, debug.Stack())
			result, notSupported = nil, false
			err = &Error{Code: CodeInternal, Definite: false, Message: fmt.Sprintf("%s panicked: %v", op, recovered)}
		}
	}()
	result, err = entry.call(raw)
	if errors.Is(err, ErrNotSupported) {
		return nil, true, err
	}
	return result, false, err
}

func (s *server) answer(line []byte) any {
	var request struct {
		Protocol *int            `json:"protocol"`
		Seq      *int64          `json:"seq"`
		Op       *string         `json:"op"`
		Args     json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(line, &request); err != nil {
		return ErrorReply{Seq: 0, Error: ErrorBody{Code: CodeInvalidInput, Definite: true, Message: "a request line must be a JSON object"}}
	}
	if request.Seq == nil || *request.Seq < 1 {
		return ErrorReply{Seq: 0, Error: ErrorBody{Code: CodeInvalidInput, Definite: true, Message: "the request has no readable seq"}}
	}
	seq := *request.Seq
	if request.Protocol == nil || *request.Protocol != ProtocolVersion || request.Op == nil {
		return ErrorReply{Seq: seq, Error: ErrorBody{Code: CodeInvalidInput, Definite: true, Message: "not a protocol v1 request"}}
	}
	result, notSupported, err := s.perform(*request.Op, request.Args)
	if notSupported {
		return NotSupportedReply{Seq: seq, NotSupported: true, Message: *request.Op + " is not offered"}
	}
	if err != nil {
		return ErrorReply{Seq: seq, Ok: false, Error: asError(err)}
	}
	return OkReply{Seq: seq, Ok: true, Result: nilSliceAsEmpty(result)}
}

func nilSliceAsEmpty(v any) any {
	if v == nil {
		return nil
	}
	value := reflect.ValueOf(v)
	if value.Kind() == reflect.Slice && value.IsNil() {
		return []any{}
	}
	return v
}

// runConcurrently starts every call of the batch at once, each on a goroutine
// of its own, and reports when each began and ended on one monotonic clock
// whose origin is the start of the batch. A refusal is an outcome, not an
// error reply.
func (s *server) runConcurrently(raw json.RawMessage) (any, error) {
	var args RunConcurrentlyArgs
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	allowed := map[string]bool{}
	for _, op := range ConcurrentOperations {
		allowed[op] = true
	}
	for _, call := range args.Calls {
		if !allowed[call.Operation] {
			return nil, Refuse(CodeInvalidInput, "%q cannot be part of a concurrent batch", call.Operation)
		}
	}
	outcomes := make([]CallOutcome, len(args.Calls))
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	origin := time.Now()
	ready.Add(len(args.Calls))
	done.Add(len(args.Calls))
	for i := range args.Calls {
		go func(i int) {
			defer done.Done()
			call := args.Calls[i]
			ready.Done()
			<-start
			invoked := time.Since(origin).Nanoseconds()
			result, notSupported, err := s.perform(call.Operation, call.Arguments)
			completed := time.Since(origin).Nanoseconds()
			outcome := CallOutcome{Ok: true, Result: nilSliceAsEmpty(result), Definite: true, InvokedAtNs: invoked, CompletedAtNs: completed}
			switch {
			case notSupported:
				code := CodeNotSupported
				outcome = CallOutcome{Error: &code, Definite: true, Message: call.Operation + " is not offered", InvokedAtNs: invoked, CompletedAtNs: completed}
			case err != nil:
				body := asError(err)
				outcome = CallOutcome{Error: &body.Code, Definite: body.Definite, Message: body.Message, InvokedAtNs: invoked, CompletedAtNs: completed}
			}
			outcomes[i] = outcome
		}(i)
	}
	ready.Wait()
	close(start)
	done.Wait()
	return outcomes, nil
}

// Operations lists the operations this server answers (for tests and tools).
func (s *server) operations() []string {
	names := make([]string, 0, len(s.ops))
	for name := range s.ops {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
