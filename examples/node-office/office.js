'use strict';
// Kandev Office, reduced to what the assignment-wake rate limit touches: tasks and their
// assignee mutation, the producers of `task_assigned` wakes, and the run queue's enqueue
// pipeline: duplicate lookup, then coalescing, then the per-task allowance, then the insert.

const { MICROS_PER_SECOND } = require('./instants');
const { Telemetry, VOCABULARY } = require('./telemetry');
const { emptyState } = require('./store');

// The capability's fixed values, stated once (AC-OFFICE-ASSIGN-RATE-002.6): the handshake
// reports these very constants, and the code below enforces them.
const ALLOWANCE = 5; // N: admitted agent-initiated assignment wakes per task per window
const WINDOW_SECONDS = 600; // W: the rolling window (t - W, t]
const COALESCE_WINDOW_SECONDS = 5; // a queued run this young absorbs a matching wake
const DEDUP_LOOKBACK_SECONDS = 86400; // a keyed wake seen this recently is a redelivery
if (!(ALLOWANCE >= 1)) throw new Error('an allowance of 0 would refuse every agent wake');

const TASK_ASSIGNED = 'task_assigned';
const AGENT_ACTOR = 'agent';
const NO_COALESCE_KEY_PREFIX = 'task_comment:'; // comment wakes never merge
const RUN_STATUSES = new Set(['queued', 'claimed', 'running', 'finished', 'failed', 'cancelled']);
const ACTIVE_SESSION = 'active';

// Every producer of task_assigned wakes. Only the assignee mutation knows who acted, so only
// its wakes carry an actor type (001.12); the others' dedup keys start with these prefixes.
// The task-created subscriber shares the mutation's prefix: when it redelivers the wake of
// the assignment that created the task, the dedup key recognises it as the same occurrence.
const ASSIGNEE_MUTATION = 'assignee_mutation';
const ACTORLESS_PRODUCERS = new Map([
  ['task_created_subscriber', TASK_ASSIGNED],
  ['onboarding', 'onboarding'],
  ['unstarted_task_recovery', 'unstarted_task_recovery'],
  ['workflow_auto_start', 'workflow_auto_start'],
]);
const PRODUCERS = [ASSIGNEE_MUTATION, ...ACTORLESS_PRODUCERS.keys()];

const START_INSTANT = Date.UTC(2026, 0, 1) * 1000; // the harness's start instant, in µs
const seconds = (n) => n * MICROS_PER_SECOND;

/** A typed refusal: the operation certainly did not happen (nothing was written). */
class Refusal extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

// ---------------------------------------------------------------------------------------
// Reading a payload. The gate, the coalescer and the count must read a payload the same
// way, so each run keeps what was read off its payload text beside the text itself.
// ---------------------------------------------------------------------------------------

/** What the pipeline needs from a payload text, which may be any text at all. */
function readPayload(text) {
  let parsed;
  try {
    parsed = JSON.parse(text); // strict JSON: NaN and Infinity are refused, as they should be
  } catch {
    parsed = undefined;
  }
  const isObject = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed);
  const field = (name) => (isObject && Object.hasOwn(parsed, name) ? parsed[name] : undefined);
  const nonEmptyString = (v) => (typeof v === 'string' && v !== '' ? v : '');
  return {
    isObject,
    taskKey: nonEmptyString(field('task_id')), // "" when the task cannot be determined
    actorType: typeof field('actor_type') === 'string' ? field('actor_type') : null,
    actingAgentId: nonEmptyString(field('actor_id')),
  };
}

/** Where a wake stands with respect to the allowance, checked in the spec's order:
 * reason, then actor type (exactly "agent", 001.1), then the task (002.3). */
function gateScope(wake) {
  const { facts } = wake;
  if (wake.reason !== TASK_ASSIGNED || !facts.isObject || facts.actorType !== AGENT_ACTOR) {
    return 'out_of_scope';
  }
  return facts.taskKey ? 'attributed' : 'unattributed';
}

function makeWake(agentId, reason, payload, dedupKey) {
  return { agentId, reason, payload, dedupKey, facts: readPayload(payload) };
}

// ---------------------------------------------------------------------------------------
// The Office service.
// ---------------------------------------------------------------------------------------

