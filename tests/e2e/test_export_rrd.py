"""`mjrig export REC.parquet --to rrd` (CONTRACT 14, "Open formats"): a recording of the bundled
spring_mass read back with rerun-sdk's own reader -- every column a scalar series on `sim_time`
equal to the Parquet's values row for row, the block's world pose over time, the model's geometry
static under `world/<body>/<geom>`, the spring's arrow, a blueprint; a model gone: the signals all
the same and one line on stderr; `-o` onto the recording: exit 2, one line."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from e2e_util import mjrig, mjrig_here

rr = pytest.importorskip("rerun")
from rerun.chunk import RrdReader  # noqa: E402


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("rrd")
    out = folder / "rec.parquet"
    r = mjrig("run", "spring_mass", "--duration", "1", "--out", out, cwd=folder)
    assert r.rc == 0, r
    return out


def read_rrd(path: Path) -> tuple[dict[str, dict[str, list]], list, list]:
    """Entity path -> column -> values over all its chunks (time-ordered for the temporal ones),
    the static entity paths, and the file's blueprint stores."""
    reader = RrdReader(path)
    temporal: dict[str, list[pa.RecordBatch]] = defaultdict(list)
    static: list[str] = []
    for chunk in reader.stream():
        if chunk.is_static:
            static.append(chunk.entity_path)
        else:
            temporal[chunk.entity_path].append(chunk.to_record_batch())
    out: dict[str, dict[str, list]] = {}
    for entity, batches in temporal.items():
        table = pa.Table.from_batches(batches).drop_columns(["rerun.controls.RowId"])
        table = table.sort_by("sim_time")
        out[entity] = {n: table.column(n).to_pylist() for n in table.column_names}
    return out, static, reader.blueprints()


def _static_columns(path: Path, entity: str) -> dict[str, list]:
    """Every static component of ``entity`` in the rrd at ``path``: name -> values."""
    out: dict[str, list] = {}
    for chunk in RrdReader(path).stream():
        if chunk.is_static and chunk.entity_path == entity:
            out.update(chunk.to_record_batch().to_pydict())
    return out


def ns(times) -> list[int]:
    return [int(t.value) if hasattr(t, "value") else int(t.total_seconds() * 1e9) for t in times]


def test_every_row_of_every_signal_the_pose_and_the_geometry(recording, tmp_path):
    out = tmp_path / "rec.rrd"
    r = mjrig_here("export", recording, "--to", "rrd", "-o", out, cwd=tmp_path)
    table = pq.read_table(recording)
    assert r.rc == 0 and f"wrote {table.num_rows} rows of rec.parquet to {out}" in r.stderr, r
    assert len(r.err_lines) == 1, r
    series, static, blueprints = read_rrd(out)
    time = table.column("time").to_numpy()
    qpos = series["/joints/slide_x/qpos"]
    assert ns(qpos["sim_time"]) == [round(t * 1e9) for t in time]  # the timeline: simulated time
    assert [v[0] for v in qpos["Scalars:scalars"]] == table.column("Joints/slide_x:qpos").to_pylist()  # exact
    for column, entity in (
        ("Sensors/block_acc:1", "/sensors/block_acc/1"),
        ("Contacts/all:count", "/contacts/all/count"),
    ):
        assert [v[0] for v in series[entity]["Scalars:scalars"]] == [float(x) for x in table.column(column).to_pylist()]
    scalars = {e for e, cols in series.items() if "Scalars:scalars" in cols}
    assert len(scalars) == table.num_columns - 1  # every column but time (wall_time too)
    assert all(len(series[e]["Scalars:scalars"]) == table.num_rows for e in scalars)  # no thinning
    pose = series["/world/block"]
    xyz = np.array([v[0] for v in pose["Transform3D:translation"]])
    want = np.column_stack([table.column(f"Bodies/block:{a}").to_numpy() for a in "xyz"]).astype(np.float32)
    np.testing.assert_array_equal(xyz.astype(np.float32), want)  # Rerun keeps a translation in float32
    quat = np.array([v[0] for v in pose["Transform3D:quaternion"]])
    wxyz = np.column_stack([table.column(f"Bodies/block:q{a}").to_numpy() for a in "wxyz"]).astype(np.float32)
    np.testing.assert_array_equal(quat, wxyz[:, [1, 2, 3, 0]])
    assert {"/world/block/block_box", "/world/world/rail", "/world/world/anchor_post"} <= set(static)
    floor = _static_columns(out, "/world/world/floor")  # a plane: a flat box at its own size, 4 m x 4 m
    np.testing.assert_allclose(floor["Boxes3D:half_sizes"][0], [[2.0, 2.0, 0.0005]])
    arrows = series["/arrows/main_spring"]
    assert len(arrows["Arrows3D:vectors"]) == table.num_rows
    fx = table.column("Loads/main_spring:fx").to_numpy()
    vx = np.array([v[0][0] for v in arrows["Arrows3D:vectors"]])
    assert np.all(np.sign(vx[np.abs(fx) > 1e-6]) == np.sign(fx[np.abs(fx) > 1e-6]))
    tip_x = np.array([v[0][0] for v in arrows["Arrows3D:origins"]])  # the tip: 0.025 m behind the block's centre
    np.testing.assert_allclose(tip_x, table.column("Bodies/block:x").to_numpy() - 0.025, atol=1e-6)
    assert len(blueprints) == 1
    views = set()  # (kind, origin) of the blueprint's views: the 3D one beside the [plots] signals
    for chunk in RrdReader(out).stream(store=blueprints[0]):
        cols = chunk.to_record_batch().to_pydict()
        if "ViewBlueprint:class_identifier" in cols:
            views.add((cols["ViewBlueprint:class_identifier"][0][0], cols["ViewBlueprint:space_origin"][0][0]))
    assert views == {("3D", "/"), ("TimeSeries", "joints/slide_x/qpos"), ("TimeSeries", "loads/main_spring/tension")}


def test_a_model_gone_still_writes_the_signals_and_says_so_in_one_line(recording, tmp_path):
    table = pq.read_table(recording)
    meta = dict(table.schema.metadata)
    meta[b"mjrig.model_path"] = str(tmp_path / "gone.xml").encode()
    moved = tmp_path / "moved.parquet"
    pq.write_table(table.replace_schema_metadata(meta), moved)
    out = tmp_path / "moved.rrd"
    r = mjrig_here("export", moved, "--to", "rrd", "-o", out, cwd=tmp_path)
    assert r.rc == 0 and "Traceback" not in r.stderr, r
    assert len(r.err_lines) == 2 and "gone.xml is not there" in r.err_lines[0] and "3D part" in r.err_lines[0], r
    series, static, _ = read_rrd(out)
    qpos = series["/joints/slide_x/qpos"]["Scalars:scalars"]
    assert [v[0] for v in qpos] == table.column("Joints/slide_x:qpos").to_pylist()
    assert "/world/block" in series  # the poses are data: still there
    assert not [e for e in static if e.startswith("/world/")] and "/arrows/main_spring" not in series


def test_an_output_onto_the_recording_is_refused_in_one_line(recording, tmp_path):
    before = recording.read_bytes()
    r = mjrig_here("export", recording, "--to", "rrd", "-o", recording, cwd=tmp_path)
    assert r.rc == 2 and len(r.err_lines) == 1 and "Traceback" not in r.stderr, r
    assert recording.read_bytes() == before
