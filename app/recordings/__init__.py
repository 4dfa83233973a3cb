"""Recordings read back: replayed in the 3D view (``replay``) and compared signal by signal
(``compare``). GUI-free."""
