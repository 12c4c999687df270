"""What outlives a process: atomic writes, strict JSON, checkpoints and resuming,
deferred interrupts."""
