package conformance

// The drift test: every Go message type of this package against the JSON
// Schema the kit ships (conformance/schemas/protocol-v1.schema.json, or the
// file CONFORMANCE_SCHEMA names). It fails when a key, a required key, a
// nullable key, a type or an enumeration differs, and when the schema has an
// operation the dispatch table lacks (or the reverse).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

type schemaNode = map[string]any

func loadSchema(t *testing.T) (schemaNode, map[string]schemaNode) {
	t.Helper()
	path := os.Getenv("CONFORMANCE_SCHEMA")
	if path == "" {
		path = filepath.Join("..", "..", "conformance", "schemas", "protocol-v1.schema.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the schema cannot be read (set CONFORMANCE_SCHEMA): %v", err)
	}
	var root schemaNode
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	defs := map[string]schemaNode{}
	for name, def := range root["$defs"].(map[string]any) {
		defs[name] = def.(map[string]any)
	}
	return root, defs
}

// goName maps a schema definition onto the Go type of this package carrying it.
var goName = map[string]string{"Implementation": "ImplementationName"}

// schemaName is the reverse of goName.
func schemaName(goType string) string {
	for def, name := range goName {
		if name == goType {
			return def
		}
	}
	return goType
}

// arriving are optional keys Go already writes (only when set) that a schema
// of an earlier commit may lack: `readings` was being added to the schema when
// this package was written. Present in the schema, they are compared as usual.
var arriving = map[string]bool{"Description.readings": true}

// messageTypes are the Go types that mirror an object definition of the schema.
var messageTypes = []any{
	ImplementationName{}, ReasonLabels{}, OfficeVocabulary{}, OfficeConstants{}, WorkRequestLimits{},
	Description{}, HandshakeResult{}, ErrorBody{}, ErrorReply{}, NotSupportedReply{}, NoArgs{},
	SetClockArgs{}, AdvanceClockArgs{}, WorkspaceArgs{}, CreateAgentArgs{}, CreateTaskArgs{},
	AgentTaskArgs{}, AssignTaskArgs{}, ProduceWakeArgs{}, EnqueueWakeArgs{}, SetRunStatusArgs{},
	RunArgs{}, TaskArgs{}, CreateEnvironmentArgs{}, CreateCampaignArgs{}, Permissions{},
	CreateSessionArgs{}, DelegateArgs{}, ClaimArgs{}, HeartbeatArgs{}, PublishArgs{},
	RecordUsageArgs{}, RequestArgs{}, ListRequestsArgs{}, CampaignArgs{}, ConcurrentCall{},
	RunConcurrentlyArgs{}, TaskView{}, WakeResult{}, AssignmentResult{}, Run{}, WarningLog{},
	SessionInterrupt{}, OfficeSession{}, PublishedEvent{}, MutationEffects{}, Lease{},
	WorkRequest{}, Completion{}, BudgetSnapshot{}, SessionView{}, CallOutcome{},
}

type jsonField struct {
	name      string
	omitEmpty bool
	typ       reflect.Type
}

func jsonFields(t reflect.Type) []jsonField {
	var fields []jsonField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || tag == "" {
			continue
		}
		parts := strings.Split(tag, ",")
		omit := false
		for _, p := range parts[1:] {
			omit = omit || p == "omitempty"
		}
		fields = append(fields, jsonField{name: parts[0], omitEmpty: omit, typ: f.Type})
	}
	return fields
}

// split separates a property's schema into its non-null alternative and whether null is allowed.
func split(prop schemaNode) (schemaNode, bool) {
	if prop["type"] == "null" {
		return nil, true
	}
	alternatives, ok := prop["anyOf"].([]any)
	if !ok {
		return prop, false
	}
	var other schemaNode
	nullable := false
	for _, a := range alternatives {
		alt := a.(map[string]any)
		if alt["type"] == "null" {
			nullable = true
		} else {
			other = alt
		}
	}
	return other, nullable
}

func resolve(node schemaNode, defs map[string]schemaNode) (schemaNode, string) {
	if ref, ok := node["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		return defs[name], name
	}
	return node, ""
}

var (
	instantType = reflect.TypeOf(Instant{})
	rawType     = reflect.TypeOf(json.RawMessage{})
)

