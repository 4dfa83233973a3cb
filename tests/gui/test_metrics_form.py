"""The Metrics panel's add-form is made from the registry's metrics section: every kind offers
exactly its fields (``band_abs`` too), each hinted with its unit (its help when it has none) or,
for a number in the signal's unit, the unit the signal is shown in; what is typed becomes the scenario table (SI), rendered for real
by Dear PyGui under a private Xvfb."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

if not os.environ.get("DISPLAY") and shutil.which("Xvfb") is None:
    pytest.skip("no DISPLAY and no Xvfb binary", allow_module_level=True)

dpg = pytest.importorskip("dearpygui.dearpygui")

from mjrig import commands as C  # noqa: E402
from mjrig.runtime.telemetry.units import DisplayUnits  # noqa: E402
from mjrig.scenario.kinds import REGISTRY  # noqa: E402
from mjrig.widgets.analysis.metrics_panel import MetricsPanel  # noqa: E402

SIGNAL = "Joints/slide_x:qpos"


@pytest.fixture
def panel(dpg_viewport: None) -> Iterator[tuple[MetricsPanel, list[C.Command]]]:
    sent: list[C.Command] = []
    win = dpg.add_window(label="panels")
    try:
        dpg.set_primary_window(win, True)
        made = MetricsPanel(sent.append, ticked=lambda: [SIGNAL])
        made.build(win)
        made.update(
            C.PanelState.of(
                (C.ToolsPart(shown_units=DisplayUnits(length="mm")),),
                signals=(SIGNAL, "Joints/slide_x:qvel"),
                units={SIGNAL: "m"},
            )
        )
        dpg.render_dearpygui_frame()
        yield made, sent
    finally:
        dpg.delete_item(win)


def _choose_kind(panel: MetricsPanel, kind: str) -> None:
    """What choosing ``kind`` in the combo does: its value, then its callback."""
    dpg.set_value(panel._kind, kind)
    panel._on_kind(panel._kind, kind)
    dpg.render_dearpygui_frame()


def test_every_kind_offers_its_registry_fields_with_units_and_help(panel) -> None:
    made, _ = panel
    section = REGISTRY.section("metrics")
    assert dpg.get_item_configuration(made._kind)["items"] == section.kind_names
    for kind in section.kinds:
        _choose_kind(made, kind.name)
        wanted = [f for f in kind.fields if f.name not in ("name", "signal")]
        ids = made._form._ids
        assert list(ids) == [f.name for f in wanted], kind.name
        for f in wanted:
            item = ids[f.name]
            assert dpg.get_item_label(item) == f.name + (" (opt)" if f.optional else "")
            hint = dpg.get_item_configuration(item)["hint"]
            assert hint == ("mm" if f.of_signal else f.unit or f.help), (kind.name, f.name, hint)
    _choose_kind(made, "settling_time")
    assert {"band", "band_abs"} <= set(made._form._ids)


def test_a_band_typed_in_the_shown_unit_is_saved_in_si(panel) -> None:
    made, sent = panel
    _choose_kind(made, "settling_time")
    dpg.set_value(made._name.item, "settle")
    dpg.set_value(made._form._ids["start"], "0.1")
    dpg.set_value(made._form._ids["band_abs"], "5")  # mm, as the signal is shown
    made._on_add()
    assert len(sent) == 1 and isinstance(sent[0], C.PutEntry) and sent[0].section == "metrics"
    spec = sent[0].spec
    assert spec == {
        "name": "settle",
        "signal": SIGNAL,
        "kind": "settling_time",
        "start": 0.1,
        "band_abs": pytest.approx(0.005),
    }
    _choose_kind(made, "first_crossing")
    dpg.set_value(made._name.item, "cross")
    dpg.set_value(made._form._ids["level"], "-50")
    made._on_add()
    assert sent[1].spec == {
        "name": "cross",
        "signal": SIGNAL,
        "kind": "first_crossing",
        "start": 0.0,
        "level": pytest.approx(-0.05),
    }
