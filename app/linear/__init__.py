"""Linear analysis of a rig: ``analysis`` (the service behind ``mjrig modes``, ``bode``,
``linearise``, the app's Modes section and a report's modes), ``inputs`` (what may be an input:
params and actuator controls, and the defaults a bare model gets) and ``transfer`` (transfer
functions, poles and zeros, singular values). Nothing is imported here: import the module you need."""
