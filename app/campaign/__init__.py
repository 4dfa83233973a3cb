"""Many runs of one rig: sweeps over params (grids, Monte Carlo draws) on local workers or a
Ray cluster, and their results. ``trial`` runs one trial in a worker, ``sweep`` drives the
trials and writes RESULTS.parquet (``ray_cluster`` on Ray), ``results`` reads it back.
The ``[sweep]`` table itself is read by ``mjrig.scenario.studies.sweep``. GUI-free."""
