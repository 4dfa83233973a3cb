"""The long lane: in-process tests like the unit lane's, but seconds each (fuzzing, stress,
whole fits, studies and reports). They share the unit lane's fixtures."""

from tests.unit.conftest import open_session, rig

__all__ = ["open_session", "rig"]
