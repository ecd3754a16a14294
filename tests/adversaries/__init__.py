"""Wrong implementations the kit must not pass: adversaries written against the port or the wire."""
