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
  never assume numbers. "The lease runs out" moves the clock just past the lease's
  expiry; only the scenarios tagged @interpretation:WR-8 land on the expiry instant, and
  two more that let the holder's heartbeat there show which way WR-8 is read.

  How to read these scenarios: a Given step checks that what it built was accepted; a
  When step only acts, and an action the scenario needed but the implementation
  refused fails the next Then step, naming the refusal. Every refusal is a typed error
  that writes nothing: after it, every budget, listing, request and session (with the
  counts the caps compare) reads exactly as before. Where several refusals apply at
  once and the spec does not rank them, the scenario accepts any of them. Listings
  are compared as sets: the spec fixes no order. Scenarios tagged with an
  interpretation rest on a reading the spec leaves open: an implementation that
  reads it otherwise is reported `diverged`, not failed.

  Background:
    Given the clock reads "2026-03-02T09:00:00Z"
    And an environment "lab" whose members are "alice", "bob" and "carol"
    And an environment "annex" whose members are "mallory"
    And a campaign "launch" in "lab" with a budget of 1000
    And a root session "root" of "alice" in "launch" granting tools "shell, browser" and devices "gpu, camera"

  # ---------------------------------------------------------------------------
  # 001.1  Delegating creates a request; its slice leaves the originating campaign
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.1 @clause:creates-request @clause:slice-deducted
  Scenario: Delegating from a root session takes the slice out of the campaign
    When session "root" delegates "survey" by spawn with a slice of 200
    Then "survey" is open
    And "survey" has spent 0 of its slice of 200
    And the budget of "launch" is 1000 in total, 800 available, 200 reserved and 0 spent
    And "bob" lists in "lab":
      | request | state |
      | survey  | open  |

  @AC-ARMONIA-WORKREQ-001.1 @clause:slice-deducted
  Scenario: Each further delegation takes its own slice from what the campaign has left
    When session "root" delegates "survey" by spawn with a slice of 200
    And session "root" delegates "draft" by subagent with a slice of 300
    Then the budget of "launch" is 1000 in total, 500 available, 500 reserved and 0 spent

  @AC-ARMONIA-WORKREQ-001.1 @clause:slice-deducted
  Scenario: Each campaign's budget holds its own slices only, though one campaign's id begins with the other's
    # "launch" is a prefix of "launch-2": a budget summed over requests whose campaign id
    # begins with the one asked for, or over the environment both belong to, mixes them.
    Given a campaign "launch-2" in "lab" with a budget of 200
    And a root session "root-2" of "bob" in "launch-2" granting tools "shell-admin"
    When session "root" delegates "survey" by spawn with a slice of 100
    And session "root-2" delegates "draft" by spawn with a slice of 50
    And the child session of "draft" records usage of 20
    Then the budget of "launch" is 1000 in total, 900 available, 100 reserved and 0 spent
    And the budget of "launch-2" is 200 in total, 150 available, 30 reserved and 20 spent

  @AC-ARMONIA-WORKREQ-001.1 @interpretation:WR-1 @interpretation:WR-4 @interpretation:WR-3
  @clause:slice-deducted
  Scenario: A nested slice comes out of the child's remainder, not out of the campaign again
    Given session "root" has delegated "survey" by spawn with a slice of 200
    When the child session of "survey" delegates "fact check" by subagent with a slice of 50
    Then the budget of "launch" is conserved
    And as WR-1 reads it, the budget of "launch" is 1000 in total, 800 available, 200 reserved and 0 spent
    When the child session of "survey" tries to delegate "second check" by subagent with a slice of 151
    Then as WR-1 reads it, the attempt is refused with "insufficient_budget" and nothing changes
    When the child session of "survey" delegates "second check" by subagent with a slice of 150
    Then as WR-1 reads it, the budget of "launch" is 1000 in total, 800 available, 200 reserved and 0 spent

  @AC-ARMONIA-WORKREQ-001.1 @interpretation:WR-21 @interpretation:WR-22 @interpretation:WR-23
  @interpretation:WR-4 @clause:creates-request
  Scenario Outline: A delegation with bad input is refused and writes nothing: <case>
    Given session "root" has delegated "survey" by spawn with a slice of 100
    When session "root" tries to delegate "bad request" by spawn with a slice of <slice> for "<assignee>" to deliver "<deliverable>"
    Then as <question> reads it, the attempt is refused with <codes> and nothing changes

    Examples:
      | case                        | slice | assignee | deliverable     | question | codes                          |
      | a slice of 0                | 0     | bob      | a short summary | WR-21    | "invalid_input"                |
      | an empty deliverable        | 100   | bob      |                 | WR-22    | "invalid_input"                |
      | an assignee of another env  | 100   | mallory  | a short summary | WR-23    | "invalid_input" or "not_found" |
      | an assignee nobody knows    | 100   | zed      | a short summary | WR-23    | "invalid_input" or "not_found" |

  @AC-ARMONIA-WORKREQ-001.9 @clause:no-negative-amount
  Scenario Outline: An amount below zero is refused under every reading and moves nothing: <case>
    Given session "root" has delegated "survey" by spawn with a slice of 100
    When <attempt>
    Then the attempt is refused, as no amount may run budget backwards, and nothing changes

    Examples:
      | case                 | attempt                                                                                                     |
      | a negative slice     | session "root" tries to delegate "bad request" by spawn with a slice of -5 for "bob" to deliver "a summary" |
      | a child's usage      | the child session of "survey" tries to record usage of -50                                                  |
      | a root's usage       | session "root" tries to record usage of -50                                                                 |

  @AC-ARMONIA-WORKREQ-001.1 @interpretation:WR-4 @clause:creates-request
  Scenario: A delegation from a session that does not exist is refused and writes nothing
    Given session "root" has delegated "survey" by spawn with a slice of 100
    When session "phantom" tries to delegate "bad request" by spawn with a slice of 100
    Then the attempt is refused with "not_found" or "invalid_input" and nothing changes

  # ---------------------------------------------------------------------------
  # 001.2  A child never receives a tool or device access its originator lacks
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.2 @clause:no-wider-grant
  Scenario: A child receives the narrower set it was granted
    When session "root" delegates "survey" by spawn with a slice of 100 granting tools "shell" and devices "gpu"
    Then "survey" grants tools "shell" and devices "gpu"

  @AC-ARMONIA-WORKREQ-001.2 @interpretation:WR-4 @clause:no-wider-grant
  Scenario Outline: A delegation asking for a grant its originator lacks is refused or narrowed: <grants>
    When session "root" tries to delegate "survey" by spawn with a slice of 100 granting <grants>
    Then the child was granted nothing its originator lacks: the attempt was refused with "permission_escalation" and nothing changed, or the request narrowed the grant

    Examples:
      | grants                                           |
      | tools "shell, compiler" and devices "gpu"        |
      | tools "shell" and devices "gpu, microphone"      |
      | tools "compiler"                                 |
      | devices "microphone"                             |

  @AC-ARMONIA-WORKREQ-001.2 @interpretation:WR-5 @interpretation:WR-4 @clause:no-wider-grant
  Scenario Outline: A device grant cannot be passed off as a tool grant, nor the reverse: <grants>
    When session "root" tries to delegate "survey" by spawn with a slice of 100 granting <grants>
    Then the child was granted nothing its originator lacks: the attempt was refused with "permission_escalation" and nothing changed, or the request narrowed the grant

    Examples:
      | grants           |
      | tools "gpu"      |
      | devices "shell"  |

  @AC-ARMONIA-WORKREQ-001.2 @interpretation:WR-4 @clause:no-wider-grant
  Scenario Outline: A grant whose name only contains, or is contained in, one the originator holds is refused or narrowed: <grants>
    # The root holds tools "shell, browser" and devices "gpu, camera". A name looked up in the
    # held names as text, compared by prefix or suffix, or a held grant taken for a namespace
    # of longer names, lets each of these through.
    When session "root" tries to delegate "survey" by spawn with a slice of 100 granting <grants>
    Then the child was granted nothing its originator lacks: the attempt was refused with "permission_escalation" and nothing changed, or the request narrowed the grant

    Examples:
      | grants                         |
      | tools "hell"                   |
      | tools "sh"                     |
      | tools "shell-admin"            |
      | tools "browse"                 |
      | tools "shell, sh"              |
      | devices "gpu-0"                |
      | devices "cam"                  |

  @AC-ARMONIA-WORKREQ-001.2 @interpretation:WR-25 @interpretation:WR-4 @clause:no-wider-grant
  Scenario Outline: A grant whose name differs from a held one only in case is another grant: <grants>
    # The root holds tools "shell, browser" and devices "gpu, camera". Whether "Shell" names the
    # grant "shell" the spec does not say (WR-25): the kit reads grant names exactly, as a
    # collation that ignores case would not.
    When session "root" tries to delegate "survey" by spawn with a slice of 100 granting <grants>
    Then the child was granted nothing its originator lacks: the attempt was refused with "permission_escalation" and nothing changed, or the request narrowed the grant

    Examples:
      | grants          |
      | tools "Shell"   |
      | devices "GPU"   |

  @AC-ARMONIA-WORKREQ-001.2 @interpretation:WR-4 @clause:no-wider-grant
  Scenario: A child granted a longer name cannot pass on the shorter one it contains, nor a longer one
    Given session "root" has delegated "survey" by spawn with a slice of 100 granting tools "shell"
    When the child session of "survey" tries to delegate "admin work" by subagent with a slice of 10 granting tools "shell-admin"
    Then the child was granted nothing its originator lacks: the attempt was refused with "permission_escalation" and nothing changed, or the request narrowed the grant
    When the child session of "survey" tries to delegate "short work" by subagent with a slice of 10 granting tools "sh"
    Then the child was granted nothing its originator lacks: the attempt was refused with "permission_escalation" and nothing changed, or the request narrowed the grant
    When the child session of "survey" delegates "shell work" by subagent with a slice of 10 granting tools "shell"
    Then "shell work" grants tools "shell"

  @AC-ARMONIA-WORKREQ-001.2 @interpretation:WR-4 @clause:no-wider-grant
  Scenario: A grandchild cannot regain a permission its parent dropped, although the root holds it
    Given session "root" has delegated "survey" by spawn with a slice of 100 granting tools "shell" and devices "gpu"
    When the child session of "survey" tries to delegate "browse" by subagent with a slice of 10 granting tools "shell, browser"
    Then the child was granted nothing its originator lacks: the attempt was refused with "permission_escalation" and nothing changed, or the request narrowed the grant
    When the child session of "survey" tries to delegate "film" by subagent with a slice of 10 granting devices "gpu, camera"
    Then the child was granted nothing its originator lacks: the attempt was refused with "permission_escalation" and nothing changed, or the request narrowed the grant
    When the child session of "survey" delegates "compute" by subagent with a slice of 10 granting tools "shell" and devices "gpu"
    Then "compute" grants tools "shell" and devices "gpu"

  @AC-ARMONIA-WORKREQ-001.2 @interpretation:WR-4 @clause:no-wider-grant
  Scenario: A child granted nothing can pass nothing on
    Given session "root" has delegated "survey" by spawn with a slice of 100 granting nothing
    When the child session of "survey" tries to delegate "shell work" by subagent with a slice of 10 granting tools "shell"
    Then the child was granted nothing its originator lacks: the attempt was refused with "permission_escalation" and nothing changed, or the request narrowed the grant

  # ---------------------------------------------------------------------------
  # 001.3  A request and its lease survive a coordinator restart
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.3 @clause:request-survives @clause:lease-survives
  Scenario: A request, its lease and the campaign budget read the same after a restart
    Given session "root" has delegated "survey" by spawn with a slice of 200 granting tools "shell" and devices "gpu" for "bob"
    And the child session of "survey" has recorded usage of 20
    And "bob" has claimed "survey"
    Then "bob" holds "survey" under his current lease
    And "survey" has spent 20 of its slice of 200
    And "survey" grants tools "shell" and devices "gpu"
    And the budget of "launch" is 1000 in total, 800 available, 180 reserved and 20 spent
    When the implementation restarts
    Then every request, listing, budget and session reads as it did before the restart

  @AC-ARMONIA-WORKREQ-001.3 @clause:lease-survives
  Scenario: A live lease still keeps other claimants out after a restart, and lets them in once it runs out
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When the implementation restarts
    And "carol" tries to claim "survey"
    Then the attempt is refused with "lease_held" and nothing changes
    And "bob" holds "survey" under his current lease
    When the lease runs out
    And "carol" claims "survey"
    Then "carol" holds "survey" under a newer generation than "bob" held

  @AC-ARMONIA-WORKREQ-001.3 @interpretation:WR-3 @clause:lease-survives @clause:request-survives
  Scenario: A restart between every two steps of a claim, heartbeat and publish loses nothing
    Given session "root" has delegated "survey" by spawn with a slice of 100
    When "bob" claims "survey"
    And the implementation restarts
    And half the lease duration passes
    And the implementation restarts
    And "bob" heartbeats "survey"
    And the implementation restarts
    Then "bob" holds "survey" under his current lease
    And the lease of "survey" expires when the heartbeat said it would
    When the implementation restarts
    And "bob" publishes "survey" with result "s3://reports/survey"
    And the implementation restarts
    Then "survey" is completed with result "s3://reports/survey" by "bob" under his current lease
    And as WR-3 reads it, the budget of "launch" is 1000 in total, 1000 available, 0 reserved and 0 spent

  @AC-ARMONIA-WORKREQ-001.3 @clause:lease-survives
  Scenario: Generations carry on from where they were after restarts
    Given session "root" has delegated "survey" by spawn with a slice of 100
    When "bob" claims "survey"
    And the lease runs out
    And the implementation restarts
    And "carol" claims "survey"
    Then "carol" holds "survey" under a newer generation than "bob" held
    When the lease runs out
    And the implementation restarts
    And "bob" claims "survey"
    Then "bob" holds "survey" under a newer generation than "carol" held
    When the implementation restarts
    And "carol" tries to publish "survey" with result "s3://reports/late"
    Then the attempt is refused with "stale_generation" or "lease_expired" and nothing changes

  @AC-ARMONIA-WORKREQ-001.3 @interpretation:WR-8 @clause:lease-survives
  Scenario: A lease restored by a restart expires exactly when it was due
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When the implementation restarts
    And 1 microsecond less than the lease duration passes
    And the implementation restarts
    Then "bob" holds "survey" under his current lease
    When 1 microsecond passes
    And the implementation restarts
    And "bob" tries to publish "survey" with result "s3://reports/survey"
    Then as WR-8 reads it, the attempt is refused with "lease_expired" and nothing changes

  @AC-ARMONIA-WORKREQ-001.3 @interpretation:WR-4 @clause:request-survives
  Scenario: The depth of a delegated session is remembered across a restart
    Given a chain of spawn delegations from session "root" reaching the depth cap
    When the implementation restarts
    And the deepest child session tries to delegate "one level too deep" by spawn with a slice of 1
    Then the attempt is refused with "depth_cap" and nothing changes

  @AC-ARMONIA-WORKREQ-001.3 @interpretation:WR-2 @clause:request-survives
  Scenario: What a child may still spend is remembered across a restart
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And the child session of "survey" has recorded usage of 70
    When the implementation restarts
    Then "survey" has spent 70 of its slice of 100
    When the child session of "survey" tries to record usage of 31
    Then "survey" has spent no more than its slice
    And as WR-2 reads it, the attempt is refused with "usage_exceeds_slice" and nothing changes
    When the child session of "survey" records usage of 30
    Then "survey" has spent 100 of its slice of 100

  @AC-ARMONIA-WORKREQ-001.3 @clause:lease-survives @clause:request-survives
  Scenario: A crash in the middle of claims and publishes made at once loses no lease and doubles no completion
    Given the implementation evaluates operations concurrently
    And 4 requests delegated by session "root" with a slice of 10 each, each claimed by "bob"
    When the implementation crashes while "bob" publishes each of them twice and "carol" claims each of them twice, all at once
    And the implementation restarts
    Then every one of them is still held by "bob" under his lease, or completed by "bob" under it with his result
    And the budget of "launch" reads as if each completed request had returned its slice once
    When the lease runs out
    And "carol" claims every one of them
    Then "carol" holds each of them not completed under a newer generation than "bob" held, and was refused each completed one

  # ---------------------------------------------------------------------------
  # 001.4  An expired holder cannot publish; the request becomes claimable again
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.4 @clause:expired-cannot-publish @clause:claimable-again
  Scenario: A holder replaced after its lease expired cannot publish; only the new holder's result stands
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When the lease runs out
    And "carol" claims "survey"
    Then "carol" holds "survey" under a newer generation than "bob" held
    When "bob" tries to publish "survey" with result "s3://reports/bob"
    Then the attempt is refused with "stale_generation" or "lease_expired" and nothing changes
    When "carol" publishes "survey" with result "s3://reports/carol"
    Then "survey" is completed with result "s3://reports/carol" by "carol" under her current lease
    When "bob" tries to publish "survey" with result "s3://reports/bob"
    Then the attempt is refused with "already_completed" or "stale_generation" or "lease_expired" and nothing changes
    And "survey" is completed with result "s3://reports/carol" by "carol" under her current lease

  @AC-ARMONIA-WORKREQ-001.4 @interpretation:WR-20 @interpretation:WR-19
  @clause:expired-cannot-publish @clause:claimable-again
  Scenario: An expired holder nobody replaced can neither publish nor heartbeat, and the request is claimable at once
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When the lease runs out
    And "bob" tries to publish "survey" with result "s3://reports/bob"
    Then the attempt is refused with "lease_expired" and nothing changes
    When "bob" tries to heartbeat "survey"
    Then the attempt is refused with "lease_expired" and nothing changes
    And "survey" is open again
    And "carol" lists in "lab":
      | request | state |
      | survey  | open  |
    When "carol" claims "survey"
    Then "carol" holds "survey" under a newer generation than "bob" held

  @AC-ARMONIA-WORKREQ-001.4 @clause:expired-cannot-publish
  Scenario: A publish one microsecond before the lease expires is accepted
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When 1 microsecond less than the lease duration passes
    And "bob" publishes "survey" with result "s3://reports/bob"
    Then "survey" is completed with result "s3://reports/bob" by "bob" under his current lease

  # Whether a lease is still live at its very expiry instant is WR-8's to read, but one
  # implementation reads it one way for every operation: the holder's heartbeat there shows which.
  @AC-ARMONIA-WORKREQ-001.4 @clause:expired-cannot-publish
  Scenario: At the exact expiry instant the holder's publish reads the lease as its heartbeat did
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When the lease duration passes
    And "bob" tries to heartbeat "survey"
    And "bob" tries to publish "survey" with result "s3://reports/bob"
    Then that attempt read the lease at that instant as the heartbeat did

  @AC-ARMONIA-WORKREQ-001.4 @clause:claimable-again
  Scenario: At the exact expiry instant a rival's claim reads the lease as the holder's heartbeat did
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When the lease duration passes
    And "bob" tries to heartbeat "survey"
    And "carol" tries to claim "survey"
    Then that attempt read the lease at that instant as the heartbeat did

  @AC-ARMONIA-WORKREQ-001.4 @interpretation:WR-20 @clause:expired-cannot-publish
  @clause:claimable-again
  Scenario: A publish long after the lease expired is refused
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When 3 lease durations pass
    And "bob" tries to publish "survey" with result "s3://reports/bob"
    Then the attempt is refused with "lease_expired" and nothing changes
    And "survey" is open again
    When "carol" claims "survey"
    Then "carol" holds "survey" under a newer generation than "bob" held

  @AC-ARMONIA-WORKREQ-001.4 @interpretation:WR-6 @clause:claimable-again
  Scenario: An assigned request whose lease expired is claimable again by its assignee only
    Given session "root" has delegated "survey" by spawn with a slice of 100 for "bob"
    When "carol" tries to claim "survey"
    Then as WR-6 reads it, the attempt is refused with "not_assignee" and nothing changes
    When "bob" claims "survey"
    And the lease runs out
    And "carol" tries to claim "survey"
    Then as WR-6 reads it, the attempt is refused with "not_assignee" and nothing changes
    When "bob" claims "survey"
    Then "bob" holds "survey" under a newer generation than his first claim

  @AC-ARMONIA-WORKREQ-001.4 @interpretation:WR-6
  Scenario: A request that does not exist is never claimable
    Given session "root" has delegated "survey" by spawn with a slice of 100
    When "bob" tries to claim a request that does not exist
    Then the attempt is refused with "not_found" and nothing changes

  @AC-ARMONIA-WORKREQ-001.4 @interpretation:WR-6
  Scenario Outline: A principal outside the environment cannot claim its requests: <outsider>
    Given session "root" has delegated "survey" by spawn with a slice of 100
    When "<outsider>" tries to claim "survey"
    Then as WR-6 reads it, the attempt is refused with "not_found" or "not_assignee" and nothing changes

    Examples:
      | outsider |
      | mallory  |
      | zed      |

  @AC-ARMONIA-WORKREQ-001.4 @interpretation:WR-6
  Scenario: A principal in two environments claims in each; one in only one cannot claim the other's requests
    Given an environment "lab-annex" whose members are "carol" and "mallory"
    And a campaign "launch-annex" in "lab-annex" with a budget of 50
    And a root session "annex root" of "mallory" in "launch-annex" granting tools "sh"
    And session "annex root" has delegated "side errand" by spawn with a slice of 10
    And session "root" has delegated "survey" by spawn with a slice of 100
    When "mallory" tries to claim "survey"
    Then as WR-6 reads it, the attempt is refused with "not_found" or "not_assignee" and nothing changes
    When "bob" tries to claim "side errand"
    Then as WR-6 reads it, the attempt is refused with "not_found" or "not_assignee" and nothing changes
    When "carol" claims "survey"
    And "carol" claims "side errand"
    Then "carol" holds "survey" under her current lease
    And "carol" holds "side errand" under her current lease

  # ---------------------------------------------------------------------------
  # 001.5  Members list open and in-progress requests; non-members cannot
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.5 @interpretation:WR-17 @clause:members-list
  Scenario: Members see every open and in-progress request, never completed ones
    # "survey" is bob's to do; every member sees it all the same
    Given session "root" has delegated "survey" by spawn with a slice of 100 for "bob"
    And session "root" has delegated "draft" by subagent with a slice of 100
    And session "root" has delegated "review" by spawn with a slice of 100
    And the child session of "survey" has delegated "fact check" by subagent with a slice of 10
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

  @AC-ARMONIA-WORKREQ-001.5 @interpretation:WR-11 @clause:non-members-cannot
  Scenario Outline: A non-member's listing is refused exactly as for an environment that does not exist: <outsider>
    Given session "root" has delegated "survey" by spawn with a slice of 100
    When "<outsider>" tries to list the requests of "lab"
    Then the listing is refused and nothing changes
    And as WR-11 reads it, the refusal reads exactly like listing an environment that does not exist

    Examples:
      | outsider |
      | mallory  |
      | zed      |

  @AC-ARMONIA-WORKREQ-001.5 @clause:non-members-cannot
  Scenario: A name that differs from a member's or an environment's only in case or a trailing space is another name
    # A case-insensitive collation that pads with spaces (MySQL's and MariaDB's defaults) takes
    # "Alice" for "alice", and "Lab" and "lab " for "lab".
    Given session "root" has delegated "survey" by spawn with a slice of 100
    When "Alice" tries to list the requests of "lab"
    Then the listing is refused and nothing changes
    When "alice" tries to list the requests of "Lab"
    Then the listing is refused and nothing changes
    When "alice" tries to list the requests of "lab "
    Then the listing is refused and nothing changes

  @AC-ARMONIA-WORKREQ-001.5 @clause:members-list @clause:non-members-cannot
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

  @AC-ARMONIA-WORKREQ-001.5 @clause:members-list @clause:non-members-cannot
  Scenario: A principal in two environments sees each one's requests in its own listing only
    # "lab" is a prefix of "lab-annex" and "annex" a suffix of it: a listing filtered by
    # prefix or suffix mixes them. Carol belongs to "lab" and "lab-annex": a listing of every
    # environment she belongs to shows her both in each.
    Given an environment "lab-annex" whose members are "carol" and "mallory"
    And a campaign "launch-annex" in "lab-annex" with a budget of 50
    And a root session "annex root" of "mallory" in "launch-annex" granting tools "sh"
    When session "annex root" delegates "side errand" by spawn with a slice of 10
    And session "root" delegates "survey" by spawn with a slice of 100
    Then "carol" lists in "lab-annex":
      | request     | state |
      | side errand | open  |
    And "carol" lists in "lab":
      | request | state |
      | survey  | open  |
    And "bob" lists in "lab":
      | request | state |
      | survey  | open  |
    And "mallory" lists no requests in "annex"

  @AC-ARMONIA-WORKREQ-001.5 @interpretation:WR-17 @clause:members-list
  Scenario: A member sees an empty list when nothing is open
    Given session "root" has delegated "survey" by spawn with a slice of 100
    When "bob" claims "survey"
    And "bob" publishes "survey" with result "s3://reports/survey"
    Then "carol" lists no requests in "lab"

  # ---------------------------------------------------------------------------
  # 001.6  Completing records the result reference and closes the lease exactly once
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.6 @clause:records-result @clause:closes-once
  Scenario: Publishes of one request made at once complete it exactly once and close its lease once
    Given the implementation evaluates operations concurrently
    When the holder of each of 3 claimed requests publishes it several times at once
    Then each request was completed by exactly one publish and its lease closed once

  @AC-ARMONIA-WORKREQ-001.6 @clause:records-result @clause:closes-once
  Scenario: A holder's publishes of one request made at once, an exact retry among them, complete it once
    Given the implementation evaluates operations concurrently
    And session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When "bob" publishes "survey" with results "s3://reports/a", "s3://reports/a", "s3://reports/b" and "s3://reports/c" at once
    Then the publishes made at once completed "survey" at most once, and every one accepted answered that completion
    And the budget of "launch" is conserved

  @AC-ARMONIA-WORKREQ-001.6 @interpretation:WR-3 @clause:records-result @clause:closes-once
  Scenario: Publishing records the result, closes the lease and returns the unspent slice
    Given session "root" has delegated "survey" by spawn with a slice of 200
    And the child session of "survey" has recorded usage of 50
    And "bob" has claimed "survey"
    When 10 seconds pass
    And "bob" publishes "survey" with result "s3://reports/survey"
    Then "survey" is completed with result "s3://reports/survey" by "bob" under his current lease
    And the budget of "launch" is conserved
    And as WR-3 reads it, the completion of "survey" returned 150
    And as WR-3 reads it, the budget of "launch" is 1000 in total, 950 available, 0 reserved and 50 spent

  @AC-ARMONIA-WORKREQ-001.6 @interpretation:WR-10 @interpretation:WR-3 @clause:closes-once
  Scenario: An exact publish retry answers with the recorded completion and returns no budget twice
    Given session "root" has delegated "survey" by spawn with a slice of 200
    And the child session of "survey" has recorded usage of 50
    And "bob" has claimed "survey"
    When "bob" publishes "survey" with result "s3://reports/survey"
    And the lease runs out
    And "bob" publishes "survey" with result "s3://reports/survey" again
    Then as WR-10 reads it, the retry answers with the completion of "survey" recorded the first time
    And "survey" is completed with result "s3://reports/survey" by "bob" under his current lease
    And as WR-3 reads it, the budget of "launch" is 1000 in total, 950 available, 0 reserved and 50 spent

  @AC-ARMONIA-WORKREQ-001.6 @interpretation:WR-10 @clause:closes-once
  Scenario Outline: Any other publish of a completed request is refused and changes nothing: <case>
    Given session "root" has delegated "survey" by spawn with a slice of 200
    And "bob" has claimed "survey"
    And "bob" has published "survey" with result "s3://reports/survey"
    When "<holder>" tries to publish "survey" <fence> with result "<result>"
    Then the attempt is refused with "already_completed" or "stale_generation" and nothing changes
    And "survey" is completed with result "s3://reports/survey" by "bob" under his current lease

    Examples:
      | case                             | holder | fence                             | result                 |
      | another result                   | bob    | under his lease                   | s3://reports/survey-v2 |
      | a result differing only in case  | bob    | under his lease                   | s3://reports/Survey    |
      | another holder                   | carol  | under the lease "bob" was granted | s3://reports/survey    |
      | a generation ahead               | bob    | one generation ahead of his lease | s3://reports/survey    |

  @AC-ARMONIA-WORKREQ-001.6 @clause:closes-once
  Scenario: A completed request can be neither claimed nor heartbeaten again
    Given session "root" has delegated "survey" by spawn with a slice of 200
    And "bob" has claimed "survey"
    And "bob" has published "survey" with result "s3://reports/survey"
    When "carol" tries to claim "survey"
    Then the attempt is refused with "already_completed" and nothing changes
    When "bob" tries to heartbeat "survey"
    Then the attempt is refused with "already_completed" or "stale_generation" or "lease_expired" and nothing changes
    When the lease runs out
    And "bob" tries to claim "survey"
    Then the attempt is refused with "already_completed" and nothing changes

  @AC-ARMONIA-WORKREQ-001.6 @interpretation:WR-16 @clause:closes-once
  Scenario: A completed request's child session can charge nothing more
    Given session "root" has delegated "survey" by spawn with a slice of 200
    And "bob" has claimed "survey"
    And "bob" has published "survey" with result "s3://reports/survey"
    When the child session of "survey" tries to record usage of 1
    Then as WR-16 reads it, the attempt is refused with "already_completed" and nothing changes
    # whichever way WR-16 is read, what completion gave back is never spent again
    And the budget of "launch" is conserved

  # ---------------------------------------------------------------------------
  # 001.7  The lease is fenced by a generation; stale generations are rejected
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.7 @clause:fenced
  Scenario: Of 32 claims of one open request made at once, exactly one wins
    Given the implementation evaluates operations concurrently
    When 32 members claim one open request at once, for 3 requests
    Then each request had exactly one winning claim and 31 refused with "lease_held"

  @AC-ARMONIA-WORKREQ-001.7 @clause:fenced
  Scenario: Claims from several processes on one store, one killed in each batch, grant one lease per request
    Given the implementation runs as 3 processes on one store
    And one process is killed in the middle of each batch, and a new one takes its place
    When 16 members claim one open request at once, for 3 requests
    Then each request had exactly one winning claim and 15 refused with "lease_held"

  @AC-ARMONIA-WORKREQ-001.7 @interpretation:WR-7 @clause:fenced
  Scenario: Each claim moves the generation on by exactly one
    Given session "root" has delegated "survey" by spawn with a slice of 100
    When "bob" claims "survey"
    Then as WR-7 reads it, "bob" holds "survey" at generation 1
    When the lease runs out
    And "carol" claims "survey"
    Then "carol" holds "survey" under a newer generation than "bob" held
    And as WR-7 reads it, "carol" holds "survey" at generation 2
    When the lease runs out
    And "bob" claims "survey"
    Then as WR-7 reads it, "bob" holds "survey" at generation 3

  @AC-ARMONIA-WORKREQ-001.7 @clause:fenced @clause:stale-rejected
  Scenario: A holder that claims again cannot publish with its own older generation
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When the lease runs out
    And "bob" claims "survey"
    Then "bob" holds "survey" under a newer generation than his first claim
    When "bob" tries to publish "survey" under his first lease with result "s3://reports/old"
    Then the attempt is refused with "stale_generation" and nothing changes
    When "bob" publishes "survey" with result "s3://reports/new"
    Then "survey" is completed with result "s3://reports/new" by "bob" under his current lease

  @AC-ARMONIA-WORKREQ-001.7 @clause:stale-rejected
  Scenario Outline: A publish whose holder and generation are not the current pair is refused: <case>
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When "<holder>" tries to publish "survey" <fence> with result "s3://reports/forged"
    Then the attempt is refused with "stale_generation" and nothing changes
    And "bob" holds "survey" under his current lease

    Examples:
      | case                   | holder | fence                             |
      | a generation ahead     | bob    | one generation ahead of his lease |
      | generation zero        | bob    | at generation 0                   |
      | another holder         | carol  | under the lease "bob" was granted |

  @AC-ARMONIA-WORKREQ-001.7 @clause:fenced
  Scenario: A holder of two requests fences each lease on its own request
    # The fence is the triple (request, holder, generation): a fence that matched on
    # holder and generation alone would let one publish complete every request bob holds.
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And session "root" has delegated "draft" by spawn with a slice of 100
    And "bob" has claimed "survey"
    And "bob" has claimed "draft"
    When "bob" heartbeats "draft"
    And "bob" publishes "survey" with result "s3://reports/survey"
    Then "survey" is completed with result "s3://reports/survey" by "bob" under his current lease
    And "bob" holds "draft" under his current lease
    When "bob" publishes "draft" with result "s3://reports/draft"
    Then "draft" is completed with result "s3://reports/draft" by "bob" under his current lease

  @AC-ARMONIA-WORKREQ-001.7 @clause:fenced
  Scenario: A live lease keeps every other claimant out
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When "carol" tries to claim "survey"
    Then the attempt is refused with "lease_held" and nothing changes
    When 1 microsecond less than the lease duration passes
    And "carol" tries to claim "survey"
    Then the attempt is refused with "lease_held" and nothing changes
    And "bob" holds "survey" under his current lease

  # The slice is spent first, so that the publish gives back nothing whichever way WR-3 is
  # read: the race is about the lease, and the search judges every answer of it.
  @AC-ARMONIA-WORKREQ-001.7 @clause:fenced
  Scenario: Claims made at once with the holder's heartbeat and publish never take its live lease
    Given the implementation evaluates operations concurrently
    And session "root" has delegated "survey" by spawn with a slice of 100
    And the child session of "survey" has recorded usage of 100
    When "bob" claims "survey", then at once "carol" and "alice" claim it while "bob" heartbeats and publishes it with result "s3://reports/survey"
    Then the claims, heartbeat and publish made at once on "survey" granted no second lease and completed it at most once

  @AC-ARMONIA-WORKREQ-001.7 @clause:fenced
  Scenario: A live holder claiming again is refused or keeps its own lease
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When 1 microsecond less than the lease duration passes
    And "bob" tries to claim "survey"
    Then the re-claim was refused with "lease_held" and nothing changed, or "bob" still holds "survey"

  # ---------------------------------------------------------------------------
  # 001.8  Depth and count caps still guard delegation
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.8 @interpretation:WR-4 @clause:depth-cap
  Scenario Outline: A delegation one level past the depth cap is refused, whatever its kind: <kind>
    Given a chain of <kind> delegations from session "root" reaching the depth cap
    When the deepest child session tries to delegate "one level too deep" by <kind> with a slice of 1
    Then the attempt is refused with "depth_cap" and nothing changes

    Examples:
      | kind     |
      | spawn    |
      | subagent |

  @AC-ARMONIA-WORKREQ-001.8 @interpretation:WR-4 @clause:count-cap
  Scenario: A delegation one past the count cap is refused
    Given session "root" has delegated as many requests as the count cap allows
    When session "root" tries to delegate "one too many" by subagent with a slice of 1
    Then the attempt is refused with "count_cap" and nothing changes

  @AC-ARMONIA-WORKREQ-001.8 @interpretation:WR-4 @clause:count-cap
  Scenario: A refused delegation uses up none of the count cap
    Given session "root" has delegated as many requests as the count cap allows, but one
    When session "root" tries to delegate "too costly" by spawn with a slice of 5000
    Then the attempt is refused with "insufficient_budget" and nothing changes
    When as WR-4 reads it, session "root" delegates "the last one" by subagent with a slice of 1
    Then "the last one" is open

  @AC-ARMONIA-WORKREQ-001.8 @clause:count-cap
  Scenario: Delegations made at once from one session never pass the count cap
    # A cap checked on a count read before the child is counted lets every delegation made at
    # once through: the session ends with more children than the cap allows.
    Given the implementation evaluates operations concurrently
    When session "root" delegates more requests at once than the count cap allows, each by spawn with a slice of 1
    Then at most as many delegations as the count cap allows were made at once from session "root"
    And the budget of "launch" is conserved

  @AC-ARMONIA-WORKREQ-001.8 @interpretation:WR-18 @clause:count-cap
  Scenario: The count cap binds each session separately
    Given session "root" has delegated as many requests as the count cap allows
    When as WR-18 reads it, the child session of "sibling 1" delegates "nephew" by spawn with a slice of 1
    Then "nephew" is open

  # ---------------------------------------------------------------------------
  # 001.9  Delegation never creates budget or authority
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.9 @clause:no-budget-created
  Scenario: Delegations made at once never take more budget than the campaign has
    Given the implementation evaluates operations concurrently
    When 20 delegations of 10 are made at once from a campaign with a budget of 100
    Then at most 10 delegations succeeded, and every budget read matches the delegations that succeeded before it

  @AC-ARMONIA-WORKREQ-001.9 @clause:no-budget-created
  Scenario: Delegations from several processes on one store, one killed in the batch, never take more budget than the campaign has
    Given the implementation runs as 3 processes on one store
    And one process is killed in the middle of each batch, and a new one takes its place
    When 20 delegations of 10 are made at once from a campaign with a budget of 100
    Then at most 10 delegations succeeded, and every budget read matches the delegations that succeeded before it

  @AC-ARMONIA-WORKREQ-001.9 @interpretation:WR-4 @clause:no-budget-created
  Scenario: A slice larger than what the campaign has left is refused; an exact fit is accepted
    Given session "root" has delegated "survey" by spawn with a slice of 600
    When session "root" tries to delegate "draft" by spawn with a slice of 401
    Then the attempt is refused with "insufficient_budget" and nothing changes
    When session "root" delegates "draft" by spawn with a slice of 400
    Then the budget of "launch" is 1000 in total, 0 available, 1000 reserved and 0 spent

  @AC-ARMONIA-WORKREQ-001.9 @interpretation:WR-1 @interpretation:WR-4 @clause:no-budget-created
  Scenario: A nested slice cannot exceed the child's remainder even when the campaign could afford it
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And the child session of "survey" has recorded usage of 40
    When the child session of "survey" tries to delegate "fact check" by subagent with a slice of 61
    Then as WR-1 reads it, the attempt is refused with "insufficient_budget" and nothing changes

  @AC-ARMONIA-WORKREQ-001.9 @interpretation:WR-1 @clause:no-budget-created
  Scenario: A nested slice cannot take what was already carved out for a sibling, whatever its source
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And the child session of "survey" has delegated "fact check" by subagent with a slice of 70
    When the child session of "survey" tries to delegate "second opinion" by subagent with a slice of 31
    Then the attempt was refused with "insufficient_budget" and nothing changed, or the slice of "second opinion" came out of "launch"
    And as WR-1 reads it, the attempt is refused with "insufficient_budget" and nothing changes

  @AC-ARMONIA-WORKREQ-001.9 @clause:no-budget-created
  Scenario: Campaigns whose ids differ from another's only in case or a trailing space keep budgets of their own
    # A case-insensitive collation that pads with spaces (MySQL's and MariaDB's defaults) takes
    # "Launch" and "launch " for "launch": a budget read that looks campaigns up that way shows
    # one campaign's figures as another's.
    Given a campaign "Launch" in "lab" with a budget of 500
    And a campaign "launch " in "lab" with a budget of 300
    And session "root" has delegated "survey" by spawn with a slice of 100
    Then the budget of "launch" is 1000 in total, 900 available, 100 reserved and 0 spent
    And the budget of "Launch" is 500 in total, 500 available, 0 reserved and 0 spent
    And the budget of "launch " is 300 in total, 300 available, 0 reserved and 0 spent

  @AC-ARMONIA-WORKREQ-001.9 @clause:no-budget-created
  Scenario: A child's usages and its own delegations made at once from one slice each take it once
    # A reservation that reads what is left and writes it back after a usage was charged (or a
    # usage that does so after a reservation) loses one of them: budget nobody had.
    Given the implementation evaluates operations concurrently
    And session "root" has delegated "survey" by spawn with a slice of 100
    When the child session of "survey" records usages of 5, 5, 5, 5, 5, 5, 5, 5, 5 and 5 at once while delegating "part-a" and "part-b" by spawn with a slice of 20
    Then every usage and delegation made at once was accepted
    And some order of the calls made at once explains every answer and what "survey" and its campaign read after them
    And what "survey" spent and carved out for its own requests is 90, within its slice
    And the budget of "launch" is conserved

  @AC-ARMONIA-WORKREQ-001.13 @clause:usage-within-slice
  Scenario: A child's usages and its own delegation made at once beyond its slice take no more than it held
    # A nested slice checked against what is left on a read, and carved out after usages were
    # charged in between, leaves the child holding more than its slice: budget nobody had.
    Given the implementation evaluates operations concurrently
    And session "root" has delegated "survey" by spawn with a slice of 100
    When the child session of "survey" records usages of 25, 25, 25 and 25 at once while delegating "part-a" by spawn with a slice of 20
    Then some order of the calls made at once explains every answer and what "survey" and its campaign read after them
    And as WR-1 reads it, what "survey" spent and carved out for its own requests is at most its slice
    And the budget of "launch" is conserved

  @AC-ARMONIA-WORKREQ-001.13 @clause:usage-draws-on-campaign
  Scenario: Usages of sibling requests made at once each reach the campaign's account once
    # Each usage draws on its own request's slice, and all of them on the one campaign: a charge
    # that reads the campaign's spending and writes it back while a sibling's usage lands loses
    # that usage from the campaign's account.
    Given the implementation evaluates operations concurrently
    And session "root" has delegated "survey" by spawn with a slice of 100
    And session "root" has delegated "audit" by spawn with a slice of 100
    When the child sessions of "survey" and "audit" each record usages of 10, 10, 10, 10 and 10, all at once
    Then every usage and delegation made at once was accepted
    And the budget of "launch" is 1000 in total, 800 available, 100 reserved and 100 spent

  @AC-ARMONIA-WORKREQ-001.9 @clause:no-budget-created
  Scenario: Usages made at once with the holder's publish are spent or given back, never both
    # A completion that reads what is left and writes it back later would give back a usage
    # that was charged in between: budget nobody had.
    Given the implementation evaluates operations concurrently
    And session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When the child session of "survey" records usages of 10, 10, 10, 10, 10, 10, 10 and 10 at once while "bob" publishes "survey" with result "s3://results/a"
    Then what "survey" spent and what its completion gave back never add up to more than was left of its slice
    And "survey" has spent no more than its slice
    And the budget of "launch" is conserved

  @AC-ARMONIA-WORKREQ-001.9 @interpretation:WR-14 @clause:no-budget-created
  Scenario: A root session cannot spend more than the campaign has left
    Given session "root" has delegated "survey" by spawn with a slice of 900
    When session "root" tries to record usage of 101
    Then the attempt is refused with "insufficient_budget" and nothing changes
    When session "root" records usage of 100
    Then as WR-14 reads it, the budget of "launch" is 1000 in total, 0 available, 900 reserved and 100 spent

  @AC-ARMONIA-WORKREQ-001.9 @interpretation:WR-1 @interpretation:WR-3 @interpretation:WR-14
  @clause:no-budget-created
  Scenario: Budget is conserved through a mix of delegations, usage and completions
    Given session "root" has delegated "survey" by spawn with a slice of 300
    And session "root" has delegated "draft" by subagent with a slice of 200
    And the child session of "survey" has delegated "fact check" by subagent with a slice of 100
    When session "root" records usage of 50
    And the child session of "survey" records usage of 40
    And the child session of "fact check" records usage of 30
    Then the budget of "launch" is conserved
    And as WR-1 reads it, the budget of "launch" is 1000 in total, 450 available, 430 reserved and 120 spent
    When "carol" claims "fact check"
    And "carol" publishes "fact check" with result "s3://reports/fact-check"
    Then as WR-1 and WR-3 read it, the completion of "fact check" returned 70
    And as WR-1 and WR-3 read it, the budget of "launch" is 1000 in total, 450 available, 430 reserved and 120 spent
    When "bob" claims "survey"
    And "bob" publishes "survey" with result "s3://reports/survey"
    Then as WR-1 and WR-3 read it, the completion of "survey" returned 230
    And as WR-1 and WR-3 read it, the budget of "launch" is 1000 in total, 680 available, 200 reserved and 120 spent
    When the child session of "draft" records usage of 200
    And "bob" claims "draft"
    And "bob" publishes "draft" with result "s3://reports/draft"
    Then as WR-1 and WR-3 read it, the completion of "draft" returned 0
    And as WR-1 and WR-3 read it, the budget of "launch" is 1000 in total, 680 available, 0 reserved and 320 spent
    And the budget of "launch" is conserved

  @AC-ARMONIA-WORKREQ-001.9 @interpretation:WR-1 @interpretation:WR-15 @interpretation:WR-3
  @clause:no-budget-created
  Scenario: Unspent budget returns to the campaign when its originating request has already completed
    Given session "root" has delegated "survey" by spawn with a slice of 300
    And the child session of "survey" has delegated "fact check" by subagent with a slice of 100
    When "bob" claims "survey"
    And "bob" publishes "survey" with result "s3://reports/survey"
    Then the budget of "launch" is conserved
    And as WR-1, WR-3 and WR-15 read it, the completion of "survey" returned 200
    And as WR-1, WR-3 and WR-15 read it, the budget of "launch" is 1000 in total, 900 available, 100 reserved and 0 spent
    When the child session of "fact check" records usage of 30
    And "carol" claims "fact check"
    And "carol" publishes "fact check" with result "s3://reports/fact-check"
    Then as WR-3 and WR-15 read it, the budget of "launch" is conserved
    And as WR-1, WR-3 and WR-15 read it, the completion of "fact check" returned 70
    And as WR-1, WR-3 and WR-15 read it, the budget of "launch" is 1000 in total, 970 available, 0 reserved and 30 spent

  @AC-ARMONIA-WORKREQ-001.9 @interpretation:WR-3 @clause:no-budget-created
  Scenario: A lineage never spends more than its slice held, however its members share it out
    # Whichever reading of nested slices an implementation takes (WR-1), the child and its
    # own child together can never turn the child's slice of 100 into more than 100 spent.
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And the child session of "survey" has delegated "fact check" by subagent with a slice of 70
    And the child session of "fact check" has recorded usage of 70
    And the child session of "survey" has recorded usage of 30
    When the child session of "survey" tries to record usage of 70
    Then the budget of "launch" is conserved

  @AC-ARMONIA-WORKREQ-001.9 @interpretation:WR-4 @clause:no-authority-created
  Scenario: Grants narrow down a lineage and never widen
    Given session "root" has delegated "survey" by spawn with a slice of 100 granting tools "shell, browser" and devices "gpu"
    And the child session of "survey" has delegated "fact check" by subagent with a slice of 10 granting tools "shell"
    When the child session of "fact check" tries to delegate "browse" by spawn with a slice of 1 granting tools "browser"
    Then the child was granted nothing its originator lacks: the attempt was refused with "permission_escalation" and nothing changed, or the request narrowed the grant
    And no request of "lab" grants anything its originating session lacks

  # ---------------------------------------------------------------------------
  # 001.10  A request exposes every field of the data contract
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.10 @clause:contract-fields
  Scenario: A freshly delegated request reports every field of the data contract
    When session "root" delegates "survey" as follows:
      | kind              | subagent                                     |
      | deliverable       | a market survey of three vendors             |
      | acceptance checks | names three vendors; cites a source for each |
      | budget slice      | 120                                          |
      | tools             | shell                                        |
      | devices           | gpu                                          |
      | assignee          | bob                                          |
    Then "survey" reports every contract field as:
      | field               | value                                        |
      | request id          | <set>                                        |
      | campaign            | launch                                       |
      | originating session | root                                         |
      | deliverable         | a market survey of three vendors             |
      | acceptance checks   | names three vendors; cites a source for each |
      | budget slice        | 120                                          |
      | tool grants         | shell                                        |
      | device grants       | gpu                                          |
      | assignee            | bob                                          |
      | lease holder        | <none>                                       |
      | lease generation    | <any>                                        |
      | lease expiry        | <none>                                       |
      | state               | open                                         |
      | result reference    | <none>                                       |

  @AC-ARMONIA-WORKREQ-001.10 @clause:contract-fields
  Scenario: A completed request reports its lease and its result reference
    Given session "root" has delegated "survey" by spawn with a slice of 80
    And "carol" has claimed "survey"
    When "carol" publishes "survey" with result "s3://reports/survey"
    # a closed lease may show the expiry it had, or none: the contract does not say
    Then "survey" reports every contract field as:
      | field               | value                           |
      | request id          | <set>                           |
      | campaign            | launch                          |
      | originating session | root                            |
      | deliverable         | a short written summary         |
      | acceptance checks   | the summary names its sources   |
      | budget slice        | 80                              |
      | tool grants         |                                 |
      | device grants       |                                 |
      | assignee            | <none>                          |
      | lease holder        | carol                           |
      | lease generation    | <as granted>                    |
      | lease expiry        | <any>                           |
      | state               | completed                       |
      | result reference    | s3://reports/survey             |

  @AC-ARMONIA-WORKREQ-001.10 @interpretation:WR-12 @clause:contract-fields
  Scenario: A claimed request reports its holder, generation and the expiry one reported lease duration away
    Given session "root" has delegated "survey" by spawn with a slice of 80
    When "carol" claims "survey"
    Then "carol" holds "survey" under her current lease
    And as WR-12 reads it, the lease of "survey" expires one lease duration from now

  @AC-ARMONIA-WORKREQ-001.10 @clause:contract-fields
  Scenario: Every request gets its own id and its own new child session
    When session "root" delegates "survey" by spawn with a slice of 100
    And session "root" delegates "draft" by subagent with a slice of 100
    Then "survey" and "draft" have distinct ids and distinct new child sessions

  # ---------------------------------------------------------------------------
  # 001.11  Both a session spawn and a subagent delegation create a request
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.11 @clause:spawn-creates @clause:subagent-creates
  Scenario Outline: A delegation by <kind> creates a request of that kind whose child draws on its slice
    When session "root" delegates "survey" by <kind> with a slice of 100
    Then "survey" was made by <kind>
    And "survey" is open
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

  @AC-ARMONIA-WORKREQ-001.11 @clause:spawn-creates @clause:subagent-creates
  Scenario Outline: A request made by <kind> is durable: it reads the same after a restart, and the next is a request of its own
    Given session "root" has delegated "survey" by <kind> with a slice of 100
    When the implementation restarts
    Then every request, listing, budget and session reads as it did before the restart
    And "survey" was made by <kind>
    When session "root" delegates "second" by <kind> with a slice of 10
    Then "second" is open
    And "survey" and "second" have distinct ids and distinct new child sessions

    Examples:
      | kind     |
      | spawn    |
      | subagent |

  @AC-ARMONIA-WORKREQ-001.11 @clause:spawn-creates @clause:subagent-creates
  Scenario Outline: A child made by <first> can itself delegate by <second>
    Given session "root" has delegated "survey" by <first> with a slice of 100
    When the child session of "survey" delegates "fact check" by <second> with a slice of 40
    Then "fact check" was made by <second>
    And "fact check" is open
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

  @AC-ARMONIA-WORKREQ-001.12 @interpretation:WR-7 @clause:heartbeat-extends
  Scenario: A heartbeat pushes the expiry later and keeps the generation
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When half the lease duration passes
    And "bob" heartbeats "survey"
    Then the heartbeat pushed the lease of "survey" later than the claim had it expire
    And as WR-7 reads it, the heartbeat kept the generation "bob" was granted

  @AC-ARMONIA-WORKREQ-001.12 @clause:heartbeat-extends
  Scenario: Heartbeats keep a lease alive across several lease durations
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When "bob" heartbeats "survey" every half lease duration for 4 lease durations
    And "carol" tries to claim "survey"
    Then the attempt is refused with "lease_held" and nothing changes
    When "bob" publishes "survey" with result "s3://reports/survey"
    Then "survey" is completed with result "s3://reports/survey" by "bob" under his current lease

  @AC-ARMONIA-WORKREQ-001.12 @clause:heartbeat-extends
  Scenario: A heartbeat one microsecond before expiry still extends the lease
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When 1 microsecond less than the lease duration passes
    And "bob" heartbeats "survey"
    Then the heartbeat pushed the lease of "survey" later than the claim had it expire

  @AC-ARMONIA-WORKREQ-001.12 @interpretation:WR-19 @interpretation:WR-20
  Scenario: A heartbeat after the lease ran out is refused and extends nothing
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When the lease runs out
    And "bob" tries to heartbeat "survey"
    Then the attempt is refused with "lease_expired" and nothing changes
    And "survey" is open again

  @AC-ARMONIA-WORKREQ-001.12 @interpretation:WR-8 @interpretation:WR-19
  Scenario: A heartbeat at the exact expiry instant is refused and extends nothing
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When the lease duration passes
    And "bob" tries to heartbeat "survey"
    Then as WR-8 reads it, the attempt is refused with "lease_expired" and nothing changes

  @AC-ARMONIA-WORKREQ-001.12 @clause:stale-heartbeat-rejected
  Scenario: A heartbeat from a replaced holder is refused and leaves the new lease alone
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When the lease runs out
    And "carol" claims "survey"
    And "bob" tries to heartbeat "survey"
    Then the attempt is refused with "stale_generation" or "lease_expired" and nothing changes
    And "carol" holds "survey" under her current lease

  @AC-ARMONIA-WORKREQ-001.12 @clause:stale-heartbeat-rejected
  Scenario Outline: A heartbeat whose holder and generation are not the current pair is refused: <case>
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And "bob" has claimed "survey"
    When "<holder>" tries to heartbeat "survey" <fence>
    Then the attempt is refused with "stale_generation" and nothing changes
    And "bob" holds "survey" under his current lease

    Examples:
      | case               | holder | fence                             |
      | a generation ahead | bob    | one generation ahead of his lease |
      | another holder     | carol  | under the lease "bob" was granted |

  # ---------------------------------------------------------------------------
  # 001.13  The child's usage draws from its slice and never exceeds it
  # ---------------------------------------------------------------------------

  @AC-ARMONIA-WORKREQ-001.13 @clause:usage-draws-on-campaign
  Scenario: A child's usage is charged to its slice, not to what the campaign has left
    Given session "root" has delegated "survey" by spawn with a slice of 100
    When the child session of "survey" records usage of 60
    Then "survey" has spent 60 of its slice of 100
    And the budget of "launch" is 1000 in total, 900 available, 40 reserved and 60 spent

  @AC-ARMONIA-WORKREQ-001.13 @interpretation:WR-2 @clause:usage-within-slice
  Scenario: Usage beyond what is left of the slice is refused and charges nothing
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And the child session of "survey" has recorded usage of 70
    When the child session of "survey" tries to record usage of 31
    Then "survey" has spent no more than its slice
    And as WR-2 reads it, the attempt is refused with "usage_exceeds_slice" and nothing changes
    When the child session of "survey" records usage of 30
    Then "survey" has spent 100 of its slice of 100
    And the budget of "launch" is 1000 in total, 900 available, 0 reserved and 100 spent

  @AC-ARMONIA-WORKREQ-001.13 @interpretation:WR-1 @interpretation:WR-2 @interpretation:WR-3
  @clause:usage-within-slice
  Scenario: Slices carved out for grandchildren are no longer the child's to spend
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And the child session of "survey" has delegated "fact check" by subagent with a slice of 70
    When the child session of "survey" tries to record usage of 31
    Then "survey" has spent no more than its slice
    And as WR-1 reads it, the attempt is refused with "usage_exceeds_slice" and nothing changes
    When the child session of "survey" records usage of 30
    And the child session of "fact check" records usage of 70
    Then the budget of "launch" is conserved
    And as WR-1 reads it, the budget of "launch" is 1000 in total, 900 available, 0 reserved and 100 spent

  @AC-ARMONIA-WORKREQ-001.13 @interpretation:WR-2 @clause:usage-within-slice
  Scenario: What a grandchild leaves unspent never lets the child spend beyond its own slice
    # However a nested slice is carved out (WR-1), its remainder must go back where it came
    # from: handed to the child's slice after coming out of the campaign, it would let the
    # child spend it on top of its whole slice.
    Given session "root" has delegated "survey" by spawn with a slice of 100
    And the child session of "survey" has delegated "fact check" by subagent with a slice of 70
    When "carol" claims "fact check"
    And "carol" publishes "fact check" with result "s3://reports/fact-check"
    And the child session of "survey" tries to record usage of 101
    Then "survey" has spent no more than its slice
    And as WR-2 reads it, the attempt is refused with "usage_exceeds_slice" and nothing changes

  @AC-ARMONIA-WORKREQ-001.13 @interpretation:WR-2 @clause:usage-within-slice
  @clause:usage-draws-on-campaign
  Scenario: Eight usages of 30 made at once on a slice of 100 spend at most the slice, and what was accepted
    # A check of what is left and a write of the usage that are not one step let usages made
    # at once all pass the check (240 spent), or all write back what they read (30 spent of
    # 240 accepted). A usage whose answer is unknown may or may not count.
    Given the implementation evaluates operations concurrently
    And session "root" has delegated "survey" by spawn with a slice of 100
    When the child session of "survey" records 8 usages of 30 at once
    Then the usages made at once charged "survey" what the accepted ones asked, and never more than its slice
    And "survey" has spent no more than its slice
    And the budget of "launch" is conserved
    And as WR-2 reads it, at most 3 of the usages made at once were accepted
    And as WR-2 reads it, "survey" was charged exactly what the accepted usages made at once asked

  @AC-ARMONIA-WORKREQ-001.13 @interpretation:WR-24 @clause:usage-within-slice
  Scenario Outline: Usage of 0 is bad input, refused and charges nothing: <session> records 0
    Given session "root" has delegated "survey" by spawn with a slice of 100
    When <session> tries to record usage of 0
    Then as WR-24 reads it, the attempt is refused with "invalid_input" and nothing changes

    Examples:
      | session                       |
      | the child session of "survey" |
      | session "root"                |

  @AC-ARMONIA-WORKREQ-001.13 @clause:usage-draws-on-campaign
  Scenario: Usage by a session that does not exist is refused and charges nothing
    Given session "root" has delegated "survey" by spawn with a slice of 100
    When session "phantom" tries to record usage of 5
    Then the attempt is refused with "not_found" or "invalid_input" and nothing changes