// sameType reports, as an error message, how Go type g differs from schema node n ("" when alike).
func sameType(g reflect.Type, n schemaNode, defs map[string]schemaNode, where string) string {
	if n == nil || len(n) == 0 || (len(n) == 1 && n["title"] != nil) {
		if g.Kind() == reflect.Interface || g == rawType {
			return ""
		}
		return where + ": the schema allows anything, Go has " + g.String()
	}
	if g.Kind() == reflect.Ptr {
		g = g.Elem()
	}
	resolved, ref := resolve(n, defs)
	kind, _ := resolved["type"].(string)
	switch {
	case g == instantType:
		if kind != "string" || resolved["pattern"] == nil {
			return where + ": an instant must be a string with the instant pattern"
		}
	case g == rawType:
		if kind != "object" {
			return where + ": raw JSON stands only for an object"
		}
	case g.Kind() == reflect.String:
		if kind != "string" {
			return where + ": Go string, schema " + kind
		}
	case g.Kind() == reflect.Int || g.Kind() == reflect.Int64:
		if kind != "integer" {
			return where + ": Go integer, schema " + kind
		}
	case g.Kind() == reflect.Float64:
		if kind != "number" {
			return where + ": Go number, schema " + kind
		}
	case g.Kind() == reflect.Bool:
		if kind != "boolean" {
			return where + ": Go boolean, schema " + kind
		}
	case g.Kind() == reflect.Slice:
		if kind != "array" {
			return where + ": Go list, schema " + kind
		}
		items, _ := resolved["items"].(map[string]any)
		return sameType(g.Elem(), items, defs, where+"[]")
	case g.Kind() == reflect.Map:
		if kind != "object" {
			return where + ": Go map, schema " + kind
		}
	case g.Kind() == reflect.Struct:
		if ref == "" || schemaName(g.Name()) != ref {
			return where + ": Go " + g.Name() + ", schema " + ref
		}
	case g.Kind() == reflect.Interface:
		return ""
	default:
		return where + ": unexpected Go type " + g.String()
	}
	return ""
}

func compareObject(t *testing.T, g reflect.Type, def schemaNode, defs map[string]schemaNode, name string) {
	t.Helper()
	props, _ := def["properties"].(map[string]any)
	required := map[string]bool{}
	for _, r := range asList(def["required"]) {
		required[r.(string)] = true
	}
	seen := map[string]bool{}
	for _, f := range jsonFields(g) {
		seen[f.name] = true
		raw, ok := props[f.name]
		if !ok && f.omitEmpty && arriving[name+"."+f.name] {
			t.Logf("%s.%s: not in this schema yet (an optional key being added)", name, f.name)
			continue
		}
		if !ok {
			t.Errorf("%s.%s: Go has the key, the schema does not", name, f.name)
			continue
		}
		prop := raw.(map[string]any)
		if required[f.name] && f.omitEmpty {
			t.Errorf("%s.%s: required by the schema, but Go may omit it", name, f.name)
		}
		other, nullable := split(prop)
		if f.typ.Kind() == reflect.Ptr && !f.omitEmpty && !nullable {
			t.Errorf("%s.%s: Go may write null, the schema does not allow it", name, f.name)
		}
		if f.typ.Kind() != reflect.Ptr && f.typ.Kind() != reflect.Interface && nullable && required[f.name] {
			t.Errorf("%s.%s: the schema allows null, Go cannot carry it", name, f.name)
		}
		if msg := sameType(f.typ, other, defs, name+"."+f.name); msg != "" {
			t.Error(msg)
		}
	}
	for key := range props {
		if !seen[key] {
			t.Errorf("%s.%s: the schema has the key, Go does not", name, key)
		}
	}
}

func asList(v any) []any {
	list, _ := v.([]any)
	return list
}

func TestMessageTypesMatchTheSchema(t *testing.T) {
	_, defs := loadSchema(t)
	for _, v := range messageTypes {
		g := reflect.TypeOf(v)
		name := schemaName(g.Name())
		def, ok := defs[name]
		if !ok {
			t.Errorf("%s: no such definition in the schema", name)
			continue
		}
		compareObject(t, g, def, defs, name)
	}
}

func sortedStrings[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	sort.Strings(out)
	return out
}

