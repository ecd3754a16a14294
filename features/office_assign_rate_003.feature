Feature: REQ-OFFICE-ASSIGN-RATE-003 A refused wake always leaves a trace
  An operator whose agent did not wake up must be able to find out why. Every refusal,
  and every wake let through only because the allowance could not be applied, adds one
  to a counter labelled with the reason, one of exactly three: allowance_exhausted,
  count_read_failed, task_unattributed. The counter never carries an identifier, sits on
  the same telemetry surface as the duplicate-detection counters, and does not move for
  ordinary admitted wakes. A refusal is also logged as a warning with enough detail to
  act on, and the producer is told "rate_limited", which no other outcome resembles.

  Background:
    Given the clock reads "2026-03-02T09:00:00Z"
    And a workspace "acme"
    And agents "ada" and "bob" in workspace "acme" who may assign tasks
    And a task "T-100" in workspace "acme" with no assignee

  # ---------------------------------------------------------------------------
  # 003.1 Every refusal and every degraded admission adds one under its reason.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-003.1
  Scenario: Every refusal adds one to the allowance_exhausted count
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    And 1 minute passes
    And the counters and warnings are noted
    And agent "ada" assigns task "T-100" to "ada" 3 times, 1 minute apart
    Then each of those wakes was "rate_limited"
    And the rate-limit counters have moved since noted by: allowance_exhausted +3

  @AC-OFFICE-ASSIGN-RATE-003.1
  Scenario: Every unattributed admission adds one to the task_unattributed count
    When a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"task_id": "", "actor_type": "agent", "actor_id": "ada"}
    And 1 minute passes
    And the same wake is delivered again
    Then the wake's outcome is "queued"
    And the rate-limit counters have moved since noted by: task_unattributed +2

  @AC-OFFICE-ASSIGN-RATE-003.1
  Scenario: An admission after a failed count read adds one to the count_read_failed count
    When the next count read fails
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "queued"
    And the rate-limit counters have moved since noted by: count_read_failed +1

  @AC-OFFICE-ASSIGN-RATE-003.1
  Scenario: The rate-limit counter is labelled only by one of its three reasons
    When agent "ada" assigns task "T-100" to "ada" 6 times, 1 minute apart
    And a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"task_id": 7, "actor_type": "agent", "actor_id": "ada"}
    Then every sample of the rate-limit counter is labelled by reason alone, with one of: "allowance_exhausted", "count_read_failed", "task_unattributed"
    And the rate-limit counters have moved since noted by: allowance_exhausted +1 and task_unattributed +1

  # ---------------------------------------------------------------------------
  # 003.2 No identifier is ever a label, so the number of series cannot grow with traffic.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-003.2
  Scenario: Refusals on two tasks by two agents share one labelled series and leak no identifier
    Given a task "T-200" in workspace "acme" with no assignee
    When agent "ada" assigns task "T-100" to "ada" 6 times, 1 minute apart
    And agent "bob" assigns task "T-200" to "bob" 6 times, 1 minute apart
    And the newest run's wake is delivered again
    And a "task_assigned" wake for agent "bob" is enqueued without a key, with payload: {"task_id": null, "workspace_id": "acme", "actor_type": "agent", "actor_id": "bob"}
    Then the rate-limit counter holds a single sample for "allowance_exhausted", up by 2 since noted
    And no telemetry label holds an identifier of a workspace, agent, task or run

  # ---------------------------------------------------------------------------
  # 003.3 A refusal is logged as a warning with task, assignee, acting agent, count and allowance.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-003.3
  Scenario: A refusal is logged as a warning naming the task, the assignee, the acting agent, the count and the allowance
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    And 1 minute passes
    And the counters and warnings are noted
    And agent "bob" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    And one warning has been logged since noted, with these fields:
      | field                     | value               |
      | reason                    | allowance_exhausted |
      | task_id                   | T-100               |
      | assignee_agent_profile_id | ada                 |
      | acting_agent_id           | bob                 |
      | observed_count            | 5                   |
      | allowance                 | 5                   |

  @AC-OFFICE-ASSIGN-RATE-003.3
  Scenario: Each refusal is logged once
    When agent "ada" assigns task "T-100" to "bob" 5 times, 1 minute apart
    And 1 minute passes
    And the counters and warnings are noted
    And agent "ada" assigns task "T-100" to "bob" 2 times, 1 minute apart
    Then each of those wakes was "rate_limited"
    And 2 warnings have been logged since noted, each with these fields:
      | field                     | value               |
      | reason                    | allowance_exhausted |
      | task_id                   | T-100               |
      | assignee_agent_profile_id | bob                 |
      | acting_agent_id           | ada                 |
      | observed_count            | 5                   |
      | allowance                 | 5                   |

  # ---------------------------------------------------------------------------
  # 003.4 Ordinary traffic moves none of these counters.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-003.4
  Scenario: Admitted, merged and duplicate wakes move no rate-limit counter
    When agent "ada" assigns task "T-100" to "ada" 4 times, 1 minute apart
    And 2 seconds pass
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
    Then no rate-limit counter has moved since noted
    And no warning has been logged since noted

  @AC-OFFICE-ASSIGN-RATE-003.4
  Scenario: The admission that takes the allowance's last place moves no rate-limit counter
    Given the counters and warnings are noted
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    Then each of those wakes was "queued"
    And no rate-limit counter has moved since noted
    And no warning has been logged since noted

  # ---------------------------------------------------------------------------
  # 003.5 The producer is told "rate_limited", never something that looks like another outcome.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-003.5
  Scenario: A refused assignment reports the outcome rate_limited rather than an absent or empty outcome
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    And 1 minute passes
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    And the wake names no run

  @AC-OFFICE-ASSIGN-RATE-003.5
  Scenario: A refused wake handed straight to the queue reports the outcome rate_limited
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    And 1 minute passes
    And a "task_assigned" wake for agent "bob" is enqueued with key "task_assigned:T-100:bob:42", with payload: {"task_id": "T-100", "workspace_id": "acme", "actor_type": "agent", "actor_id": "ada"}
    Then the wake's outcome is "rate_limited"
    And the wake names no run

  # ---------------------------------------------------------------------------
  # 003.6 One telemetry surface holds the rate-limit and the duplicate-detection counters.
  # ---------------------------------------------------------------------------

  @AC-OFFICE-ASSIGN-RATE-003.6
  Scenario: One reading of the telemetry surface shows both the rate-limit and the dedup counters moving
    When agent "ada" assigns task "T-100" to "ada" 5 times, 1 minute apart
    And 1 minute passes
    And the counters and warnings are noted
    And the newest run's wake is delivered again
    And agent "ada" assigns task "T-100" to "ada"
    Then the wake's outcome is "rate_limited"
    When the operator reads the telemetry surface
    Then that reading shows office_run_dedup_total{reason="task_assigned", kind="windowed", queue="office"} up by 1 since noted
    And that reading shows office_assignment_rate_limit_total{reason="allowance_exhausted"} up by 1 since noted
