Feature: REQ-OFFICE-ASSIGN-RATE-001 Each task has an allowance for wakes that agents cause by assigning it
  An agent allowed to assign tasks can re-assign a task again and again, and every
  assignment wakes the assignee with a brand-new run. To keep that from running away,
  each task may admit at most 5 wakes caused by agents within any rolling 10 minutes.
  A wake counts as caused by an agent only when its payload says actor type "agent";
  people, internal callers and the producers that carry no actor are never limited.
  The allowance is checked after duplicate detection and after coalescing, just before
  a new run would be inserted. A refused wake inserts nothing and merges into nothing,
  and the assignment itself still happens in full.

  Clock notes: every scenario starts at 09:00:00 UTC. "N times, 1 minute apart" makes
  the first assignment at the current instant and leaves the clock at the last one.

  Background:
    Given the clock reads "2026-03-02T09:00:00Z"
    And a workspace "acme"
    And agents "ada" and "bob" in workspace "acme" who may assign tasks
    And a task "T-100" in workspace "acme" with no assignee

  # ---------------------------------------------------------------------------
  # 001.1 Only wakes whose actor type is exactly "agent" are limited.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.1
  Scenario: Assignments made by a user do not use up the task's allowance
    When agent "ada" assigns task "T-100" to "ada" 4 times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And a user assigns task "T-100" to "bob", 3 times, 1 minute apart
    Then each of those wakes was "queued"
    And no rate-limit counter has moved since noted
    And no warning has been logged since noted
    # 4 agent wakes and 3 user wakes are now within 10 minutes: the 5th agent wake still fits.
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "bob"
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.1
  Scenario: An internal caller with an empty acting agent id counts as a user and is admitted after the allowance is used up
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    And 1 minute passes
    And agent "ada" assigns task "T-100" to "bob"
    Then the wake's outcome is "rate_limited"
    When the counters and warnings are noted
    And 1 minute passes
    And an internal caller with an empty acting agent id assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
    And the payload of the wake's run includes:
      | field      | value  |
      | actor_type | "user" |
      | actor_id   | ""     |
    And no rate-limit counter has moved since noted
    And no warning has been logged since noted

  @AC-OFFICE-ASSIGN-RATE-001.1
  Scenario Outline: Only the exact actor type "agent" brings a wake under the allowance
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And the counters and warnings are noted
    And a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: <payload>
    Then the wake's outcome is "<outcome>"
    And the rate-limit counters have moved since noted by: <counter moves>

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
      | payload that does not parse           | {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent"                       | queued       | none                   |
      | payload that is a list, not an object | [{"task_id": "T-100", "actor_type": "agent"}]                                             | queued       | none                   |
      | not JSON: a bare NaN                  | {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent", "weight": NaN}       | queued       | none                   |

  @AC-OFFICE-ASSIGN-RATE-001.1
  Scenario: A wake with another reason is not limited even when it says actor type agent
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    And 1 minute passes
    And the counters and warnings are noted
    And a "task_comment" wake for agent "bob" is enqueued without a key, with payload: {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}
    Then the wake's outcome is "queued"
    And no rate-limit counter has moved since noted
    And no warning has been logged since noted

  @AC-OFFICE-ASSIGN-RATE-001.1
  Scenario: Wakes that name no task do not make a later out-of-scope wake countable
    # Five in-scope agent wakes whose task is the empty string are admitted (unattributed).
    # An out-of-scope wake that names no task afterwards is still queued: it never reaches a count.
    When a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"task_id": "", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}
    Then the wake's outcome is "queued"
    When 1 minute passes
    And the same wake is delivered again, 4 times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And the counters and warnings are noted
    And a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"workspace_id": "acme", "actor_type": "user", "actor_id": ""}
    Then the wake's outcome is "queued"
    And no rate-limit counter has moved since noted

  # ---------------------------------------------------------------------------
  # 001.2 At most 5 agent wakes per task in any rolling 10 minutes (serial evaluation).
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.2
  Scenario: Five agent wakes for a task are admitted and the sixth within ten minutes is refused
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    And the queue holds 5 runs for task "T-100"

  @AC-OFFICE-ASSIGN-RATE-001.2
  Scenario: A steady stream of one agent wake a minute is admitted five at a time
    When agent "ada" assigns task "T-100" to "ada" 20 times, 1 minute apart
    Then wakes 1 to 5 of that series were "queued"
    And wakes 6 to 10 of that series were "rate_limited"
    And wakes 11 to 15 of that series were "queued"
    And wakes 16 to 20 of that series were "rate_limited"
    And no rolling window of 10 minutes holds more than 5 agent wakes for task "T-100"

  @AC-OFFICE-ASSIGN-RATE-001.2
  Scenario Outline: Runs count against the allowance whatever has become of them
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    And every run in the queue is marked "<status>"
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

  @AC-OFFICE-ASSIGN-RATE-001.3
  Scenario: Alternating the assignee between two agents does not earn a second allowance
    When agent "ada" assigns task "T-100" in turn to "bob" and "ada", 6 times, 1 minute apart
    Then wakes 1 to 5 of that series were "queued"
    And wake 6 of that series was "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.3
  Scenario: Two agents taking turns to assign one task share its single allowance
    When agents "ada" and "bob" in turn assign task "T-100" to "bob", 6 times, 1 minute apart
    Then wakes 1 to 5 of that series were "queued"
    And wake 6 of that series was "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.3
  Scenario: Another task keeps an allowance of its own
    Given a task "T-200" in workspace "acme" with no assignee
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    And 1 minute passes
    And agent "ada" assigns task "T-200" to "ada"
    Then the wake's outcome is "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

  # ---------------------------------------------------------------------------
  # 001.4 Only admitted wakes use the allowance; each frees its place 10 minutes after itself.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.4
  Scenario: Refusals do not hold the window open: places free up ten minutes after each admitted wake
    # admitted at 09:00, 09:01, 09:02, 09:03 and 09:04
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    Then each of those wakes was "queued"
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

  # The spec accepts that coalescing ignores the actor type and overwrites the payload,
  # so the surviving run can change whether it counts. Pinned here at its measured value.
  @AC-OFFICE-ASSIGN-RATE-001.4
  Scenario: A user wake merging into a queued agent run stops that run counting, so one more agent wake fits
    When agent "ada" assigns task "T-100" to "bob"
    Then the wake's outcome is "queued"
    When 2 seconds pass
    And a user assigns task "T-100" to "bob"
    Then the wake's outcome is "coalesced"
    And the payload of the newest run has "actor_type": "user"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" 6 times, 1 minute apart
    Then wakes 1 to 5 of that series were "queued"
    And wake 6 of that series was "rate_limited"

  # ---------------------------------------------------------------------------
  # 001.5 The allowance is checked after duplicate detection and coalescing.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.5
  Scenario: Once the allowance is used up, a redelivered wake is still reported as a duplicate
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    And 1 minute passes
    And the counters and warnings are noted
    And the newest run's wake is delivered again
    Then the wake's outcome is "deduplicated"
    And the queue holds 5 runs for task "T-100"
    And no rate-limit counter has moved since noted
    And no warning has been logged since noted

  @AC-OFFICE-ASSIGN-RATE-001.5
  Scenario: Once the allowance is used up, a wake arriving within five seconds merges into the queued run
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    And 4 seconds pass
    And the counters and warnings are noted
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "coalesced"
    And the newest run has absorbed 1 coalesced wake
    And the queue holds 5 runs for task "T-100"
    And no rate-limit counter has moved since noted
    And no warning has been logged since noted

  @AC-OFFICE-ASSIGN-RATE-001.5
  Scenario: Wakes merged by coalescing do not use up the allowance
    When agent "ada" assigns task "T-100" to "ada"
    And 2 seconds pass
    And agent "ada" assigns task "T-100" to "ada" 3 times, 1 second apart
    Then each of those wakes was "coalesced"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" 4 times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

  # The accepted coalescing relabel in the other direction, pinned at its measured value.
  @AC-OFFICE-ASSIGN-RATE-001.5
  Scenario: An agent wake merging into a queued user run makes that run count, so one fewer agent wake fits
    When a user assigns task "T-100" to "bob"
    Then the wake's outcome is "queued"
    When 2 seconds pass
    And agent "ada" assigns task "T-100" to "bob"
    Then the wake's outcome is "coalesced"
    And the payload of the newest run has "actor_type": "agent"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    Then wakes 1 to 4 of that series were "queued"
    And wake 5 of that series was "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.5
  Scenario: A wake whose payload does not parse coalesces into a queued run that names no task
    # Interpretation OF-3: a payload without a string task_id falls into one shared empty bucket.
    When a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"workspace_id": "acme"}
    Then the wake's outcome is "queued"
    When 2 seconds pass
    And a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"workspace_id": "acme"
    Then the wake's outcome is "coalesced"
    And the newest run has absorbed 1 coalesced wake

  # ---------------------------------------------------------------------------
  # 001.6 A refused wake inserts no run and merges into none.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.6
  Scenario: A refused wake leaves the run queue exactly as it was
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    And 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    And the wake names no run
    And the run queue is exactly as it was before that wake

  @AC-OFFICE-ASSIGN-RATE-001.6
  Scenario: A refused keyed wake leaves nothing behind that would later mark it a duplicate
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    And 1 minute passes
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

  @AC-OFFICE-ASSIGN-RATE-001.7
  Scenario: A refused reassignment still moves the task, interrupts the previous assignee and announces the change
    When agent "ada" assigns task "T-100" in turn to "ada" and "bob", 5 times, 1 minute apart
    Then each of those wakes was "queued"
    And task "T-100" is assigned to "ada" at generation 5
    When agent "ada" opens an office session on task "T-100"
    And 1 minute passes
    And agent "bob" assigns task "T-100" to "bob"
    Then the wake's outcome is "rate_limited"
    And task "T-100" is assigned to "bob" at generation 6
    And that assignment interrupted the session of "ada" on task "T-100"
    And the office session of "ada" on task "T-100" is "completed"
    And that assignment published a "task.updated" event for task "T-100" naming "assignee_agent_id"

  @AC-OFFICE-ASSIGN-RATE-001.7
  Scenario: Refused self-assignments still bump the generation every time
    When agent "ada" assigns task "T-100" to "ada" 8 times, 1 minute apart
    Then wakes 6 to 8 of that series were "rate_limited"
    And task "T-100" is assigned to "ada" at generation 8
    And that assignment published a "task.updated" event for task "T-100" naming "assignee_agent_id"

  # ---------------------------------------------------------------------------
  # 001.8 Wakes without a dedup key are limited just the same.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.8
  Scenario: Assignment wakes left without a dedup key are limited like keyed ones
    When agent "ada" assigns task "T-100" to "ada" with its generation unresolvable, 5 times, 1 minute apart
    Then each of those wakes was "queued"
    And every run in the queue has no dedup key
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" with its generation unresolvable
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.8
  Scenario: Keyed and keyless assignment wakes draw on one allowance
    When agent "ada" assigns task "T-100" to "ada" 3 times, 1 minute apart
    And 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" with its generation unresolvable, 2 times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" with its generation unresolvable
    Then the wake's outcome is "rate_limited"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.8
  Scenario: Delivering the same keyless agent wake again uses the allowance again
    When a "task_assigned" wake for agent "ada" is enqueued without a key, with payload: {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}
    Then the wake's outcome is "queued"
    When 1 minute passes
    And the same wake is delivered again, 4 times, 1 minute apart
    Then each of those wakes was "queued"
    When 1 minute passes
    And the same wake is delivered again
    Then the wake's outcome is "rate_limited"

  # ---------------------------------------------------------------------------
  # 001.9 Unassigning wakes nobody, so it is neither refused nor counted.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.9
  Scenario: Unassigning a task wakes nobody, even when its allowance is used up
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    And 1 minute passes
    And the counters and warnings are noted
    And agent "ada" unassigns task "T-100"
    Then the assignment produced no wake
    And task "T-100" is assigned to nobody at generation 6
    And the run queue is exactly as it was before that wake
    And no rate-limit counter has moved since noted
    And no warning has been logged since noted

  @AC-OFFICE-ASSIGN-RATE-001.9
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

  @AC-OFFICE-ASSIGN-RATE-001.10
  Scenario Outline: Two wakes requested at one instant both count, whichever was first
    When agent "ada" assigns task "T-100" to "<first>"
    Then the wake's outcome is "queued"
    When agent "ada" assigns task "T-100" to "<second>"
    Then the wake's outcome is "queued"
    And the 2 newest runs share one request instant
    # three more at 09:01, 09:02 and 09:03 make five
    When 1 minute passes
    And agent "ada" assigns task "T-100" in turn to "<first>" and "<second>", 3 times, 1 minute apart
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

  @AC-OFFICE-ASSIGN-RATE-001.11
  Scenario: A wake requested exactly ten minutes before the decision no longer counts
    # admitted at 09:00:00.25, 09:01:00.25, ... 09:04:00.25
    When 250 milliseconds pass
    And agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    Then each of those wakes was "queued"
    When the clock reads "2026-03-02T09:10:00.250000Z"
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"

  @AC-OFFICE-ASSIGN-RATE-001.11
  Scenario: A wake requested one microsecond less than ten minutes before the decision still counts
    When 250 milliseconds pass
    And agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    Then each of those wakes was "queued"
    When the clock reads "2026-03-02T09:10:00.249999Z"
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"

  @AC-OFFICE-ASSIGN-RATE-001.11
  Scenario: Wakes requested at the very instant of the decision count
    Given agents "cy", "dee", "eve" and "fay" in workspace "acme" who may assign tasks
    When agent "ada" assigns task "T-100" in turn to "ada", "bob", "cy", "dee" and "eve", 5 times at the same instant
    Then each of those wakes was "queued"
    When agent "ada" assigns task "T-100" to "fay"
    Then the wake's outcome is "rate_limited"

  # ---------------------------------------------------------------------------
  # 001.12 Only the assignee mutation may put actor type "agent" on a task_assigned wake.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.12
  Scenario: Of all the producers the implementation reports, only the assignee mutation says actor type agent
    Then the implementation reports exactly these producers of task_assigned wakes:
      | producer                |
      | assignee_mutation       |
      | task_created_subscriber |
      | onboarding              |
      | unstarted_task_recovery |
      | workflow_auto_start     |
    When every reported producer emits a wake to agent "bob" for a task of its own, the mutation acting as agent "ada"
    Then the producers' wakes carry these actor types:
      | producer                | actor type |
      | assignee_mutation       | "agent"    |
      | task_created_subscriber | (none)     |
      | onboarding              | (none)     |
      | unstarted_task_recovery | (none)     |
      | workflow_auto_start     | (none)     |

  @AC-OFFICE-ASSIGN-RATE-001.12
  Scenario Outline: Wakes from producers that carry no actor are admitted after the allowance is used up
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    And 1 minute passes
    And the counters and warnings are noted
    And producer "<producer>" emits a wake for task "T-100" to "bob"
    Then the wake's outcome is "queued"
    And the payload of the wake's run has no "actor_type"
    And no rate-limit counter has moved since noted
    And no warning has been logged since noted

    Examples:
      | producer                |
      | task_created_subscriber |
      | onboarding              |
      | unstarted_task_recovery |
      | workflow_auto_start     |

  # ---------------------------------------------------------------------------
  # 001.13 The mutation's wake itself says who acted, so the gate need not look back.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-001.13
  Scenario: An agent's assignment wake says actor type agent and names the acting agent
    When agent "bob" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
    And the payload of the wake's run includes:
      | field        | value   |
      | task_id      | "T-100" |
      | workspace_id | "acme"  |
      | actor_type   | "agent" |
      | actor_id     | "bob"   |

  @AC-OFFICE-ASSIGN-RATE-001.13
  Scenario: An agent's assignment wake says actor type agent even when it has no dedup key
    When agent "bob" assigns task "T-100" to "ada" with its generation unresolvable
    Then the wake's outcome is "queued"
    And the payload of the wake's run includes:
      | field      | value   |
      | task_id    | "T-100" |
      | actor_type | "agent" |
      | actor_id   | "bob"   |
