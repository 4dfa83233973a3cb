"""The registry's mechanism: ``Field`` (one key of a scenario table), ``Kind`` (one sort of entry
and its builder), ``Section`` (a scenario array of tables) and ``Registry`` (every section). The
data -- which sections and kinds mjrig has -- is ``mjrig.scenario.kinds``. GUI-free.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from mjrig.runtime.errors import ConfigError

__all__ = [
    "Field",
    "Kind",
    "Section",
    "Registry",
    "EntryError",
    "FIELD_TYPES",
    "POINT_TYPES",
    "FieldType",
    "name_field",
]

FieldType = Literal["text", "point", "site", "point_or_geom", "number", "number_or_param", "profile", "vector", "color"]
FIELD_TYPES: tuple[str, ...] = get_args(FieldType)
"""What a field holds. ``point``: a site, ``body:NAME`` or ``body:NAME@x,y,z``; ``site``: a site
name only; ``point_or_geom``: a point or ``geom:NAME``; ``number``: a finite number;
``number_or_param``: a number or a param's name; ``profile``: that or a time profile;
``vector``: 3 components, each a number, a param or a profile; ``color``: [r, g, b] or [r, g, b, a]
in 0..1."""

POINT_TYPES = frozenset({"point", "site", "point_or_geom"})
"""Field types that name something in the model (checked against it once compiled)."""


class EntryError(ValueError):
    """A builder's complaint about a table (e.g. two fields that do not go together); the parser
    reports it at the location of ``field`` when given, else at the table's."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Field:
    """One key of a scenario table.

    ``default`` is the value used when the key is left out (None: absent means "none", e.g. no
    reaction point); ``required`` keys have none. ``initial`` is what a new form suggests
    (default: ``default``). ``unit`` is SI (``N/m``); ``nonneg`` rejects negative numbers,
    ``positive`` zero too. ``names`` says what model element a text field names ("joint": a hinge
    or slide joint, "actuator"), checked against the compiled model. ``of_signal``: a number in
    the unit of the entry's ``signal`` (a metric's level, a requirement's bounds; SI in the
    scenario), which a form reads in the unit that signal is shown in.
    """

    name: str
    type: FieldType
    unit: str = ""
    default: Any = None
    required: bool = False
    help: str = ""
    initial: Any = None
    nonneg: bool = False
    positive: bool = False
    names: str = ""
    of_signal: bool = False

    @property
    def optional(self) -> bool:
        """Left out means "none" (not a default value): a form leaves it out when empty."""
        return not self.required and self.default is None

    @property
    def suggested(self) -> Any:
        """The value a new form shows."""
        return self.default if self.initial is None else self.initial


@dataclass(frozen=True)
class Kind:
    """One sort of entry: its fields (in display order, ``name`` included) and its builder.

    ``build`` receives every field's value (read and checked; left-out ones at their default)
    and returns the runtime object; it may raise EntryError. ``doc`` says what it does.
    """

    name: str
    fields: tuple[Field, ...]
    build: Callable[[Mapping[str, Any]], Any]
    doc: str = ""


@dataclass(frozen=True)
class Section:
    """A scenario array of tables. ``kind_key`` names the key that picks the kind (None: the
    section has one kind and no such key); ``noun`` is how errors call one entry; ``role`` is
    'load' (acts on the model) or 'monitor' (only measures); ``name_key`` is the field that must
    be unique among the entries (a control is named by its actuator); ``readout`` heads the
    panel's column of what each entry applies or measures now."""

    key: str
    noun: str
    role: Literal["load", "monitor"]
    kinds: tuple[Kind, ...]
    kind_key: str | None = "kind"
    default_kind: str = ""
    name_key: str = "name"
    readout: str = "now"

    @property
    def kind_names(self) -> list[str]:
        return [k.name for k in self.kinds]

    def kind(self, name: str) -> Kind | None:
        return next((k for k in self.kinds if k.name == name), None)

    def kind_of(self, spec: Mapping[str, Any]) -> Kind | None:
        """The kind a table is (None when it names no known kind)."""
        if self.kind_key is None:
            return self.kinds[0]
        name = spec.get(self.kind_key)
        return self.kind(name) if isinstance(name, str) else None

    def allowed(self, kind: Kind) -> set[str]:
        """Every key a table of this kind may have."""
        return {f.name for f in kind.fields} | ({self.kind_key} if self.kind_key else set())

    def required(self, kind: Kind) -> set[str]:
        return {f.name for f in kind.fields if f.required} | ({self.kind_key} if self.kind_key else set())


@dataclass(frozen=True)
class Registry:
    """Every section, in scenario order. Immutable: ``with_kind`` returns an extended copy."""

    sections: tuple[Section, ...]

    def find(self, key: str) -> Section | None:
        """The section ``key`` (``"loads"``, ``"proximities"``...), or None when there is none."""
        return next((s for s in self.sections if s.key == key), None)

    def section(self, key: str) -> Section:
        """The section ``key``; ConfigError naming the sections there are when there is none."""
        sec = self.find(key)
        if sec is None:
            raise ConfigError(f"no rig section '{key}' (one of {', '.join(s.key for s in self.sections)})")
        return sec

    def with_kind(self, section: str, kind: Kind) -> Registry:
        """A copy with ``kind`` added to ``section`` (e.g. a test's own registry)."""
        return Registry(
            tuple(dataclasses.replace(s, kinds=(*s.kinds, kind)) if s.key == section else s for s in self.sections)
        )


def name_field(noun: str) -> Field:
    """The ``name`` every entry has: unique within its section."""
    return Field("name", "text", required=True, help=f"unique name of the {noun}")