func enumOf(t *testing.T, node schemaNode) []string {
	t.Helper()
	var out []string
	for _, v := range asList(node["enum"]) {
		out = append(out, v.(string))
	}
	sort.Strings(out)
	return out
}

func TestEnumerationsMatchTheSchema(t *testing.T) {
	_, defs := loadSchema(t)
	props := func(def, key string) schemaNode {
		return defs[def]["properties"].(map[string]any)[key].(map[string]any)
	}
	cases := []struct {
		name   string
		schema []string
		golang []string
	}{
		{"Capability", enumOf(t, defs["Capability"]), sortedStrings(AllCapabilities)},
		{"ErrorCode", enumOf(t, defs["ErrorCode"]), sortedStrings(AllErrorCodes)},
		{"Outcome", enumOf(t, defs["Outcome"]), sortedStrings(AllOutcomes)},
		{"DelegationKind", enumOf(t, defs["DelegationKind"]), sortedStrings(AllDelegationKinds)},
		{"RequestState", enumOf(t, defs["RequestState"]), sortedStrings(AllRequestStates)},
		{"run status", enumOf(t, props("SetRunStatusArgs", "status")), sortedStrings(AllRunStatuses)},
		{"concurrent operation", enumOf(t, props("ConcurrentCall", "operation")), sortedStrings(ConcurrentOperations)},
	}
	for _, c := range cases {
		if !reflect.DeepEqual(c.schema, c.golang) {
			t.Errorf("%s: schema %v, Go %v", c.name, c.schema, c.golang)
		}
	}
}

// everything implements every interface, so that the dispatch table is complete:
// the capabilities through their not-supported stand-ins, so that a new operation
// needs no line here.
type everything struct {
	UnimplementedOffice
	UnimplementedWorkRequests
}

func (everything) Open(Store, *Clock) error { return nil }
func (everything) Reset() error             { return nil }
func (everything) FailNextCountRead() error { return nil }
func (everything) AssignTaskKeyless(AssignTaskArgs) (AssignmentResult, error) {
	return AssignmentResult{}, nil
}

func fullDescription() Description {
	return Description{
		Name: "everything", Version: "0", Capabilities: AllCapabilities,
		Office:       &OfficeConstants{Allowance: 5, WindowSeconds: 600, CoalesceWindowSeconds: 5, DedupLookbackSeconds: 86400},
		WorkRequests: &WorkRequestLimits{MaxDepth: 3, MaxChildrenPerSession: 4, LeaseSeconds: 30},
	}
}

func camel(op string) string {
	var b strings.Builder
	for _, part := range strings.Split(op, "_") {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

func TestOperationsMatchTheSchema(t *testing.T) {
	root, defs := loadSchema(t)
	s, err := newServer(fullDescription(), everything{})
	if err != nil {
		t.Fatal(err)
	}
	var schemaOps []string
	for _, alt := range asList(root["oneOf"]) {
		request, _ := resolve(alt.(map[string]any), defs)
		op := request["properties"].(map[string]any)["op"].(map[string]any)["const"].(string)
		schemaOps = append(schemaOps, op)
	}
	sort.Strings(schemaOps)
	if got := s.operations(); !reflect.DeepEqual(got, schemaOps) {
		t.Fatalf("operations: schema %v, Go %v", schemaOps, got)
	}
	for _, op := range schemaOps {
		entry := s.ops[op]
		request := defs[camel(op)+"Request"]
		args := request["properties"].(map[string]any)["args"].(map[string]any)
		argsDef, argsName := resolve(args, defs)
		if entry.args.Kind() != reflect.Struct || schemaName(entry.args.Name()) != argsName {
			t.Errorf("%s: arguments are %s in the schema, %s in Go", op, argsName, entry.args)
		} else {
			compareObject(t, entry.args, argsDef, defs, op+" args")
		}
		ok := defs[camel(op)+"Ok"]
		if ok == nil {
			t.Errorf("%s: no %sOk in the schema", op, camel(op))
			continue
		}
		result := ok["properties"].(map[string]any)["result"].(map[string]any)
		if entry.result == nil {
			if result["type"] != "null" {
				t.Errorf("%s: the schema's result is not null, Go's is", op)
			}
			continue
		}
		if msg := sameType(entry.result, result, defs, op+" result"); msg != "" {
			t.Error(msg)
		}
	}
}
