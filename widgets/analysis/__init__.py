"""Panels that read a run: requirements, metrics, modes, a fit, a sweep's or study's results.

Nothing is imported here: import the module you need."""
