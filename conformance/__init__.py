"""The conformance kit: driver port, registry, oracles, adapters, results and CLI."""
