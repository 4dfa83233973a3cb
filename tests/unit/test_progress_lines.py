"""The headless run's progress: the estimate said once, piped progress lines, durations in words."""

from __future__ import annotations

from mjrig.progress import SimulationBar, human_duration


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def drive(total: float, speed: float, *, until_wall: float, step_wall: float = 0.5) -> list[str]:
    """Feed a piped bar the progress of a run at ``speed`` simulated s per wall s."""
    clock, lines = Clock(), []
    bar = SimulationBar(total, terminal=False, clock=clock, write=lines.append)
    while clock.t < until_wall:
        clock.t += step_wall
        bar.update(min(total, speed * clock.t))
    return lines


def test_a_short_run_stays_quiet():
    assert drive(10.0, 5.0, until_wall=2.0) == []


def test_the_estimate_is_said_once_when_over_a_minute():
    lines = drive(1e12, 100.0, until_wall=3.0)
    assert len(lines) == 1 and "317 years" in lines[0], lines  # 1e10 s of wall time
    assert drive(100.0, 1.0, until_wall=3.0) == [
        "mjrig: 100 s simulated will take about 2 min at the measured "
        "speed (1 simulated s per s); Ctrl+C or SIGTERM stops it, "
        "keeping what was recorded"
    ]


def test_piped_lines_at_every_tenth_and_every_minute():
    lines = drive(100.0, 1.0, until_wall=101.0)
    progress = [ln for ln in lines if ln.startswith("simulating: ")]
    pcts = [int(ln.split()[1].rstrip("%")) for ln in progress]
    assert pcts == [5, 10, 20, 30, 40, 50, 60, 70, 80, 90], progress  # first at the 5 s mark
    slow = [ln for ln in drive(1e9, 1.0, until_wall=200.0) if ln.startswith("simulating: ")]
    assert len(slow) == 4, slow  # at 5 s, then 65, 125, 185 s: once a minute when 10 % is far off


def test_human_durations():
    assert [human_duration(s) for s in (45, 600, 3 * 3600 + 20 * 60, 3 * 86400, 1e10)] == [
        "45 s",
        "10 min",
        "3 h 20 min",
        "3.0 days",
        "317 years",
    ]
