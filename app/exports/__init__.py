"""What leaves mjrig: HTML reports (``report``), CSV / MATLAB / MCAP exports (``export``) and
plots (``plotting``) of recordings, sweep results and studies; the CLI's ``report``, ``export`` and
``plot`` commands (``commands``). GUI-free: matplotlib runs on its Agg backend."""
