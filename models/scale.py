"""A generated model of many bodies, for scale tests and ``benchmarks/panel_scale.py``.

``many_bodies(n)`` is ``n`` bodies hung as chains of ten hinged links (a curtain of lightly damped
pendulums that keeps swinging), the size of a cable, a composite or a multi-robot scene.
"""

from __future__ import annotations

__all__ = ["many_bodies"]


def many_bodies(bodies: int, *, links: int = 10) -> str:
    """MJCF text of ``bodies`` bodies (>= 1): chains of up to ``links`` hinged capsules, 0.1 m each,
    hung 0.3 m apart at 2 m height, each started 35 degrees from hanging straight down."""
    if bodies < 1 or links < 1:
        raise ValueError(f"bodies and links must be >= 1, got {bodies!r} and {links!r}")
    chains, parts = -(-bodies // links), []
    for c in range(chains):
        n = min(links, bodies - c * links)
        x, y = 0.3 * (c % 20), 0.3 * (c // 20)
        body = ""
        for k in reversed(range(n)):
            at = f'pos="{x} {y} 2" euler="0 35 0"' if k == 0 else 'pos="0 0 -0.1"'
            body = (
                f'<body name="c{c}_l{k}" {at}><joint name="c{c}_j{k}" type="hinge" axis="0 1 0" '
                f'damping="0.0005"/><geom type="capsule" fromto="0 0 0 0 0 -0.1" size="0.01" mass="0.05"/>'
                f"{body}</body>"
            )
        parts.append(body)
    return (
        f'<mujoco model="many_bodies_{bodies}"><option timestep="0.002"/>'
        f'<visual><global offwidth="640" offheight="480"/></visual><worldbody>'
        f'<light pos="0 0 5"/><geom type="plane" size="10 10 0.1" pos="0 0 -0.2"/>'
        f"{''.join(parts)}</worldbody></mujoco>"
    )
