"""The pytest plugin that runs the Gherkin suite against an implementation.

It provides the `driver` fixture (a fresh implementation on an empty store per
scenario), turns criterion tags into one `criterion` marker, and marks a
scenario `not_applicable` when the implementation lacks a capability it needs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from conformance.adapters.factory import open_driver
from conformance.driver import Driver
from conformance.inventory import load_inventory
from conformance.properties import Budget
from conformance.running.expectations import ExpectationsError, load_expectations
from conformance.running.fault_budget import FaultBudget
from conformance.running.harness_memory import RECORDER_NAME
from conformance.running.options import DESTINATION, OPTION, SuiteOptions, options_of, parse
from conformance.running.progress import register as register_progress
from conformance.running.recorder import (
    DRIVER_KEY,
    EVIDENCE_KEY,
    ResultsRecorder,
)
from conformance.running.restart_forecast import FORECAST, RestartForecast
from conformance.running.scenario_items import item_keys
from conformance.running.workers import Worker, is_worker, worker_id
from conformance.scratch import RUN_FOLDER
from conformance.spec.registry import (
    CLAUSE_TAG_PREFIX,
    CRITERION_TAG,
    INTERPRETATION_TAG_PREFIX,
    default_registry,
)
from conformance.spec.spec_drift import check_drift
from conformance.stream.redaction import REDACT
from conformance.stream.results import Claim
from conformance.stream.shards import ShardError, parse_shard, part_of, shard_of
from conformance.stream.stream_integrity import BrokenStream, read_key

F = TypeVar("F", bound=Callable[..., object])


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("conformance").addoption(
        OPTION,
        dest=DESTINATION,
        type=parse,
        default=SuiteOptions(),
        help="the suite run's settings as JSON (conformance.running.options.SuiteOptions); "
        "`conformance run` writes them",
    )


def _keep_hypothesis_storage_in_the_run_folder() -> None:
    """Hypothesis keeps its storage (the constants it gleans from the modules it tests, ...) in
    `.hypothesis/` of the working folder: a run must leave nothing where it runs but the files
    it was asked to write, so it goes in the run folder, removed when the run ends."""
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(RUN_FOLDER.make("hypothesis-"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "criterion(id): the acceptance criterion a scenario pins")
    config.addinivalue_line(
        "markers", "interpretation(id): a registered interpretation the scenario rests on"
    )
    config.addinivalue_line("markers", "clause(name): a clause of its criterion a scenario checks")
    config.addinivalue_line("markers", "path(name): the path of an effect a scenario takes")
    if is_worker(config) and options_of(config).results is not None:
        _as_a_worker(config)
    options = options_of(config)
    config.pluginmanager.register(
        FaultBudget(config, options.restart_budget), "conformance-fault-budget"
    )
    if options.results is not None:
        _keep_hypothesis_storage_in_the_run_folder()
        REDACT.keep(options.impl)  # what the run tested is no secret
        features_dir = config.rootpath / (config.getini("bdd_features_base_dir") or "features")
        properties = config.getoption("--properties", Budget.NONE.value)
        inventory = load_inventory(features_dir, properties=properties != Budget.NONE)
        shard = shard_option(config)
        whole = [entry.key for entry in inventory]
        if shard is not None:
            part = set(part_of(whole, *shard))
            inventory = [entry for entry in inventory if entry.key in part]
        try:
            expectations = (
                load_expectations(options.expectations, [entry.key for entry in inventory])
                if options.expectations is not None
                else {}
            )
        except ExpectationsError as error:
            raise pytest.UsageError(str(error)) from error
        recorder = ResultsRecorder(
            options.results,
            impl=options.impl,
            database=options.database,
            registry=default_registry(),
            features_dir=features_dir,
            inventory=inventory,
            expectations=expectations,
            needs_review=check_drift(
                list(options.spec_files), default_registry(), inventory
            ).changed,
            claim=claim_of(options),
            containment=options.containment(),
            sign_key=_sign_key(options),
            properties=properties,
            seed=_seed(config) if properties != Budget.NONE else None,
            shard=None if shard is None else shard_of(whole, *shard),
        )
        config.pluginmanager.register(recorder, RECORDER_NAME)
        register_progress(config, recorder)


def _as_a_worker(config: pytest.Config) -> None:
    """A `--jobs` worker's (not a worker of the kit's own tests, which records nothing):
    its settings are its own (see `SuiteOptions.for_worker`), and so is the
    order of its items (see `workers`)."""
    folder = RUN_FOLDER.make(f"{worker_id(config)}-")
    setattr(config.option, DESTINATION, options_of(config).for_worker(folder))
    config.pluginmanager.register(Worker(), "conformance-worker")


def shard_option(config: pytest.Config) -> tuple[int, int] | None:
    """The shard option's K/N as (K, N); None when the run is not a part."""
    text = options_of(config).shard
    if text is None:
        return None
    try:
        return parse_shard(text)
    except ShardError as error:
        raise pytest.UsageError(str(error)) from error


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A part (`--shard K/N`) runs only the items whose records are in it."""
    shard = shard_option(config)
    if shard is None:
        return
    features_dir = config.rootpath / (config.getini("bdd_features_base_dir") or "features")
    properties = config.getoption("--properties", Budget.NONE.value) != Budget.NONE
    whole = [entry.key for entry in load_inventory(features_dir, properties=properties)]
    part = set(part_of(whole, *shard))
    kept: list[pytest.Item] = []
    left: list[pytest.Item] = []
    for item in items:
        keys = item_keys(item, features_dir)
        (kept if not keys or set(keys) & part else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


def pytest_collection_finish(session: pytest.Session) -> None:
    """Forecast restarts from the final selection, in the order the items run (a `--jobs`
    worker's next few items are, as xdist hands them out, about the next few in its order)."""
    session.config.stash[FORECAST] = RestartForecast.of(session.items)


def _seed(config: pytest.Config) -> int | None:
    """The Hypothesis seed of the run (`--hypothesis-seed`; the properties plugin sets one)."""
    seed = config.getoption("hypothesis_seed", None)
    try:
        return None if seed is None else int(seed)
    except ValueError as error:
        raise pytest.UsageError(f"--hypothesis-seed must be a whole number: {seed!r}") from error


def _sign_key(options: SuiteOptions) -> bytes | None:
    if options.sign_key_file is None:
        return None
    try:
        return read_key(options.sign_key_file)
    except (OSError, BrokenStream) as error:
        raise pytest.UsageError(f"--sign-key-file: {error}") from error


def claim_of(options: SuiteOptions) -> Claim:
    """What the run claims; a criterion allowed to stay unverified must be one."""
    unknown = sorted(set(options.allow_unverified) - set(default_registry().ids()))
    if unknown:
        raise pytest.UsageError(f"--allow-unverified names no criterion: {', '.join(unknown)}")
    return options.claimed()


@pytest.hookimpl(tryfirst=True)
def pytest_bdd_apply_tag(tag: str, function: F) -> F | None:
    """Criterion and interpretation tags become `criterion` and `interpretation` markers (first:
    loaded with -p, this plugin registers before pytest-bdd, whose own answer would win)."""
    marked: F
    if CRITERION_TAG.fullmatch(tag):
        marked = pytest.mark.criterion(tag)(function)
        return marked
    if tag.startswith(INTERPRETATION_TAG_PREFIX):
        marked = pytest.mark.interpretation(tag.removeprefix(INTERPRETATION_TAG_PREFIX))(function)
        return marked
    if tag.startswith(CLAUSE_TAG_PREFIX):
        marked = pytest.mark.clause(tag.removeprefix(CLAUSE_TAG_PREFIX))(function)
        return marked
    return None


@pytest.fixture
def driver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Driver]:
    options = options_of(request.config)
    forecast = request.config.stash.get(FORECAST, None)
    restarts_ahead = None if forecast is None else forecast.ahead(request.node.nodeid)
    opened = open_driver(
        options.impl,
        options.database,
        tmp_path,
        restarts_ahead=restarts_ahead,
        containment=options.containment(),
    )
    request.node.stash[DRIVER_KEY] = opened
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def evidence(request: pytest.FixtureRequest) -> list[str]:
    """Lines a scenario wants in its result record even when it passes (what it measured)."""
    notes: list[str] = []
    request.node.stash[EVIDENCE_KEY] = notes
    return notes
