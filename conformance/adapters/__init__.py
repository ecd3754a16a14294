"""Adapters: ways of reaching an implementation through the driver port."""
