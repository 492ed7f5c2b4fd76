"""The format contract: the interface, the base class, options, spans, sessions, batches, the registry."""
