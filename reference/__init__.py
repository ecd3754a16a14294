"""Reference implementation of the Office run queue and Armonia delegation work requests.

It knows nothing of the conformance kit: the kit reaches it through an adapter.
"""

__version__ = "0.1.0"
