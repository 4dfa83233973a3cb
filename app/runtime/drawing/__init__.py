"""Pictures of the rig: its arrows and lines in any ``MjvScene``, cameras and framing, tracers'
trails, videos, and the frame sinks the step plan feeds.

Nothing is imported here: import the module you need."""
