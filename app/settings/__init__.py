"""What mjrig keeps for a person between runs, and its key tables: the user's config folder
(``keys.config_dir``), the 3D viewer's remappable keys (``keys``), the panel's fixed keys
(``panel_keys``) and the recently opened files (``recent``). GUI-free: the desktop wiring and
the widgets both read it."""
