"""The desktop app's wiring: the Dear PyGui loop (``app``), the passive viewer's loop on the
simulation thread (``sim_thread``, ``viewer_adapter``), window placement (``windows``), the
panel's own process (``panel_client``) and the widget map (``widget_map``). The only place, with
``mjrig.widgets``, that imports dearpygui, glfw or ``mujoco.viewer``; the key tables and Recent
are in ``mjrig.settings``."""
