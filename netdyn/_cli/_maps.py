"""The regional maps of ``--maps``: from the connectome, the training FC, or files."""

from typing import NamedTuple

import numpy as np

from .._parameterisation import maps as region_maps


class RegionMaps(NamedTuple):
    """``k`` named maps, z-scored, ``values`` ``[k, nodes]``."""

    names: tuple[str, ...]
    values: np.ndarray


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
            try:
                name, v = region_maps.read(item, weights.shape[0])
            except ValueError as e:
                raise ValueError(f"--maps {e}") from None
        if name in names:
            raise ValueError(f"--maps {spec!r} names {name} twice.")
        names.append(name)
        values.append(v)
    if not names:
        raise ValueError("--maps: give at least one map (in-strength, fc-gradient or a file).")
    return RegionMaps(tuple(names), np.stack(values))
