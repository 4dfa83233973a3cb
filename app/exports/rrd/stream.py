"""A recording as a Rerun file (``.rrd``, rerun-sdk): ``mjrig export FILE --to rrd``.

One timeline, ``sim_time``: the simulated time of each row (the ``time`` column, seconds; a
duration in Rerun's terms). The file holds:

- every numeric column but ``time`` as a scalar series (``Scalars``, every row that has a value:
  nothing thinned), at the column's entity path by group: ``Joints/slide_x:qpos`` ->
  ``joints/slide_x/qpos`` (the category lowercased, each ``/`` level and the attribute a part of its
  own, names escaped as Rerun wants: ``Sensors/block_acc:1`` -> ``sensors/block_acc/1``);
  ``wall_time`` goes to ``wall_time``;
- each body's world-frame pose over time at ``world/<body>`` (``Transform3D``: translation from
  ``Bodies/<body>:x`` ``:y`` ``:z``, m; rotation from ``:qw`` ``:qx`` ``:qy`` ``:qz`` when recorded);
- the model's geometry, static, under ``world/<body>/<geom>`` (``rrd.scene``), from the model file
  the recording names (``mjrig.model_path``). When it is missing or does not compile, one line on
  stderr says the 3D part was left out and the rest is written;
- each load of the scenario that is recorded (``Loads/<load>:fx`` ``:fy`` ``:fz``, world frame, N)
  and has an ``at`` point the model knows, on a body whose pose is recorded, as an arrow at
  ``arrows/<load>`` (``Arrows3D``, from the point, world frame), scaled so that the largest force
  of the recording is a quarter of the model's size (MuJoCo's ``stat.extent``);
- a blueprint: the 3D view beside a time-series view of each of the scenario's ``[plots]
  signals`` (names or globs) found in the recording (all the series in one view when there are
  none).

Memory stays bounded: the rows are read a batch at a time (``RRD_CELLS`` cells), sent with
``rerun.send_columns`` and the encoded bytes written to the file before the next batch.

GUI-free (rerun-sdk, numpy, pyarrow). Threading: no shared state; any thread.
"""

from __future__ import annotations

import fnmatch
import sys
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mjrig.exports.rrd.scene import Scene, body_entity, load_scene, log_geometry
from mjrig.runtime.errors import ConfigError, one_line
from mjrig.runtime.files.urdf import recorded_package_paths

__all__ = [
    "RrdSource",
    "RRD_CELLS",
    "TIMELINE",
    "write_rrd",
    "entity_of",
    "plan_columns",
    "send_batch",
    "blueprint",
    "SeriesPlan",
]

RRD_CELLS = 2_000_000
"""Cells (rows x columns) of the recording read and sent at once."""
TIMELINE = "sim_time"
"""The timeline of simulated time (s)."""
_NOT_SERIES = ("time",)
_POSE = ("x", "y", "z")
_TURN = ("qw", "qx", "qy", "qz")
_FORCE = ("fx", "fy", "fz")


class RrdSource(Protocol):
    """What ``write_rrd`` reads of an open recording (``export``'s source satisfies it)."""

    @property
    def path(self) -> Path: ...
    @property
    def names(self) -> list[str]: ...
    @property
    def metadata(self) -> dict[str, str]: ...
    @property
    def file(self) -> Any: ...

    def batches(self, progress: Callable[[int, int], None] | None, *, rows: int = ...) -> Iterator[pa.RecordBatch]:
        """The rows, batch by batch (``rows`` at most), reporting progress after each row group."""
        ...


def entity_of(column: str) -> str:
    """A column's entity path: ``Joints/slide_x:qpos`` -> ``joints/slide_x/qpos``, each part
    escaped (category lowercased; text with no ``:`` is its own attribute-less path)."""
    import rerun as rr

    head, colon, attribute = column.rpartition(":")
    if not colon:
        head, attribute = column, ""
    category, _, entity = head.partition("/")
    parts = [category.lower(), *(entity.split("/") if entity else []), *([attribute] if colon else [])]
    return "/".join(rr.escape_entity_path_part(p) for p in parts if p != "") or "_"


@dataclass
class SeriesPlan:
    """Which columns go where: scalars, body poses, load arrows (``plan_columns``)."""

    series: list[tuple[str, str]]  # (column, entity path)
    poses: dict[str, dict[str, str]]  # body -> {"x": column, ..., "qw": column, ...}
    arrows: list[tuple[str, dict[str, str], str, np.ndarray]] = field(default_factory=list)
    # (load, {"fx": column, ...}, body, point in the body's frame, m)
    scale: float = 1.0  # m of arrow per N


