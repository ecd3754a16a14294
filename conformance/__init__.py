"""The conformance kit: driver port, registry, oracles, adapters, results and CLI."""

__version__ = "0.1.0"
