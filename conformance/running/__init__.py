"""Running the suite under pytest: the plugin, the recorder of verdicts and the harness's
memory of them, faults and restarts, expectations, and the run's scratch folders.
"""
