Feature: REQ-OFFICE-ASSIGN-RATE-002 The allowance fails safe and behaves predictably
  The allowance is a cost guard, so it must never turn a hiccup into lost wakes.
  When the count cannot be read, the wake goes through and the fact is counted and
  logged. When the task cannot be told from the wake, it goes through and is counted
  as unattributed. The allowance keeps no state of its own: it is always recounted
  from the stored runs, so restarts, crashes and deleted runs need no repair.
  Redelivering one keyed occurrence never costs twice. The numbers are fixed: 5 wakes
  per 10 minutes.

  Warning logs are read through the protocol's field names (task_id,
  assignee_agent_profile_id, acting_agent_id, observed_count, allowance, error,
  reason); a warning may carry more fields, and other warnings may be logged beside it.

  Background:
    Given the clock reads "2026-03-02T09:00:00Z"
    And the allowance is N = 5 agent wakes per task in any rolling 10 minutes
    And a workspace "acme"
    And agents "ada" and "bob" in workspace "acme" who may assign tasks
    And a task "T-100" in workspace "acme" with no assignee

  # ---------------------------------------------------------------------------
  # 002.1 Concurrent evaluations may over-admit, but no wake is refused before the allowance
  # is reached. The race scenarios evaluate wakes truly at once, where the implementation
  # declares it can, and judge the recorded history; the serial ones pin "never refused
  # early" and that a window already holding more than the allowance keeps refusing.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-002.1 @interpretation:OF-5 @clause:over-admission-bounded
  @clause:never-refuse-early
  Scenario: Agent wakes evaluated at once never refuse early and over-admit by no more than their number
    Given the implementation evaluates operations concurrently
    When in each of 3 rounds, 8 agent wakes at once meet a fresh task with one place left in its allowance
    And in each of 3 rounds, 8 agent wakes at once meet one task whose allowance is already used up
    Then no wake was refused before the allowance was reached, and no window admitted more than 8 beyond it

  @AC-OFFICE-ASSIGN-RATE-002.1 @interpretation:OF-5 @clause:over-admission-bounded
  @clause:never-refuse-early
  Scenario: Agent wakes from several processes on one store, one killed in each batch, never refuse early and over-admit by no more than the processes
    Given the implementation runs as 3 processes on one store
    And one process is killed in the middle of each batch, and a new one takes its place
    When in each of 2 rounds, 12 agent wakes at once meet a fresh task with one place left in its allowance
    And in each of 2 rounds, 12 agent wakes at once meet one task whose allowance is already used up
    Then no wake was refused before the allowance was reached, and no window admitted more than 3 beyond it

  @AC-OFFICE-ASSIGN-RATE-002.1 @clause:never-refuse-early
  Scenario: No agent wake is refused while the window holds fewer than the allowance
    Given a task "T-200" in workspace "acme" with no assignee
    # N - 1 wakes for T-100 and then N - 1 for T-200, one a minute, must not eat into each other
    When agent "ada" assigns task "T-100" to "ada" N - 1 times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And agent "bob" assigns task "T-200" to "bob" N - 1 times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
    When 1 minute passes
    And agent "bob" assigns task "T-200" to "bob"
    Then the wake's outcome is "queued"

  @AC-OFFICE-ASSIGN-RATE-002.1 @clause:never-refuse-early
  Scenario: A task is admitted exactly as many agent wakes as the reported allowance, then refused
    When agent "ada" assigns task "T-100" to "ada" as many times as the allowance, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-002.1 @clause:never-refuse-early
  Scenario: A window already holding more than five counted runs is tolerated and keeps refusing
    # five agent wakes at 09:00 .. 09:04, then a user run at 09:05 that an agent wake merges
    # into, which may make it count (the accepted coalescing relabel)
    Given agent "ada" has assigned task "T-100" to "ada" 5 times, 1 minute apart, each wake queued
    When 1 minute passes
    And a user assigns task "T-100" to "bob"
    Then the wake's outcome is "queued"
    When 2 seconds pass
    And agent "ada" assigns task "T-100" to "bob"
    Then the wake's outcome is "coalesced"
    When 58 seconds pass
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    # 09:00 has left the window at 09:10: four or five counted runs remain
    When the clock reads "2026-03-02T09:10:00Z"
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued" or "rate_limited"
    When the clock reads "2026-03-02T09:11:30Z"
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"

  # ---------------------------------------------------------------------------
  # 002.2 A count that cannot be read lets the wake through, counted and logged.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-002.2 @clause:fail-open @clause:counted @clause:logged
  @clause:no-observed-count @interpretation:OF-8
  Scenario: When the count cannot be read the wake is admitted, counted and logged without a count
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And the next count read fails
    And agent "bob" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
    And the rate-limit counters moved by that wake by: count_read_failed +1
    And a warning logged by that wake names the degraded admission with:
      | field                     | value             |
      | task_id                   | T-100             |
      | assignee_agent_profile_id | ada               |
      | acting_agent_id           | bob               |
      | allowance                 | N                 |
    And that warning has a non-empty "error" field
    And that warning has no "observed_count" field
    # the failure was a one-off: the next read works and the allowance binds again
    When 1 minute passes
    And agent "bob" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-002.2 @clause:fail-open @clause:counted @clause:logged
  Scenario: A raw agent wake that names no acting agent, whose count cannot be read, is admitted, counted and logged
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And the next count read fails
    And a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent"}
    Then the wake's outcome is "queued"
    And the rate-limit counters moved by that wake by: count_read_failed +1
    And a warning logged by that wake names the degraded admission with:
      | field                     | value |
      | task_id                   | T-100 |
      | assignee_agent_profile_id | bob   |
      | allowance                 | N     |
    And that warning has a non-empty "error" field

  # Whether a read inside wakes evaluated at once meets a failure armed before them is the
  # implementation's to say; each one that does is admitted, counted and logged, and the
  # others find the allowance used up.
  @AC-OFFICE-ASSIGN-RATE-002.2 @clause:fail-open @clause:counted @clause:logged
  Scenario: Of wakes evaluated at once after a count read was armed to fail, one that meets it is admitted, counted and logged
    Given the implementation evaluates operations concurrently
    And agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And the next count read fails
    And agent "bob" assigns task "T-100" to "ada" and "bob" at once
    Then each of those wakes that met the failed count read was admitted, counted and logged, and each other was refused, counted and logged

  @AC-OFFICE-ASSIGN-RATE-002.2 @clause:fail-open @clause:counted @clause:logged
  Scenario: A keyless wake whose count cannot be read is admitted, counted and logged too
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And the next count read fails
    And agent "bob" assigns task "T-100" to "ada" with its generation unresolvable
    Then the wake's outcome is "queued"
    And the rate-limit counters moved by that wake by: count_read_failed +1
    And a warning logged by that wake names the degraded admission with:
      | field                     | value             |
      | task_id                   | T-100             |
      | assignee_agent_profile_id | ada               |
      | acting_agent_id           | bob               |
      | allowance                 | N                 |
    And that warning has a non-empty "error" field

  @AC-OFFICE-ASSIGN-RATE-002.2 @clause:fail-open
  Scenario: A count read armed to fail does not turn an out-of-scope wake into a degraded admission
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And the next count read fails
    And a user assigns task "T-100" to "bob"
    Then the wake's outcome is "queued"
    And no rate-limit counter moved by that wake

  # ---------------------------------------------------------------------------
  # 002.3 An agent wake whose task cannot be told is let through and counted as unattributed.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-002.3 @clause:admitted-unattributed @clause:shapes @clause:logged
  @clause:no-task-id @interpretation:OF-8
  Scenario Outline: An agent wake naming no usable task is admitted and counted as unattributed: <task id shape>
    When a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: <payload>
    Then the wake's outcome is "queued"
    And the rate-limit counters moved by that wake by: task_unattributed +1
    And a warning logged by that wake names the unattributed admission with:
      | field           | value             |
      | reason          | task_unattributed |
      | allowance       | N                 |
      | acting_agent_id | ada               |
    And that warning has no "task_id" field

    Examples:
      | task id shape   | payload                                                                              |
      | absent          | {"workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}                   |
      | null            | {"task_id": null, "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}  |
      | empty string    | {"task_id": "", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}    |
      | number          | {"task_id": 100, "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}   |
      | boolean         | {"task_id": true, "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}  |
      | list            | {"task_id": ["T-100"], "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"} |
      | object          | {"task_id": {"id": "T-100"}, "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"} |

  @AC-OFFICE-ASSIGN-RATE-002.3 @clause:logged @clause:no-task-id @interpretation:OF-8
  Scenario: An unattributed wake that names no acting agent is logged without one
    When a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"task_id": null, "workspace_id": "acme", "actor_type": "agent", "actor_id": ""}
    Then the wake's outcome is "queued"
    And the rate-limit counters moved by that wake by: task_unattributed +1
    And a warning logged by that wake names the unattributed admission with:
      | field     | value             |
      | reason    | task_unattributed |
      | allowance | N                 |
    And that warning has no "task_id" field

  @AC-OFFICE-ASSIGN-RATE-002.3 @clause:shapes
  Scenario: A wake carrying the number 42 as its task never joins the allowance of task "42"
    Given a task "42" in workspace "acme" with no assignee
    And agent "ada" has assigned task "42" to "ada" N - 1 times, 1 minute apart, each wake queued
    When 1 minute passes
    And a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"task_id": 42, "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}
    Then the wake's outcome is "queued"
    And the rate-limit counters moved by that wake by: task_unattributed +1
    # the stored numeric 42 is not the string "42": task "42" still has one place left
    When 1 minute passes
    And agent "ada" assigns task "42" to "ada"
    Then the wake's outcome is "queued"
    When 1 minute passes
    And agent "ada" assigns task "42" to "ada"
    Then the wake's outcome is "rate_limited"

  # A task id made of spaces is a string, and not an empty one: it names a task (whether such a
  # task could be created is another matter), so its wakes share that task's allowance.
  @AC-OFFICE-ASSIGN-RATE-002.3 @clause:shapes
  Scenario: A wake whose task id is only spaces names a task, so its wakes are limited, not unattributed
    When a "task_assigned" wake for agent "bob" is enqueued without a key, N times, 1 minute apart, with payload: {"task_id": " ", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}
    Then each of those wakes was "queued"
    And no rate-limit counter moved by those wakes
    When 1 minute passes
    And a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"task_id": " ", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-002.3 @clause:only-in-scope
  Scenario Outline: A wake outside the allowance's scope is never counted as unattributed: <case>
    When a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: <payload>
    Then the wake's outcome is "queued"
    And no rate-limit counter moved by that wake

    Examples:
      | case                                 | payload                                   |
      | neither an actor type nor a task     | {"workspace_id": "acme"}                  |
      | a user wake naming no task           | {"workspace_id": "acme", "actor_type": "user", "actor_id": ""} |

  @AC-OFFICE-ASSIGN-RATE-002.3 @interpretation:OF-4 @clause:only-in-scope
  Scenario: A payload that does not parse is never counted as unattributed
    When a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"task_id": null, "actor_type": "agent"
    Then the wake's outcome is "queued"
    And no rate-limit counter moved by that wake

  # ---------------------------------------------------------------------------
  # 002.4 The allowance is recounted from stored runs every time; it keeps nothing itself.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-002.4 @clause:stateless @clause:restart
  Scenario: A restart neither resets nor stretches the allowance
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When the implementation restarts
    Then every run stored before the restart still reads as it did
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    When the implementation restarts
    And the clock reads "2026-03-02T09:10:00Z"
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"

  @AC-OFFICE-ASSIGN-RATE-002.4 @clause:stateless @clause:restart
  Scenario Outline: A restart over runs a worker had taken leaves them as they were: <status>
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When every run in the queue is marked "<status>"
    And the implementation restarts
    Then every run stored before the restart still reads as it did
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

    Examples:
      | status  |
      | claimed |
      | running |

  @AC-OFFICE-ASSIGN-RATE-002.4 @clause:stateless @clause:deleted-row
  Scenario: Deleting a run gives its place back at once
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When the newest run is deleted
    Then every other run stored before the deletion still reads as it did
    # past the coalescing window, well within any cache a count might keep
    When 10 seconds pass
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-002.4 @interpretation:OF-7 @clause:crash
  Scenario: A crash in the middle of evaluating wakes at once leaves the allowance consistent
    Given the implementation evaluates operations concurrently
    And agent "ada" has assigned task "T-100" to "ada" 3 times, 1 minute apart, each wake queued
    When 1 minute passes
    And the implementation crashes while 12 agent wakes for task "T-100" are being evaluated at once
    And the implementation restarts
    Then the runs acknowledged before the crash are all still stored, and no dedup key is stored twice
    And the generation of task "T-100" is no lower than before the crash
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake was admitted exactly if fewer than N agent runs of task "T-100" lay in its window

  # ---------------------------------------------------------------------------
  # 002.5 Redelivering one keyed occurrence never costs the allowance twice.
  # (The keyless case, which does cost again, is pinned under 001.8.)
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-002.5 @clause:keyed-once
  Scenario: Redelivering a keyed assignment wake does not use the allowance again
    Given agent "ada" has assigned task "T-100" to "ada" N - 1 times, 1 minute apart, each wake queued
    When 1 minute passes
    And the newest run's wake is delivered again, 3 times, 1 minute apart
    Then each of those wakes was "deduplicated"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-002.5 @clause:keyed-once
  Scenario: Redelivering an older keyed wake after the allowance is used up is reported as a duplicate, not refused
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And the oldest run's wake is delivered again
    Then the wake's outcome is "deduplicated"
    And no rate-limit counter moved by that wake

  # ---------------------------------------------------------------------------
  # 002.6 The allowance is 5 and the window 10 minutes, fixed and stated once.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-002.6 @clause:values @clause:at-least-one
  Scenario: The implementation reports an allowance of 5 wakes per 10 minutes
    Then the implementation reports an allowance of N wakes per 10 minutes

  @AC-OFFICE-ASSIGN-RATE-002.6 @clause:values
  Scenario: The allowance and window the implementation reports are the ones it enforces
    Then the implementation reports an allowance of N wakes per 10 minutes
    When agent "ada" assigns task "T-100" to "ada" as many times as the allowance, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    When the clock reaches one reported window after the oldest run's request instant
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
