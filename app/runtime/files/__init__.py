"""Files mjrig writes and reads: the recorder's crash-safe Parquet (parts, footers, merge,
salvage), whole-or-none outputs, one writer per output, where outputs go, a model's files.

Nothing is imported here: import the module you need."""
