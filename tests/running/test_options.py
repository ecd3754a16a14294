"""A suite run's settings are one object (conformance.running.options): pytest carries it as one
option, it comes back as it went, and a bad one is refused before anything runs."""

from __future__ import annotations

from argparse import ArgumentTypeError
from pathlib import Path

import pytest

from conformance.running import pytest_plugin
from conformance.running.options import OPTION, Progress, SuiteOptions, parse


class Declared:
    """Stands for pytest's parser and its option group: notes the options declared."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def getgroup(self, name: str) -> Declared:
        return self

    def addoption(self, *names: str, **settings: object) -> None:
        self.names += names


def test_the_plugin_declares_the_suite_s_settings_as_one_option() -> None:
    declared = Declared()
    pytest_plugin.pytest_addoption(declared)  # type: ignore[arg-type]
    assert declared.names == [OPTION]


def test_options_come_back_as_they_went() -> None:
    options = SuiteOptions(
        impl="exec:./adapter --flag 'a b'",
        database="sqlite:///x.db",
        results=Path("/tmp/r.jsonl"),
        restart_budget=3,
        claim=("office",),
        allow_unverified=("AC-OFFICE-ASSIGN-RATE-002.4",),
        pass_env=("TOKEN",),
        masked=(Path("/tmp/key"),),
        shard="2/3",
        progress=Progress.PROBLEMS,
    )
    assert parse(options.argument().removeprefix(f"{OPTION}=")) == options
    assert SuiteOptions().argument() == f"{OPTION}={{}}", "the defaults are written as nothing"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("not json", "Invalid JSON"),
        ('{"impl": 5}', "impl"),
        ('{"restart_budgte": 2}', "restart_budgte"),
        ('{"progress": "loud"}', "progress"),
        ('{"claim": ["offices"]}', "no such spec: offices"),
    ],
)
def test_bad_options_are_refused_with_the_field_at_fault(text: str, why: str) -> None:
    with pytest.raises(ArgumentTypeError, match=why):
        parse(text)


def test_pytest_refuses_bad_options_as_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["conformance.running.pytest_plugin"]\n')
    result = pytester.runpytest_subprocess(f'{OPTION}={{"impl": "reference", "sandbx": true}}')
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "sandbx" in result.stderr.str()
