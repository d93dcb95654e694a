"""Cost per million tokens of a measured benchmark at a stated hourly price.

Formula (every input is printed with the answer)::

    units rented      = ceil(devices / devices per price unit)
    system $/hour     = units rented × price per unit-hour
    tokens per hour   = measured tok/s × 3600 × utilisation
    $ per 1M tokens   = system $/hour ÷ tokens per hour × 1,000,000

``devices`` is nodes × accelerators per node (else ``accelerator_count``) for
a per-system or aggregate rate, the accelerators per node for a per-node rate
and 1 for a per-device rate. A price always states its **basis**: per device
(a GPU-hour) or per instance/module of N devices; a price without one is
refused, never assumed. ``utilisation`` (default 1.0) is the share of paid
hours spent producing tokens at the measured rate: 1.0 is the best case, and
the result says so. Per 1M *total* tokens (input + output) is given when the
headline counts total tokens, or when fixed input and output lengths are
stated (total rate = output rate × (ISL + OSL) ÷ OSL); otherwise it says why not.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .common import AnalysisError, devices_of, is_number, lookup, rate_label, token_basis

if TYPE_CHECKING:
    from ..kb import KB

PRICE_SCOPES = ("per-device", "per-instance", "per-module")
COSTABLE_METRICS = ("output_tok_s", "total_tok_s", "decode_tok_s", "tps_aggregate")


@dataclass
class Price:
    """An hourly price with its basis: ``usd_per_hour`` for one ``scope`` unit of ``devices_per_unit`` devices."""

    usd_per_hour: float
    scope: str
    devices_per_unit: int
    pricing_model: str | None
    source: str
    date: str | None = None
    accelerator_ids: list[str] = field(default_factory=list)
    basis: str | None = None

    def __post_init__(self) -> None:
        if not is_number(self.usd_per_hour) or self.usd_per_hour <= 0:
            raise AnalysisError(f"price must be a positive number of USD per hour, got {self.usd_per_hour!r}")
        if self.scope not in PRICE_SCOPES:
            raise AnalysisError(f"price basis {self.scope!r} is not one of {', '.join(PRICE_SCOPES)}; a price without a basis is refused")
        if not isinstance(self.devices_per_unit, int) or self.devices_per_unit < 1:
            raise AnalysisError(f"devices per priced unit must be a positive integer, got {self.devices_per_unit!r}")
        if self.scope == "per-device" and self.devices_per_unit != 1:
            raise AnalysisError("a per-device price covers exactly one device")


def price_from_supply(kb: KB, supply_id: str) -> Price:
    """The :class:`Price` stated by a supply record; :class:`AnalysisError` when it has no price or no basis.

    Needs ``price_usd``, ``price_unit`` "USD/hour", ``price_scope`` and
    ``devices_per_price_unit`` (1 for per-device).
    """
    rec = lookup(kb, supply_id, "supply")
    d = rec.data
    if not is_number(d.get("price_usd")):
        raise AnalysisError(f"{rec.path}: field 'price_usd' is missing; this supply record states no price")
    unit = d.get("price_unit")
    if unit != "USD/hour":
        raise AnalysisError(f"{rec.path}: field 'price_unit' is {unit!r}; cost per token needs an hourly price ('USD/hour')")
    scope = d.get("price_scope")
    if scope not in PRICE_SCOPES:
        raise AnalysisError(
            f"{rec.path}: field 'price_scope' is {scope!r}; expected one of {', '.join(PRICE_SCOPES)} — a price without a basis is refused"
        )
    per_unit = d.get("devices_per_price_unit")
    if not isinstance(per_unit, int):
        raise AnalysisError(f"{rec.path}: field 'devices_per_price_unit' is {per_unit!r}; expected how many devices the price covers")
    return Price(
        float(d["price_usd"]),
        scope,
        per_unit,
        d.get("pricing_model"),
        f"supply/{rec.id}",
        d.get("price_date"),
        [a for a in d.get("accelerator_ids") or [] if isinstance(a, str)],
        d.get("price_basis"),
    )


@dataclass
class CostResult:
    """Result of :func:`cost`. Every figure the answer uses is a field; ``formula`` and ``assumptions`` spell them out.

    ``usd_per_million_headline`` is per 1M of the tokens the headline counts
    (``token_basis``); ``usd_per_million_output`` / ``usd_per_million_total``
    are per 1M output / input + output tokens, ``None`` when not derivable
    (``total_basis`` says why).
    """

    benchmark: str
    value: float
    unit: str | None
    label: str
    token_basis: str | None
    price: dict[str, Any]
    devices: int
    devices_basis: str
    units_rented: int
    system_usd_per_hour: float
    utilisation: float
    tokens_per_hour: float
    usd_per_million_headline: float
    usd_per_million_output: float | None
    usd_per_million_total: float | None
    total_basis: str
    formula: list[str]
    assumptions: list[str]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict of every field."""
        return asdict(self)


