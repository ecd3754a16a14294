"""pytest-bdd step definitions. They reach implementations through the driver port only."""