def _numeric(t: pa.DataType) -> bool:
    return bool(pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_boolean(t))


def _plan(src: RrdSource) -> SeriesPlan:
    return plan_columns(src.names, dict(zip(src.names, src.file.schema_arrow.types)))


def plan_columns(names: list[str], types: dict[str, pa.DataType]) -> SeriesPlan:
    """Where the columns ``names`` (of arrow ``types``) go: scalar series, body poses."""
    series = [(n, entity_of(n)) for n in names if n not in _NOT_SERIES and _numeric(types[n])]
    poses: dict[str, dict[str, str]] = {}
    for name in names:
        head, colon, attribute = name.rpartition(":")
        if colon and head.startswith("Bodies/") and attribute in _POSE + _TURN and _numeric(types[name]):
            poses.setdefault(head[len("Bodies/") :], {})[attribute] = name
    poses = {b: cols for b, cols in poses.items() if all(a in cols for a in _POSE)}
    for cols in poses.values():
        if not all(a in cols for a in _TURN):
            for a in _TURN:
                cols.pop(a, None)
    return SeriesPlan(series, poses)


def _scenario(src: RrdSource) -> dict[str, Any]:
    """The scenario the recording carries (``mjrig.scenario``), {} when none or unreadable."""
    try:
        return tomllib.loads(src.metadata.get("mjrig.scenario", ""))
    except tomllib.TOMLDecodeError:
        return {}


def _scene(src: RrdSource) -> Scene | None:
    """The compiled model the recording names, or None with one line on stderr saying why."""
    model = src.metadata.get("mjrig.model_path", "")
    why = ""
    if not model:
        why = "it names no model file"
    elif not Path(model).is_file():
        why = f"its model {model} is not there"
    else:
        try:
            return load_scene(Path(model), package_path=recorded_package_paths(src.metadata))
        except ConfigError as exc:
            why = str(exc)
    print(one_line(f"mjrig: {src.path}: {why}: the 3D part (geometry, loads' arrows) was left out"), file=sys.stderr)
    return None


