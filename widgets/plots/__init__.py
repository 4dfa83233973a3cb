"""The live plots: the signal tree, one plot per unit, the mouse on them, a compared
recording drawn over them, and the timeline under them.

Nothing is imported here: import the module you need."""
