"""The session kernel's own parts besides its features: the command inbox (``inbox``), the status
log (``status_log``), the unsaved-edits questions (``unsaved``) and the link to the 3D view's loop
(``view_link``)."""