def _add_arrows(plan: SeriesPlan, src: RrdSource, scene: Scene, doc: dict[str, Any]) -> None:
    """The scenario's loads that can be drawn (force recorded, point known, its body's pose
    recorded or the world), and the scale: the largest force (N) a quarter of the model's size."""
    loads = doc.get("loads", [])
    names = set(src.names)
    for load in loads if isinstance(loads, list) else []:
        if not isinstance(load, dict) or not isinstance(load.get("at"), str) or not load.get("name"):
            continue
        cols = {a: f"Loads/{load['name']}:{a}" for a in _FORCE}
        where = scene.point_in_body(load["at"])
        if where is None or not set(cols.values()) <= names or (where[0] != "world" and where[0] not in plan.poses):
            continue
        plan.arrows.append((str(load["name"]), cols, where[0], where[1]))
    if not plan.arrows:
        return
    largest = 0.0
    columns = sorted({c for _, cols, _, _ in plan.arrows for c in cols.values()})
    for batch in src.file.iter_batches(batch_size=max(64, RRD_CELLS // len(columns)), columns=columns):
        for _, cols, _, _ in plan.arrows:
            f = np.column_stack([_floats(batch.column(cols[a])) for a in _FORCE])
            norms = np.linalg.norm(f, axis=1)
            norms = norms[np.isfinite(norms)]
            largest = max(largest, float(norms.max()) if norms.size else 0.0)
    plan.scale = 0.25 * scene.extent / largest if largest > 0 else 1.0


def _floats(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A column as float64 (null -> NaN, bool -> 0/1)."""
    return np.asarray(column.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)


def _valid(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(pc.is_valid(column).to_numpy(zero_copy_only=False), dtype=bool)


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Each vector of ``v`` (n x 3) turned by the unit quaternion of ``q`` (n x 4, w x y z)."""
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    w, u = q[:, :1], q[:, 1:]
    return v + 2 * w * np.cross(u, v) + 2 * np.cross(u, np.cross(u, v))


def blueprint(plan: SeriesPlan, wanted: list[str], *, spatial: bool) -> Any:
    """The 3D view beside a time-series view per signal of ``wanted`` (names or globs, a rig's
    ``[plots] signals``) among the plan's series (one view of them all when none is found)."""
    import rerun.blueprint as rrb

    shown: list[tuple[str, str]] = []
    for pattern in wanted:
        shown += [(c, e) for c, e in plan.series if fnmatch.fnmatchcase(c, str(pattern)) and (c, e) not in shown]
    if shown:
        charts: Any = rrb.Vertical(*[rrb.TimeSeriesView(origin=e, name=c) for c, e in shown])
    else:
        charts = rrb.TimeSeriesView(origin="/", contents=["+ /**", "- /world/**", "- /arrows/**"], name="signals")
    if not spatial:
        return rrb.Blueprint(charts, collapse_panels=False)
    view = rrb.Spatial3DView(origin="/", contents=["+ /world/**", "+ /arrows/**"], name="3D")
    return rrb.Blueprint(rrb.Horizontal(view, charts), collapse_panels=False)


def send_batch(rec: Any, plan: SeriesPlan, batch: pa.RecordBatch) -> None:
    """One batch of rows: its scalars, poses and arrows on the ``sim_time`` timeline."""
    import rerun as rr

    times = _floats(batch.column("time"))
    timed = np.isfinite(times) & _valid(batch.column("time"))

    def send(path: str, keep: np.ndarray, columns: Any) -> None:
        rr.send_columns(path, indexes=[rr.TimeColumn(TIMELINE, duration=times[keep])], columns=columns, recording=rec)

    for column, path in plan.series:
        values = batch.column(column)
        keep = timed & _valid(values)
        if keep.any():
            send(path, keep, rr.Scalars.columns(scalars=_floats(values)[keep]))
    at: dict[str, tuple[np.ndarray, np.ndarray | None, np.ndarray]] = {}  # body -> (xyz, wxyz, rows kept)
    for body, cols in plan.poses.items():
        names = [cols[a] for a in _POSE + _TURN if a in cols]
        keep = timed & np.logical_and.reduce([_valid(batch.column(c)) for c in names])
        xyz = np.column_stack([_floats(batch.column(cols[a])) for a in _POSE])
        wxyz = np.column_stack([_floats(batch.column(cols[a])) for a in _TURN]) if "qw" in cols else None
        at[body] = (xyz, wxyz, keep)
        if keep.any():
            turn = {} if wxyz is None else {"quaternion": wxyz[keep][:, [1, 2, 3, 0]]}
            send(body_entity(body), keep, rr.Transform3D.columns(translation=xyz[keep], **turn))
    for load, cols, body, offset in plan.arrows:
        force = np.column_stack([_floats(batch.column(cols[a])) for a in _FORCE])
        keep = timed & np.isfinite(force).all(axis=1)
        origin = np.tile(offset, (len(times), 1))
        if body != "world":
            xyz, wxyz, kept = at[body]
            keep &= kept
            origin = xyz + (_rotate(wxyz, origin) if wxyz is not None else origin)
        if keep.any():
            send(
                f"arrows/{rr.escape_entity_path_part(load)}",
                keep,
                rr.Arrows3D.columns(vectors=force[keep] * plan.scale, origins=origin[keep]),
            )


def write_rrd(src: RrdSource, fh: IO[bytes], progress: Callable[[int, int], None] | None) -> int:
    """Write the recording ``src`` to ``fh`` as a Rerun file (see the module's docstring); the rows
    read. ConfigError (one line) when rerun-sdk is not installed."""
    try:
        import rerun as rr
    except ImportError:
        raise ConfigError(one_line(f"{src.path}: export to rrd needs rerun-sdk: pip install 'mjrig[rerun]'")) from None
    doc = _scenario(src)
    plan = _plan(src)
    scene = _scene(src)
    if scene is not None:
        _add_arrows(plan, src, scene, doc)
    rec = rr.RecordingStream("mjrig", send_properties=False)
    stream = rr.binary_stream(recording=rec)

    def drain() -> None:
        data = stream.read()
        if data:
            fh.write(data)

    try:
        plots = doc.get("plots", {})
        wanted = plots.get("signals", []) if isinstance(plots, dict) else []
        spatial = scene is not None or bool(plan.poses)
        rr.send_blueprint(blueprint(plan, wanted if isinstance(wanted, list) else [], spatial=spatial), recording=rec)
        if scene is not None:
            log_geometry(scene, rec)
        rows = 0
        for batch in src.batches(progress, rows=max(64, RRD_CELLS // max(1, len(src.names)))):
            send_batch(rec, plan, batch)
            rows += batch.num_rows
            drain()
        rec.flush()
        drain()
    finally:
        rec.disconnect()
    return rows
