"""`python -m conformance.cli`, the same as the `conformance` command."""

from conformance.cli import main

main()
