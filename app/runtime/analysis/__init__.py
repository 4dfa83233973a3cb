"""Reading a run: requirements (pass/fail), metrics (a signal reduced to a number), and the rig
linearised about a state (modes, frequency response).

Nothing is imported here: import the module you need."""
