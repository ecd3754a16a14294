"""Collects every scenario of every feature file as a test."""

from pytest_bdd import scenarios

scenarios(".")
