"""``RunSettings``: the settings of a run, kept beside its results (``settings.json``), so
that a resume continues only the same run, with a record of each resume."""

from dataclasses import dataclass, field
from pathlib import Path

from .strict_json import read_json_object, write_json


@dataclass(frozen=True)
class RunSettings:
    """The file ``folder/settings.json`` of a resumable run (``netdyn fit --out``):
    ``{"settings": {name: value}, "resumed": [{"at_step", "changed"}, ...]}``, written
    atomically as strict JSON.

    ``write`` records the settings of a run when it starts; ``changed`` says which
    settings a resume would change (those in ``free``, which do not change the result,
    left out); ``record_resume`` adds a resume (the step it continues from and the
    settings it changed) and ``resumes`` reads them back, oldest first.

    **Arguments**: ``folder``; ``context`` starts every error (``"--resume: "``) and
    ``missing`` says what a missing or malformed file means; ``renamed``, ``{old: new}``:
    settings renamed since a file was written are read under their new names.
    """

    folder: Path
    context: str = ""
    missing: str = ""
    renamed: dict[str, str] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        """``folder/settings.json``."""
        return Path(self.folder) / "settings.json"

    def write(self, settings: dict) -> None:
        """Start the record with the run's ``settings`` (no resume yet)."""
        write_json(self.path, {"settings": settings})

    def read(self) -> dict:
        """The content of the file, checked (``ValueError`` naming it if it is missing
        or malformed), with renamed settings under their new names."""
        saved = read_json_object(self.path, self.context, self.missing)
        if not (isinstance(saved.get("settings"), dict)
                and isinstance(saved.get("resumed", []), list)):
            raise ValueError(f"{self.context}{self.path} cannot be read (it must be a JSON "
                             "object with the object 'settings' and the list 'resumed').")
        saved["settings"] = {self.renamed.get(k, k): v for k, v in saved["settings"].items()}
        return saved

    def changed(self, settings: dict, free=frozenset()) -> dict[str, tuple]:
        """``{name: (value in settings, value recorded)}`` for each of ``settings`` not
        in ``free`` whose value differs from the recorded one, in the order of
        ``settings``: empty when a resume with ``settings`` continues the same run."""
        saved = self.read()["settings"]
        return {name: (value, saved.get(name)) for name, value in settings.items()
                if name not in free and saved.get(name) != value}

    def record_resume(self, settings: dict, step: int, ignore=frozenset()) -> None:
        """Add a resume at ``step`` with the settings it changed (those of ``settings``,
        but for ``ignore``, whose values differ from the recorded ones)."""
        saved = self.read()
        changed = {name: value for name, value in settings.items()
                   if name not in ignore and saved["settings"].get(name) != value}
        saved["resumed"] = [*saved.get("resumed", []), {"at_step": step, "changed": changed}]
        write_json(self.path, saved)

    def resumes(self) -> list[dict]:
        """The resumes recorded (``record_resume``), oldest first."""
        return self.read().get("resumed", [])

