"""Rerun: a recording written as an ``.rrd`` file (``stream``), the model's geometry as Rerun's
archetypes (``scene``), and a running rig's rows sent to a Rerun viewer as they come (``live``)."""
