"""The compiled callbacks' data layout: the rig's userdata words in ``MjData.userdata`` and the
words of a laws' table and a recorder table in the pool (``native_kernel``), shared by the code
that fills the tables (``native_table``, ``native_rows``) and the compiled code that reads them
(``_native_code``)."""

import mujoco

__all__ = [
    "userdata_slot",
    "MAGIC",
    "USERDATA",
    "USERDATA_WORDS",
    "POOL_WORDS",
    "H",
    "R",
    "RECORDER",
    "NUM",
    "SPRING",
    "WRENCH",
    "JOINT",
    "HEADER",
]

MAGIC = 7.0710678118654752e-297
"""The first of the rig's userdata words (an improbable value for a model's own)."""
USERDATA_WORDS = 6
"""The rig's userdata words at the end of ``MjData.userdata``: MAGIC, where its numeric starts,
the laws' table (offset, generation), the recorder's (offset, generation)."""
POOL_WORDS = 1 << 21
"""float64 words in the table pool (16 MiB of address space, touched only where used)."""

# Header words (int64): the table's generation, counts and section offsets, output offsets,
# mj_applyFT's address, the MjData field offsets (words into the struct), whether the springs'
# ends are helper sites (the table works their geometry out: ``sout``) rather than tendons.
H = dict(
    gen=0,
    size=1,
    ns=2,
    nw=3,
    nj=4,
    springs=5,
    wrenches=6,
    joints=7,
    coef=8,
    nb=9,
    wout=10,
    jout=11,
    applyft=12,
    nv=13,
    scratch=14,
    time=15,
    qvel=16,
    qfrc=17,
    tlen=18,
    tvel=19,
    tj=20,
    xpos=21,
    xmat=22,
    sxpos=23,
    cvel=24,
    cdof=25,
    com=26,
    sout=27,
    bysites=28,
)
HEADER = 30
R = dict(
    gen=0,
    size=1,
    armed=2,
    mode=3,
    decimation=4,
    count=5,
    inv_rate=6,
    next=7,
    contacts=8,
    clock=9,
    base=10,
    offsets=11,
    width=12,
    rows=13,
    stride=14,
    row=15,
    wall0=16,
    time=17,
    ncon=18,
    contact=19,
    contact_size=20,
    clock_fn=21,
    clock_id=22,
    timespec=23,
)
"""Words of a recorder table (``native_rows``): its generation and size, the steps it may still
record (armed), the schedule (decimation or rate, as ``SignalManager.due``), where a row's values
are (the gather's base address and offsets, the contacts' and clock's arrays), the block it writes
(rows, stride, next row), the wall clock (``clock_gettime``) and MjData's offsets."""
RECORDER = 26
NUM = 6
"""Words of one number: kind (0 constant, 1 step, 2 ramp, 3 sine, 4 table) and its data."""
SPRING = 12 + 5 * NUM
"""Words of a spring row: tendon, flag (0 two-sided, 1 tension-only, 2 compression-only, 3 stroke
window, 4 switched off), coef row, r0, J row address, nnz, column list offset; with helper sites:
site `at`, flag, coef row, r0, site `to`, dofs of `at`'s chain, the chains' list offset, body
`at`, body `to`, their trees' root bodies, dofs of `to`'s chain; then (word 12 on) stiffness,
damping, rest length, preload and stroke."""
WRENCH = 10 + 6 * NUM
"""Words of a world wrench: body, offset xyz, reaction body (-1: none), its offset xyz, output
row, then fx fy fz tx ty tz."""
JOINT = 4 + 5 * NUM
"""Words of a joint load: dof, kind (0 torque, 1 friction), output index, breakaway given,
then magnitude (torque) or coulomb, breakaway, Stribeck velocity, viscous, Coulomb velocity."""
USERDATA = "__mjrig_userdata"
"""The rig's numeric element (``rigmodel.compile_rig``): the first of its userdata words, the
pool's address and size (written by ``name_pool``)."""


def userdata_slot(model: mujoco.MjModel) -> int | None:
    """Where the callbacks' userdata words start, in a model ``compile_rig`` compiled."""
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_NUMERIC, USERDATA)
    if i < 0 or model.nuserdata < USERDATA_WORDS:
        return None
    slot = int(model.numeric_data[model.numeric_adr[i]])
    return slot if slot == model.nuserdata - USERDATA_WORDS else None