class Office {
  constructor(store) {
    this.store = store;
    this.state = store.load();
    this.forgetMemory();
  }

  /** Everything held in memory only: lost at a restart, emptied by a reset. */
  forgetMemory() {
    this.clock = START_INSTANT;
    this.telemetry = new Telemetry();
    this.warnings = [];
    this.events = [];
    this.interrupts = [];
    this.countReadFailureArmed = false;
  }

  /** Empty the store and the memory: indistinguishable from a fresh launch afterwards. */
  reset() {
    this.state = emptyState();
    this.store.save(this.state);
    this.forgetMemory();
  }

  /** Throw away memory the store does not back, after a write that may have half-happened. */
  reloadFromStore() {
    this.state = this.store.load();
  }

  commit() {
    this.store.save(this.state);
  }

  static describe() {
    return {
      allowance: ALLOWANCE,
      window_seconds: WINDOW_SECONDS,
      coalesce_window_seconds: COALESCE_WINDOW_SECONDS,
      dedup_lookback_seconds: DEDUP_LOOKBACK_SECONDS,
      producers: PRODUCERS,
      vocabulary: VOCABULARY,
    };
  }

  // -- setup -----------------------------------------------------------------------------

  createWorkspace({ workspace_id }) {
    requireId(workspace_id, 'workspace');
    if (this.state.workspaces.has(workspace_id)) {
      throw new Refusal('invalid_input', `workspace '${workspace_id}' already exists`);
    }
    this.state.workspaces.add(workspace_id);
    this.commit();
    return null;
  }

  createAgent({ workspace_id, agent_id, can_assign_tasks }) {
    requireId(workspace_id, 'workspace');
    requireId(agent_id, 'agent');
    this.requireWorkspace(workspace_id);
    if (this.state.agents.has(agent_id)) {
      throw new Refusal('invalid_input', `agent '${agent_id}' already exists`);
    }
    this.state.agents.set(agent_id, { workspace_id, can_assign_tasks: Boolean(can_assign_tasks) });
    this.commit();
    return null;
  }

  createTask({ workspace_id, task_id, assignee_agent_id }) {
    requireId(workspace_id, 'workspace');
    requireId(task_id, 'task');
    this.requireWorkspace(workspace_id);
    if (this.state.tasks.has(task_id)) {
      throw new Refusal('invalid_input', `task '${task_id}' already exists`);
    }
    const assignee = assignee_agent_id || '';
    if (assignee) this.requireAgent(assignee);
    const task = { workspace_id, assignee_agent_id: assignee, assignment_generation: 0 };
    this.state.tasks.set(task_id, task); // creating a task wakes nobody
    this.commit();
    return taskView(task_id, task);
  }

  openOfficeSession({ agent_id, task_id }) {
    this.requireAgent(agent_id);
    this.requireTask(task_id);
    this.state.officeSessions.push({ agent_id, task_id, state: ACTIVE_SESSION });
    this.commit();
    return null;
  }

  // -- the assignee mutation -------------------------------------------------------------

  /** Assign (or, with an empty assignee, unassign) a task, then wake the new assignee.
   * The mutation is committed before its wake is enqueued, so no fate of the wake (merged,
   * deduplicated, refused, failed) can undo it (001.7). `keyless` is the fault hook that
   * makes the generation unresolvable, so the wake goes out without a dedup key (001.8). */
  assignTask({ task_id, assignee_agent_id, acting_agent_id }, { keyless = false } = {}) {
    const task = this.requireTask(task_id);
    this.authorize(acting_agent_id);
    if (assignee_agent_id) this.requireAgent(assignee_agent_id);

    const previous = task.assignee_agent_id;
    task.assignee_agent_id = assignee_agent_id;
    task.assignment_generation += 1; // every assignment commits a newer generation
    const displaced = previous !== '' && previous !== assignee_agent_id;
    if (displaced) this.interruptSessions(previous, task_id);
    this.commit();

    // Published only once committed: an event must never announce a change that was lost.
    this.events.push({
      event_type: VOCABULARY.task_updated_event,
      task_id,
      fields: ['assignee_agent_id', 'assignment_generation'],
    });
    if (displaced) this.interrupts.push({ agent_id: previous, task_id });

    // An unassignment wakes nobody, so it is neither refused nor counted (001.9).
    let wake = null;
    if (assignee_agent_id) {
      // The key names the occurrence: this task, this assignee, this generation (RUN-DEDUP).
      const generation = task.assignment_generation;
      const key = keyless ? null : `${TASK_ASSIGNED}:${task_id}:${assignee_agent_id}:${generation}`;
      if (keyless) this.telemetry.keylessEnqueue(TASK_ASSIGNED, 'generation_unresolved');
      const payload = assignmentPayload(task_id, task, acting_agent_id);
      wake = this.enqueueSafely(makeWake(assignee_agent_id, TASK_ASSIGNED, payload, key));
    }
    return {
      task_id,
      assignee_agent_id,
      generation: task.assignment_generation,
      wake,
    };
  }

