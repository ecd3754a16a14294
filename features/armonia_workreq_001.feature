Feature: Durable delegation work requests with budget inheritance (REQ-ARMONIA-WORKREQ-001)
  When a session hands work to a child, by spawning a session or by starting a
  subagent, the coordinator records a durable work request: what must be delivered,
  how it will be checked, the slice of budget the child may spend, the permissions
  the child receives and, optionally, who must do it. Members of the environment
  claim a request under a lease that a generation number fences, keep it alive with
  heartbeats and publish a result reference to complete it.

  Limits are the implementation's own settings, read from what it reports: the
  lease duration, the depth cap (how deep delegations may nest) and the count cap
  (how many requests one session may delegate). Scenarios speak in those terms and
  never assume numbers.

  Every refusal is a typed error that writes nothing: after it, every budget,
  every listing and every request reads exactly as before.

  Background:
    Given the clock reads "2026-03-02T09:00:00Z"
    And an environment "lab" whose members are "alice", "bob" and "carol"
    And an environment "annex" whose members are "mallory"
    And a campaign "launch" in "lab" with a budget of 1000
    And a root session "root" of "alice" in "launch" granting tools "shell, browser" and devices "gpu, camera"

  # ---------------------------------------------------------------------------
  # 001.1  Delegating creates a request; its slice leaves the originating campaign
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.1
  Scenario: Delegating from a root session reserves the slice out of the campaign
    When session "root" delegates "survey" by spawn with a slice of 200
    Then "survey" is open
    And "survey" has spent 0 of its slice of 200
    And the budget of "launch" is 1000 in total, 800 available, 200 reserved and 0 spent
    And "bob" lists in "lab":
      | request | state |
      | survey  | open  |

  @AC-ARMONIA-WORKREQ-001.1
  Scenario: Each further delegation takes its own slice from what the campaign has left
    When session "root" delegates "survey" by spawn with a slice of 200
    And session "root" delegates "draft" by subagent with a slice of 300
    Then the budget of "launch" is 1000 in total, 500 available, 500 reserved and 0 spent

  @AC-ARMONIA-WORKREQ-001.1
  Scenario: A nested slice comes out of the child's remainder, not out of the campaign again
    Given session "root" delegates "survey" by spawn with a slice of 200
    When the child session of "survey" delegates "fact check" by subagent with a slice of 50
    Then the budget of "launch" is 1000 in total, 800 available, 200 reserved and 0 spent
    When the child session of "survey" tries to delegate "second check" by subagent with a slice of 151
    Then the attempt is refused with "insufficient_budget" and nothing changes
    When the child session of "survey" delegates "second check" by subagent with a slice of 150
    Then the budget of "launch" is 1000 in total, 800 available, 200 reserved and 0 spent

  @AC-ARMONIA-WORKREQ-001.1
  Scenario Outline: A delegation with bad input is refused with a typed error and writes nothing
    Given session "root" delegates "survey" by spawn with a slice of 100
    When session "<session>" tries to delegate "bad request" by spawn with a slice of <slice> for "<assignee>" to deliver "<deliverable>"
    Then the attempt is refused with "<code>" and nothing changes

    Examples:
      | session | slice | assignee | deliverable        | code          |
      | root    | 0     | bob      | a short summary    | invalid_input |
      | root    | -5    | bob      | a short summary    | invalid_input |
      | root    | 100   | bob      |                    | invalid_input |
      | root    | 100   | mallory  | a short summary    | invalid_input |
      | root    | 100   | zed      | a short summary    | invalid_input |
      | phantom | 100   | bob      | a short summary    | not_found     |

  # ---------------------------------------------------------------------------
  # 001.2  A child never receives a tool or device access its originator lacks
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.2
  Scenario: A child receives exactly the narrower set it was granted
    When session "root" delegates "survey" by spawn with a slice of 100 granting tools "shell" and devices "gpu"
    Then "survey" grants tools "shell" and devices "gpu"

  @AC-ARMONIA-WORKREQ-001.2
  Scenario Outline: A delegation asking for a grant its originator lacks is refused
    When session "root" tries to delegate "survey" by spawn with a slice of 100 granting <grants>
    Then the attempt is refused with "permission_escalation" and nothing changes

    Examples:
      | grants                                           |
      | tools "shell, compiler" and devices "gpu"        |
      | tools "shell" and devices "gpu, microphone"      |
      | tools "compiler"                                 |
      | devices "microphone"                             |

  @AC-ARMONIA-WORKREQ-001.2
  Scenario Outline: A device grant cannot be passed off as a tool grant, nor the reverse
    When session "root" tries to delegate "survey" by spawn with a slice of 100 granting <grants>
    Then the attempt is refused with "permission_escalation" and nothing changes

    Examples:
      | grants           |
      | tools "gpu"      |
      | devices "shell"  |

  @AC-ARMONIA-WORKREQ-001.2
  Scenario: A grandchild cannot regain a permission its parent dropped, although the root holds it
    Given session "root" delegates "survey" by spawn with a slice of 100 granting tools "shell" and devices "gpu"
    When the child session of "survey" tries to delegate "browse" by subagent with a slice of 10 granting tools "shell, browser"
    Then the attempt is refused with "permission_escalation" and nothing changes
    When the child session of "survey" tries to delegate "film" by subagent with a slice of 10 granting devices "gpu, camera"
    Then the attempt is refused with "permission_escalation" and nothing changes
    When the child session of "survey" delegates "compute" by subagent with a slice of 10 granting tools "shell" and devices "gpu"
    Then "compute" grants tools "shell" and devices "gpu"

  @AC-ARMONIA-WORKREQ-001.2
  Scenario: A child granted nothing can pass nothing on
    Given session "root" delegates "survey" by spawn with a slice of 100 granting nothing
    When the child session of "survey" tries to delegate "shell work" by subagent with a slice of 10 granting tools "shell"
    Then the attempt is refused with "permission_escalation" and nothing changes

  # ---------------------------------------------------------------------------
  # 001.3  A request and its lease survive a coordinator restart
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.3
  Scenario: A request, its lease and the campaign budget read the same after a restart
    Given session "root" delegates "survey" by spawn with a slice of 200 granting tools "shell" and devices "gpu" for "bob"
    And the child session of "survey" records usage of 20
    And "bob" claims "survey"
    When an observer notes every request, listing and budget
    And the implementation restarts
    Then every request, listing and budget reads as noted

  @AC-ARMONIA-WORKREQ-001.3
  Scenario: A live lease still keeps other claimants out after a restart
    Given session "root" delegates "survey" by spawn with a slice of 100
    And "bob" claims "survey"
    When the implementation restarts
    And "carol" tries to claim "survey"
    Then the attempt is refused with "lease_held" and nothing changes
    And "bob" holds "survey" at generation 1

  @AC-ARMONIA-WORKREQ-001.3
  Scenario: A restart between every two steps of a claim, heartbeat and publish loses nothing
    Given session "root" delegates "survey" by spawn with a slice of 100
    When "bob" claims "survey"
    And the implementation restarts
    And half the lease duration passes
    And the implementation restarts
    And "bob" heartbeats "survey"
    And the implementation restarts
    Then "bob" holds "survey" at generation 1
    And the lease of "survey" expires one lease duration from now
    When the implementation restarts
    And "bob" publishes "survey" with result "s3://reports/survey"
    And the implementation restarts
    Then "survey" is completed with result "s3://reports/survey" by "bob" at generation 1
    And the budget of "launch" is 1000 in total, 1000 available, 0 reserved and 0 spent

  @AC-ARMONIA-WORKREQ-001.3
  Scenario: Generations carry on from where they were after restarts
    Given session "root" delegates "survey" by spawn with a slice of 100
    When "bob" claims "survey"
    And the lease duration passes
    And the implementation restarts
    And "carol" claims "survey"
    Then "carol" holds "survey" at generation 2
    When the lease duration passes
    And the implementation restarts
    And "bob" claims "survey"
    Then "bob" holds "survey" at generation 3
    When the implementation restarts
    And "carol" tries to publish "survey" with result "s3://reports/late"
    Then the attempt is refused with "stale_generation" and nothing changes

  @AC-ARMONIA-WORKREQ-001.3
  Scenario: A lease restored by a restart expires exactly when it was due
    Given session "root" delegates "survey" by spawn with a slice of 100
    And "bob" claims "survey"
    When the implementation restarts
    And 1 microsecond less than the lease duration passes
    And the implementation restarts
    Then "bob" holds "survey" at generation 1
    When 1 microsecond passes
    And the implementation restarts
    And "bob" tries to publish "survey" with result "s3://reports/survey"
    Then the attempt is refused with "lease_expired" and nothing changes

  @AC-ARMONIA-WORKREQ-001.3
  Scenario: The depth of a delegated session is remembered across a restart
    Given a chain of spawn delegations from session "root" reaching the depth cap
    When the implementation restarts
    And the deepest child session tries to delegate "one level too deep" by spawn with a slice of 1
    Then the attempt is refused with "depth_cap" and nothing changes

  @AC-ARMONIA-WORKREQ-001.3
  Scenario: What a child may still spend is remembered across a restart
    Given session "root" delegates "survey" by spawn with a slice of 100
    And the child session of "survey" delegates "fact check" by subagent with a slice of 30
    And the child session of "survey" records usage of 20
    When the implementation restarts
    And the child session of "survey" tries to record usage of 51
    Then the attempt is refused with "usage_exceeds_slice" and nothing changes
    When the child session of "survey" records usage of 50
    Then the budget of "launch" is 1000 in total, 900 available, 30 reserved and 70 spent

  # ---------------------------------------------------------------------------
  # 001.4  An expired holder cannot publish; the request becomes claimable again
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.4
  Scenario: A holder replaced after its lease expired cannot publish; only the new holder's result stands
    Given session "root" delegates "survey" by spawn with a slice of 100
    And "bob" claims "survey"
    When the lease duration passes
    And "carol" claims "survey"
    Then "carol" holds "survey" at generation 2
    When "bob" tries to publish "survey" with result "s3://reports/bob"
    Then the attempt is refused with "stale_generation" and nothing changes
    When "carol" publishes "survey" with result "s3://reports/carol"
    Then "survey" is completed with result "s3://reports/carol" by "carol" at generation 2
    When "bob" tries to publish "survey" with result "s3://reports/bob"
    Then the attempt is refused with "already_completed" and nothing changes
    And "survey" is completed with result "s3://reports/carol" by "carol" at generation 2

  @AC-ARMONIA-WORKREQ-001.4
  Scenario: An expired holder nobody replaced can neither publish nor heartbeat, and the request is claimable at once
    Given session "root" delegates "survey" by spawn with a slice of 100
    And "bob" claims "survey"
    When the lease duration passes
    And "bob" tries to publish "survey" with result "s3://reports/bob"
    Then the attempt is refused with "lease_expired" and nothing changes
    When "bob" tries to heartbeat "survey"
    Then the attempt is refused with "lease_expired" and nothing changes
    And "survey" is open again
    And "carol" lists in "lab":
      | request | state |
      | survey  | open  |
    When "carol" claims "survey"
    Then "carol" holds "survey" at generation 2

  @AC-ARMONIA-WORKREQ-001.4
  Scenario: A publish one microsecond before the lease expires is accepted
    Given session "root" delegates "survey" by spawn with a slice of 100
    And "bob" claims "survey"
    When 1 microsecond less than the lease duration passes
    And "bob" publishes "survey" with result "s3://reports/bob"
    Then "survey" is completed with result "s3://reports/bob" by "bob" at generation 1

  @AC-ARMONIA-WORKREQ-001.4
  Scenario: A publish long after the lease expired is refused
    Given session "root" delegates "survey" by spawn with a slice of 100
    And "bob" claims "survey"
    When 3 lease durations pass
    And "bob" tries to publish "survey" with result "s3://reports/bob"
    Then the attempt is refused with "lease_expired" and nothing changes
    And "survey" is open again

  @AC-ARMONIA-WORKREQ-001.4
  Scenario: An assigned request whose lease expired is claimable again by its assignee only
    Given session "root" delegates "survey" by spawn with a slice of 100 for "bob"
    When "carol" tries to claim "survey"
    Then the attempt is refused with "not_assignee" and nothing changes
    When "bob" claims "survey"
    And the lease duration passes
    And "carol" tries to claim "survey"
    Then the attempt is refused with "not_assignee" and nothing changes
    When "bob" claims "survey"
    Then "bob" holds "survey" at generation 2

  @AC-ARMONIA-WORKREQ-001.4
  Scenario: A request that does not exist is never claimable
    Given session "root" delegates "survey" by spawn with a slice of 100
    When "bob" tries to claim a request that does not exist
    Then the attempt is refused with "not_found" and nothing changes

  # ---------------------------------------------------------------------------
  # 001.5  Members list open and in-progress requests; non-members cannot
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.5
  Scenario: Members see open and in-progress requests in creation order, never completed ones
    Given session "root" delegates "survey" by spawn with a slice of 100
    And session "root" delegates "draft" by subagent with a slice of 100
    And session "root" delegates "review" by spawn with a slice of 100
    And the child session of "survey" delegates "fact check" by subagent with a slice of 10
    When "bob" claims "draft"
    And "carol" claims "review"
    And "carol" publishes "review" with result "s3://reports/review"
    Then "alice" lists in "lab":
      | request    | state       |
      | survey     | open        |
      | draft      | in progress |
      | fact check | open        |
    And "bob" lists in "lab":
      | request    | state       |
      | survey     | open        |
      | draft      | in progress |
      | fact check | open        |

  @AC-ARMONIA-WORKREQ-001.5
  Scenario Outline: A non-member's listing is refused exactly as for an environment that does not exist
    Given session "root" delegates "survey" by spawn with a slice of 100
    When "<outsider>" tries to list the requests of "lab"
    Then the attempt is refused with "not_found" and nothing changes
    And the refusal reads exactly like listing an environment that does not exist

    Examples:
      | outsider |
      | mallory  |
      | zed      |

  @AC-ARMONIA-WORKREQ-001.5
  Scenario: Requests stay within the environment they were delegated in
    Given a campaign "side project" in "annex" with a budget of 50
    And a root session "annex root" of "mallory" in "side project" granting tools "shell"
    When session "annex root" delegates "side errand" by spawn with a slice of 10
    And session "root" delegates "survey" by spawn with a slice of 100
    Then "mallory" lists in "annex":
      | request     | state |
      | side errand | open  |
    And "bob" lists in "lab":
      | request | state |
      | survey  | open  |

  @AC-ARMONIA-WORKREQ-001.5
  Scenario: A member sees an empty list when nothing is open
    Given session "root" delegates "survey" by spawn with a slice of 100
    When "bob" claims "survey"
    And "bob" publishes "survey" with result "s3://reports/survey"
    Then "carol" lists no requests in "lab"

  @AC-ARMONIA-WORKREQ-001.5
  Scenario Outline: A principal outside the environment cannot claim its requests
    Given session "root" delegates "survey" by spawn with a slice of 100
    When "<outsider>" tries to claim "survey"
    Then the attempt is refused with "not_found" and nothing changes

    Examples:
      | outsider |
      | mallory  |
      | zed      |

  # ---------------------------------------------------------------------------
  # 001.6  Completing records the result reference and closes the lease exactly once
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.6
  Scenario: Publishes of one request made at once complete it exactly once and close its lease once
    Given the implementation evaluates operations concurrently
    When the holder of each of 3 claimed requests publishes it several times at once
    Then each request was completed by exactly one publish and its lease closed once

  @AC-ARMONIA-WORKREQ-001.6
  Scenario: Publishing records the result, closes the lease and returns the unspent slice
    Given session "root" delegates "survey" by spawn with a slice of 200
    And the child session of "survey" records usage of 50
    And "bob" claims "survey"
    When 10 seconds pass
    And "bob" publishes "survey" with result "s3://reports/survey"
    Then "survey" is completed with result "s3://reports/survey" by "bob" at generation 1
    And the completion of "survey" returned 150
    And the budget of "launch" is 1000 in total, 950 available, 0 reserved and 50 spent
    And "bob" lists no requests in "lab"

  @AC-ARMONIA-WORKREQ-001.6
  Scenario: An exact publish retry answers with the recorded completion and returns no budget twice
    Given session "root" delegates "survey" by spawn with a slice of 200
    And the child session of "survey" records usage of 50
    And "bob" claims "survey"
    When "bob" publishes "survey" with result "s3://reports/survey"
    And the lease duration passes
    And "bob" publishes "survey" with result "s3://reports/survey" again
    Then the retry answers with the completion of "survey" recorded the first time
    And "survey" is completed with result "s3://reports/survey" by "bob" at generation 1
    And the budget of "launch" is 1000 in total, 950 available, 0 reserved and 50 spent

  @AC-ARMONIA-WORKREQ-001.6
  Scenario Outline: Any other publish of a completed request is refused and changes nothing
    Given session "root" delegates "survey" by spawn with a slice of 200
    And "bob" claims "survey"
    And "bob" publishes "survey" with result "s3://reports/survey"
    When "<holder>" tries to publish "survey" at generation <generation> with result "<result>"
    Then the attempt is refused with "already_completed" and nothing changes
    And "survey" is completed with result "s3://reports/survey" by "bob" at generation 1

    Examples:
      | holder | generation | result                 |
      | bob    | 1          | s3://reports/survey-v2 |
      | carol  | 1          | s3://reports/survey    |
      | bob    | 2          | s3://reports/survey    |

  @AC-ARMONIA-WORKREQ-001.6
  Scenario: A completed request can be neither claimed, nor heartbeaten, nor charged again
    Given session "root" delegates "survey" by spawn with a slice of 200
    And "bob" claims "survey"
    And "bob" publishes "survey" with result "s3://reports/survey"
    When "carol" tries to claim "survey"
    Then the attempt is refused with "already_completed" and nothing changes
    When "bob" tries to heartbeat "survey"
    Then the attempt is refused with "already_completed" and nothing changes
    When the lease duration passes
    And "bob" tries to claim "survey"
    Then the attempt is refused with "already_completed" and nothing changes
    When the child session of "survey" tries to record usage of 1
    Then the attempt is refused with "already_completed" and nothing changes

  # ---------------------------------------------------------------------------
  # 001.7  The lease is fenced by a generation; stale generations are rejected
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.7
  Scenario: Of 32 claims of one open request made at once, exactly one wins
    Given the implementation evaluates operations concurrently
    When 32 members claim one open request at once, for 3 requests
    Then each request had exactly one winning claim and 31 refused with "lease_held"

  @AC-ARMONIA-WORKREQ-001.7
  Scenario: Each claim moves the generation on by exactly one
    Given session "root" delegates "survey" by spawn with a slice of 100
    When "bob" claims "survey"
    Then "bob" holds "survey" at generation 1
    When the lease duration passes
    And "carol" claims "survey"
    Then "carol" holds "survey" at generation 2
    When the lease duration passes
    And "bob" claims "survey"
    Then "bob" holds "survey" at generation 3

  @AC-ARMONIA-WORKREQ-001.7
  Scenario: A holder that claims again cannot publish with its own older generation
    Given session "root" delegates "survey" by spawn with a slice of 100
    And "bob" claims "survey"
    When the lease duration passes
    And "bob" claims "survey"
    Then "bob" holds "survey" at generation 2
    When "bob" tries to publish "survey" at generation 1 with result "s3://reports/old"
    Then the attempt is refused with "stale_generation" and nothing changes
    When "bob" publishes "survey" with result "s3://reports/new"
    Then "survey" is completed with result "s3://reports/new" by "bob" at generation 2

  @AC-ARMONIA-WORKREQ-001.7
  Scenario Outline: A publish whose holder and generation are not the current pair is refused
    Given session "root" delegates "survey" by spawn with a slice of 100
    And "bob" claims "survey"
    When "<holder>" tries to publish "survey" at generation <generation> with result "s3://reports/forged"
    Then the attempt is refused with "stale_generation" and nothing changes
    And "bob" holds "survey" at generation 1

    Examples:
      | holder | generation |
      | bob    | 2          |
      | bob    | 0          |
      | carol  | 1          |

  @AC-ARMONIA-WORKREQ-001.7
  Scenario: A holder of two requests fences each lease on its own request
    # The fence is the triple (request, holder, generation): a fence that matched on
    # holder and generation alone would let one publish complete every request bob holds.
    Given session "root" delegates "survey" by spawn with a slice of 100
    And session "root" delegates "draft" by spawn with a slice of 100
    And "bob" claims "survey"
    And "bob" claims "draft"
    Then "bob" holds "survey" at generation 1
    And "bob" holds "draft" at generation 1
    When "bob" heartbeats "draft"
    And "bob" publishes "survey" with result "s3://reports/survey"
    Then "survey" is completed with result "s3://reports/survey" by "bob" at generation 1
    And "bob" holds "draft" at generation 1
    When "bob" publishes "draft" with result "s3://reports/draft"
    Then "draft" is completed with result "s3://reports/draft" by "bob" at generation 1

  @AC-ARMONIA-WORKREQ-001.7
  Scenario: A live lease keeps every other claimant out, its own holder included
    Given session "root" delegates "survey" by spawn with a slice of 100
    And "bob" claims "survey"
    When "carol" tries to claim "survey"
    Then the attempt is refused with "lease_held" and nothing changes
    When 1 microsecond less than the lease duration passes
    And "bob" tries to claim "survey"
    Then the attempt is refused with "lease_held" and nothing changes
    And "bob" holds "survey" at generation 1

  # ---------------------------------------------------------------------------
  # 001.8  Depth and count caps still guard delegation
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.8
  Scenario Outline: A delegation one level past the depth cap is refused, whatever its kind
    Given a chain of <kind> delegations from session "root" reaching the depth cap
    When the deepest child session tries to delegate "one level too deep" by <kind> with a slice of 1
    Then the attempt is refused with "depth_cap" and nothing changes

    Examples:
      | kind     |
      | spawn    |
      | subagent |

  @AC-ARMONIA-WORKREQ-001.8
  Scenario: A delegation one past the count cap is refused
    Given session "root" has delegated as many requests as the count cap allows
    When session "root" tries to delegate "one too many" by subagent with a slice of 1
    Then the attempt is refused with "count_cap" and nothing changes

  @AC-ARMONIA-WORKREQ-001.8
  Scenario: The count cap binds each session separately
    Given session "root" has delegated as many requests as the count cap allows
    When the child session of "sibling 1" delegates "nephew" by spawn with a slice of 1
    Then "nephew" is open

  # ---------------------------------------------------------------------------
  # 001.9  Delegation never creates budget or authority
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.9
  Scenario: Delegations made at once never take more budget than the campaign has
    Given the implementation evaluates operations concurrently
    When 20 delegations of 10 are made at once from a campaign with a budget of 100
    Then at most 10 delegations succeeded and the budget was conserved and never negative

  @AC-ARMONIA-WORKREQ-001.9
  Scenario: A slice larger than what the campaign has left is refused; an exact fit is accepted
    Given session "root" delegates "survey" by spawn with a slice of 600
    When session "root" tries to delegate "draft" by spawn with a slice of 401
    Then the attempt is refused with "insufficient_budget" and nothing changes
    When session "root" delegates "draft" by spawn with a slice of 400
    Then the budget of "launch" is 1000 in total, 0 available, 1000 reserved and 0 spent

  @AC-ARMONIA-WORKREQ-001.9
  Scenario: A nested slice cannot exceed the child's remainder even when the campaign could afford it
    Given session "root" delegates "survey" by spawn with a slice of 100
    And the child session of "survey" records usage of 40
    When the child session of "survey" tries to delegate "fact check" by subagent with a slice of 61
    Then the attempt is refused with "insufficient_budget" and nothing changes

  @AC-ARMONIA-WORKREQ-001.9
  Scenario: A root session cannot spend more than the campaign has left
    Given session "root" delegates "survey" by spawn with a slice of 900
    When session "root" tries to record usage of 101
    Then the attempt is refused with "insufficient_budget" and nothing changes
    When session "root" records usage of 100
    Then the budget of "launch" is 1000 in total, 0 available, 900 reserved and 100 spent

  @AC-ARMONIA-WORKREQ-001.9
  Scenario: Budget is conserved through a mix of delegations, usage and completions
    Given session "root" delegates "survey" by spawn with a slice of 300
    And session "root" delegates "draft" by subagent with a slice of 200
    And the child session of "survey" delegates "fact check" by subagent with a slice of 100
    When session "root" records usage of 50
    And the child session of "survey" records usage of 40
    And the child session of "fact check" records usage of 30
    Then the budget of "launch" is 1000 in total, 450 available, 430 reserved and 120 spent
    When "carol" claims "fact check"
    And "carol" publishes "fact check" with result "s3://reports/fact-check"
    Then the completion of "fact check" returned 70
    And the budget of "launch" is 1000 in total, 450 available, 430 reserved and 120 spent
    When "bob" claims "survey"
    And "bob" publishes "survey" with result "s3://reports/survey"
    Then the completion of "survey" returned 230
    And the budget of "launch" is 1000 in total, 680 available, 200 reserved and 120 spent
    When the child session of "draft" records usage of 200
    And "bob" claims "draft"
    And "bob" publishes "draft" with result "s3://reports/draft"
    Then the completion of "draft" returned 0
    And the budget of "launch" is 1000 in total, 680 available, 0 reserved and 320 spent
    And the budget of "launch" is conserved

  @AC-ARMONIA-WORKREQ-001.9
  Scenario: Unspent budget returns to the campaign when its originating request has already completed
    Given session "root" delegates "survey" by spawn with a slice of 300
    And the child session of "survey" delegates "fact check" by subagent with a slice of 100
    When "bob" claims "survey"
    And "bob" publishes "survey" with result "s3://reports/survey"
    Then the completion of "survey" returned 200
    And the budget of "launch" is 1000 in total, 900 available, 100 reserved and 0 spent
    When the child session of "fact check" records usage of 30
    And "carol" claims "fact check"
    And "carol" publishes "fact check" with result "s3://reports/fact-check"
    Then the completion of "fact check" returned 70
    And the budget of "launch" is 1000 in total, 970 available, 0 reserved and 30 spent
    And the budget of "launch" is conserved

  # ---------------------------------------------------------------------------
  # 001.10  A request exposes every field of the data contract
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.10
  Scenario: A freshly delegated request reports every field of the data contract
    When session "root" delegates "survey" as follows:
      | kind              | subagent                                   |
      | deliverable       | a market survey of three vendors           |
      | acceptance checks | names three vendors; cites a source for each |
      | budget slice      | 120                                        |
      | tools             | shell                                      |
      | devices           | gpu                                        |
      | assignee          | bob                                        |
    Then "survey" reports every contract field as:
      | field               | value                                         |
      | request id          | <set>                                         |
      | environment         | lab                                           |
      | campaign            | launch                                        |
      | originating session | root                                          |
      | child session       | <set>                                         |
      | deliverable         | a market survey of three vendors              |
      | acceptance checks   | names three vendors; cites a source for each  |
      | budget slice        | 120                                           |
      | budget spent        | 0                                             |
      | tool grants         | shell                                         |
      | device grants       | gpu                                           |
      | assignee            | bob                                           |
      | lease holder        | <none>                                        |
      | lease generation    | 0                                             |
      | lease expiry        | <none>                                        |
      | lease closed        | <none>                                        |
      | state               | open                                          |
      | result reference    | <none>                                        |

  @AC-ARMONIA-WORKREQ-001.10
  Scenario: A completed request reports its lease and its result reference
    Given session "root" delegates "survey" by spawn with a slice of 80
    And the child session of "survey" records usage of 5
    And "carol" claims "survey"
    When "carol" publishes "survey" with result "s3://reports/survey"
    Then "survey" reports every contract field as:
      | field               | value                           |
      | request id          | <set>                           |
      | environment         | lab                             |
      | campaign            | launch                          |
      | originating session | root                            |
      | child session       | <set>                           |
      | deliverable         | a short written summary         |
      | acceptance checks   | the summary names its sources   |
      | budget slice        | 80                              |
      | budget spent        | 5                               |
      | tool grants         |                                 |
      | device grants       |                                 |
      | assignee            | <none>                          |
      | lease holder        | carol                           |
      | lease generation    | 1                               |
      | lease expiry        | <set>                           |
      | lease closed        | 2026-03-02T09:00:00Z            |
      | state               | completed                       |
      | result reference    | s3://reports/survey             |

  @AC-ARMONIA-WORKREQ-001.10
  Scenario: A claimed request reports its holder, generation and expiry
    Given session "root" delegates "survey" by spawn with a slice of 80
    When "carol" claims "survey"
    Then "carol" holds "survey" at generation 1
    And the lease of "survey" expires one lease duration from now

  @AC-ARMONIA-WORKREQ-001.10
  Scenario: Every request gets its own id and its own new child session
    When session "root" delegates "survey" by spawn with a slice of 100
    And session "root" delegates "draft" by subagent with a slice of 100
    Then "survey" and "draft" have distinct ids and distinct new child sessions

  # ---------------------------------------------------------------------------
  # 001.11  Both a session spawn and a subagent delegation create a request
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.11
  Scenario Outline: A delegation by <kind> creates a durable request whose child draws on its slice
    When session "root" delegates "survey" by <kind> with a slice of 100
    Then "survey" is open
    And the budget of "launch" is 1000 in total, 900 available, 100 reserved and 0 spent
    And "carol" lists in "lab":
      | request | state |
      | survey  | open  |
    When the child session of "survey" records usage of 30
    Then "survey" has spent 30 of its slice of 100

    Examples:
      | kind     |
      | spawn    |
      | subagent |

  @AC-ARMONIA-WORKREQ-001.11
  Scenario Outline: A child made by <first> can itself delegate by <second>
    Given session "root" delegates "survey" by <first> with a slice of 100
    When the child session of "survey" delegates "fact check" by <second> with a slice of 40
    Then "fact check" is open
    And "bob" lists in "lab":
      | request    | state |
      | survey     | open  |
      | fact check | open  |

    Examples:
      | first    | second   |
      | spawn    | subagent |
      | subagent | spawn    |
      | spawn    | spawn    |
      | subagent | subagent |

  # ---------------------------------------------------------------------------
  # 001.12  Heartbeats extend a live lease; late or stale heartbeats extend nothing
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.12
  Scenario: A heartbeat moves the expiry to one lease duration from now and keeps the generation
    Given session "root" delegates "survey" by spawn with a slice of 100
    And "bob" claims "survey"
    When half the lease duration passes
    And "bob" heartbeats "survey"
    Then "bob" holds "survey" at generation 1
    And the lease of "survey" expires one lease duration from now

  @AC-ARMONIA-WORKREQ-001.12
  Scenario: Heartbeats keep a lease alive across several lease durations
    Given session "root" delegates "survey" by spawn with a slice of 100
    And "bob" claims "survey"
    When "bob" heartbeats "survey" every half lease duration for 4 lease durations
    And "carol" tries to claim "survey"
    Then the attempt is refused with "lease_held" and nothing changes
    When "bob" publishes "survey" with result "s3://reports/survey"
    Then "survey" is completed with result "s3://reports/survey" by "bob" at generation 1

  @AC-ARMONIA-WORKREQ-001.12
  Scenario: A heartbeat one microsecond before expiry still extends the lease
    Given session "root" delegates "survey" by spawn with a slice of 100
    And "bob" claims "survey"
    When 1 microsecond less than the lease duration passes
    And "bob" heartbeats "survey"
    Then the lease of "survey" expires one lease duration from now

  @AC-ARMONIA-WORKREQ-001.12
  Scenario: A heartbeat at the exact expiry instant is refused and extends nothing
    Given session "root" delegates "survey" by spawn with a slice of 100
    And "bob" claims "survey"
    When the lease duration passes
    And "bob" tries to heartbeat "survey"
    Then the attempt is refused with "lease_expired" and nothing changes
    And "survey" is open again

  @AC-ARMONIA-WORKREQ-001.12
  Scenario: A heartbeat from a replaced holder is refused and leaves the new lease alone
    Given session "root" delegates "survey" by spawn with a slice of 100
    And "bob" claims "survey"
    When the lease duration passes
    And "carol" claims "survey"
    And "bob" tries to heartbeat "survey"
    Then the attempt is refused with "stale_generation" and nothing changes
    And "carol" holds "survey" at generation 2

  @AC-ARMONIA-WORKREQ-001.12
  Scenario Outline: A heartbeat whose holder and generation are not the current pair is refused
    Given session "root" delegates "survey" by spawn with a slice of 100
    And "bob" claims "survey"
    When "<holder>" tries to heartbeat "survey" at generation <generation>
    Then the attempt is refused with "stale_generation" and nothing changes
    And "bob" holds "survey" at generation 1

    Examples:
      | holder | generation |
      | bob    | 2          |
      | carol  | 1          |

  # ---------------------------------------------------------------------------
  # 001.13  The child's usage draws from its slice and never exceeds it
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.13
  Scenario: A child's usage is charged to its slice, not to what the campaign has left
    Given session "root" delegates "survey" by spawn with a slice of 100
    When the child session of "survey" records usage of 60
    Then "survey" has spent 60 of its slice of 100
    And the budget of "launch" is 1000 in total, 900 available, 40 reserved and 60 spent

  @AC-ARMONIA-WORKREQ-001.13
  Scenario: Usage beyond what is left of the slice is refused and charges nothing
    Given session "root" delegates "survey" by spawn with a slice of 100
    And the child session of "survey" records usage of 70
    When the child session of "survey" tries to record usage of 31
    Then the attempt is refused with "usage_exceeds_slice" and nothing changes
    When the child session of "survey" records usage of 30
    Then "survey" has spent 100 of its slice of 100
    And the budget of "launch" is 1000 in total, 900 available, 0 reserved and 100 spent

  @AC-ARMONIA-WORKREQ-001.13
  Scenario: Slices carved out for grandchildren are no longer the child's to spend
    Given session "root" delegates "survey" by spawn with a slice of 100
    And the child session of "survey" delegates "fact check" by subagent with a slice of 70
    When the child session of "survey" tries to record usage of 31
    Then the attempt is refused with "usage_exceeds_slice" and nothing changes
    When the child session of "survey" records usage of 30
    And the child session of "fact check" records usage of 70
    Then the budget of "launch" is 1000 in total, 900 available, 0 reserved and 100 spent

  @AC-ARMONIA-WORKREQ-001.13
  Scenario Outline: Usage with bad input is refused with a typed error and charges nothing
    Given session "root" delegates "survey" by spawn with a slice of 100
    When <session> tries to record usage of <amount>
    Then the attempt is refused with "<code>" and nothing changes

    Examples:
      | session                       | amount | code          |
      | the child session of "survey" | 0      | invalid_input |
      | the child session of "survey" | -3     | invalid_input |
      | session "root"                | 0      | invalid_input |
      | session "phantom"             | 5      | not_found     |
