"""The results stream and what vouches for it: its records, its integrity checks, the
provenance its header carries, and the redaction of secrets from what it stores.
"""
