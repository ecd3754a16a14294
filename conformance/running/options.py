"""What one suite run is asked to do, as one object: the CLI and strength make it, the pytest
plugin reads it back, and a `--jobs` worker gets its own copy of it.

pytest carries it as one option, `--suite-options`, holding the object as JSON, so a suite
run's settings are declared here once, not again as pytest options and again as the arguments
that spell them.
"""

from __future__ import annotations

import enum
from argparse import ArgumentTypeError
from pathlib import Path
from typing import Final

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from conformance.adapters.containment import Containment
from conformance.stream.results import SPEC_PREFIXES, Claim

OPTION: Final = "--suite-options"
DESTINATION: Final = "suite_options"


class Progress(enum.StrEnum):
    """`--progress`: pytest's own lines, a line per record, a line per record that needs
    attention (the CLI's default), or nothing."""

    PYTEST = "pytest"
    SCENARIOS = "scenarios"
    PROBLEMS = "problems"
    NONE = "none"


class SuiteOptions(BaseModel):
    """A suite run's settings; the defaults are the kit's own test run: the reference,
    in-process, on a fresh SQLite store per scenario, no stream written."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    impl: str = "reference"
    """'reference', 'exec:<command>', 'python:<module>:<factory>', 'mutant:NAME', 'variant:NAME'."""
    database: str | None = None
    """A SQLAlchemy URL for the reference's store (None: a fresh SQLite file per scenario)."""
    results: Path | None = None
    """Where the results stream goes; None writes none."""
    restart_budget: int = 10
    """Implementation faults (crash, hang, garbage) after which the run stops."""
    expectations: Path | None = None
    claim: tuple[str, ...] = ()
    """The specs the run claims (none named: both)."""
    allow_unverified: tuple[str, ...] = ()
    strict_interpretations: bool = False
    sandbox: bool = False
    pass_env: tuple[str, ...] = ()
    sign_key_file: Path | None = None
    masked: tuple[Path, ...] = ()
    """Files the implementation must not see beyond the stream and the key (a `--jobs`
    worker's: the run's own stream and key)."""
    shard: str | None = None
    """'K/N': the K-th of N disjoint, stable parts of the inventory (see stream.shards)."""
    spec_files: tuple[Path, ...] = ()
    """Source spec files: criteria whose text changed are reported as needing review."""
    progress: Progress = Progress.PYTEST

    @field_validator("claim")
    @classmethod
    def known_specs(cls, claim: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(claim) - set(SPEC_PREFIXES))
        if unknown:
            raise ValueError(f"no such spec: {', '.join(unknown)} (one of {sorted(SPEC_PREFIXES)})")
        return claim

    def argument(self) -> str:
        """The one pytest argument that carries these options."""
        return f"{OPTION}={self.model_dump_json(exclude_defaults=True)}"

    def hidden(self) -> tuple[Path, ...]:
        """What the implementation must not see: the stream, the key, and what is masked."""
        private = (self.results, self.sign_key_file, *self.masked)
        return tuple(path.resolve() for path in private if path is not None)

    def containment(self) -> Containment:
        """What the implementation may see: the variables passed on, the sandbox, and none of
        the files `hidden` names."""
        return Containment(pass_env=self.pass_env, sandbox=self.sandbox, hidden=self.hidden())

    def claimed(self) -> Claim:
        """What the run claims: its specs (both, when none is named), the criteria allowed to
        stay unverified, and whether a divergence fails it."""
        return Claim(
            specs=sorted(set(self.claim)) or sorted(SPEC_PREFIXES),
            allow_unverified=sorted(set(self.allow_unverified)),
            strict_interpretations=self.strict_interpretations,
        )

    def for_worker(self, folder: Path) -> SuiteOptions:
        """A `--jobs` worker's: its own stream in `folder` (which nothing reads), no key, no
        progress of its own (the run prints it); the run's stream and key still masked."""
        return self.model_copy(
            update={
                "results": folder / "share.jsonl",
                "sign_key_file": None,
                "masked": self.hidden(),
                "progress": Progress.NONE,
            }
        )


def parse(text: str) -> SuiteOptions:
    """`--suite-options`' value; a bad one is refused by pytest as a usage error, with why."""
    try:
        return SuiteOptions.model_validate_json(text)
    except ValidationError as error:
        raise ArgumentTypeError(f"not suite options: {error}") from error


def options_of(config: pytest.Config) -> SuiteOptions:
    """The options this pytest session was given (the defaults when none were)."""
    options: SuiteOptions = config.getoption(DESTINATION)
    return options