  /** The displaced assignee's running session is interrupted and its office rows move on. */
  interruptSessions(agentId, taskId) {
    for (const row of this.state.officeSessions) {
      if (row.agent_id === agentId && row.task_id === taskId && row.state === ACTIVE_SESSION) {
        row.state = VOCABULARY.interrupted_session_state;
      }
    }
  }

  /** A user or internal caller (empty id) may always assign; an agent needs the permission. */
  authorize(actingAgentId) {
    if (!actingAgentId) return;
    const agent = this.state.agents.get(actingAgentId);
    if (!agent || !agent.can_assign_tasks) {
      throw new Refusal('forbidden', `agent '${actingAgentId}' may not assign tasks`);
    }
  }

  // -- the other producers, and raw wakes ------------------------------------------------

  produceWake({ producer, task_id, agent_id }) {
    const prefix = ACTORLESS_PRODUCERS.get(producer);
    if (prefix === undefined) {
      throw new Refusal(
        'invalid_input',
        producer === ASSIGNEE_MUTATION
          ? 'the assignee mutation wakes only through assign_task'
          : `unknown producer '${producer}'`,
      );
    }
    const task = this.requireTask(task_id);
    this.requireAgent(agent_id);
    // No actor type: these producers act for nobody, so they stay outside the allowance.
    const payload = JSON.stringify({ task_id, workspace_id: task.workspace_id });
    const key = `${prefix}:${task_id}:${agent_id}:${task.assignment_generation}`;
    return this.enqueueSafely(makeWake(agent_id, TASK_ASSIGNED, payload, key));
  }

  enqueueWake({ agent_id, reason, payload, dedup_key }) {
    this.requireAgent(agent_id);
    if (typeof reason !== 'string' || !reason.trim()) {
      throw new Refusal('invalid_input', 'a wake needs a reason');
    }
    if (typeof payload !== 'string') throw new Refusal('invalid_input', 'payload must be text');
    if (dedup_key !== null && (typeof dedup_key !== 'string' || !dedup_key.trim())) {
      throw new Refusal('invalid_input', 'a dedup key must not be blank; send null for none');
    }
    return this.enqueueSafely(makeWake(agent_id, reason, payload, dedup_key));
  }

  // -- the enqueue pipeline --------------------------------------------------------------

  /** Enqueue, reporting an unexpected failure as the outcome `none` rather than an error:
   * the producer's own work (an assignment, say) is already committed and must stand. */
  enqueueSafely(wake) {
    try {
      return this.enqueue(wake);
    } catch (error) {
      process.stderr.write(`enqueue failed: ${error.stack || error}\n`);
      this.reloadFromStore();
      return { outcome: 'none', run_id: null };
    }
  }

  /** Decide a wake's fate. The order is the contract (001.5): a redelivery or a wake that
   * can merge is decided before the allowance, so it is neither refused nor counted. */
  enqueue(wake) {
    const now = this.clock;
    const duplicate = this.recentDuplicate(wake, now);
    if (duplicate) {
      this.telemetry.deduplicated(wake.reason, 'windowed');
      return { outcome: 'deduplicated', run_id: duplicate.run_id };
    }
    const merged = this.coalesce(wake, now);
    if (merged) {
      this.commit();
      return { outcome: 'coalesced', run_id: merged.run_id };
    }
    if (!this.allowanceAdmits(wake, now)) {
      return { outcome: 'rate_limited', run_id: null }; // nothing inserted, nothing merged
    }
    // The durable uniqueness of dedup keys, beyond the lookback: a key stored once is never
    // stored twice (a run from long ago, or one requested "later" after the clock went back).
    const holder =
      wake.dedupKey === null ? null : this.state.runs.find((r) => r.dedup_key === wake.dedupKey);
    if (holder) {
      this.telemetry.deduplicated(wake.reason, 'durable');
      return { outcome: 'deduplicated', run_id: holder.run_id };
    }
    const run = this.insertRun(wake, now);
    this.commit();
    return { outcome: 'queued', run_id: run.run_id };
  }

