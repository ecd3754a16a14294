"""Benchmarks of the kit and the reference: ratios measured side by side, never asserted."""
