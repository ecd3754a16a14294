"""The spec side: the criteria and their clauses, the scenario inventory, the spec's text
and its drift, and `expect`, through which every check cites what it enforces.
"""
