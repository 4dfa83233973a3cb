"""One loaded model, its rig and its run state, driven by commands (``mjrig.commands``) and
publishing the panel's state (``mjrig.panel_state``): the kernel (``kernel.Session``) and the
features plugged into it (outputs, timeline, replay, tools). GUI-free."""
