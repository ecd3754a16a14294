"""The exec adapter: any implementation, in any language, behind protocol v1.

`--impl exec:"<command>"` launches the command with CONFORMANCE_STORE naming
an empty scratch directory of the scenario; the implementation keeps its
store there (or treats an empty directory as "start from an empty store"),
and each scenario starts on an empty store in a fresh (or reset) process. A
restart is a SIGKILL of the process group and a relaunch of the same command
on the same directory, followed by the handshake and the harness re-setting
the clock to its last reading: nothing held in the implementation's memory
survives, and the harness's clock does.

Warning logs are the harness's record, as in the in-process adapter: the ones
read before a restart are carried over, so a restart does not erase them.

Reuse: with `reuse=True` and an implementation declaring `reset`, closing the
driver parks its healthy process (see exec_pool) instead of killing it, and
the next driver of the same command takes it: it sends `reset`, sets the clock
to the start instant and checks that nothing of the previous scenario is
visible (see exec_reset). The reused process keeps its own store directory. A
process that faulted is never parked, and one that fails its reset is killed
and replaced by a fresh launch; one that acknowledges the reset but shows
leftovers is an `unclean_reset` fault of the scenario.

Prelaunch: with `prelaunch=True` and an implementation declaring both
`restart` and `prelaunch`, spares of the command wait (see exec_spares), and a
restart kills the old process, links a waiting spare's store path to the
store and shakes hands with that spare. How many wait follows
`restarts_ahead`, the restarts the harness expects from this scenario and
the next few (see restart_forecast): a driver opened with restarts ahead
starts that many spares (up to the room's capacity), and each restart tops
the room up to what is still expected. When the harness cannot tell (None),
the first restart launches as usual and then a few spares wait. The peers of a
pool of processes (capability `multiprocess`) come out of the same room.
A run whose selection never restarts or runs a pool starts no spare.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any, Final, TypeVar

from conformance.adapters.containment import Containment
from conformance.adapters.exec_pool import PARK, LaunchSettings, ParkedProcess
from conformance.adapters.exec_process import ImplementationProcess
from conformance.adapters.exec_reset import Witnesses, reset_leftovers
from conformance.adapters.exec_spares import SPARES, SPARES_FOR_PEERS, SPARES_WITHOUT_FORECAST
from conformance.adapters.faults import FaultKind, ImplementationFault
from conformance.driver import (
    Capability,
    ConcurrentCall,
    Description,
    Driver,
    DriverError,
    ErrorCode,
    TaskView,
    WarningLog,
)
from conformance.protocol import messages as m
from conformance.protocol.codec import Ok

R = TypeVar("R")

CLOCK_START: Final = datetime(2026, 1, 1, tzinfo=UTC)
"""Where the harness sets every freshly launched implementation's clock."""
DEFAULT_TIMEOUT: Final = 10.0
DEFAULT_STARTUP_TIMEOUT: Final = 30.0
CRASH_AFTER_SECONDS: Final = 0.002
"""How long a call killed mid-way may run: long enough to have begun, too short to finish."""
RESTART_MARK: Final = "--- (the harness restarted the implementation here) ---"
"""Between the stderr lines of a driver's processes, in a failure's account."""


