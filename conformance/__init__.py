"""The conformance kit: driver port, registry, oracles, adapters, results and CLI."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("assign-delegate-conformance")
    """One place for the version: pyproject.toml's, as the installed distribution reports it."""
except PackageNotFoundError:  # a source tree on sys.path without an install
    __version__ = "0+unknown"
