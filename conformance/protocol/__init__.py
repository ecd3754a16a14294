"""Protocol v1: the driver port carried as JSON lines over a subprocess's stdin and stdout.

`messages` declares the envelopes and the operations, `codec` turns them into
lines and back, `schemas` writes the JSON Schema files shipped in
`conformance/schemas/`.
"""