def _devices_for(d: dict[str, Any], path: str) -> tuple[int, str]:
    scope = d.get("value_scope")
    if scope == "per-device":
        return 1, "value is per device"
    if scope == "per-node":
        per_node = (d.get("submission") or {}).get("accelerators_per_node") if isinstance(d.get("submission"), dict) else None
        if isinstance(per_node, int) and per_node > 0:
            return per_node, f"value is per node of {per_node} accelerators"
        raise AnalysisError(f"{path}: value is per node but 'submission.accelerators_per_node' is missing")
    if scope in ("per-system", "aggregate"):
        n, basis = devices_of(d)
        if n is None:
            raise AnalysisError(f"{path}: {basis}")
        return n, basis
    if scope in ("per-user", "per-request"):
        raise AnalysisError(
            f"{path}: value_scope is {scope!r}; a per-user or per-request rate has no cost per token without the number of concurrent users"
        )
    raise AnalysisError(f"{path}: field 'value_scope' is missing; cannot tell how many devices produced the rate")


def cost(kb: KB, benchmark: str, price: Price, *, utilisation: float = 1.0, allow_other_hardware: bool = False) -> CostResult:
    """Cost per 1M tokens of ``benchmark`` (an id) at ``price``.

    Raises :class:`AnalysisError` when the benchmark's metric is not a token
    rate, its scope or device count is unknown, ``utilisation`` is not in
    (0, 1], or the price is for other hardware than the benchmark ran on
    (unless ``allow_other_hardware``).
    """
    if not is_number(utilisation) or not 0 < utilisation <= 1:
        raise AnalysisError(f"utilisation must be in (0, 1], got {utilisation!r}")
    rec = lookup(kb, benchmark, "benchmark")
    d = rec.data
    metric = d.get("metric")
    if metric not in COSTABLE_METRICS or not is_number(d.get("value")) or d.get("value") <= 0:
        raise AnalysisError(
            f"{rec.path}: metric {metric!r} with value {d.get('value')!r} is not a positive token rate; "
            f"cost per token needs one of {', '.join(COSTABLE_METRICS)}"
        )
    accs = [a for a in d.get("accelerator_ids") or [] if isinstance(a, str)]
    if price.accelerator_ids and not allow_other_hardware and not set(accs) & set(price.accelerator_ids):
        raise AnalysisError(
            f"price {price.source} is for {', '.join(price.accelerator_ids)} but {rec.id} ran on {', '.join(accs) or 'unstated hardware'}"
        )
    devices, devices_basis = _devices_for(d, rec.path)
    value = float(d["value"])
    units = math.ceil(devices / price.devices_per_unit)
    system_hour = units * price.usd_per_hour
    tokens_hour = value * 3600.0 * utilisation
    per_m = system_hour / tokens_hour * 1e6
    basis = token_basis(metric)
    out_cost: float | None = None
    total_cost: float | None = None
    c = d.get("conditions") if isinstance(d.get("conditions"), dict) else {}
    isl, osl = c.get("input_tokens"), c.get("output_tokens")
    if metric == "total_tok_s":
        total_cost = per_m
        total_basis = "the headline counts input + output tokens"
        if is_number(isl) and is_number(osl) and isl + osl > 0:
            out_cost = per_m * (isl + osl) / osl
    elif metric in ("output_tok_s", "decode_tok_s"):
        out_cost = per_m
        if is_number(isl) and is_number(osl) and osl > 0:
            total_cost = per_m * osl / (isl + osl)
            total_basis = f"fixed lengths ISL {isl} + OSL {osl}: total rate = output rate x {(isl + osl) / osl:.4g}"
        else:
            total_basis = "not computed: input and output lengths are not both stated"
    else:
        total_basis = "not computed: the headline's token basis is not stated (tps_aggregate)"
    unit_word = {"per-device": "device", "per-instance": "instance", "per-module": "module"}[price.scope]
    formula = [
        f"units rented = ceil({devices} devices / {price.devices_per_unit} per {unit_word}) = {units}",
        f"system $/hour = {units} x ${price.usd_per_hour:g} = ${system_hour:,.4g}",
        f"tokens/hour = {value:,.6g} tok/s x 3600 x {utilisation:g} = {tokens_hour:,.6g}",
        f"$ per 1M = ${system_hour:,.4g} / {tokens_hour:,.6g} x 1e6 = ${per_m:,.4g}",
    ]
    assumptions = [
        f"utilisation {utilisation:g}: the paid hours all run at the measured rate" + (" (best case)" if utilisation == 1 else ""),
        f"price basis: {price.scope}, {price.devices_per_unit} device(s) per priced unit, {price.pricing_model or 'pricing model not stated'}",
        "the price covers the accelerators (and whatever the priced unit includes); power, storage and networking beyond it are not added",
    ]
    if price.source.startswith("supply/"):
        # Cloud prices move (and a secondary page may repeat an old one): an undated price is said to be undated.
        assumptions.append(
            f"price dated {price.date} ({price.source})"
            if price.date
            else f"price date not stated ({price.source}: price_date is null); the price may be out of date"
        )
    if basis == "token basis not stated":
        assumptions.append("the headline's token basis is not stated: the cost is per 1M tokens of unknown kind")
    return CostResult(
        rec.id,
        value,
        d.get("unit"),
        rate_label(d),
        basis,
        asdict(price),
        devices,
        devices_basis,
        units,
        system_hour,
        utilisation,
        tokens_hour,
        per_m,
        out_cost,
        total_cost,
        total_basis,
        formula,
        assumptions,
    )
