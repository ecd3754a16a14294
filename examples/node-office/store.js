'use strict';
// The durable store: one JSON document in the directory CONFORMANCE_STORE names.
//
// The harness SIGKILLs the process at every restart and at the end of a scenario, with no
// warning, so every change is written out before its reply is sent, and written atomically:
// the whole document goes to a temporary file that is then renamed over the old one. A kill
// at any moment leaves either the old document or the new one, never half of each.
//
// Not fsync'ed: the data in the kernel's page cache survives the death of this process, which
// is all the harness can do to it. A real system guarding against power loss would fsync the
// file and its directory before renaming and replying.

const fs = require('node:fs');
const path = require('node:path');

const FILE_NAME = 'office-store.json';
const TEMP_NAME = 'office-store.json.tmp';

/** An empty store: what a fresh scenario starts from. Keyed collections are Maps, so that an
 * identifier such as "__proto__" is just a key. */
function emptyState() {
  return {
    workspaces: new Set(),
    agents: new Map(), // agent id -> { workspace_id, can_assign_tasks }
    tasks: new Map(), // task id -> { workspace_id, assignee_agent_id, assignment_generation }
    runs: [], // in insertion order; see office.js for a run's fields
    nextRunId: 1, // never reused, even after a run is deleted
    officeSessions: [], // { agent_id, task_id, state }
  };
}

class JsonFileStore {
  constructor(directory) {
    this.file = path.join(directory, FILE_NAME);
    this.temp = path.join(directory, TEMP_NAME);
    this.directory = directory;
  }

  /** The stored state; an empty one when nothing was ever written (a new scenario). */
  load() {
    let text;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (error) {
      if (error.code === 'ENOENT') return emptyState();
      throw error;
    }
    const doc = JSON.parse(text);
    return {
      workspaces: new Set(doc.workspaces),
      agents: new Map(doc.agents),
      tasks: new Map(doc.tasks),
      runs: doc.runs,
      nextRunId: doc.nextRunId,
      officeSessions: doc.officeSessions,
    };
  }

  /** Replace the stored state with `state`, atomically. */
  save(state) {
    const doc = {
      workspaces: [...state.workspaces],
      agents: [...state.agents],
      tasks: [...state.tasks],
      runs: state.runs,
      nextRunId: state.nextRunId,
      officeSessions: state.officeSessions,
    };
    fs.mkdirSync(this.directory, { recursive: true });
    fs.writeFileSync(this.temp, JSON.stringify(doc));
    fs.renameSync(this.temp, this.file);
  }
}

module.exports = { JsonFileStore, emptyState };
