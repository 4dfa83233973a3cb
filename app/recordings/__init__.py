"""Recordings: opened with the contract's file metadata (``recorder``), read back and replayed in
the 3D view (``replay``) and compared signal by signal (``compare``). GUI-free."""
