"""What every panel builds with: the one form mechanism, rows rebuilt only on change, the signal
choice, splitters, text that fits, the fonts.

Nothing is imported here: import the module you need."""
