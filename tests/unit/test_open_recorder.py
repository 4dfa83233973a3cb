"""``open_recorder`` is the one way a recording is opened: the contract's metadata, plus extras."""

from __future__ import annotations

from pathlib import Path

import pytest

from mjrig.recordings.recorder import open_recorder, recording_metadata
from tests.unit.unit_util import CONTRACT_METADATA

MODEL = Path(__file__).resolve().parents[2] / "models" / "spring_mass.xml"


def test_the_contracts_metadata_and_extras(tmp_path: Path) -> None:
    sm = open_recorder(
        tmp_path / "a.parquet",
        model_path=MODEL,
        scenario_text="x = 1\n",
        rate=100.0,
        groups=("joints",),
        extra_metadata={"mjrig.set": "{}"},
    )
    try:
        assert set(sm.metadata) == CONTRACT_METADATA | {"mjrig.set"}
        assert sm.metadata["mjrig.scenario"] == "x = 1\n" and len(sm.metadata["mjrig.model_sha256"]) == 64
        assert sm.rate == 100.0 and tuple(sm.groups) == ("joints",)
    finally:
        sm.close()


def test_metadata_made_earlier_is_kept(tmp_path: Path) -> None:
    meta = recording_metadata(MODEL, "")
    sm = open_recorder(
        tmp_path / "b.parquet", metadata=meta, rate=None, groups=("joints",), extra_metadata={"mjrig.trial": "3"}
    )
    try:
        assert sm.metadata == {**meta, "mjrig.trial": "3"}
    finally:
        sm.close()


@pytest.mark.parametrize(
    "kw", [{}, {"model_path": MODEL}, {"metadata": {}, "model_path": MODEL}, {"metadata": {}, "scenario_text": ""}]
)
def test_one_way_of_giving_the_metadata(tmp_path: Path, kw: dict) -> None:
    with pytest.raises(TypeError, match="open_recorder"):
        open_recorder(tmp_path / "c.parquet", rate=None, groups=("joints",), **kw)
