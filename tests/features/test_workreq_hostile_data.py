"""The work-request Gherkin and the work-request machine test with the same hostile names.

Every grant name the work-request feature writes (`tools "..."`, `devices "..."`, and the
contract tables' tool and device rows) is one of `hostile_data.GRANT_NAMES`, the pool the
machine draws from, or of the names judged apart by an open question (WR-25's case twins);
and that pool keeps what makes it hostile: names that contain one another.
"""

from __future__ import annotations

import re

from conformance.properties.hostile_data import (
    CAMPAIGN_ENVIRONMENTS,
    ENVIRONMENT_MEMBERS,
    GRANT_NAMES,
    GRANT_NAMES_JUDGED_APART,
    ROOT_SESSIONS,
    neighbours,
)
from tests.paths import FEATURES

FEATURE = FEATURES / "armonia_workreq_001.feature"
QUOTED = re.compile(r'(?:tools|devices) "([^"]*)"')
TABLE_ROW = re.compile(r"^\s*\|\s*(?:tools|devices|tool grants|device grants)\s*\|\s*([^|]*)\|")


def feature_grant_names() -> set[str]:
    names: set[str] = set()
    for line in FEATURE.read_text(encoding="utf-8").splitlines():
        lists = QUOTED.findall(line)
        row = TABLE_ROW.match(line)
        if row:
            lists.append(row[1])
        names |= {name.strip() for text in lists for name in text.split(",") if name.strip()}
    return names


def test_every_grant_name_of_the_feature_is_in_the_hostile_pool() -> None:
    used = feature_grant_names()
    assert used, "the feature writes no grant names: the pattern no longer reads it"
    pooled = {*GRANT_NAMES, *GRANT_NAMES_JUDGED_APART}
    assert used <= pooled, sorted(used - pooled)


def test_the_feature_uses_names_that_contain_one_another() -> None:
    used = feature_grant_names()
    related = {name for name in used if neighbours(frozenset({name})) and name in used}
    assert {"shell", "sh", "hell", "shell-admin"} <= related, sorted(related)


def test_the_pool_holds_a_prefix_a_suffix_and_a_namespace_of_each_root_grant() -> None:
    for session, (_, _, held) in ROOT_SESSIONS.items():
        close = neighbours(held.tools | held.devices)
        assert close, f"{session} holds no name another name of the pool contains"
    assert any(a != b and b.startswith(a) for a in GRANT_NAMES for b in GRANT_NAMES)
    assert any(a != b and b.endswith(a) for a in GRANT_NAMES for b in GRANT_NAMES)


def test_environments_and_campaigns_a_wrong_filter_would_mix() -> None:
    environments = list(ENVIRONMENT_MEMBERS)
    assert any(a != b and b.startswith(a) for a in environments for b in environments)
    members = [set(names) for names in ENVIRONMENT_MEMBERS.values()]
    assert set.intersection(*members), "no principal belongs to both environments"
    campaigns = list(CAMPAIGN_ENVIRONMENTS)
    assert any(a != b and b.startswith(a) for a in campaigns for b in campaigns)
    assert len(set(CAMPAIGN_ENVIRONMENTS.values())) < len(campaigns), "two share an environment"
    assert any(a != b and a.lower() == b.lower() for a in campaigns for b in campaigns), (
        "no two campaigns a case-insensitive collation takes for one"
    )
