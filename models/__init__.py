"""mjrig's bundled rigs (MJCF models with their scenario files); see ``app.bundled``."""
