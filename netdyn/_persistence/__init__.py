"""What outlives a process: atomic writes, strict JSON, checkpoints and resuming, a run's
settings (``RunSettings``), deferred interrupts."""