  /** Stage 1: the run carrying the wake's key, requested within (now - lookback, now]. */
  recentDuplicate(wake, now) {
    if (wake.dedupKey === null) return null;
    const since = now - seconds(DEDUP_LOOKBACK_SECONDS);
    return this.state.runs.find(
      (r) => r.dedup_key === wake.dedupKey && r.requested_at > since && r.requested_at <= now,
    );
  }

  /** Stage 2: merge into the newest still-queued run of the same agent, reason and task
   * requested within (now - 5 s, now]. The match ignores the actor type and the merge keeps
   * the newer payload, so a merge can move a run into or out of the allowance's count: the
   * spec's accepted "coalescing relabel". */
  coalesce(wake, now) {
    if (wake.dedupKey !== null && wake.dedupKey.startsWith(NO_COALESCE_KEY_PREFIX)) return null;
    const since = now - seconds(COALESCE_WINDOW_SECONDS);
    let target = null;
    for (const run of this.state.runs) {
      const matches =
        run.agent_id === wake.agentId &&
        run.reason === wake.reason &&
        run.task_key === wake.facts.taskKey &&
        run.status === 'queued' &&
        run.requested_at > since &&
        run.requested_at <= now;
      if (matches && (target === null || run.requested_at >= target.requested_at)) target = run;
    }
    if (target) {
      writePayload(target, wake);
      target.coalesced_count += 1;
    }
    return target;
  }

  /** Stage 3, the allowance. It keeps no state of its own (002.4): the count is read from
   * the stored runs every time. Out-of-scope wakes pass untouched and uncounted (001.1);
   * the gate fails open, and says so, when it cannot apply (002.2, 002.3). */
  allowanceAdmits(wake, now) {
    const scope = gateScope(wake);
    if (scope === 'out_of_scope') return true;
    const acting = wake.facts.actingAgentId;
    if (scope === 'unattributed') {
      // No task_id field in the log: it is by definition what could not be determined.
      this.warn(
        'task_unattributed',
        'assignment wake admitted unchecked: its payload names no task',
        acting ? { acting_agent_id: acting } : {},
      );
      return true;
    }
    const who = {
      task_id: wake.facts.taskKey,
      assignee_agent_profile_id: wake.agentId,
      acting_agent_id: acting,
    };
    let observed;
    try {
      observed = this.countAgentWakes(wake.facts.taskKey, now);
    } catch (error) {
      // No observed_count: the failed read did not produce one.
      this.warn(
        'count_read_failed',
        'assignment wake admitted unchecked: the allowance count could not be read',
        { ...who, error: String(error.message || error) },
      );
      return true;
    }
    if (observed < ALLOWANCE) return true; // an ordinary admission moves no counter (003.4)
    this.warn('allowance_exhausted', "assignment wake refused: the task's allowance is exhausted", {
      ...who,
      observed_count: observed,
    });
    return false;
  }

  /** The task's agent-initiated assignment runs requested in (now - W, now], whatever their
   * status: a finished or cancelled run was still admitted. Same-instant runs simply all
   * count (001.10): nothing here depends on order. */
  countAgentWakes(taskId, now) {
    if (this.countReadFailureArmed) {
      this.countReadFailureArmed = false; // the hook fails one read, once
      throw new Error('injected failure of the allowance count read');
    }
    const start = now - seconds(WINDOW_SECONDS);
    let count = 0;
    for (const run of this.state.runs) {
      if (
        run.task_key === taskId &&
        run.reason === TASK_ASSIGNED &&
        run.actor_type === AGENT_ACTOR &&
        run.requested_at > start && // exactly W old: outside (001.11)
        run.requested_at <= now
      ) {
        count += 1;
      }
    }
    return count;
  }

