"""Opening a recording: the one place a recorder gets the contract's file metadata.

``recording_metadata`` is the Parquet key-value metadata docs/outputs.md names (model path and
SHA-256, scenario text, MuJoCo and mjrig versions, start time); ``open_recorder`` opens a
``SignalManager`` with it, plus whatever a caller records besides (``mjrig.set``, a sweep's
trial and seed, a branch's origin). ``mjrig run``, a sweep's trials and the app's recordings all
open theirs here. GUI-free.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import mujoco

import mjrig
from mjrig.runtime.analysis.requirements import report_entries
from mjrig.runtime.files.paths import file_sha256
from mjrig.runtime.files.urdf import package_path_metadata
from mjrig.runtime.telemetry.signals import SignalManager

if TYPE_CHECKING:
    from mjrig.runtime.manager import RuntimeManager

__all__ = ["open_recorder", "recording_metadata", "outcome_metadata"]


def recording_metadata(model_path: Path, scenario_text: str) -> dict[str, str]:
    """The Parquet key-value metadata the contract names (model path and SHA-256, scenario, versions,
    start time: now, UTC), and for a URDF the package paths in force (``urdf.RECORDED_KEY``). The SHA-256 is empty when ``model_path`` is not a file here."""
    digest = file_sha256(model_path) if model_path.is_file() else ""
    return {
        "mjrig.model_path": str(model_path),
        "mjrig.model_sha256": digest,
        "mjrig.scenario": scenario_text,
        "mjrig.mujoco_version": mujoco.__version__,
        "mjrig.version": mjrig.__version__,
        "mjrig.start_time": _dt.datetime.now(_dt.UTC).isoformat(),
        **package_path_metadata(model_path),
    }


def open_recorder(
    path: Path,
    *,
    rate: float | None,
    groups: Iterable[str],
    model_path: Path | None = None,
    scenario_text: str | None = None,
    metadata: Mapping[str, str] | None = None,
    extra_metadata: Mapping[str, str] | None = None,
    wait_when_behind: bool = True,
) -> SignalManager:
    """A recorder of ``groups`` (``SIGNAL_GROUPS`` names) at ``rate`` rows per simulated second
    (None: every step) into ``path`` (opened at its first flush), its file metadata the contract's.

    Give ``model_path`` and ``scenario_text`` (the metadata is made now, ``recording_metadata``),
    or ``metadata`` made earlier by ``recording_metadata`` (a sweep's driver makes it once, where
    the model file is, for every trial wherever it runs). ``extra_metadata`` adds keys (it wins
    over the contract's on a clash). ``wait_when_behind=False``: a writer behind the stepping never
    makes it wait, it says so (``SignalManager.behind``; the app, which keeps real time). TypeError
    when both or neither way is given.
    """
    if metadata is not None:
        if model_path is not None or scenario_text is not None:
            raise TypeError("open_recorder() takes model_path and scenario_text, or metadata: not both")
        meta = dict(metadata)
    elif model_path is None or scenario_text is None:
        raise TypeError("open_recorder() needs model_path and scenario_text (or metadata made earlier)")
    else:
        meta = recording_metadata(model_path, scenario_text)
    meta.update(extra_metadata or {})
    return SignalManager(path, rate=rate, groups=groups, metadata=meta, wait_when_behind=wait_when_behind)


def outcome_metadata(runtime: RuntimeManager) -> dict[str, str]:
    """What a recording's metadata says of its run's outcome, as JSON, added when it closes: the
    metrics (``mjrig.metrics``, as ``mjrig run --metrics`` writes them) and the requirements'
    report entries as they stand (``mjrig.requirements``, as ``--report`` writes them)."""
    meta = {"mjrig.metrics": json.dumps(runtime.metric_entries())} if runtime.metrics else {}
    if runtime.requirements:
        meta["mjrig.requirements"] = json.dumps(report_entries(runtime.requirements))
    return meta
