'use strict';
// The operator telemetry surface: the run-deduplication counters and the assignment
// rate-limit counter on one page of Prometheus text (AC-OFFICE-ASSIGN-RATE-003.6).
// Counters live in memory, as a Prometheus client's do: a restart starts them from zero.
// No label ever holds a task, agent, workspace, session or run identifier (003.2), so the
// number of series cannot grow with traffic.

/** The names this implementation gives to what the spec leaves unnamed; declared in the
 * handshake as `description.office.vocabulary`. */
const VOCABULARY = {
  rate_limit_counter: 'office_assignment_rate_limit_total',
  reason_label: 'reason',
  reasons: {
    allowance_exhausted: 'allowance_exhausted',
    count_read_failed: 'count_read_failed',
    task_unattributed: 'task_unattributed',
  },
  dedup_counters: ['office_run_dedup_total', 'office_run_dedup_keyless_total'],
  task_updated_event: 'task.updated',
  interrupted_session_state: 'interrupted',
};

class Counter {
  constructor(name, help, labelNames) {
    Object.assign(this, { name, help, labelNames });
    this.series = new Map(); // rendered label set -> value
  }

  inc(labels) {
    const key = this.labelNames.map((n) => `${n}="${escapeLabel(labels[n])}"`).join(',');
    this.series.set(key, (this.series.get(key) || 0) + 1);
  }

  render() {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [labels, value] of this.series) lines.push(`${this.name}{${labels}} ${value}`);
    return lines.join('\n');
  }
}

function escapeLabel(value) {
  return String(value).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

class Telemetry {
  constructor() {
    const [dedupName, keylessName] = VOCABULARY.dedup_counters;
    this.dedup = new Counter(dedupName, 'Wakes suppressed as duplicates of an existing run.', [
      'reason',
      'kind',
    ]);
    this.keyless = new Counter(keylessName, 'Wakes enqueued without a dedup key.', [
      'reason',
      'cause',
    ]);
    this.rateLimit = new Counter(
      VOCABULARY.rate_limit_counter,
      'Assignment wakes refused, or admitted unchecked, by the per-task allowance.',
      [VOCABULARY.reason_label],
    );
  }

  /** A wake found to be a redelivery; `kind` says which check caught it. */
  deduplicated(wakeReason, kind) {
    this.dedup.inc({ reason: wakeReason, kind });
  }

  keylessEnqueue(wakeReason, cause) {
    this.keyless.inc({ reason: wakeReason, cause });
  }

  /** `reason` is one of the three canonical reasons; the label carries the declared value. */
  rateLimited(reason) {
    this.rateLimit.inc({ [VOCABULARY.reason_label]: VOCABULARY.reasons[reason] });
  }

  render() {
    return [this.dedup, this.keyless, this.rateLimit].map((c) => c.render()).join('\n') + '\n';
  }
}

module.exports = { Telemetry, VOCABULARY };