  /** Count under the reason and log a warning: a refusal or a degraded admission is never
   * silent (003.1, 003.3). Log fields use the protocol's names. */
  warn(reason, message, fields) {
    this.telemetry.rateLimited(reason);
    const entry = {
      message,
      fields: { reason: VOCABULARY.reasons[reason], ...fields, allowance: ALLOWANCE },
    };
    this.warnings.push(entry);
    process.stderr.write(`WARNING ${message} ${JSON.stringify(entry.fields)}\n`);
  }

  insertRun(wake, now) {
    const run = {
      run_id: String(this.state.nextRunId++),
      agent_id: wake.agentId,
      reason: wake.reason,
      payload: '',
      dedup_key: wake.dedupKey,
      requested_at: now,
      status: 'queued',
      coalesced_count: 0,
      task_key: '',
      actor_type: null,
    };
    writePayload(run, wake);
    this.state.runs.push(run);
    return run;
  }

  // -- runs --------------------------------------------------------------------------------

  setRunStatus({ run_id, status }) {
    if (!RUN_STATUSES.has(status)) {
      throw new Refusal('invalid_input', `unknown run status '${status}'`);
    }
    this.requireRun(run_id).status = status;
    this.commit();
    return null;
  }

  deleteRun({ run_id }) {
    const run = this.requireRun(run_id);
    this.state.runs = this.state.runs.filter((r) => r !== run);
    this.commit();
    return null;
  }

  failNextCountRead() {
    this.countReadFailureArmed = true;
    return null;
  }

  // -- observation -------------------------------------------------------------------------

  getTask({ task_id }) {
    return taskView(task_id, this.requireTask(task_id));
  }

  listRuns(formatInstant) {
    return this.state.runs.map((r) => ({
      run_id: r.run_id,
      agent_id: r.agent_id,
      reason: r.reason,
      payload: r.payload,
      dedup_key: r.dedup_key,
      requested_at: formatInstant(r.requested_at),
      status: r.status,
      coalesced_count: r.coalesced_count,
    }));
  }

  mutationEffects() {
    return {
      interrupts: this.interrupts,
      office_sessions: this.state.officeSessions,
      events: this.events,
    };
  }

  // -- lookups -----------------------------------------------------------------------------

  requireWorkspace(id) {
    if (!this.state.workspaces.has(id)) throw new Refusal('not_found', `unknown workspace '${id}'`);
  }

  requireAgent(id) {
    requireId(id, 'agent');
    if (!this.state.agents.has(id)) throw new Refusal('not_found', `unknown agent '${id}'`);
    return this.state.agents.get(id);
  }

  requireTask(id) {
    requireId(id, 'task');
    const task = this.state.tasks.get(id);
    if (!task) throw new Refusal('not_found', `unknown task '${id}'`);
    return task;
  }

  requireRun(id) {
    const run = this.state.runs.find((r) => r.run_id === id);
    if (!run) throw new Refusal('not_found', `unknown run '${id}'`);
    return run;
  }
}

/** The assignee mutation's wake. It carries the actor type on the wake itself (001.13), so
 * the gate classifies it without re-reading the mutation; an empty acting agent id is a user
 * or internal caller, classified "user" and so never limited (001.1). */
function assignmentPayload(taskId, task, actingAgentId) {
  return JSON.stringify({
    task_id: taskId,
    workspace_id: task.workspace_id,
    actor_type: actingAgentId ? AGENT_ACTOR : 'user',
    actor_id: actingAgentId,
  });
}

/** Store a wake's payload on a run together with what was read off it. */
function writePayload(run, wake) {
  run.payload = wake.payload;
  run.task_key = wake.facts.taskKey;
  run.actor_type = wake.facts.actorType;
}

function taskView(taskId, task) {
  return {
    task_id: taskId,
    workspace_id: task.workspace_id,
    assignee_agent_id: task.assignee_agent_id,
    assignment_generation: task.assignment_generation,
  };
}

function requireId(value, what) {
  if (typeof value !== 'string' || !value.trim()) {
    throw new Refusal('invalid_input', `${what} id must be a non-blank string`);
  }
}

module.exports = { Office, Refusal };