def port_arguments(method: str, args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments by parameter name, bound as `Driver` declares `method` (defaults
    included), so that a wrong call fails here as it would on the port."""
    bound = _SIGNATURES[method].bind(None, *args, **kwargs)
    bound.apply_defaults()
    return dict(list(bound.arguments.items())[1:])


_SIGNATURES: Final = {
    name: inspect.signature(getattr(Driver, name)) for name in m.OPERATIONS if hasattr(Driver, name)
}


class ExecDriver:
    """The driver port, served by a subprocess speaking protocol v1.

    `store` is the directory a fresh launch keeps its store in; None asks the
    park for one that outlives the scenario (a parked process keeps using it)
    and is removed when the interpreter exits.
    """

    def __init__(
        self,
        command: Sequence[str],
        store: Path | None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        validate: bool = True,
        stderr_lines: int = 20,
        reuse: bool = False,
        prelaunch: bool = False,
        restarts_ahead: int | None = None,
        containment: Containment | None = None,
        started: tuple[ImplementationProcess, Description] | None = None,
    ) -> None:
        """`started` is a process already greeted on `store` (a peer's), used as it is."""
        self.command = list(command)
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.validate = validate
        self.stderr_lines = stderr_lines
        self.reuse = reuse
        self.prelaunch = prelaunch
        self._restarts_ahead = restarts_ahead
        self._restarts = 0
        self._settings = LaunchSettings(
            tuple(self.command), validate, stderr_lines, containment or Containment()
        )
        self._clock = CLOCK_START
        self._carried_logs: list[WarningLog] = []
        self._said_before_restarts: list[str] = []
        self._witnesses = Witnesses()
        self._closed = False
        self._crashed = False
        self.store: Path
        reused = None if started is not None else self._reuse_parked()
        if reused is None:
            self.store = store if store is not None else PARK.new_store()
        self._process, self._description = started or reused or self._launch()
        try:
            self._prepare_spares()
        except BaseException:
            self._process.kill()  # nobody will hold this driver to close it
            raise

    # -- process lifecycle ------------------------------------------------------
    def _launch(self) -> tuple[ImplementationProcess, Description]:
        """Start the command, shake hands, set the clock; a fault kills what was started."""
        self.store.mkdir(parents=True, exist_ok=True)
        return self._greet(self._settings.launch(self.store))

    def _greet(self, process: ImplementationProcess) -> tuple[ImplementationProcess, Description]:
        try:
            greeting = self._startup_call(process, m.HANDSHAKE, m.NoArgs())
            self._startup_call(process, m.SET_CLOCK, m.SET_CLOCK.args(instant=self._clock))
        except BaseException:
            process.kill()
            raise
        return process, greeting.description

    def _reuse_parked(self) -> tuple[ImplementationProcess, Description] | None:
        """A parked process of the same command, reset; None when a launch must do instead."""
        parked = PARK.take(self._settings) if self.reuse else None
        if parked is None:
            return None
        leftovers = self._reset(parked)
        if leftovers is None:
            parked.process.kill()
            return None
        if leftovers:
            parked.process.kill()
            raise ImplementationFault(
                FaultKind.UNCLEAN_RESET,
                f"{parked.process.command} acknowledged reset, but the previous scenario's "
                f"state is still visible: {'; '.join(leftovers)}. Fix reset, stop declaring "
                "the reset capability, or run with CONFORMANCE_EXEC_REUSE=0",
                list(parked.process.stderr_tail()),
            )
        self.store = parked.store
        return parked.process, parked.description

    def _reset(self, parked: ParkedProcess) -> list[str] | None:
        """What survived the reset of a parked process; None when it could not be reset."""
        process = parked.process
        if not (process.alive and parked.store.is_dir()):
            return None
        process.forget_stderr()

        def call(operation: m.Operation[Any, R], args: m.Args) -> R:
            return _answer(process, operation, args, self.timeout)

        try:
            _answer(process, m.RESET, m.NoArgs(), self.startup_timeout)
            call(m.SET_CLOCK, m.SET_CLOCK.args(instant=CLOCK_START))
            return reset_leftovers(call, parked.description, parked.witnesses)
        except (ImplementationFault, DriverError):
            return None

    def _startup_call(
        self, process: ImplementationProcess, operation: m.Operation[Any, R], args: m.Args
    ) -> R:
        answer = process.request(operation, args, self.startup_timeout)
        if isinstance(answer, Ok):
            return answer.result
        refusal = answer.error.message if isinstance(answer, m.ErrorReply) else answer.message
        raise ImplementationFault(
            FaultKind.UNUSABLE,
            f"{process.command}: {operation.name} was refused: {refusal}",
            list(process.stderr_tail()),
        )

    def describe(self) -> Description:
        return self._description

    def restart(self) -> None:
        if not (self._process.faulted or self._crashed):
            self._carried_logs.extend(self._logs_before_restart())
        self._crashed = False
        self._process.kill()
        said = self._process.stderr_tail()
        self._said_before_restarts += [*said, RESTART_MARK] if said else []
        self._process, self._description = self._launch_or_take_spare()
        self._restarts += 1
        self._prepare_spares()

    def _launch_or_take_spare(self) -> tuple[ImplementationProcess, Description]:
        """A process greeted on this driver's store: a waiting spare if one may be used, else
        a launch of the command."""
        spare = SPARES.take(self._settings) if self._spares_wanted() else None
        if spare is None:
            return self._launch()
        spare.take_over(self.store)
        return self._greet(spare.process)

    def _prepare_spares(self) -> None:
        """Top the spare room up to the restarts still expected (see the module's docstring)."""
        if not self._spares_wanted():
            return
        if self._restarts_ahead is None:
            expected = SPARES_WITHOUT_FORECAST if self._restarts else 0
        else:
            expected = self._restarts_ahead - self._restarts
        SPARES.prepare(self._settings, wanted=expected)

    def _spares_wanted(self) -> bool:
        """A sandbox shows its process only the directories that exist at its launch, and a
        spare's store does not exist yet: sandboxed restarts launch afresh."""
        declared = set(self._description.capabilities)
        sandboxed = self._settings.containment.sandbox
        return (
            self.prelaunch
            and not sandboxed
            and {Capability.PRELAUNCH, Capability.RESTART} <= declared
        )

    def launch_peer(self) -> ExecDriver:
        """Another process of the same command on this driver's store, beside this one
        (capability `multiprocess`): never a parked process, never parked itself. Where spares
        may be used, it is one, and the room is kept at SPARES_FOR_PEERS: a pool launches its
        peers, then a replacement after every batch, faster than one launch after another."""
        if self._spares_wanted():
            SPARES.prepare(self._settings, wanted=SPARES_FOR_PEERS)
        started = self._launch_or_take_spare()
        if self._spares_wanted():
            SPARES.prepare(self._settings, wanted=SPARES_FOR_PEERS)
        return ExecDriver(
            self.command,
            self.store,
            timeout=self.timeout,
            startup_timeout=self.startup_timeout,
            validate=self.validate,
            stderr_lines=self.stderr_lines,
            containment=self._settings.containment,
            started=started,
        )

    def crash_during_call(self, call: ConcurrentCall) -> None:
        """Send one call and SIGKILL the process a moment later, its answer unread: whether
        the call took effect is unknown, as after a real crash; `restart` brings it back."""
        operation = m.OPERATIONS[call.operation]
        args = operation.args.model_validate(call.arguments)
        self._process.send_and_kill(operation, args, after_seconds=CRASH_AFTER_SECONDS)
        self._crashed = True

    def stderr_tail(self) -> tuple[str, ...]:
        """The implementation's last stderr lines in this driver's life, across its restarts,
        for evidence beside a failure."""
        said = [*self._said_before_restarts, *self._process.settled_stderr_tail()]
        return tuple(said[-self.stderr_lines :])

    def close(self) -> None:
        """Park a healthy process for reuse, else SIGKILL it: no polite stop, waiting costs time."""
        if self._closed:
            return
        self._closed = True
        if self.reuse and self._resettable():
            parked = ParkedProcess(self._process, self._description, self.store, self._witnesses)
            PARK.park(self._settings, parked)
        else:
            self._process.kill()

    def _resettable(self) -> bool:
        return Capability.RESET in self._description.capabilities and self._process.alive

    def _call(self, operation: m.Operation[Any, R], args: m.Args) -> R:
        return _answer(self._process, operation, args, self.timeout)

    def __getattr__(self, name: str) -> Any:
        """Every port operation not defined here is passed on as the operation of its name, its
        arguments bound as `Driver` declares them: a new operation needs no line here."""
        if name.startswith("_") or name not in m.OPERATIONS or not hasattr(Driver, name):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return partial(self._send, name)

    def _send(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """Send the port method `method`, called with these arguments, as its operation."""
        operation = m.OPERATIONS[method]
        return self._call(operation, operation.args(**port_arguments(method, args, kwargs)))

    def set_clock(self, instant: datetime) -> None:
        self._send("set_clock", instant)
        self._clock = instant

    def advance_clock(self, delta: timedelta) -> datetime:
        microseconds = delta // timedelta(microseconds=1)
        self._clock = self._call(
            m.ADVANCE_CLOCK, m.AdvanceClockArgs(delta_microseconds=microseconds)
        )
        return self._clock

    def create_task(
        self, workspace_id: str, task_id: str, *, assignee_agent_id: str = ""
    ) -> TaskView:
        view: TaskView = self._send(
            "create_task", workspace_id, task_id, assignee_agent_id=assignee_agent_id
        )
        self._witnesses.task_id = task_id
        return view

    def warning_logs(self) -> list[WarningLog]:
        return self._carried_logs + self._current_warning_logs()

    def _current_warning_logs(self) -> list[WarningLog]:
        logs: list[WarningLog] = self._send("warning_logs")
        return logs

    def _logs_before_restart(self) -> list[WarningLog]:
        """What the kill is about to erase; nothing when the implementation keeps no logs."""
        try:
            return self._current_warning_logs()
        except DriverError:
            return []

    def create_environment(self, environment_id: str, members: list[str]) -> None:
        self._send("create_environment", environment_id, members)
        if members:
            self._witnesses.membership = (environment_id, members[0])

    def crash_during(self, calls: list[ConcurrentCall], *, after: timedelta) -> None:
        """Hand the batch over and SIGKILL the process group `after` into it (or as soon as it
        answers, whichever comes first); the answers are lost, as a crash loses them. The
        warning logs of the killed process are lost with it: nobody could read them."""
        self._process.send_and_kill(
            m.RUN_CONCURRENTLY,
            m.RUN_CONCURRENTLY.args(calls=calls),
            after_seconds=after.total_seconds(),
        )
        self._crashed = True


def _answer(
    process: ImplementationProcess, operation: m.Operation[Any, R], args: m.Args, timeout: float
) -> R:
    """The result of one request; a refusal or a not-supported reply as a DriverError."""
    answer = process.request(operation, args, timeout)
    if isinstance(answer, Ok):
        return answer.result
    if isinstance(answer, m.NotSupportedReply):
        raise DriverError(ErrorCode.NOT_SUPPORTED, answer.message)
    error = answer.error
    raise DriverError(error.code, error.message, definite=error.definite)
