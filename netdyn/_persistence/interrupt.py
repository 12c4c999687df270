"""Ctrl-C held back to safe points: a fit stops between steps, never inside JAX or a save.

Python raises ``KeyboardInterrupt`` wherever the main thread happens to be when SIGINT
arrives: inside JAX's tracing or a garbage-collector callback (where it is printed as
"Exception ignored" and lost, or leaves JAX in a state that crashes the interpreter at
exit), or inside the save that a first Ctrl-C started (a second Ctrl-C a few milliseconds
later then loses the step that save was keeping). Within ``defer_interrupts()`` SIGINT only
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
    """The Ctrl-C requests of one ``defer_interrupts()`` block (see the module docstring)."""

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
def defer_interrupts(notice: str | None = None) -> Iterator[Interrupts]:
    """Hold Ctrl-C (SIGINT) back to the safe points of a loop of your own.

    Within the block, Ctrl-C only records a request; ``stop.check()``, called where the
    loop can stop cleanly (after a step and its save), raises it as ``KeyboardInterrupt``:
    never inside JAX or halfway through writing a file. More presses within 2 s of the
    first are the same request (a double press); one more than 2 s later, while the first
    still waits for a check, raises at once. ``stop.dismiss()`` forgets a request not yet
    acted on (the work it would stop is done).

    ```python
    with nd.defer_interrupts() as stop:
        for subject in subjects:
            fitted, history = nd.fit(...)  # Ctrl-C: stops after its step, saved
            save(subject, fitted)          # never cut halfway
            stop.check()                   # Ctrl-C here: KeyboardInterrupt
    ```

    A fit inside the block (``nd.fit``, ``nd.fit_multistart``) shares its requests:
    Ctrl-C stops it after the step in progress (``KeyboardInterrupt``), with that step in
    its checkpoint. Nested blocks share the outermost one's requests. On leaving the
    outermost block, the previous SIGINT handler comes back and a request not acted on
    is passed to it (Python's default handler raises ``KeyboardInterrupt`` there),
    unless the block ends with an exception or called ``dismiss()``.

    Only in the main thread, and only over a SIGINT handler set from Python (the default
    one included): where SIGINT is ignored or kills the process, it is left alone and
    ``check()`` never raises.

    **Arguments**: ``notice``, written to stderr at the first Ctrl-C (e.g. "stopping
    after this subject").

    **Yields** ``stop``, with the methods ``check()`` and ``dismiss()``.
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
    """``check()`` of the active ``defer_interrupts()`` block, if any: raise ``KeyboardInterrupt``
    if Ctrl-C was pressed since the last check."""
    if _active is not None:
        _active.check()
