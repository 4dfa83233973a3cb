"""Telemetry: the signal columns a model and rig offer, sampled into rows (``SignalManager``),
read without recording (probes), their units, frames, and the bounded histories behind the plots
and the timeline.

Nothing is imported here: import the module you need."""
