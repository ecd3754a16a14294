package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	conformance "conformancekit/sdk"
)

// The operator telemetry surface: the run-deduplication counters and the
// assignment rate-limit counter on one page of Prometheus text. Counters live
// in memory, as a Prometheus client's do: a restart starts them at zero. No
// label ever carries a task, agent, workspace, session or run identifier.

var vocabulary = conformance.OfficeVocabulary{
	RateLimitCounter: "office_assignment_rate_limit_total",
	ReasonLabel:      "reason",
	Reasons: conformance.ReasonLabels{
		AllowanceExhausted: "allowance_exhausted",
		CountReadFailed:    "count_read_failed",
		TaskUnattributed:   "task_unattributed",
	},
	DedupCounters:           conformance.Strings{"office_run_dedup_total", "office_run_dedup_keyless_total"},
	TaskUpdatedEvent:        "task.updated",
	InterruptedSessionState: strPtr("interrupted"),
}

type counter struct {
	name, help string
	labels     []string
	series     map[string]float64
}

func newCounter(name, help string, labels ...string) *counter {
	return &counter{name: name, help: help, labels: labels, series: map[string]float64{}}
}

func (c *counter) inc(values ...string) {
	parts := make([]string, len(c.labels))
	for i, label := range c.labels {
		escaped := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(values[i])
		parts[i] = fmt.Sprintf(`%s="%s"`, label, escaped)
	}
	c.series[strings.Join(parts, ",")]++
}

func (c *counter) render(b *strings.Builder) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s counter\n", c.name, c.help, c.name)
	keys := make([]string, 0, len(c.series))
	for k := range c.series {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "%s{%s} %g\n", c.name, k, c.series[k])
	}
}

type telemetry struct {
	mu                        sync.Mutex
	dedup, keyless, rateLimit *counter
}

func newTelemetry() *telemetry {
	return &telemetry{
		dedup:   newCounter(vocabulary.DedupCounters[0], "Wakes suppressed as duplicates of an existing run.", "reason", "kind", "queue"),
		keyless: newCounter(vocabulary.DedupCounters[1], "Wakes enqueued without a dedup key.", "reason", "cause"),
		rateLimit: newCounter(vocabulary.RateLimitCounter,
			"Assignment wakes refused, or admitted unchecked, by the per-task allowance.", vocabulary.ReasonLabel),
	}
}

func (t *telemetry) deduplicated(reason, kind string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dedup.inc(reason, kind, "office")
}

func (t *telemetry) keylessEnqueue(reason, cause string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.keyless.inc(reason, cause)
}

// rateLimited counts under one of the three canonical reasons, by its declared label value.
func (t *telemetry) rateLimited(label string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rateLimit.inc(label)
}

func (t *telemetry) render() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	t.dedup.render(&b)
	t.keyless.render(&b)
	t.rateLimit.render(&b)
	return b.String()
}

func strPtr(s string) *string { return &s }
