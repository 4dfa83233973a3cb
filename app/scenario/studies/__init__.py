"""The sections of a scenario that ask for many runs, and what a study gives back.

``sweep`` (``[sweep]``: grids and distributions over params, trial ``i``'s values and seed; a
random param's law: ``distributions``), ``optimize`` (``[optimize]``: what ``mjrig optimize``
searches and for what), ``fit`` (``[fit]``: the params and fit variables ``mjrig fit`` estimates
from the ``[[measured]]`` data), ``best`` (a scenario written again with a study's best values or a
fit's estimate). Read by the parser (``mjrig.scenario.parse``) and run by ``mjrig.campaign``.

Nothing is imported here: import the module you need."""
