"""What the session and the 3D view's loop share: the camera, the selection, a model to load, and
the features' drawing in each frame.

The viewer loop (``mjrig.desktop.sim_thread``) owns the window and the camera and runs on the
simulation thread, like the session; it reads ``request`` (a ``SetCamera`` choice) and
``model_changed`` (load the new model), and writes ``camera_choice``, ``camera`` (videos follow
it) and ``selection``. Before a frame ``draw`` lets each feature put what it shows into the data
(a mode's shape: ``Feature.draws_in_view``) and ``undraw`` puts the run's state back after it;
``rig_hidden`` says whether the rig's arrows and lines are left out of that frame.

Threading: simulation thread only.
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco

from mjrig.session.feature import Feature

__all__ = ["ViewLink"]


class ViewLink:
    """The 3D view's side of the session (see the module). ``features()`` gives the session's
    features; ``model_data()`` the current (model, data), or None with no model open."""

    def __init__(
        self,
        *,
        features: Callable[[], tuple[Feature, ...]],
        model_data: Callable[[], tuple[mujoco.MjModel, mujoco.MjData] | None],
    ) -> None:
        self._features, self._model_data = features, model_data
        self.model_changed = False  # the viewer must load the new model
        self.request: str | None = None  # a SetCamera choice for the viewer loop
        self.camera_choice = "free"  # set by the viewer loop
        self.camera: mujoco.MjvCamera | None = None  # the viewer's camera (videos follow it)
        self.selection: str | None = None  # what the view's last pick selected, in words
        self._drawn: tuple[Feature, ...] = ()  # the features whose drawing the frame shows

    def draw(self) -> bool:
        """Before a frame: each feature puts what it shows there into the data; whether any did
        (``undraw`` then follows the frame)."""
        md = self._model_data()
        self._drawn = () if md is None else tuple(f for f in self._features() if f.draws_in_view(*md))
        return bool(self._drawn)

    def undraw(self) -> None:
        """After that frame: the run's own state back in the data."""
        md = self._model_data()
        if md is not None:
            for f in reversed(self._drawn):
                f.undraws_in_view(*md)
        self._drawn = ()

    @property
    def rig_hidden(self) -> bool:
        """Whether the rig's arrows and lines are left out of the 3D view now (a feature's)."""
        return any(f.hides_rig for f in self._features())
