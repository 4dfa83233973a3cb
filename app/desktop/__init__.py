"""The desktop app's wiring: the Dear PyGui loop (``app``), the passive viewer's loop on the
simulation thread (``sim_thread``, ``viewer_adapter``), window placement (``windows``), keys
(``keys``, ``panel_keys``), Recent, and the panel's own process (``panel_client``). The only
place, with ``mjrig.widgets``, that imports dearpygui, glfw or ``mujoco.viewer``."""
