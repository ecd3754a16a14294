#!/usr/bin/env node
'use strict';
// The conformance kit's wire protocol v1 in front of the Office example (office.js):
// one JSON request per line on stdin, one JSON reply per line on stdout. Stdout carries
// replies only; anything else (warnings, stack traces) goes to stderr, which the harness
// quotes when something goes wrong. See docs/protocol.md for the contract.

const readline = require('node:readline');
const { Office, Refusal } = require('./office');
const { JsonFileStore } = require('./store');
const { parseInstant, formatInstant } = require('./instants');

const NAME = 'node-office-example';
const VERSION = '0.1.0';
const CENTURY_MICROS = 100 * 366 * 24 * 3600 * 1_000_000;

const CAPABILITIES = [
  'office',
  'hook:count_read_failure',
  'hook:keyless_assignment',
  'restart', // everything durable is in CONFORMANCE_STORE before each reply
  'concurrency', // batches are served one call at a time: see runConcurrently
  'reset',
  'prelaunch', // the store is first touched at the handshake, never before
];

/** Created at the handshake, not at launch: a prelaunched spare must not touch the store
 * before it is handed one (capability `prelaunch`). */
let office = null;

// ---------------------------------------------------------------------------------------
// Operations: each takes the request's args and returns the reply's result, or throws a
// Refusal for a typed error. Anything else thrown is a bug, reported as `internal`.
// ---------------------------------------------------------------------------------------

const OPERATIONS = {
  handshake: () => {
    if (office === null) office = new Office(new JsonFileStore(storeDirectory()));
    return {
      protocol_version: 1,
      implementation: { name: NAME, version: VERSION },
      description: {
        name: NAME,
        version: VERSION,
        capabilities: CAPABILITIES,
        office: Office.describe(),
        work_requests: null,
      },
    };
  },
  reset: () => {
    office.reset();
    return null;
  },

  // The harness owns the clock; the Office reads no other time.
  set_clock: ({ instant }) => {
    const micros = parseInstant(instant);
    if (micros === null) throw new Refusal('invalid_input', `not an instant: ${instant}`);
    office.clock = micros;
    return null;
  },
  advance_clock: ({ delta_microseconds: delta }) => {
    if (!Number.isSafeInteger(delta) || delta < 0 || delta > CENTURY_MICROS) {
      throw new Refusal('invalid_input', 'delta_microseconds must be 0 to one century');
    }
    office.clock += delta;
    return formatInstant(office.clock);
  },

  create_workspace: (args) => office.createWorkspace(args),
  create_agent: (args) => office.createAgent(args),
  create_task: (args) => office.createTask(args),
  open_office_session: (args) => office.openOfficeSession(args),
  assign_task: (args) => office.assignTask(args),
  assign_task_keyless: (args) => office.assignTask(args, { keyless: true }),
  produce_wake: (args) => office.produceWake(args),
  enqueue_wake: (args) => office.enqueueWake(args),
  set_run_status: (args) => office.setRunStatus(args),
  delete_run: (args) => office.deleteRun(args),
  fail_next_count_read: () => office.failNextCountRead(),

  get_task: (args) => office.getTask(args),
  list_runs: () => office.listRuns(formatInstant),
  telemetry: () => office.telemetry.render(),
  warning_logs: () => office.warnings,
  mutation_effects: () => office.mutationEffects(),

  run_concurrently: ({ calls }) => runConcurrently(calls),
};

/** Serve a batch by running its calls one after another, each to completion. Node runs this
 * adapter on one thread over one file, so a batch is evaluated serially: a legitimate (if
 * unexciting) interleaving, which never over-admits. The times are honest, so the harness
 * sees no overlap and judges the batch accordingly. */
function runConcurrently(calls) {
  const origin = process.hrtime.bigint();
  const sinceOrigin = () => Number(process.hrtime.bigint() - origin);
  return calls.map(({ operation, arguments: args }) => {
    const invoked = sinceOrigin();
    const reply = perform(operation, args);
    const outcome = {
      ok: reply.ok === true,
      result: reply.ok === true ? reply.result : null,
      error: null,
      definite: true,
      message: '',
      invoked_at_ns: invoked,
      completed_at_ns: sinceOrigin(),
    };
    if (reply.not_supported) {
      Object.assign(outcome, { error: 'not_supported', message: reply.message });
    } else if (reply.error) {
      const { code, definite, message } = reply.error;
      Object.assign(outcome, { error: code, definite, message });
    }
    return outcome;
  });
}

// ---------------------------------------------------------------------------------------
// The envelope.
// ---------------------------------------------------------------------------------------

/** The reply body (without seq) for one operation. */
function perform(op, args) {
  const operation = Object.hasOwn(OPERATIONS, op) ? OPERATIONS[op] : null;
  if (operation === null) return { not_supported: true, message: `${op} is not offered` };
  if (office === null && op !== 'handshake') {
    return failure('invalid_input', 'the first request must be handshake', true);
  }
  try {
    return { ok: true, result: operation(args || {}) };
  } catch (error) {
    if (error instanceof Refusal) return failure(error.code, error.message, true);
    // A bug or an I/O failure: it may have written part of its work, so say so, and drop
    // whatever memory holds beyond what the store holds.
    process.stderr.write(`${op} failed: ${error.stack || error}\n`);
    try {
      office.reloadFromStore();
    } catch (reloadError) {
      process.stderr.write(`reload failed: ${reloadError}\n`);
    }
    return failure('internal', `${error.name}: ${error.message}`, false);
  }
}

function failure(code, message, definite) {
  return { ok: false, error: { code, definite, message } };
}

function answer(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    return { seq: 0, ...failure('invalid_input', 'a request line must be a JSON object', true) };
  }
  const readable = request !== null && Number.isSafeInteger(request.seq) && request.seq > 0;
  const seq = readable ? request.seq : 0;
  if (seq === 0 || request.protocol !== 1 || typeof request.op !== 'string') {
    return { seq, ...failure('invalid_input', 'not a protocol v1 request', true) };
  }
  return { seq, ...perform(request.op, request.args) };
}

function storeDirectory() {
  const directory = process.env.CONFORMANCE_STORE;
  if (!directory) throw new Error('CONFORMANCE_STORE is not set');
  return directory;
}

function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    if (!line.trim()) return;
    // Each operation runs to completion (and is on disk) before its reply is written; writes
    // to a pipe are synchronous in Node on Linux, so the reply is out when this returns.
    process.stdout.write(JSON.stringify(answer(line)) + '\n');
  });
  lines.on('close', () => process.exit(0)); // the harness ends a kept process by closing stdin
}

main();
