"""Oracle models: small pure-Python restatements of the canonical semantics.

They share no code with any implementation, so a property test can compare
what an implementation did with what the semantics predict.
"""
