"""Tests of the Gherkin features (features/) and the data they share with the models."""
