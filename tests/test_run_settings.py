"""``nd.RunSettings``: a run's settings.json, what a resume changes, and its record."""

import json

import pytest

import netdyn as nd


def test_run_settings_records_a_run_and_its_resumes(tmp_path):
    record = nd.RunSettings(tmp_path, renamed={"old_lr": "lr"})
    record.write({"lr": 0.1, "steps": 5, "out": "a"})
    assert json.loads((tmp_path / "settings.json").read_text()) == {
        "settings": {"lr": 0.1, "steps": 5, "out": "a"}}
    assert record.resumes() == []
    now = {"lr": 0.2, "steps": 5, "out": "b"}
    assert record.changed(now) == {"lr": (0.2, 0.1), "out": ("b", "a")}
    assert record.changed(now, free={"out", "lr"}) == {}
    record.record_resume(now, 3, ignore={"out"})
    record.record_resume({"lr": 0.1, "steps": 5, "out": "a"}, 4)
    assert record.resumes() == [{"at_step": 3, "changed": {"lr": 0.2}},
                                {"at_step": 4, "changed": {}}]
    # A file written before a setting was renamed is read under the new name.
    (tmp_path / "settings.json").write_text('{"settings": {"old_lr": 0.3}}')
    assert record.read()["settings"] == {"lr": 0.3}


def test_run_settings_name_a_missing_or_malformed_file(tmp_path):
    record = nd.RunSettings(tmp_path, context="resume: ", missing="; start afresh")
    with pytest.raises(ValueError, match="^resume: .*settings.json: no such file; start"):
        record.read()
    (tmp_path / "settings.json").write_text('{"settings": [], "resumed": []}')
    with pytest.raises(ValueError, match="the object 'settings' and the list 'resumed'"):
        record.resumes()
