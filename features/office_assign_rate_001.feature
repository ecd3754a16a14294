Feature: REQ-OFFICE-ASSIGN-RATE-001 Each task has an allowance for wakes that agents cause by assigning it
  An agent allowed to assign tasks can re-assign a task again and again, and every
  assignment wakes the assignee with a brand-new run. To keep that from running away,
  each task may admit at most 5 wakes caused by agents within any rolling 10 minutes.
  A wake counts as caused by an agent only when its payload says actor type "agent";
  people, internal callers and the producers that carry no actor are never limited.
  The allowance is checked after duplicate detection and after coalescing, just before
  a new run would be inserted. A refused wake inserts nothing and merges into nothing,
  and the assignment itself still happens in full.

  How to read these scenarios: a Given step that says "each wake queued" checks that
  every wake it made was admitted, so no later step rests on a setup nobody verified.
  Counters and warning logs are read before every action, so "by that wake" means
  what the last action changed. Tags: one criterion per scenario; `@clause:<name>`
  names the clauses of that criterion the scenario checks (see `conformance criteria`).
  Names the spec leaves open (the counter, its reason label, the event of the task
  update) are the ones the implementation declares in its handshake.

  N is the allowance the Background states; a count written in it ("N + 1 times", "wake
  N + 1 of that series") follows it. Clock notes: every scenario starts at 09:00:00 UTC.
  "N times, 1 minute apart" makes the first assignment at the current instant and leaves
  the clock at the last one.

  Background:
    Given the clock reads "2026-03-02T09:00:00Z"
    And the allowance is N = 5 agent wakes per task in any rolling 10 minutes
    And a workspace "acme"
    And agents "ada" and "bob" in workspace "acme" who may assign tasks
    And a task "T-100" in workspace "acme" with no assignee

  # ---------------------------------------------------------------------------
  # 001.1 Only wakes whose actor type is exactly "agent" are limited.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.1 @clause:others-admitted @clause:others-no-counter
  Scenario: Assignments made by a user are never refused and do not use up the task's allowance
    Given agent "ada" has assigned task "T-100" to "ada" N - 1 times, 1 minute apart, each wake queued
    When 1 minute passes
    And a user assigns task "T-100" to "bob" 3 times, 1 minute apart
    Then each of those wakes was "queued"
    And no rate-limit counter moved by those wakes
    # N - 1 agent wakes and 3 user wakes are now within 10 minutes: the Nth agent wake still fits.
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "bob"
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.1 @clause:internal-caller-is-user
  Scenario: An internal caller with an empty acting agent id counts as a user and is admitted after the allowance is used up
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "bob"
    Then the wake's outcome is "rate_limited"
    When 1 minute passes
    And an internal caller with an empty acting agent id assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
    And the payload of the wake's run does not say actor type agent
    And no rate-limit counter moved by that wake

  @AC-OFFICE-ASSIGN-RATE-001.1 @clause:agent-only @clause:others-admitted @clause:others-no-counter
  Scenario Outline: Only the exact actor type "agent" brings a wake under the allowance: <case>
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: <payload>
    Then the wake's outcome is "<outcome>"
    And the rate-limit counters moved by that wake by: <counter moves>

    Examples:
      | case                                  | payload                                                                                   | outcome      | counter moves          |
      | actor type agent, the limited shape   | {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}   | rate_limited | allowance_exhausted +1 |
      | actor type user                       | {"task_id": "T-100", "workspace_id": "acme", "actor_type": "user", "actor_id": ""}       | queued       | none                   |
      | actor type Agent with a capital A     | {"task_id": "T-100", "workspace_id": "acme", "actor_type": "Agent", "actor_id": "ada"}   | queued       | none                   |
      | actor type agent padded with a space  | {"task_id": "T-100", "workspace_id": "acme", "actor_type": " agent", "actor_id": "ada"}  | queued       | none                   |
      | empty actor type                      | {"task_id": "T-100", "workspace_id": "acme", "actor_type": "", "actor_id": "ada"}        | queued       | none                   |
      | no actor type at all                  | {"task_id": "T-100", "workspace_id": "acme"}                                              | queued       | none                   |
      | null actor type                       | {"task_id": "T-100", "workspace_id": "acme", "actor_type": null, "actor_id": "ada"}      | queued       | none                   |
      | numeric actor type                    | {"task_id": "T-100", "workspace_id": "acme", "actor_type": 1, "actor_id": "ada"}         | queued       | none                   |

  # A payload that is not a JSON object cannot say actor type agent (interpretation OF-4).
  @AC-OFFICE-ASSIGN-RATE-001.1 @interpretation:OF-4 @clause:others-admitted
  Scenario Outline: A payload that is not a JSON object is out of scope: <case>
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: <payload>
    Then the wake's outcome is "queued"
    And no rate-limit counter moved by that wake

    Examples:
      | case                                  | payload                                                                                   |
      | payload that does not parse           | {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent"                       |
      | payload that is a list, not an object | [{"task_id": "T-100", "actor_type": "agent"}]                                             |

  @AC-OFFICE-ASSIGN-RATE-001.1 @clause:others-consume-nothing
  Scenario Outline: Out-of-scope wakes leave the whole allowance to agent wakes: <case>
    When a "task_assigned" wake for agent "bob" is enqueued without a key, N times, 1 minute apart, with payload: <payload>
    Then each of those wakes was "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" N times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

    Examples:
      | case                      | payload                                                                                 |
      | no actor type at all      | {"task_id": "T-100", "workspace_id": "acme"}                                            |
      | actor type user           | {"task_id": "T-100", "workspace_id": "acme", "actor_type": "user", "actor_id": ""}     |
      | actor type Agent          | {"task_id": "T-100", "workspace_id": "acme", "actor_type": "Agent", "actor_id": "ada"} |
      | null actor type           | {"task_id": "T-100", "workspace_id": "acme", "actor_type": null, "actor_id": "ada"}    |

  @AC-OFFICE-ASSIGN-RATE-001.1 @clause:others-consume-nothing @clause:absent-is-normal
  Scenario: Wakes from every actorless producer leave the whole allowance to agent wakes
    When every producer but the assignee mutation emits a wake for task "T-100" to "bob", 1 minute apart
    Then each of those wakes was "queued"
    And no rate-limit counter moved by those wakes
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" N times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.1 @clause:others-consume-nothing
  Scenario: A user's assignments in between leave the whole allowance to agent wakes
    Given a user has assigned task "T-100" to "bob" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" N times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.1 @clause:others-admitted @clause:others-no-counter
  Scenario: A wake with another reason is not limited even when it says actor type agent
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And a "task_comment" wake for agent "bob" is enqueued without a key, with payload: {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}
    Then the wake's outcome is "queued"
    And no rate-limit counter moved by that wake

  @AC-OFFICE-ASSIGN-RATE-001.1 @clause:others-no-counter
  Scenario: Wakes that name no task do not make a later out-of-scope wake countable
    # Five in-scope agent wakes whose task is the empty string are admitted (unattributed).
    # An out-of-scope wake that names no task afterwards is still queued: it never reaches a count.
    When a "task_assigned" wake for agent "bob" is enqueued without a key, N times, 1 minute apart, with payload: {"task_id": "", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}
    Then each of those wakes was "queued"
    When 1 minute passes
    And a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"workspace_id": "acme", "actor_type": "user", "actor_id": ""}
    Then the wake's outcome is "queued"
    And no rate-limit counter moved by that wake

  # Every odd wake is followed by the agent wakes that must still find the whole allowance:
  # a count reading stored payloads as text, with JSON functions that fail on a malformed one,
  # or over every reason, tells itself apart only in what comes after.
  @AC-OFFICE-ASSIGN-RATE-001.1 @clause:others-consume-nothing
  Scenario Outline: After an odd wake the whole allowance is still there, then exhausted: <case>
    When a "<reason>" wake for agent "bob" is enqueued without a key, with payload: <payload>
    And 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" N times, 1 minute apart
    Then each of those wakes was "queued"
    And no rate-limit counter moved by those wakes
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "bob"
    Then the wake's outcome is "rate_limited"
    And the rate-limit counters moved by that wake by: allowance_exhausted +1

    Examples:
      | case                                | reason         | payload                                                                                 |
      | a payload that does not parse       | task_assigned  | {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent"                     |
      | a list, not an object               | task_assigned  | [{"task_id": "T-100", "actor_type": "agent"}]                                           |
      | a Python dict, not JSON             | task_assigned  | {'task_id': 'T-100', 'actor_type': 'agent'}                                             |
      | another reason stamped agent        | task_comment   | {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"} |
      | a reason close to task_assigned     | TASK_ASSIGNED  | {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"} |
      | actor type agent with a trailing space | task_assigned | {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent ", "actor_id": "ada"} |
      | a task id that is a list            | task_assigned  | {"task_id": ["T-100"], "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"} |
      | no task id                          | task_assigned  | {"workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}                      |

  # A bare NaN is no JSON, yet some decoders read it as a number (interpretation OF-9): the
  # wake is then an agent wake of its task. Either way an implementation reads it one way at
  # its gate and in every later count: admitted as out of scope and counted later, or gated as
  # an agent wake and never counted, fits neither reading.
  @AC-OFFICE-ASSIGN-RATE-001.1 @interpretation:OF-9 @clause:others-admitted
  @clause:others-consume-nothing
  Scenario: A payload with a bare NaN is read one way at the gate and in the count
    When a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"task_id": "T-100", "actor_type": "agent", "weight": NaN}
    Then no rate-limit counter moved by that wake
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" as many times as the allowance, 1 minute apart
    And 1 minute passes
    And a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"task_id": "T-100", "actor_type": "agent", "weight": NaN}
    Then the bare NaN was read one way at the gate and in the count

  # ---------------------------------------------------------------------------
  # 001.2 At most N agent wakes per task in any rolling 10 minutes (serial evaluation).
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.2 @clause:serial-bound
  Scenario: Five agent wakes for a task are admitted and the sixth within ten minutes is refused
    When agent "ada" assigns task "T-100" to "ada" N times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    And the run queue is exactly as it was before that wake

  @AC-OFFICE-ASSIGN-RATE-001.2 @clause:serial-bound
  Scenario: A steady stream of one agent wake a minute is admitted five at a time
    When agent "ada" assigns task "T-100" to "ada" 20 times, 1 minute apart
    Then wakes 1 to 5 of that series were "queued"
    And wakes 6 to 10 of that series were "rate_limited"
    And wakes 11 to 15 of that series were "queued"
    And wakes 16 to 20 of that series were "rate_limited"
    And no rolling window of 10 minutes holds more than 5 agent wakes for task "T-100"

  @AC-OFFICE-ASSIGN-RATE-001.2 @clause:serial-bound
  Scenario Outline: Runs count against the allowance whatever has become of them: <status>
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When every run in the queue is marked "<status>"
    And 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

    Examples:
      | status    |
      | claimed   |
      | running   |
      | finished  |
      | failed    |
      | cancelled |

  # ---------------------------------------------------------------------------
  # 001.3 The allowance belongs to the task, whoever is assigned and whoever assigns.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.3 @clause:any-assignee
  Scenario: Alternating the assignee between two agents does not earn a second allowance
    When agent "ada" assigns task "T-100" in turn to "bob" and "ada", N + 1 times, 1 minute apart
    Then wakes 1 to N of that series were "queued"
    And wake N + 1 of that series was "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.3 @clause:any-assignee
  Scenario: Two agents taking turns to assign one task share its single allowance
    When agents "ada" and "bob" in turn assign task "T-100" to "bob", N + 1 times, 1 minute apart
    Then wakes 1 to N of that series were "queued"
    And wake N + 1 of that series was "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.3 @clause:per-task
  Scenario: Another task keeps an allowance of its own
    Given a task "T-200" in workspace "acme" with no assignee
    And agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And agent "ada" assigns task "T-200" to "ada"
    Then the wake's outcome is "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.3 @clause:per-task
  Scenario: A task whose id extends another's keeps an allowance of its own
    # T-100 is a prefix of T-1000: a count matching task ids by prefix mixes them.
    Given a task "T-1000" in workspace "acme" with no assignee
    And agent "ada" has assigned task "T-1000" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" N times, 10 seconds apart
    Then each of those wakes was "queued"
    And no rate-limit counter moved by those wakes
    When 1 minute passes
    And agent "ada" assigns task "T-1000" to "bob"
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.3 @clause:per-task
  Scenario: Tasks whose ids differ from another's only in case or a trailing space keep allowances of their own
    # A case-insensitive collation that pads with spaces (MySQL's and MariaDB's defaults) takes
    # "t-100" and "T-100 " for "T-100": a count that compares task ids that way mixes the three.
    Given a task "t-100" in workspace "acme" with no assignee
    And a task "T-100 " in workspace "acme" with no assignee
    And agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And agent "ada" assigns task "t-100" to "ada"
    Then the wake's outcome is "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100 " to "ada"
    Then the wake's outcome is "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "bob"
    Then the wake's outcome is "rate_limited"

  # ---------------------------------------------------------------------------
  # 001.4 Only admitted wakes use the allowance; each frees its place 10 minutes after itself.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.4 @clause:admitted-consume @clause:frees-after-window
  Scenario: Refusals do not hold the window open: places free up ten minutes after each admitted wake
    # admitted at 09:00, 09:01, 09:02, 09:03 and 09:04
    Given agent "ada" has assigned task "T-100" to "ada" 5 times, 1 minute apart, each wake queued
    # refused at 09:05, 09:07 and 09:09
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" 3 times, 2 minutes apart
    Then each of those wakes was "rate_limited"
    When the clock reads "2026-03-02T09:09:59.999999Z"
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    # the 09:00 wake has left the window; refusals in between changed nothing
    When the clock reads "2026-03-02T09:10:00Z"
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
    When the clock reads "2026-03-02T09:10:59.999999Z"
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    When the clock reads "2026-03-02T09:11:00Z"
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"

  # The spec accepts that coalescing ignores the actor type and overwrites the payload, so a
  # merge may leave the count exact, one high or one low: every reading is accepted.
  @AC-OFFICE-ASSIGN-RATE-001.4 @clause:relabel-tolerance
  Scenario: After a user wake merges into a queued agent run, the count may be exact or one low
    When agent "ada" assigns task "T-100" to "bob"
    Then the wake's outcome is "queued"
    When 2 seconds pass
    And a user assigns task "T-100" to "bob"
    Then the wake's outcome is "coalesced"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" N + 1 times, 1 minute apart
    # exact: the first agent wake still counts, so wake N is refused; one low: it fits
    Then wakes 1 to N - 1 of that series were "queued"
    And wake N of that series was "queued" or "rate_limited"
    And wake N + 1 of that series was "rate_limited"

  # A merge absorbs a wake into a queued run without making that run younger: the admitted
  # wake it holds still frees its place ten minutes after its own request instant.
  @AC-OFFICE-ASSIGN-RATE-001.4 @clause:frees-after-window
  Scenario: A wake merged into a queued run leaves that run's request instant where it was
    When agent "ada" assigns task "T-100" to "bob"
    Then the wake's outcome is "queued"
    When 3 seconds pass
    And agent "ada" assigns task "T-100" to "bob"
    Then the wake's outcome is "coalesced"
    And every run stored before that wake still reads as it did, but for the payload of a run it merged into
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" N - 1 times, 1 minute apart
    Then each of those wakes was "queued"
    # the 09:00:00 wake has left the window, though a wake merged into its run at 09:00:03
    When the clock reads "2026-03-02T09:10:00Z"
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"

  # "Admitted" is a wake that inserted a run: one admitted because its count could not be
  # read inserted one, so it uses its place like any other.
  @AC-OFFICE-ASSIGN-RATE-001.4 @clause:admitted-consume
  Scenario: A wake admitted when its count could not be read uses a place like any other
    When the next count read fails
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "bob" N - 1 times, 1 minute apart
    Then each of those wakes was "queued"
    And no rate-limit counter moved by those wakes
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

  # ---------------------------------------------------------------------------
  # 001.5 The allowance is checked after duplicate detection and coalescing.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.5 @clause:after-dedup @clause:suppressed-not-counted
  Scenario: Once the allowance is used up, a redelivered wake is still reported as a duplicate
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And the newest run's wake is delivered again
    Then the wake's outcome is "deduplicated"
    And no rate-limit counter moved by that wake

  @AC-OFFICE-ASSIGN-RATE-001.5 @clause:after-coalescing @clause:suppressed-not-counted
  Scenario: Once the allowance is used up, a wake arriving within five seconds merges into the queued run
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 4 seconds pass
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "coalesced"
    And no rate-limit counter moved by that wake

  @AC-OFFICE-ASSIGN-RATE-001.5 @clause:after-coalescing @clause:suppressed-not-counted
  Scenario: Once the allowance is used up, a keyless wake arriving within five seconds merges into the queued run too
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 4 seconds pass
    And agent "ada" assigns task "T-100" to "ada" with its generation unresolvable
    Then the wake's outcome is "coalesced"
    And no rate-limit counter moved by that wake

  @AC-OFFICE-ASSIGN-RATE-001.5 @clause:suppressed-not-counted
  Scenario: Wakes merged by coalescing do not use up the allowance
    When agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
    When 2 seconds pass
    And agent "ada" assigns task "T-100" to "ada" 3 times, 1 second apart
    Then each of those wakes was "coalesced"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" N - 1 times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

  # The coalescing relabel in the other direction: the count may be exact or one high.
  @AC-OFFICE-ASSIGN-RATE-001.5 @clause:relabel-tolerance
  Scenario: After an agent wake merges into a queued user run, the count may be exact or one high
    When a user assigns task "T-100" to "bob"
    Then the wake's outcome is "queued"
    When 2 seconds pass
    And agent "ada" assigns task "T-100" to "bob"
    Then the wake's outcome is "coalesced"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" N + 1 times, 1 minute apart
    # exact: the merged wake was never admitted, so N fit; one high: N - 1 fit
    Then wakes 1 to N - 1 of that series were "queued"
    And wake N of that series was "queued" or "rate_limited"
    And wake N + 1 of that series was "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.5 @interpretation:OF-4 @clause:suppressed-not-counted
  Scenario: A wake whose payload does not parse is admitted or merged, never refused or counted
    When a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"workspace_id": "acme"}
    Then the wake's outcome is "queued"
    When 2 seconds pass
    And a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"workspace_id": "acme"
    Then the wake's outcome is "queued" or "coalesced"
    And no rate-limit counter moved by that wake

  # ---------------------------------------------------------------------------
  # 001.6 A refused wake inserts no run and merges into none.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.6 @clause:no-row @clause:no-merge @clause:not-reported-admitted
  Scenario: A refused wake leaves the run queue exactly as it was
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    And the wake names no run
    And the run queue is exactly as it was before that wake

  @AC-OFFICE-ASSIGN-RATE-001.6 @clause:no-merge
  Scenario: A refused wake arriving within five seconds of a queued run merges into nothing
    # bob's Nth run is queued and only 4 seconds old when bob's wake for ada is refused
    Given agent "ada" has assigned task "T-100" to "bob" N times, 1 minute apart, each wake queued
    When 4 seconds pass
    And a "task_assigned" wake for agent "ada" is enqueued without a key, with payload: {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent", "actor_id": "bob"}
    Then the wake's outcome is "rate_limited"
    And the run queue is exactly as it was before that wake

  @AC-OFFICE-ASSIGN-RATE-001.6 @clause:no-row
  Scenario: A refused keyed wake leaves nothing behind that would later mark it a duplicate
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And a "task_assigned" wake for agent "bob" is enqueued with key "task_assigned:T-100:bob:99", with payload: {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}
    Then the wake's outcome is "rate_limited"
    And the run queue is exactly as it was before that wake
    When the clock reads "2026-03-02T09:10:00Z"
    And the same wake is delivered again
    Then the wake's outcome is "queued"

  # ---------------------------------------------------------------------------
  # 001.7 A refusal never undoes the assignment or its other effects.
  # (This mutation makes no comment or mention wake, so none is looked for.)
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.7 @clause:mutation-kept @clause:interrupt @clause:session-row
  @clause:task-updated
  Scenario: A refused reassignment still moves the task, interrupts the previous assignee and announces the change
    Given agent "ada" has assigned task "T-100" in turn to "ada" and "bob", N times, 1 minute apart, each wake queued
    Then task "T-100" is assigned to "ada"
    When agent "ada" opens an office session on task "T-100"
    And 1 minute passes
    And agent "bob" assigns task "T-100" to "bob"
    Then the wake's outcome is "rate_limited"
    And task "T-100" is assigned to "bob", at a newer generation than before that assignment
    And that assignment interrupted the session of "ada" on task "T-100"
    And that assignment changed the state of the office session of "ada" on task "T-100"
    And that assignment published the task-updated event for task "T-100"

  @AC-OFFICE-ASSIGN-RATE-001.7 @clause:mutation-kept @clause:task-updated
  Scenario: Refused self-assignments still bump the generation every time
    When agent "ada" assigns task "T-100" to "ada" 8 times, 1 minute apart
    Then wakes 1 to N of that series were "queued"
    And wakes N + 1 to N + 3 of that series were "rate_limited"
    And every assignment of that series committed a newer generation than the one before
    And task "T-100" is assigned to "ada", at a newer generation than before that assignment
    And that assignment published the task-updated event for task "T-100"

  # ---------------------------------------------------------------------------
  # 001.8 Wakes without a dedup key are limited just the same.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.8 @clause:keyless-bounded
  Scenario: Assignment wakes left without a dedup key are limited like keyed ones
    When agent "ada" assigns task "T-100" to "ada" with its generation unresolvable, N times, 1 minute apart
    Then each of those wakes was "queued"
    And every run in the queue has no dedup key
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" with its generation unresolvable
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.8 @clause:keyless-bounded
  Scenario: Keyed and keyless assignment wakes draw on one allowance
    Given agent "ada" has assigned task "T-100" to "ada" 3 times, 1 minute apart, each wake queued
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" with its generation unresolvable, 2 times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" with its generation unresolvable
    Then the wake's outcome is "rate_limited"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.8 @clause:keyless-bounded
  Scenario: Delivering the same keyless agent wake again uses the allowance again
    When a "task_assigned" wake for agent "ada" is enqueued without a key, with payload: {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}
    Then the wake's outcome is "queued"
    When 1 minute passes
    And the same wake is delivered again, N - 1 times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And the same wake is delivered again
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.8 @clause:keyless-bounded
  Scenario: Redelivering a keyless agent wake uses the allowance again, and the allowance bounds it
    # 002.5's tests use a keyed wake; a keyless redelivery has no identity upstream, so 001.8 bounds it
    When a "task_assigned" wake for agent "ada" is enqueued without a key, with payload: {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent", "actor_id": "bob"}
    Then the wake's outcome is "queued"
    When 1 minute passes
    And the same wake is delivered again, N times, 1 minute apart
    Then wakes 1 to N - 1 of that series were "queued"
    And wake N of that series was "rate_limited"

  # ---------------------------------------------------------------------------
  # 001.9 Unassigning wakes nobody, so it is neither refused nor counted.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.9 @clause:no-wake @clause:not-refused-or-counted
  Scenario: Unassigning a task wakes nobody, even when its allowance is used up
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And agent "ada" unassigns task "T-100"
    Then the assignment produced no wake
    And the run queue is exactly as it was before that wake
    And no rate-limit counter moved by that assignment

  @AC-OFFICE-ASSIGN-RATE-001.9 @clause:not-refused-or-counted
  Scenario: Unassignments in between assignments do not use up the allowance
    When agent "ada" assigns task "T-100" in turn to "ada" and nobody, 8 times, 1 minute apart
    Then the wakes of that series were, in order: queued, no wake, queued, no wake, queued, no wake, queued, no wake
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

  # ---------------------------------------------------------------------------
  # 001.10 The decision is a count; the order of wakes within the window does not matter.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.10 @clause:count-not-order @clause:no-tiebreak
  Scenario Outline: Two wakes requested at one instant both count, whichever was first (<first> first)
    When agent "ada" assigns task "T-100" to "<first>"
    Then the wake's outcome is "queued"
    When agent "ada" assigns task "T-100" to "<second>"
    Then the wake's outcome is "queued"
    And the 2 newest runs share one request instant
    # N - 2 more, one a minute from 09:01, make N
    When 1 minute passes
    And agent "ada" assigns task "T-100" in turn to "<first>" and "<second>", N - 2 times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "<first>"
    Then the wake's outcome is "rate_limited"
    When the clock reads "2026-03-02T09:09:59.999999Z"
    And agent "ada" assigns task "T-100" to "<second>"
    Then the wake's outcome is "rate_limited"
    # both 09:00 wakes leave the window together, freeing two places at once
    When the clock reads "2026-03-02T09:10:00Z"
    And agent "ada" assigns task "T-100" to "<first>"
    Then the wake's outcome is "queued"
    When agent "ada" assigns task "T-100" to "<second>"
    Then the wake's outcome is "queued"

    Examples:
      | first | second |
      | bob   | ada    |
      | ada   | bob    |

  # ---------------------------------------------------------------------------
  # 001.11 The window is (now - 10 minutes, now]: open at its start, closed at its end.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.11 @clause:half-open @clause:exactly-w-old
  Scenario: A wake requested exactly ten minutes before the decision no longer counts
    # admitted at 09:00:00.25, 09:01:00.25, ... 09:04:00.25
    When 250 milliseconds pass
    And agent "ada" assigns task "T-100" to "ada" N times, 1 minute apart
    Then each of those wakes was "queued"
    When the clock reads "2026-03-02T09:10:00.250000Z"
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"

  @AC-OFFICE-ASSIGN-RATE-001.11 @clause:half-open
  Scenario: A wake requested one microsecond less than ten minutes before the decision still counts
    # judged by the instants stored: a store keeping whole seconds keeps 09:00:00 and admits
    When 250 milliseconds pass
    And agent "ada" assigns task "T-100" to "ada" N times, 1 minute apart
    Then each of those wakes was "queued"
    When the clock reads "2026-03-02T09:10:00.249999Z"
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is what the instants stored for task "T-100" make it, with an allowance of N

  @AC-OFFICE-ASSIGN-RATE-001.11 @clause:half-open
  Scenario: Wakes requested at the very instant of the decision count
    Given agents "cy", "dee", "eve" and "fay" in workspace "acme" who may assign tasks
    When agent "ada" assigns task "T-100" in turn to "ada", "bob", "cy", "dee" and "eve", 5 times at the same instant
    Then each of those wakes was "queued"
    When agent "ada" assigns task "T-100" to "fay"
    Then the wake's outcome is "rate_limited"

  # ---------------------------------------------------------------------------
  # 001.12 Only the assignee mutation may put actor type "agent" on a task_assigned wake.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.12 @interpretation:OF-6 @clause:no-other-producer
  Scenario: Of all the producers the implementation reports, only the assignee mutation says actor type agent
    Then the implementation reports the five producers the spec names among its producers of task_assigned wakes
    When every reported producer emits a wake to agent "bob" for a task of its own, the mutation acting as agent "ada"
    Then each producer's wake was "queued"
    And only the assignee mutation's wake says actor type agent

  @AC-OFFICE-ASSIGN-RATE-001.12 @clause:actorless-out-of-scope @clause:shape-boundary
  Scenario Outline: Wakes from producers that carry no actor are admitted after the allowance is used up: <producer>
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And producer "<producer>" emits a wake for task "T-100" to "bob"
    Then the wake's outcome is "queued"
    And the payload of the wake's run does not say actor type agent
    And no rate-limit counter moved by that wake

    Examples:
      | producer                |
      | task_created_subscriber |
      | onboarding              |
      | unstarted_task_recovery |
      | workflow_auto_start     |

  @AC-OFFICE-ASSIGN-RATE-001.12 @clause:shape-boundary
  Scenario: Any task_assigned wake that says actor type agent is bound, whoever produced it
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And a "task_assigned" wake for agent "bob" is enqueued with key "onboarding:T-100:bob:9", with payload: {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}
    Then the wake's outcome is "rate_limited"

  # ---------------------------------------------------------------------------
  # 001.13 The mutation's wake itself says who acted, so the gate need not look back.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.13 @clause:mutation-stamps-agent
  Scenario: An agent's assignment wake says actor type agent
    When agent "bob" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
    And the payload of the wake's run says actor type agent

  @AC-OFFICE-ASSIGN-RATE-001.13 @clause:mutation-stamps-agent
  Scenario: An agent's assignment wake says actor type agent even when it has no dedup key
    When agent "bob" assigns task "T-100" to "ada" with its generation unresolvable
    Then the wake's outcome is "queued"
    And the payload of the wake's run says actor type agent
