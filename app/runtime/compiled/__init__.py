"""The rig's load laws and telemetry rows as compiled callbacks MuJoCo calls without Python
(numba, or machine code kept from an earlier process), their data layout and tables.

Nothing is imported here: import the module you need."""
