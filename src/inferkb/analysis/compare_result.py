"""The shapes :func:`inferkb.analysis.compare.compare` returns: ranked rows with their arms, comparability classes,
the records no class can take, the whole result (JSON-able with ``to_dict``), and the :class:`Entry` a selected record
becomes before it is placed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..store import Record
    from .comparability import ConditionSet
    from .compare_hint import VaryHint

__all__ = ["ArmRow", "CompareResult", "ComparisonClass", "Entry", "NotComparable", "RankedRow"]


@dataclass
class ArmRow:
    """One arm of a record with its computed change versus the baseline arm (``delta_pct``: stat -> percent)."""

    arm_id: str
    label: str | None
    baseline: bool
    unit: str | None
    stats: dict[str, Any]
    delta_pct: dict[str, float | None]
    better: bool | None


@dataclass
class RankedRow:
    """A benchmark placed in a class.

    ``rank`` is 1-based (``None`` when the metric has no direction);
    ``value`` is what was ranked (the per-accelerator figure when asked),
    ``headline`` the record's own value; ``label`` says the token basis and
    scope; ``varied`` holds the varied conditions' values; ``same_measurement``
    the ids folded into this row; ``context`` origin, division, round,
    submitter, system, OS (differences that come from how a number was made).
    ``repeats``: for a row standing for a repeat group, ``{"group", "n", "ids",
    "values", "min", "median", "max"}`` (ids in line order, values the members'
    ranked values); ``value`` and ``headline`` are then the medians. ``None`` otherwise.
    ``flags``: audit verdicts a reader must see beside the number (today KB512, a run longer than its model's
    context window: :func:`inferkb.audit.context_window.window_check`); the row is still ranked on its value.
    """

    id: str
    rank: int | None
    value: float
    headline: float
    unit: str | None
    label: str
    token_basis: str | None
    value_scope: str | None
    per_accelerator: dict[str, Any] | None
    experimental: bool
    varied: dict[str, Any] = field(default_factory=dict)
    same_measurement: list[str] = field(default_factory=list)
    context: dict[str, Any] = field(default_factory=dict)
    arms: list[ArmRow] = field(default_factory=list)
    repeats: dict[str, Any] | None = None
    flags: list[str] = field(default_factory=list)


@dataclass
class ComparisonClass:
    """One comparability class: ``id`` (hash of the key), ``key`` (condition -> value), ranked ``rows``, ``direction``.

    ``key`` shows each condition as its rows spell it (the most common spelling when they differ);
    ``spellings`` lists, for a condition whose rows spell one value differently (engine versions
    ``"10.2"`` and ``"10.2.0"``: equal under PEP 440), every spelling merged, most common first.
    """

    id: str
    key: dict[str, Any]
    fixed_by: dict[str, str]
    direction: str | None
    rows: list[RankedRow]
    spellings: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def size(self) -> int:
        """Rows in the class (after folding same-measurement groups)."""
        return len(self.rows)


@dataclass
class NotComparable:
    """A selected record that no class can take: ``missing`` names the unstated conditions, ``reason`` anything else.

    ``repeat``: ``{"group", "index", "n"}`` when the record is one of a repeat group's measurements, else ``None``.
    ``flags``: as :attr:`RankedRow.flags`.
    """

    id: str
    value: float | None
    unit: str | None
    label: str
    missing: list[str]
    reason: str
    repeat: dict[str, Any] | None = None
    flags: list[str] = field(default_factory=list)


@dataclass
class CompareResult:
    """Result of :func:`inferkb.analysis.compare.compare`.

    ``filters`` (what was asked), ``vary`` (conditions declared irrelevant),
    ``per_accelerator`` (ranked on the per-accelerator figure),
    ``conditions`` (the class-key conditions, in order), ``classes``
    (largest first), ``not_comparable``, ``split_by`` (condition -> number of
    distinct values across classes: what keeps the classes apart),
    ``selected`` (records matching the filters) and ``metrics_without_filter``:
    when a metric filter selected nothing, ``{metric: records}`` of the
    records the other filters select (most first; ``{}`` when they select
    none either, and when no metric was asked or something was selected).
    ``values_without_filter``: when nothing was selected, for each exact-match
    filter (``scenario``, ``origin``) whose value none of the records the other
    filters select has, ``{filter: {value: records}}`` of the values they do
    have (most first), and ``did_you_mean`` ``{filter: [values]}``: the KB's
    values of that field close to the one asked (a typo such as ``ofline``, a
    prefix such as ``mlperf``). ``hint``: when more than half of the selected records are not comparable, a line naming
    the unstated conditions most often to blame and the smallest ``--vary`` set that puts most of them into classes of
    two or more rows (:mod:`inferkb.analysis.compare_hint`), with ``vary_hint`` its figures; ``None`` otherwise, and
    when ``records`` were passed in (the site) rather than selected here.
    """

    filters: dict[str, Any]
    vary: list[str]
    per_accelerator: bool
    conditions: list[str]
    classes: list[ComparisonClass]
    not_comparable: list[NotComparable]
    split_by: dict[str, int]
    selected: int
    metrics_without_filter: dict[str, int] = field(default_factory=dict)
    values_without_filter: dict[str, dict[str, int]] = field(default_factory=dict)
    did_you_mean: dict[str, list[str]] = field(default_factory=dict)
    hint: str | None = None
    vary_hint: VaryHint | None = None

    @property
    def metric_absent(self) -> bool:
        """True when a metric filter (:func:`inferkb.analysis.compare.compare` with ``metric``) is what left the selection empty."""
        return self.selected == 0 and "metric" in self.filters

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict of every field (dataclasses converted recursively)."""
        out = asdict(self)
        for cls, raw in zip(self.classes, out["classes"], strict=True):
            raw["size"] = cls.size
        return out


@dataclass(slots=True)
class Entry:
    """A selected record that may enter a class: its conditions ``cs``, per-accelerator figure ``pa`` (when asked, else
    ``None``), the ``value`` ranked (``pa``'s value when asked, else the headline) and the row ``label``."""

    rec: Record
    cs: ConditionSet
    pa: Any
    value: float
    label: str
