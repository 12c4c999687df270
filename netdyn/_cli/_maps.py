"""The regional maps of ``--maps``: from the connectome, the training FC, or files."""

from pathlib import Path
from typing import NamedTuple

import numpy as np

from .._parameterisation import maps as region_maps


class RegionMaps(NamedTuple):
    """``k`` named maps, z-scored, ``values`` ``[k, nodes]``."""

    names: tuple[str, ...]
    values: np.ndarray


def _read_map(path: str, n: int) -> tuple[str, np.ndarray]:
    """One value per region from a text file (commas, tabs, spaces or new lines between
    values; an optional first line naming the map)."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"--maps {path}: cannot read the file ({e}).") from None
    tokens = text.replace(",", " ").split()
    name = Path(path).stem
    if tokens and not _is_number(tokens[0]):
        lines = text.splitlines()
        name = lines[0].strip().strip(",") or name
        tokens = "\n".join(lines[1:]).replace(",", " ").split()
    if not all(_is_number(t) for t in tokens):
        bad = next(t for t in tokens if not _is_number(t))
        raise ValueError(f"--maps {path}: {bad!r} is not a number (one value per region).")
    values = np.asarray([float(t) for t in tokens])
    if values.size != n:
        raise ValueError(f"--maps {path}: {values.size} values for {n} regions (one value "
                         "per region, in the connectome's order).")
    try:
        return name, region_maps.zscore(values)
    except ValueError as e:
        raise ValueError(f"--maps {path}: {e}") from None


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def read_maps(spec: str, weights: np.ndarray, target_fc: np.ndarray) -> RegionMaps:
    """The maps of ``--maps``: ``in-strength`` (of the weights), ``fc-gradient`` (the
    principal gradient of the fitted FC, never of the test subjects), or files."""
    names, values = [], []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        if item == "in-strength":
            name, v = item, region_maps.in_strength(weights)
        elif item == "fc-gradient":
            name, v = item, region_maps.fc_gradient(target_fc)
        else:
            name, v = _read_map(item, weights.shape[0])
        if name in names:
            raise ValueError(f"--maps {spec!r} names {name} twice.")
        names.append(name)
        values.append(v)
    if not names:
        raise ValueError("--maps: give at least one map (in-strength, fc-gradient or a file).")
    return RegionMaps(tuple(names), np.stack(values))
