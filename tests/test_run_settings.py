"""``nd.RunSettings``: a run's settings.json, what a resume changes, and its record;
``nd.RunFolder``: the folder of a run's results, checked and made ready."""

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


def test_run_folder_is_made_ready_and_keeps_another_fits_results(tmp_path):
    folder = nd.RunFolder(tmp_path / "run", results=("params.json", "checkpoint.eqx"))
    assert folder.prepare({"lr": 0.1}) == tmp_path / "run"
    assert folder.record.read()["settings"] == {"lr": 0.1} and folder.saved_steps() is None
    (tmp_path / "run" / "params.json").write_text("{}")
    with pytest.raises(ValueError, match=r"folder .*run already holds the results of a fit "
                       r"\(params.json\): pass overwrite to replace them, resume to continue"):
        folder.prepare({"lr": 0.2})
    folder.prepare({"lr": 0.2}, overwrite=True)  # the earlier results removed, a new record
    assert not (tmp_path / "run" / "params.json").exists()
    assert folder.record.read()["settings"] == {"lr": 0.2}
    with pytest.raises(ValueError, match="resume continues the fit in folder, overwrite "
                       "replaces it: give one of them"):
        folder.prepare({"lr": 0.2}, resume=True, overwrite=True)
    with pytest.raises(ValueError, match="resume: there is no checkpoint in"):
        folder.prepare({"lr": 0.2}, resume=True)
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="is a file; give a folder"):
        nd.RunFolder(tmp_path / "file", results=()).prepare({})


def test_run_folder_resumes_only_the_same_fit(tmp_path):
    # A resume may change only the free settings; the errors name them as told.
    folder = nd.RunFolder(tmp_path, results=("checkpoint.eqx",), free=frozenset({"out"}),
                          words={"folder": "--out", "resume": "--resume",
                                 "overwrite": "--overwrite"},
                          option=lambda name: "--" + name)
    folder.prepare({"lr": 0.1, "out": "a"})
    (tmp_path / "checkpoint.eqx").write_text("")  # only its presence matters here
    assert folder.prepare({"lr": 0.1, "out": "b"}, resume=True) == tmp_path
    assert folder.record.read()["settings"] == {"lr": 0.1, "out": "a"}  # kept as started
    with pytest.raises(ValueError, match=r"^--resume: --lr is 0.2 here but 0.1 in the fit in "
                       r".* \(--overwrite, or another --out\) to change them"):
        folder.prepare({"lr": 0.2, "out": "a"}, resume=True)
