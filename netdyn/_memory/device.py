"""The devices' memory, and batch sizes that fit it."""

import math
import os
from collections.abc import Callable, Sequence

import jax


def _stats(device) -> dict:
    """The device's memory statistics (``{}`` for CPU devices, other processes' devices and
    backends without them)."""
    if device.process_index != jax.process_index():
        return {}
    try:
        return device.memory_stats() or {}
    except Exception:  # noqa: BLE001 - backends without memory statistics
        return {}


def _host_bytes(pages: str) -> int | None:
    try:
        return os.sysconf(pages) * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def total_bytes(device: jax.Device) -> int | None:
    """The memory of ``device``: ``bytes_limit`` on accelerators, the host's RAM for CPU
    devices (``None`` when unknown)."""
    stats = _stats(device)
    if "bytes_limit" in stats:
        return int(stats["bytes_limit"])
    return _host_bytes("SC_PHYS_PAGES")


def check_fits(need: int, lead: str, held: str, advice: str) -> None:
    """Refuse ``need`` bytes that cannot fit in the default device's memory, instead of an
    allocation failure deep in XLA: ``ValueError("{lead} X GB of {held}, more than this
    device's Y GB of memory{advice}")``."""
    limit = total_bytes(jax.devices()[0])
    if limit is not None and need > limit:
        raise ValueError(f"{lead} {need / 1e9:.3g} GB of {held}, more than this device's "
                         f"{limit / 1e9:.3g} GB of memory{advice}")


def free_bytes(devices: Sequence[jax.Device]) -> int:
    """Bytes that each of ``devices`` can still allocate (the smallest of them).

    On accelerators, ``bytes_limit - bytes_in_use`` from the device's memory statistics.
    CPU devices report none and share the host's memory: there, the host's available
    memory divided among the local CPU devices.
    """
    out = []
    for device in devices:
        stats = _stats(device)
        if "bytes_limit" in stats:
            out.append(int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0)))
        else:
            host = _host_bytes("SC_AVPHYS_PAGES") or 0
            out.append(host // max(1, len(jax.local_devices(backend=device.platform))))
    return min(out)


def program_bytes(compiled) -> int:
    """Device memory of a compiled program: its arguments, outputs and temporaries, less
    the outputs that reuse argument buffers (XLA's ``memory_analysis``, per device)."""
    m = compiled.memory_analysis()
    return int(
        m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
        - m.alias_size_in_bytes
    )


def fitting_batch(
    compile_at: Callable[[int], tuple[object, int]],
    n_points: int,
    n_devices: int,
    budget: int,
) -> tuple[int, object]:
    """The largest batch (a multiple of ``n_devices``, at most the whole grid rounded up)
    whose compiled program needs at most ``budget`` bytes per device, and that program.

    ``compile_at(batch)`` returns ``(compiled, bytes)``. The whole grid is tried first (no
    extra compilation when it fits); otherwise the memory is taken as linear in the batch
    between one point per device and the whole grid, the batch is chosen from that line,
    and compiled (halved until it fits, in case the line was optimistic).
    """
    full = math.ceil(n_points / n_devices) * n_devices
    compiled, need = compile_at(full)
    if need <= budget:
        return full, compiled
    small_compiled, small = compile_at(n_devices)
    if small > budget:
        raise ValueError(
            f"one grid point per device needs {small / 1e6:.1f} MB of device memory, more "
            f"than the {budget / 1e6:.1f} MB available: shorten the simulation, use a "
            "checkpointing strategy (nd.Uniform, nd.MultiLevel) or pass max_bytes."
        )
    per_point = (need - small) / (full - n_devices)
    # memory(batch) ~ small + (batch - n_devices) * per_point <= budget
    most = n_devices + (budget - small) / per_point
    batch = min(full, n_devices * max(1, math.floor(most / n_devices)))
    while batch > n_devices:
        compiled, need = compile_at(batch)
        if need <= budget:
            return batch, compiled
        batch = max(n_devices, (batch // 2) // n_devices * n_devices)
    return n_devices, small_compiled
