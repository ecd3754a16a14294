"""The Office run queue: assignee mutation, wake producers and the enqueue pipeline."""
