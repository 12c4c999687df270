"""Ctrl-C held back to safe points: a fit stops between steps, never inside JAX or a save.

Python raises ``KeyboardInterrupt`` wherever the main thread happens to be when SIGINT
arrives: inside JAX's tracing or a garbage-collector callback (where it is printed as
"Exception ignored" and lost, or leaves JAX in a state that crashes the interpreter at
exit), or inside the save that a first Ctrl-C started (a second Ctrl-C a few milliseconds
later then loses the step that save was keeping). Within ``deferred()`` SIGINT only
records a request; ``check()``, called where the code can stop cleanly (after a step and
its checkpoint), raises the ``KeyboardInterrupt``.
"""

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator

# Seconds after a Ctrl-C during which more Ctrl-C are taken as the same request (a double
# press); one later, while the first still waits for a safe point, raises at once.
GRACE = 2.0


class Interrupts:
    """The Ctrl-C requests of one ``deferred()`` block (see the module docstring)."""

    def __init__(self, notice: str | None = None):
        self.notice = notice
        self.pending = False
        self.first: float | None = None  # time.monotonic() of the request being handled

    def handle(self, signum, frame) -> None:
        """The SIGINT handler: record a request (repeats within ``GRACE`` s are the same
        one); a press after ``GRACE`` s, the first one not yet acted on, raises at once."""
        now = time.monotonic()
        if self.first is not None and now - self.first < GRACE:
            return
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt
        self.first, self.pending = now, True
        if self.notice:
            # os.write, not print: the main thread may be inside a write to sys.stderr. On a
            # terminal, below a progress line being rewritten in place.
            os.write(2, (("\n" if os.isatty(2) else "") + self.notice).encode())

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` if Ctrl-C was pressed since the last check."""
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt

    def dismiss(self) -> None:
        """Forget a request not yet acted on (the work it would stop is done)."""
        self.pending = False


_active: Interrupts | None = None


@contextlib.contextmanager
def deferred(notice: str | None = None) -> Iterator[Interrupts]:
    """Within the block, SIGINT (Ctrl-C) is held back until ``check()``.

    Only in the main thread, and only over a SIGINT handler set from Python (the default
    one included): a handler set to ignore SIGINT or to let it kill the process is left
    alone, and then ``check()`` never raises. Nested blocks share the outermost one's
    requests. On leaving the outermost block the previous handler comes back (unless the
    block replaced it) and a request not acted on is passed to it (the default handler
    raises ``KeyboardInterrupt`` there), unless the block ends with an exception or
    called ``dismiss()``. ``notice`` is written to stderr at the first Ctrl-C.
    """
    global _active
    if _active is not None:
        yield _active
        return
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield Interrupts()  # never pending: check() never raises
        return
    state = Interrupts(notice=notice)
    signal.signal(signal.SIGINT, state.handle)
    _active = state
    try:
        yield state
    finally:
        _active = None
        if signal.getsignal(signal.SIGINT) == state.handle:
            signal.signal(signal.SIGINT, previous)
    if state.pending:
        state.pending = False
        previous(signal.SIGINT, None)


def check() -> None:
    """``check()`` of the active ``deferred()`` block, if any: raise ``KeyboardInterrupt``
    if Ctrl-C was pressed since the last check."""
    if _active is not None:
        _active.check()
