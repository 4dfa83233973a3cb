"""``mjrig.exports.export``: a recording written as CSV, MATLAB v5 and MCAP, each read back and
compared with the Parquet file value for value (a real spring_mass run and a hand-made recording
with nulls, a bool and an int column, awkward floats and several row groups)."""

from __future__ import annotations

import csv
import json
import math
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scipy.io
from mcap.reader import make_reader

from mjrig.exports.export import FORMATS, default_output, export_recording
from mjrig.headless import prepare, run
from mjrig.runtime.errors import ConfigError
from mjrig.scenario.parse import load_scenario

MODELS = Path(__file__).resolve().parents[2] / "models"

AWKWARD = [
    0.1 + 0.2,
    1e-300,
    5e-324,
    -0.0,
    2.0**53 + 2,
    1e22,
    1.7976931348623157e308,
    1 / 3,
    None,
    2.2250738585072014e-308,
    float("nan"),
    float("inf"),
    -12345678901234567890.0,
]
ROWS = len(AWKWARD)
GROUP = 5
"""Rows per row group of the hand-made recording: 13 rows in 3 row groups."""


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    """A real 1 s spring_mass recording (the bundled rig, run as ``mjrig run`` runs it)."""
    path = tmp_path_factory.mktemp("run") / "rec.parquet"
    assert run(prepare(load_scenario(MODELS / "spring_mass.toml"), out=path, duration=1.0)) == 1000  # steps of 1 ms
    return path


def _write(
    path: Path, columns: dict[str, pa.Array], metadata: dict[str, str], *, units: dict[str, str] | None = None
) -> Path:
    fields = [
        pa.field(name, arr.type, metadata={b"unit": units[name].encode()} if units and name in units else None)
        for name, arr in columns.items()
    ]
    table = pa.Table.from_arrays(list(columns.values()), schema=pa.schema(fields, metadata=metadata))
    pq.write_table(table, path, row_group_size=GROUP)
    return path


@pytest.fixture(scope="module")
def handmade(tmp_path_factory) -> Path:
    """Nulls before a signal existed, a never-present signal, bools, ints, an entity name with
    ``/``, awkward floats, units partly in ``mjrig.units`` and partly only in the field metadata."""
    n = ROWS
    columns = {
        "time": pa.array([i * 0.1 for i in range(n)]),
        "wall_time": pa.array([i * 0.0123 for i in range(n)]),
        "Loads/arm/left:fx": pa.array(AWKWARD, pa.float64()),
        "Loads/arm/left:fy": pa.array([float(i) for i in range(n)]),
        "Sensors/late:0": pa.array([None] * 4 + [i / 7 for i in range(4, n)], pa.float64()),
        "Sensors/never:0": pa.array([None] * n, pa.float64()),
        "Contacts/all:count": pa.array([i if i % 4 else None for i in range(n)], pa.int64()),
        "Requirements/r:pass": pa.array([None, True, False] * 4 + [True], pa.bool_()),
    }
    units = {"time": "s", "wall_time": "s", "Loads/arm/left:fx": "N", "Sensors/late:0": "m/s^2"}
    metadata = {
        "mjrig.units": json.dumps(units),
        "mjrig.model_path": "/models/arm.xml",
        "mjrig.version": "0.1.0",
        "mjrig.scenario": "[run]\nduration = 1.3  # s\n",
        "mjrig.start_time": "2025-01-01T00:00:00+00:00",
    }
    return _write(
        tmp_path_factory.mktemp("hand") / "hand.parquet",
        columns,
        metadata,
        units={"Loads/arm/left:fy": "N", "Loads/arm/left:fx": "ignored: mjrig.units wins"},
    )


def _export(src: Path, fmt: str, tmp_path: Path) -> tuple[Path, list[tuple[int, int]]]:
    out = tmp_path / f"out{FORMATS[fmt]}"
    calls: list[tuple[int, int]] = []
    rows = export_recording(src, to=fmt, out=out, progress=lambda done, total: calls.append((done, total)))
    assert rows == pq.ParquetFile(src).metadata.num_rows
    return out, calls


