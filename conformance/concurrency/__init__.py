"""Concurrency: recorded histories of operations, the checker that judges them, and the
races the suite drives through the driver port.
"""
