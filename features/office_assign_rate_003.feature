Feature: REQ-OFFICE-ASSIGN-RATE-003 A refused wake always leaves a trace
  An operator whose agent did not wake up must be able to find out why. Every refusal,
  and every wake let through only because the allowance could not be applied, adds one
  to a counter labelled with the reason, one of exactly three: allowance exhausted,
  count read failed, task unattributed. The counter never carries an identifier, sits on
  the same telemetry surface as the duplicate-detection counters, and does not move for
  ordinary admitted wakes. A refusal is also logged as a warning with enough detail to
  act on, and the producer is told "rate_limited", which no other outcome resembles.

  The counter's name, its reason label and the label's three values are the ones the
  implementation declares in its handshake (Kandev's names when it declares none); the
  counter may carry further labels of its own, as long as none holds an identifier.

  Background:
    Given the clock reads "2026-03-02T09:00:00Z"
    And the allowance is N = 5 agent wakes per task in any rolling 10 minutes
    And a workspace "acme"
    And agents "ada" and "bob" in workspace "acme" who may assign tasks
    And a task "T-100" in workspace "acme" with no assignee

  # ---------------------------------------------------------------------------
  # 003.1 Every refusal and every degraded admission adds one under its reason.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-003.1 @clause:counted-by-reason
  Scenario: Every refusal adds one to the allowance-exhausted count
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" 3 times, 1 minute apart
    Then each of those wakes was "rate_limited"
    And the rate-limit counters moved by those wakes by: allowance_exhausted +3

  @AC-OFFICE-ASSIGN-RATE-003.1 @clause:counted-by-reason
  Scenario: Every unattributed admission adds one to the task-unattributed count
    When a "task_assigned" wake for agent "bob" is enqueued without a key, 2 times, 1 minute apart, with payload: {"task_id": "", "actor_type": "agent", "actor_id": "ada"}
    Then each of those wakes was "queued"
    And the rate-limit counters moved by those wakes by: task_unattributed +2

  @AC-OFFICE-ASSIGN-RATE-003.1 @clause:counted-by-reason
  Scenario: An admission after a failed count read adds one to the count-read-failed count
    When the next count read fails
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
    And the rate-limit counters moved by that wake by: count_read_failed +1

  @AC-OFFICE-ASSIGN-RATE-003.1 @clause:closed-reasons
  Scenario: The rate-limit counter's reason takes only one of its three declared values
    When agent "ada" assigns task "T-100" to "ada" N + 1 times, 1 minute apart
    Then wakes 1 to N of that series were "queued"
    And wake N + 1 of that series was "rate_limited"
    When a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"task_id": 7, "actor_type": "agent", "actor_id": "ada"}
    Then the wake's outcome is "queued"
    And every sample of the rate-limit counter carries its reason label, with one of the three declared reasons
    And the rate-limit counters moved in this scenario by: allowance_exhausted +1 and task_unattributed +1

  # Every refusal path, not the keyed serial one alone: the keyless path and a concurrent batch.
  @AC-OFFICE-ASSIGN-RATE-003.1 @clause:counted-by-reason
  Scenario: A refusal of a wake without a dedup key is counted and logged like any other
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And agent "bob" assigns task "T-100" to "ada" with its generation unresolvable
    Then the wake's outcome is "rate_limited"
    And the run queue is exactly as it was before that wake
    And the rate-limit counters moved by that wake by: allowance_exhausted +1
    And a warning logged by that wake names the refusal with:
      | field                     | value |
      | task_id                   | T-100 |
      | assignee_agent_profile_id | ada   |
      | acting_agent_id           | bob   |
      | observed_count            | N     |
      | allowance                 | N     |

  @AC-OFFICE-ASSIGN-RATE-003.1 @clause:counted-by-reason
  Scenario: Refusals of wakes evaluated at once are each counted and logged
    Given the implementation evaluates operations concurrently
    And agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And agent "bob" assigns task "T-100" to "ada", "bob" and "ada" at once
    Then each of those wakes was "rate_limited"
    And the run queue is exactly as it was before those wakes
    And every refusal among those wakes moved the rate-limit counter and was logged

  # A coalescing merge may relabel the row the count reads (one high or one low per mixed-actor
  # merge, as the spec accepts): however the count then reads, each refusal after it is counted.
  @AC-OFFICE-ASSIGN-RATE-003.1 @clause:counted-by-reason
  Scenario Outline: Refusals after a merge relabelled the task's run are each counted: <case>
    When <first> assigns task "T-100" to "bob"
    Then the wake's outcome is "queued"
    When 2 seconds pass
    And <second> assigns task "T-100" to "bob"
    Then the wake's outcome is "coalesced"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" N + 2 times, 1 minute apart
    Then wake N + 2 of that series was "rate_limited"
    And every refusal among those wakes moved the rate-limit counter and was logged

    Examples:
      | case                                 | first       | second      |
      | a user wake merged into an agent run | agent "ada" | a user      |
      | an agent wake merged into a user run | a user      | agent "ada" |

  # ---------------------------------------------------------------------------
  # 003.2 No identifier is ever a label, so the number of series cannot grow with traffic.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-003.2 @clause:no-identifier-labels
  Scenario: Refusals on two tasks of two workspaces by two agents land in one series and leak no identifier
    # a label derived from an identifier (a hash of the workspace, say) shows as a second series
    Given a workspace "globex"
    And agents "cy" in workspace "globex" who may assign tasks
    And a task "T-200" in workspace "globex" with no assignee
    When agent "ada" assigns task "T-100" to "ada" N + 1 times, 1 minute apart
    Then wake N + 1 of that series was "rate_limited"
    When agent "cy" assigns task "T-200" to "cy" N + 1 times, 1 minute apart
    Then wake N + 1 of that series was "rate_limited"
    When the newest run's wake is delivered again
    Then the wake's outcome is "deduplicated"
    When a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"task_id": null, "workspace_id": "acme", "actor_type": "agent", "actor_id": "bob"}
    Then the rate-limit counter for "allowance_exhausted" rose by 2 in this scenario, all in one series
    And no label of the rate-limit counter holds an identifier of a workspace, agent, task or run

  @AC-OFFICE-ASSIGN-RATE-003.2 @clause:no-identifier-labels
  Scenario Outline: No label holds an identifier after a wake of each reason: <case>
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And <wake>
    Then the rate-limit counters moved by that wake by: <reason> +1
    And no label of the rate-limit counter holds an identifier of a workspace, agent, task or run

    Examples:
      | case                     | wake                                                                                                                                          | reason              |
      | a refusal                | agent "bob" assigns task "T-100" to "ada"                                                                                                     | allowance_exhausted |
      | an unattributed wake     | a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"} | task_unattributed   |

  @AC-OFFICE-ASSIGN-RATE-003.2 @clause:no-identifier-labels
  Scenario: No label holds an identifier after an admission whose count could not be read
    When the next count read fails
    And agent "bob" assigns task "T-100" to "ada"
    Then the rate-limit counters moved by that wake by: count_read_failed +1
    And no label of the rate-limit counter holds an identifier of a workspace, agent, task or run

  # ---------------------------------------------------------------------------
  # 003.3 A refusal is logged as a warning with task, assignee, acting agent, count and allowance.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-003.3 @clause:refusal-logged
  Scenario: A refusal is logged as a warning naming the task, the assignee, the acting agent, the count and the allowance
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And agent "bob" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    And a warning logged by that wake names the refusal with:
      | field                     | value |
      | task_id                   | T-100 |
      | assignee_agent_profile_id | ada   |
      | acting_agent_id           | bob   |
      | observed_count            | N     |
      | allowance                 | N     |

  @AC-OFFICE-ASSIGN-RATE-003.3 @clause:refusal-logged
  Scenario: Each refusal is logged
    Given agent "ada" has assigned task "T-100" to "bob" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "bob" 2 times, 1 minute apart
    Then each of those wakes was "rate_limited"
    And each of those 2 refusals was logged as a warning with:
      | field                     | value |
      | task_id                   | T-100 |
      | assignee_agent_profile_id | bob   |
      | acting_agent_id           | ada   |
      | observed_count            | N     |
      | allowance                 | N     |

  # Whatever came before it, a refusal is reported as one, writes no run, and is counted and
  # logged: an implementation that reports refusals on one path only fails on the others.
  @AC-OFFICE-ASSIGN-RATE-003.3 @clause:refusal-logged
  Scenario Outline: A refusal is reported, leaves no run, and is counted and logged: <case>
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When <before>
    And 1 minute passes
    And <refused wake>
    Then the wake's outcome is "rate_limited"
    And the run queue is exactly as it was before that wake
    And the rate-limit counters moved by that wake by: allowance_exhausted +1
    And a warning logged by that wake names the refusal with:
      | field                     | value |
      | task_id                   | T-100 |
      | assignee_agent_profile_id | bob   |
      | acting_agent_id           | ada   |
      | observed_count            | N     |
      | allowance                 | N     |

    Examples:
      | case                               | before                                                                                                                   | refused wake                                                                                                                                             |
      | after a restart                    | the implementation restarts                                                                                              | agent "ada" assigns task "T-100" to "bob"                                                                                                                |
      | after an out-of-scope wake         | a "task_comment" wake for agent "bob" is enqueued without a key, with payload: {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent"} | agent "ada" assigns task "T-100" to "bob"                                                                                                                |
      | a wake handed straight to the queue | 1 minute passes                                                                                                          | a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"} |

  @AC-OFFICE-ASSIGN-RATE-003.3 @clause:refusal-logged
  Scenario: A refusal after a run was deleted is reported, leaves no run, and is counted and logged
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When the newest run is deleted
    And agent "ada" assigns task "T-100" to "bob"
    Then the wake's outcome is "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    And the run queue is exactly as it was before that wake
    And the rate-limit counters moved by that wake by: allowance_exhausted +1
    And a warning logged by that wake names the refusal with:
      | field                     | value |
      | task_id                   | T-100 |
      | assignee_agent_profile_id | ada   |
      | acting_agent_id           | ada   |
      | observed_count            | N     |
      | allowance                 | N     |

  @AC-OFFICE-ASSIGN-RATE-003.3 @clause:refusal-logged
  Scenario: A refusal after an admission whose count could not be read is reported, leaves no run, and is counted and logged
    Given agent "ada" has assigned task "T-100" to "ada" N - 1 times, 1 minute apart, each wake queued
    When 1 minute passes
    And the next count read fails
    And agent "bob" assigns task "T-100" to "bob"
    Then the wake's outcome is "queued"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    And the run queue is exactly as it was before that wake
    And the rate-limit counters moved by that wake by: allowance_exhausted +1
    And a warning logged by that wake names the refusal with:
      | field                     | value |
      | task_id                   | T-100 |
      | assignee_agent_profile_id | ada   |
      | acting_agent_id           | ada   |
      | observed_count            | N     |
      | allowance                 | N     |

  @AC-OFFICE-ASSIGN-RATE-003.3 @clause:refusal-logged
  Scenario: Refusals in a burst seconds apart are each counted and logged
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And agent "bob" assigns task "T-100" to "ada" 4 times, 2 seconds apart
    Then each of those wakes was "rate_limited"
    And the rate-limit counters moved by those wakes by: allowance_exhausted +4
    And each of those 4 refusals was logged as a warning with:
      | field                     | value |
      | task_id                   | T-100 |
      | assignee_agent_profile_id | ada   |
      | acting_agent_id           | bob   |
      | observed_count            | N     |
      | allowance                 | N     |

  # A coalescing merge may relabel the row the count reads (one high or one low per mixed-actor
  # merge, as the spec accepts): however the count then reads, each refusal after it is logged.
  @AC-OFFICE-ASSIGN-RATE-003.3 @clause:refusal-logged
  Scenario Outline: Refusals after a merge relabelled the task's run are each logged: <case>
    When <first> assigns task "T-100" to "bob"
    Then the wake's outcome is "queued"
    When 2 seconds pass
    And <second> assigns task "T-100" to "bob"
    Then the wake's outcome is "coalesced"
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada" N + 2 times, 1 minute apart
    Then wake N + 2 of that series was "rate_limited"
    And every refusal among those wakes moved the rate-limit counter and was logged
    # Exact, one high or one low: in every reading the window now holds N admitted wakes.
    When 1 minute passes
    And agent "bob" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    And a warning logged by that wake names the refusal with:
      | field                     | value |
      | task_id                   | T-100 |
      | assignee_agent_profile_id | ada   |
      | acting_agent_id           | bob   |
      | observed_count            | N     |
      | allowance                 | N     |

    Examples:
      | case                                 | first       | second      |
      | a user wake merged into an agent run | agent "ada" | a user      |
      | an agent wake merged into a user run | a user      | agent "ada" |

  # ---------------------------------------------------------------------------
  # 003.4 Ordinary traffic moves none of these counters.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-003.4 @clause:ordinary-silent
  Scenario: Admitted, merged and duplicate wakes move no rate-limit counter
    When agent "ada" assigns task "T-100" to "ada" N - 1 times, 1 minute apart
    Then each of those wakes was "queued"
    When 2 seconds pass
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "coalesced"
    When the newest run's wake is delivered again
    Then the wake's outcome is "deduplicated"
    When 1 minute passes
    And a user assigns task "T-100" to "bob"
    Then the wake's outcome is "queued"
    When 1 minute passes
    And producer "onboarding" emits a wake for task "T-100" to "ada"
    Then the wake's outcome is "queued"
    When 1 minute passes
    And agent "ada" unassigns task "T-100"
    Then the assignment produced no wake
    And no rate-limit counter moved in this scenario

  @AC-OFFICE-ASSIGN-RATE-003.4 @clause:ordinary-silent
  Scenario: The admission that takes the allowance's last place moves no rate-limit counter
    When agent "ada" assigns task "T-100" to "ada" N times, 1 minute apart
    Then each of those wakes was "queued"
    And no rate-limit counter moved by those wakes

  # ---------------------------------------------------------------------------
  # 003.5 The producer is told "rate_limited", never something that looks like another outcome.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-003.5 @clause:distinct-outcome @clause:not-absence
  Scenario: A refused assignment reports the outcome rate_limited rather than an absent or empty outcome
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    And the wake names no run

  @AC-OFFICE-ASSIGN-RATE-003.5 @clause:distinct-outcome
  Scenario: A refused wake handed straight to the queue reports the outcome rate_limited
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And a "task_assigned" wake for agent "bob" is enqueued with key "task_assigned:T-100:bob:42", with payload: {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}
    Then the wake's outcome is "rate_limited"
    And the wake names no run

  # ---------------------------------------------------------------------------
  # 003.6 One telemetry surface holds the rate-limit and the duplicate-detection counters.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-003.6 @clause:same-surface
  Scenario: One reading of the telemetry surface shows both the rate-limit and the dedup counters moving
    Given agent "ada" has assigned task "T-100" to "ada" N times, 1 minute apart, each wake queued
    When 1 minute passes
    And the newest run's wake is delivered again
    Then the wake's outcome is "deduplicated"
    When agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    And one reading of the telemetry surface shows, since the scenario began, a declared dedup counter risen and the rate-limit counter up by 1 for "allowance_exhausted"
