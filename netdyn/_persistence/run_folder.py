"""``RunFolder``: the folder of one resumable run's results (``netdyn fit --out``), checked
and made ready before the run starts, so that a long run never fails at its first save
and never mixes its results with another run's."""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .atomic import check_writable
from .resume import saved_steps
from .run_settings import RunSettings

# How the errors name the folder and the two ways to reuse one, by default (netdyn fit
# names its options: {"folder": "--out", "resume": "--resume", "overwrite": "--overwrite"}).
WORDS = {"folder": "folder", "resume": "resume", "overwrite": "overwrite"}


@dataclass(frozen=True)
class RunFolder:
    """The folder ``folder`` of one fit: its results, its checkpoint and its
    ``settings.json`` (``RunSettings``: the settings of the fit, and each resume).

    ``prepare`` checks the folder before anything runs and makes it ready: a folder,
    writable, holding no results of another fit (unless ``overwrite``: they are removed)
    and, to ``resume``, the checkpoint of a fit with the same settings (but for those in
    ``free``, which do not change the result). ``saved_steps`` says how far that checkpoint
    got; ``record`` keeps the record of the settings and the resumes.

    **Arguments**:

    - ``folder``: the path.
    - ``results``: the names of the files a fit leaves there (what ``overwrite`` removes).
    - ``checkpoint``: the name of the checkpoint file a resume continues from.
    - ``free``: the settings that may differ on a resume.
    - ``renamed``: ``{old: new}``, settings renamed since a record was written.
    - ``words``: how errors name the folder, resuming and overwriting (``WORDS``; the
      command line's options, e.g. ``{"folder": "--out", ...}``); ``option``: how they name
      a setting (by default as it is).

    Every problem is a ``ValueError`` that names the folder or the file.
    """

    folder: Path
    results: tuple[str, ...]
    checkpoint: str = "checkpoint.eqx"
    free: frozenset = frozenset()
    renamed: dict[str, str] = field(default_factory=dict)
    words: dict[str, str] = field(default_factory=lambda: dict(WORDS))
    option: Callable[[str], str] = str

    @property
    def record(self) -> RunSettings:
        """``folder/settings.json``: the settings of the fit, and its resumes."""
        out, w = Path(self.folder), self.words
        return RunSettings(out, f"{w['resume']}: ", f"; the settings of the fit in {out} are "
                           f"unknown: start it afresh with {w['overwrite']}", self.renamed)

    def prepare(self, settings: dict, *, resume: bool = False, overwrite: bool = False) -> Path:
        """Check the folder for a fit with ``settings`` and make it ready (see above):
        with ``resume``, the fit there is continued; else ``settings`` start its record."""
        out, w = Path(self.folder), self.words
        if out.exists() and not out.is_dir():
            raise ValueError(f"{w['folder']} {out} is a file; give a folder for the results.")
        checkpoint = out / self.checkpoint
        if checkpoint.is_dir():
            raise ValueError(f"{w['folder']} {out}: {checkpoint} is a folder, not a checkpoint "
                             "file; move it away.")
        if resume and overwrite:
            raise ValueError(f"{w['resume']} continues the fit in {w['folder']}, "
                             f"{w['overwrite']} replaces it: give one of them.")
        if resume:
            self._check_resumable(settings)
        found = [name for name in self.results if (out / name).exists()]
        if found and not (resume or overwrite):
            raise ValueError(
                f"{w['folder']} {out} already holds the results of a fit ({', '.join(found)}): "
                f"pass {w['overwrite']} to replace them, {w['resume']} to continue that fit, or "
                f"another {w['folder']}.")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ValueError(f"{w['folder']} {out}: the folder cannot be made ({e.strerror})."
                             ) from None
        check_writable(self.record.path, f"{w['folder']}: the file")
        if not resume:
            for name in found:  # overwrite: nothing of the earlier fit stays beside the new
                (out / name).unlink()
            self.record.write(settings)
        return out

    def _check_resumable(self, settings: dict) -> None:
        out, w = Path(self.folder), self.words
        if not (out / self.checkpoint).is_file():
            raise ValueError(
                f"{w['resume']}: there is no checkpoint in {out} ({out / self.checkpoint} does "
                f"not exist); run without {w['resume']} to start a new fit there.")
        changed = self.record.changed(settings, self.free)
        if changed:
            name, (value, saved) = next(iter(changed.items()))
            raise ValueError(
                f"{w['resume']}: {self.option(name)} is {value!r} here but {saved!r} in the fit "
                f"in {out} ({self.record.path}); resume with the same settings, or start a new "
                f"fit ({w['overwrite']}, or another {w['folder']}) to change them.")

    def saved_steps(self) -> tuple[int, int] | None:
        """``(steps done, steps in all)`` of the checkpoint (``nd.saved_steps``: a corrupt
        or hand-edited file is a ``ValueError`` naming it), ``None`` if there is none."""
        path = Path(self.folder) / self.checkpoint
        return saved_steps(path) if path.is_file() else None
