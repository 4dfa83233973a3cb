"""Small MJCF models for tests, built from their parts: a test names the bodies it needs (a ball on
a free joint, a block on a slide) and their numbers, and reads as the physics it checks.

Every function returns XML text; a value may be a ``str.format`` field (``mass="{m}"``) that the
test fills in later. Units are MuJoCo's: m, kg, s, rad.
"""

from __future__ import annotations

__all__ = ["model", "body", "free_ball", "slider"]


def _attrs(**values: object) -> str:
    return "".join(f' {k.rstrip("_")}="{v}"' for k, v in values.items() if v is not None)


def model(
    *bodies: str,
    option: str = 'timestep="0.001" gravity="0 0 0"',
    world: str = "",
    before: str = "",
    after: str = "",
    name: str | None = None,
) -> str:
    """A ``<mujoco>`` document (``model="{name}"`` if named): ``before`` (``<visual>``...), then
    ``<option {option}/>``, a worldbody of ``world`` (sites, lights, geoms of the world) and
    ``bodies``, then ``after`` (actuators, sensors, tendons)."""
    inner = "\n".join(x for x in (world, *bodies) if x)
    head = f"<mujoco{_attrs(model=name)}>\n{before}"
    return f"{head}  <option {option}/>\n  <worldbody>\n{inner}\n  </worldbody>\n{after}</mujoco>\n"


def body(name: str, *children: str, pos: str = "0 0 0") -> str:
    """A ``<body>`` at ``pos`` holding ``children`` (joints, geoms, sites as XML)."""
    inner = "".join(f"\n      {c}" for c in children if c)
    return f'    <body name="{name}" pos="{pos}">{inner}\n    </body>'


def free_ball(
    name: str,
    *,
    pos: str = "0 0 0",
    joint: str | None = None,
    size: object = 0.05,
    mass: object = 1.0,
    site: str | None = None,
    site_pos: str = "0 0 0",
) -> str:
    """A sphere of ``size`` m and ``mass`` kg on a free joint (named ``joint``, if given), no
    contacts, with a site ``site`` at ``site_pos`` in the body if given."""
    return body(
        name,
        f"<freejoint{_attrs(name=joint)}/>",
        f'<geom type="sphere" size="{size}" mass="{mass}" contype="0" conaffinity="0"/>',
        f'<site name="{site}" pos="{site_pos}"/>' if site else "",
        pos=pos,
    )


def slider(
    name: str,
    *,
    joint: str,
    pos: str = "0 0 0",
    axis: str = "1 0 0",
    damping: object = None,
    geom: str = 'type="box" size="0.05 0.05 0.05" mass="1" contype="0" conaffinity="0"',
    site: str | None = None,
    site_pos: str | None = None,
) -> str:
    """A body on a slide joint ``joint`` along ``axis`` (``damping`` N·s/m), its geom's attributes
    ``geom``, a site ``site`` (at ``site_pos``) if given."""
    return body(
        name,
        f'<joint name="{joint}" type="slide" axis="{axis}"{_attrs(damping=damping)}/>',
        f"<geom {geom}/>",
        f'<site name="{site}"{_attrs(pos=site_pos)}/>' if site else "",
        pos=pos,
    )
