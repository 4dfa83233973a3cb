"""The panel's dialogs and questions: the file dialog, exports, bench data offered, quitting
with unsaved edits.

Nothing is imported here: import the module you need."""