def _reprs(values: list) -> list[str]:
    """Values as their repr: float equality that tells -0.0 from 0.0 and holds for NaN."""
    return [repr(v) for v in values]


def _mcap(path: Path) -> tuple[dict, dict[str, list], list]:
    """(channels by topic, (log_time, publish_time, message) lists by topic, metadata records)."""
    with open(path, "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        by_topic = {c.topic: (c, summary.schemas[c.schema_id]) for c in summary.channels.values()}
        messages: dict[str, list] = defaultdict(list)
        for _, channel, msg in reader.iter_messages():
            if channel.message_encoding == "json":  # the signals (/tf and /scene: protobuf, tests of their own)
                messages[channel.topic].append((msg.log_time, msg.publish_time, json.loads(msg.data)))
        meta = list(reader.iter_metadata())
    return by_topic, messages, meta


# --- the API --------------------------------------------------------------------------------------
def test_formats_and_default_output():
    assert FORMATS == {"csv": ".csv", "mat": ".mat", "mcap": ".mcap", "rrd": ".rrd"}
    assert default_output(Path("/d/rec.parquet"), "csv") == Path("/d/rec.csv")
    assert default_output(Path("/d/a.b.parquet"), "mcap") == Path("/d/a.b.mcap")
    assert default_output(Path("rec.parquet"), "MAT") == Path("rec.mat")


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_progress_after_each_row_group_ends_at_the_total(handmade, tmp_path, fmt):
    """Rows done after each row group; MATLAB's matrix is written a column at a time: the rows'
    worth of the columns done, rising to the total."""
    _, calls = _export(handmade, fmt, tmp_path)
    if fmt == "mat":
        columns = len(pq.read_schema(handmade).names)
        assert calls == [(ROWS * (j + 1) // columns, ROWS) for j in range(columns)]
    else:
        assert calls == [(5, ROWS), (10, ROWS), (ROWS, ROWS)]
    assert [p.name for p in tmp_path.iterdir()] == [f"out{FORMATS[fmt]}"]  # no temporary file left


# --- CSV ------------------------------------------------------------------------------------------
def test_csv_reads_back_every_value_exactly(handmade, tmp_path):
    out, _ = _export(handmade, "csv", tmp_path)
    table = pq.read_table(handmade)
    text = pl.read_csv(out, infer_schema_length=0)  # every field as written
    # each name with its unit where it has one (mjrig.units first, else the field's metadata)
    assert text.columns[:3] == ["time [s]", "wall_time [s]", "Loads/arm/left:fx [N]"], text.columns
    assert "Loads/arm/left:fy [N]" in text.columns and "Sensors/late:0 [m/s^2]" in text.columns
    assert [_bare(h) for h in text.columns] == table.column_names
    header = dict(zip(table.column_names, text.columns))
    for name in table.column_names:
        want, col = table.column(name).to_pylist(), text[header[name]]
        t = table.schema.field(name).type
        if pa.types.is_floating(t):
            assert _reprs(col.cast(pl.Float64).to_list()) == _reprs(want), name
        elif pa.types.is_integer(t):
            assert col.cast(pl.Int64).to_list() == want, name
        else:  # bools read back as true/false
            assert col.to_list() == [None if v is None else str(v).lower() for v in want], name
    with open(out, newline="") as f:
        rows = list(csv.reader(f))
    assert len(rows) == ROWS + 1
    fx = rows[0].index("Loads/arm/left:fx [N]")
    assert rows[1 + AWKWARD.index(None)][fx] == ""  # a null is an empty field
    assert rows[1][fx] == "0.30000000000000004" and rows[4][fx] == "-0.0"
    assert all(r[rows[0].index(header["Sensors/never:0"])] == "" for r in rows[1:])
    assert pl.read_csv(out).schema[header["Requirements/r:pass"]] == pl.Boolean


def test_csv_of_a_real_recording_equals_the_parquet(recording, tmp_path):
    out, _ = _export(recording, "csv", tmp_path)
    frame = pl.read_parquet(recording)
    header = pl.read_csv(out, n_rows=0).columns
    assert [_bare(h) for h in header] == frame.columns and "Joints/slide_x:qpos [m]" in header  # SI: units too
    back = pl.read_csv(out, schema=dict(zip(header, frame.schema.values()))).rename(dict(zip(header, frame.columns)))
    assert back.equals(frame)
    for name in frame.columns:
        assert _reprs(back[name].to_list()) == _reprs(frame[name].to_list()), name


def _bare(header: str) -> str:
    """A CSV header's column name without its " [unit]"."""
    return re.sub(r" \[[^\]]*\]$", "", header)


# --- MATLAB ---------------------------------------------------------------------------------------
def _mat(path: Path) -> dict:
    s = scipy.io.loadmat(path, simplify_cells=True)["mjrig"]
    s["units"] = [u if isinstance(u, str) else "" for u in s["units"]]  # '' loads as an empty array
    return s


def test_mat_holds_names_units_data_and_metadata(handmade, tmp_path):
    out, _ = _export(handmade, "mat", tmp_path)
    s, table = _mat(out), pq.read_table(handmade)
    assert list(s["names"]) == table.column_names
    assert s["units"] == ["s", "s", "N", "N", "m/s^2", "", "", ""]
    want = np.column_stack([c.cast(pa.float64()).to_numpy(zero_copy_only=False) for c in table.columns])
    assert s["data"].shape == (ROWS, table.num_columns) and s["data"].dtype == np.float64
    np.testing.assert_array_equal(s["data"], want)  # NaN where null, bools 0/1
    assert np.signbit(s["data"][3, 2])  # -0.0 kept
    assert list(s["data"][1:3, 7]) == [1.0, 0.0] and np.isnan(s["data"][[0, 3], 7]).all()  # bools: 1/0, NaN
    assert set(s["metadata"]) == {
        "mjrig_units",
        "mjrig_model_path",
        "mjrig_version",
        "mjrig_scenario",
        "mjrig_start_time",
    }
    assert s["metadata"]["mjrig_scenario"] == "[run]\nduration = 1.3  # s\n"


def test_mat_of_a_real_recording(recording, tmp_path):
    out, _ = _export(recording, "mat", tmp_path)
    s, pf = _mat(out), pq.ParquetFile(recording)
    schema = pf.schema_arrow
    assert list(s["names"]) == schema.names
    units = json.loads(schema.metadata[b"mjrig.units"])
    assert s["units"] == [units.get(n, "") for n in schema.names]
    np.testing.assert_array_equal(s["data"], pl.read_parquet(recording).to_numpy())
    assert s["metadata"]["mjrig_model_path"].endswith("spring_mass.xml")
    assert {"mjrig_model_sha256", "mjrig_scenario", "mjrig_mujoco_version", "mjrig_start_time"} <= set(s["metadata"])


# --- MCAP -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("cells", [None, 200])
def test_mcap_of_a_real_recording_has_a_topic_per_entity(recording, tmp_path, monkeypatch, cells):
    """Every entity a topic, every row a message of it, every value back; also when the rows are
    turned into messages 64 at a time (``MCAP_CELLS``: a wide recording's batches)."""
    jsonschema = pytest.importorskip("jsonschema")
    if cells is not None:
        monkeypatch.setattr("mjrig.exports.export.MCAP_CELLS", cells)
    out, _ = _export(recording, "mcap", tmp_path)
    channels, messages, meta = _mcap(out)
    frame = pl.read_parquet(recording)
    entities: dict[str, list[str]] = defaultdict(list)
    for name in frame.columns[2:]:
        category, rest = name.split("/", 1)
        entities[f"/{category}/{rest.rsplit(':', 1)[0]}"].append(name)
    assert set(channels) == set(entities) | {"/tf", "/scene"} and {"/Joints/slide_x", "/Loads/main_spring"} <= set(
        channels
    )
    stamps = [int(round(t * 1e9)) for t in frame["time"]]
    for topic, columns in entities.items():
        channel, schema = channels[topic]
        assert (channel.message_encoding, schema.encoding) == ("json", "jsonschema")
        doc = json.loads(schema.data)
        jsonschema.Draft202012Validator.check_schema(doc)
        assert list(doc["properties"]) == [c.rsplit(":", 1)[1] for c in columns]
        got = messages[topic]
        assert len(got) == frame.height, topic
        assert [m[0] for m in got] == stamps and [m[1] for m in got] == stamps
        for column in columns:
            assert [m[2][column.rsplit(":", 1)[1]] for m in got] == frame[column].to_list(), column
        jsonschema.validate(got[-1][2], doc)
    assert json.loads(schema.data)["properties"]["kinetic"]["description"] == "J"
    assert meta[0].name == "mjrig" and meta[0].metadata["mjrig.model_path"].endswith("spring_mass.xml")


def test_mcap_leaves_nulls_out_and_skips_empty_messages(handmade, tmp_path):
    out, _ = _export(handmade, "mcap", tmp_path)
    channels, messages, _ = _mcap(out)
    assert list(channels) == ["/Loads/arm/left", "/Sensors/late", "/Sensors/never", "/Contacts/all", "/Requirements/r"]
    arm = messages["/Loads/arm/left"]
    assert len(arm) == ROWS
    assert [m[0] for m in arm] == [int(round(i * 0.1 * 1e9)) for i in range(ROWS)]
    for (_, _, msg), fx, i in zip(arm, AWKWARD, range(ROWS)):
        assert msg["fy"] == float(i)
        if fx is None or not math.isfinite(fx):
            assert "fx" not in msg
        else:
            assert repr(msg["fx"]) == repr(fx)
    assert [m[2] for m in messages["/Sensors/late"]] == [{"0": i / 7} for i in range(4, ROWS)]
    assert "/Sensors/never" not in messages
    assert [m[2]["count"] for m in messages["/Contacts/all"]] == [i for i in range(ROWS) if i % 4]
    assert [m[2]["pass"] for m in messages["/Requirements/r"]][:3] == [True, False, True]
    types = {t: json.loads(s.data)["properties"] for t, (_, s) in channels.items()}
    assert types["/Contacts/all"]["count"] == {"type": "integer"}
    assert types["/Requirements/r"]["pass"] == {"type": "boolean"}
    assert types["/Loads/arm/left"] == {
        "fx": {"type": "number", "description": "N"},
        "fy": {"type": "number", "description": "N"},
    }


# --- edge cases and bad input ---------------------------------------------------------------------
def test_an_empty_recording_exports_its_columns(tmp_path):
    empty = pa.array([], pa.float64())
    src = _write(tmp_path / "empty.parquet", {"time": empty, "wall_time": empty, "Joints/j:qpos": empty}, {})
    out, calls = _export(src, "csv", tmp_path)
    assert out.read_text() == "time,wall_time,Joints/j:qpos\n" and calls[-1] == (0, 0)
    out, _ = _export(src, "mat", tmp_path)
    assert scipy.io.loadmat(out)["mjrig"]["data"][0, 0].shape == (0, 3)
    out, _ = _export(src, "mcap", tmp_path)
    channels, messages, _ = _mcap(out)
    assert list(channels) == ["/Joints/j"] and not messages


def test_a_failed_export_leaves_the_old_file_alone(handmade, tmp_path):
    out = tmp_path / "out.csv"
    out.write_text("old")

    def fail(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        export_recording(handmade, to="csv", out=out, progress=fail)
    assert out.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.csv"]
    assert export_recording(handmade, to="csv", out=out) == ROWS  # a finished export replaces it
    assert out.read_text().startswith("time [s],wall_time [s],")


def _bad_inputs(tmp_path: Path) -> dict[str, tuple[Path, str, str]]:
    """name -> (file, format, text the error must hold)."""
    text = tmp_path / "notes.parquet"
    text.write_text("not parquet\n")
    t = {"trial": pa.array([0]), "time": pa.array([0.0])}
    return {
        "missing": (tmp_path / "nope.parquet", "csv", "file not found"),
        "folder": (tmp_path, "csv", "a folder, not a recording"),
        "not parquet": (text, "mat", "not a readable Parquet file"),
        "sweep": (
            _write(tmp_path / "sweep.parquet", t, {"mjrig.sweep": "[sweep]"}),
            "csv",
            "is a sweep's results, not a recording",
        ),
        "study": (
            _write(tmp_path / "study.parquet", t, {"mjrig.optimize": "{}"}),
            "mcap",
            "is a study's results, not a recording",
        ),
        "no time": (_write(tmp_path / "other.parquet", {"x": pa.array([1.0])}, {}), "csv", "no 'time' column"),
        "text column": (
            _write(tmp_path / "txt.parquet", {"time": pa.array([0.0]), "s": pa.array(["a"])}, {}),
            "csv",
            "column 's' is string",
        ),
        "format": (
            _write(tmp_path / "ok.parquet", {"time": pa.array([0.0])}, {}),
            "cvs",
            "unknown export format 'cvs': choose csv, mat, mcap, rrd (closest: csv)",
        ),
        "negative time": (
            _write(tmp_path / "neg.parquet", {"time": pa.array([-1.0]), "A/b:c": pa.array([1.0])}, {}),
            "mcap",
            "MCAP needs a time >= 0 s",
        ),
    }


@pytest.mark.parametrize(
    "case", ["missing", "folder", "not parquet", "sweep", "study", "no time", "text column", "format", "negative time"]
)
def test_bad_input_is_a_one_line_config_error(tmp_path, case):
    src, fmt, needle = _bad_inputs(tmp_path)[case]
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    with pytest.raises(ConfigError) as err:
        export_recording(src, to=fmt, out=out_dir / "x.out")
    msg = str(err.value)
    assert needle in msg and str(src) in msg and "\n" not in msg
    assert not list(out_dir.iterdir())
    if case == "format":
        with pytest.raises(ConfigError, match="unknown export format"):
            default_output(src, "xlsx")


def test_an_unwritable_output_is_a_config_error(handmade, tmp_path):
    with pytest.raises(ConfigError, match="cannot write: No such file or directory"):
        export_recording(handmade, to="csv", out=tmp_path / "no" / "such" / "dir.csv")


def test_mcap_chunks_are_indexed_and_every_index_entry_is_its_message(recording, tmp_path):
    """The MCAP file's chunks each come with a message index per channel whose entries point at
    a message of that channel with that time, and its summary counts every message."""
    import io

    import zstandard
    from mcap.records import Chunk, Message, MessageIndex
    from mcap.stream_reader import StreamReader

    out, _ = _export(recording, "mcap", tmp_path)
    records = list(StreamReader(open(out, "rb"), emit_chunks=True).records)
    checked, raw = 0, b""
    for record in records:
        if isinstance(record, Chunk):
            raw = zstandard.ZstdDecompressor().decompress(record.data, max_output_size=record.uncompressed_size)
        elif isinstance(record, MessageIndex):
            for t, offset in record.records:
                msg = next(iter(StreamReader(io.BytesIO(raw[offset:]), skip_magic=True).records))
                assert isinstance(msg, Message) and (msg.channel_id, msg.log_time) == (record.channel_id, t)
                checked += 1
    with open(out, "rb") as f:
        summary = make_reader(f).get_summary()
    assert checked == summary.statistics.message_count == sum(summary.statistics.channel_message_counts.values()) > 0


def _scene(path: Path) -> tuple[list, list]:
    """(the /tf messages decoded, the /scene messages decoded) of an MCAP, with Foxglove's schemas."""
    from mcap_protobuf.decoder import DecoderFactory

    tf, scene = [], []
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for schema, channel, message, proto in reader.iter_decoded_messages(topics=["/tf", "/scene"]):
            assert (channel.message_encoding, schema.encoding) == ("protobuf", "protobuf")
            (tf if channel.topic == "/tf" else scene).append((message.log_time, schema.name, proto))
    return tf, scene


def test_mcap_has_the_rig_in_3d_for_foxglove(recording, tmp_path):
    """/tf: a foxglove.FrameTransforms a row, the block's pose in world at the row's time (x, y, z,
    w order); /scene: one foxglove.SceneUpdate, the block's box and the world's geometry."""
    out, _ = _export(recording, "mcap", tmp_path)
    tf, scene = _scene(out)
    frame = pl.read_parquet(recording)
    assert len(tf) == frame.height and len(scene) == 1
    assert {name for _, name, _ in tf} == {"foxglove.FrameTransforms"} and scene[0][1] == "foxglove.SceneUpdate"
    for (stamp, _, msg), row in zip(tf, frame.iter_rows(named=True)):
        (t,) = msg.transforms
        assert stamp == round(row["time"] * 1e9) and (t.parent_frame_id, t.child_frame_id) == ("world", "block")
        got = [
            t.translation.x,
            t.translation.y,
            t.translation.z,
            t.rotation.x,
            t.rotation.y,
            t.rotation.z,
            t.rotation.w,
        ]
        want = [row[f"Bodies/block:{c}"] for c in ("x", "y", "z", "qx", "qy", "qz", "qw")]
        assert got == want
    entities = {e.frame_id: e for e in scene[0][2].entities}
    assert set(entities) == {"world", "block"} and len(entities["block"].cubes) == 1
    assert [entities["block"].cubes[0].size.x] == [pytest.approx(0.05)]  # the 5 cm block


def test_mcap_transforms_of_nested_bodies_compose_to_their_world_poses(tmp_path):
    """The robot arm's bodies are each given relative to their parent: composed along the chain
    they are the recording's world poses (1e-12), and meshes or primitives draw every body."""
    import mujoco

    rec = tmp_path / "arm.parquet"
    run(prepare(load_scenario(MODELS / "robot_arm.toml"), out=rec, duration=0.05))
    out = tmp_path / "arm.mcap"
    export_recording(rec, to="mcap", out=out)
    tf, scene = _scene(out)
    frame = pl.read_parquet(rec)
    last = frame.row(frame.height - 1, named=True)
    poses: dict[str, tuple[np.ndarray, np.ndarray]] = {"world": (np.zeros(3), np.array([1.0, 0, 0, 0]))}
    for t in tf[-1][2].transforms:  # parents come before children (MuJoCo's body order)
        pp, pq_ = poses[t.parent_frame_id]
        rel = np.array([t.translation.x, t.translation.y, t.translation.z])
        q = np.array([t.rotation.w, t.rotation.x, t.rotation.y, t.rotation.z])
        p_world = np.empty(3)
        mujoco.mju_rotVecQuat(p_world, rel, pq_)
        q_world = np.empty(4)
        mujoco.mju_mulQuat(q_world, pq_, q)
        poses[t.child_frame_id] = (pp + p_world, q_world)
        want_p = np.array([last[f"Bodies/{t.child_frame_id}:{c}"] for c in "xyz"])
        want_q = np.array([last[f"Bodies/{t.child_frame_id}:{c}"] for c in ("qw", "qx", "qy", "qz")])
        np.testing.assert_allclose(poses[t.child_frame_id][0], want_p, atol=1e-12)
        np.testing.assert_allclose(poses[t.child_frame_id][1], want_q, atol=1e-12)
    assert len(tf[-1][2].transforms) >= 3
    drawn = scene[0][2].entities
    assert sum(len(e.cubes) + len(e.spheres) + len(e.cylinders) + len(e.triangles) for e in drawn) > 3


def test_mcap_of_a_recording_whose_model_is_gone_keeps_the_signals(recording, tmp_path, capsys):
    table = pq.read_table(recording)
    meta = dict(table.schema.metadata)
    meta[b"mjrig.model_path"] = str(tmp_path / "gone.xml").encode()
    moved = tmp_path / "moved.parquet"
    pq.write_table(table.replace_schema_metadata(meta), moved)
    out = tmp_path / "moved.mcap"
    export_recording(moved, to="mcap", out=out)
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and "gone.xml is not there: /tf and /scene" in said[0], said
    channels, messages, _ = _mcap(out)
    assert "/tf" not in channels and len(messages["/Joints/slide_x"]) == table.num_rows
