"""Everything the site's pages are made from, computed once per build: check report, back-references, tiers, per-record views.

:class:`SiteData` holds the KB, the ``check`` report (validate + every audit)
and indexes derived from them. Each ``*_context`` function returns the plain
dict one template renders; none of them produce HTML.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..arms import DELTA_STATS, arm_deltas
from ..condition_notes import absent_note
from ..jsonio import parse_bytes
from . import views as V

if TYPE_CHECKING:
    from ..findings import Finding
    from ..kb import KB
    from ..report import Report
    from ..store import Record

# Unresolved records first: a contested record needs a reader's attention before a draft one.
STATUS_ORDER = {"contested": 0, "draft": 1, "deprecated": 2, "verified": 3}
BANNERS = {
    "contested": "Contested: sources or checks disagree about this record; read its findings before relying on it.",
    "draft": "Draft: this record has not been verified against its sources yet.",
    "deprecated": "Deprecated: kept for history; a newer record may replace it.",
}
LOAD_CONDITIONS = ("model", "hardware", "batch_or_concurrency", "input_length", "output_length", "engine_version", "warmup")
CONDITION_LABELS = {
    "model": "model",
    "hardware": "hardware (accelerator and count)",
    "batch_or_concurrency": "batch size or concurrency",
    "input_length": "input length (ISL)",
    "output_length": "output length (OSL)",
    "engine_version": "engine version",
    "warmup": "warmup",
}
# Load-conditions audit codes -> the condition's status on the record page.
CONDITION_CODES = {"KB301": "absent", "KB304": "absent (documented gap)", "KB302": "harness default", "KB303": "stated only in prose"}
# Fields the record page shows in their own sections rather than in the generic field list.
SPECIAL_FIELDS = frozenset({"provenance", "arms", "baseline_arm", "conditions", "condition_gaps", "sources"})
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(slots=True)
class BackRef:
    """``source`` (a Record) cites the page's record in ``field``."""

    source: Record
    field: str


class SiteData:
    """The KB plus what every page needs: ``report`` (check), findings and back-references per record, source tiers."""

    def __init__(self, kb: KB, report: Report) -> None:
        self.kb = kb
        self.report = report
        self.linker = V.Linker(kb)
        self.findings_by_record: dict[str, list[Finding]] = defaultdict(list)
        for f in report.findings:
            if f.record:
                self.findings_by_record[f.record].append(f)

    # ---- indexes ------------------------------------------------------------------------
    @cached_property
    def backrefs(self) -> dict[str, list[BackRef]]:
        """Record key -> the records that reference it (through ``sources`` or any reference field of the KB's profile)."""
        out: dict[str, list[BackRef]] = defaultdict(list)
        types = self.kb.profile.types
        for rec in self.kb.records.values():
            spec = types.get(rec.type)
            fields = ["sources", *(spec.refs if spec else ())]
            for fld in fields:
                value = rec.data.get(fld)
                for ref in value if isinstance(value, list) else [value]:
                    if not isinstance(ref, str):
                        continue
                    target = self.linker.target(rec.type, fld, ref)
                    if target is not None and target.key != rec.key:
                        out[target.key].append(BackRef(rec, fld))
        return out

    @cached_property
    def tiers(self) -> dict[str, Any]:
        """Source id -> :class:`~inferkb.audit.provenance_tiers.Classification` (tier A-E or ``None``, rule, reason)."""
        from ..audit.provenance_tiers import classify_sources

        return classify_sources(self.kb)

    @cached_property
    def sidecars(self) -> bool:
        """True when the KB keeps provenance in sidecar files (``provenance/<dir>/<id>.json``, the corpus layout)."""
        return (self.kb.root / "provenance").is_dir()

    def records_sorted(self, type_name: str) -> list[Record]:
        """Records of one type, unresolved first (contested, draft, ...), then by name."""
        return sorted(
            self.kb.by_type(type_name), key=lambda r: (STATUS_ORDER.get(str(r.data.get("status")), 1), str(r.data.get("name") or r.id))
        )

    def title(self, rec: Record) -> str:
        """A record's display name (its ``name``, else its id)."""
        name = rec.data.get("name")
        return name if isinstance(name, str) and name.strip() else rec.id

    # ---- per-record pieces --------------------------------------------------------------
    def provenance(self, rec: Record) -> list[dict[str, Any]]:
        """The record's provenance entries (its own ``provenance`` plus a sidecar's), oldest first."""
        entries = [e for e in rec.data.get("provenance") or [] if isinstance(e, dict)]
        if self.sidecars:
            path = self.kb.root / "provenance" / rec.dir / f"{rec.id}.json"
            if path.is_file():
                doc, problem = parse_bytes(path.read_bytes())
                if problem is None and isinstance(doc, dict):
                    entries += [dict(e, _sidecar=True) for e in doc.get("provenance") or [] if isinstance(e, dict)]
        return sorted(entries, key=lambda e: str(e.get("date") or ""))

    def sources(self, rec: Record) -> list[dict[str, Any]]:
        """``[{id, record|None, tier, tier_reason, url (safe or None), url_text, publisher, kind, role, role_note}]`` for each
        cited source; ``role``/``role_note`` say why it is cited where that can be derived
        (:func:`inferkb.source_roles.source_roles`), else ``None``."""
        from ..source_roles import source_roles

        roles = source_roles(self.kb, rec.data)
        out = []
        for sid in rec.data.get("sources") or []:
            if not isinstance(sid, str):
                continue
            src = self.kb.resolve(sid, "source")
            cls = self.tiers.get(sid)
            url = src.data.get("url") if src else None
            out.append(
                {
                    "id": sid,
                    "record": src,
                    "href": self.linker.record_href(src) if src else None,
                    "title": self.title(src) if src else sid,
                    "tier": cls.tier if cls else None,
                    "tier_reason": cls.reason if cls else "the source record is missing",
                    "url": V.safe_href(url),
                    "url_text": url if isinstance(url, str) else None,
                    "publisher": src.data.get("publisher") if src else None,
                    "kind": src.data.get("kind") if src else None,
                    "role": roles[sid].role if sid in roles else None,
                    "role_note": roles[sid].describe() if sid in roles else None,
                }
            )
        return out

    def outgoing(self, rec: Record) -> list[dict[str, Any]]:
        """``[{field, label, ref, record|None, href}]`` for every reference field value except ``sources``."""
        spec = self.kb.profile.types.get(rec.type)
        out = []
        for fld in spec.refs if spec else ():
            value = rec.data.get(fld)
            for ref in value if isinstance(value, list) else [value]:
                if isinstance(ref, str) and ref:
                    target = self.linker.target(rec.type, fld, ref)
                    out.append(
                        {
                            "field": fld,
                            "label": V.label(fld),
                            "ref": ref,
                            "record": target,
                            "title": self.title(target) if target else ref,
                            "href": self.linker.record_href(target) if target else None,
                        }
                    )
        return out

    def findings(self, rec: Record) -> list[Finding]:
        """The record's findings from check, most severe first."""
        return sorted(self.findings_by_record.get(rec.key, []), key=lambda f: (SEVERITY_ORDER.get(f.severity, 3), f.code, f.field or ""))

    def load_conditions(self, rec: Record) -> list[dict[str, Any]]:
        """The seven load conditions of a benchmark: ``[{condition, label, status, message}]`` from the load-conditions findings."""
        by_cond: dict[str, dict[str, Any]] = {}
        for f in self.findings_by_record.get(rec.key, []):
            if f.code in CONDITION_CODES and f.extra and f.extra.get("condition") in CONDITION_LABELS:
                by_cond[f.extra["condition"]] = {"status": CONDITION_CODES[f.code], "message": f.message, "code": f.code}
        return [
            {"condition": c, "label": CONDITION_LABELS[c], **by_cond.get(c, {"status": "present", "message": "", "code": None})}
            for c in LOAD_CONDITIONS
        ]

    def conditions(self, rec: Record) -> list[dict[str, Any]]:
        """Each ``conditions.*`` field: ``{name, label, unit, value (Node), absent, gap, note}``; a null is absent, with its
        gap reason if any, else ``note`` (:func:`inferkb.condition_notes.absent_note`: unexplained, load given by another
        field, not applicable, or optional)."""
        conds = rec.data.get("conditions")
        gaps = rec.data.get("condition_gaps") if isinstance(rec.data.get("condition_gaps"), dict) else {}
        out = []
        for name, value in conds.items() if isinstance(conds, dict) else ():
            gap = gaps.get(name)
            gap = gap if isinstance(gap, dict) else ({"reason": gap} if isinstance(gap, str) else None)
            out.append(
                {
                    "name": name,
                    "label": V.label(name),
                    "unit": V.unit_of(name),
                    "value": V.value_node(self.linker, rec.type, name, value, 1),
                    "absent": value is None,
                    "gap": gap,
                    "note": absent_note(self.kb, rec.data, name) if value is None and not gap else None,
                }
            )
        shown = {c["name"] for c in out}
        for name, gap in gaps.items():
            if name not in shown:
                out.append(
                    {
                        "name": name,
                        "label": V.label(name),
                        "unit": None,
                        "value": None,
                        "absent": True,
                        "gap": gap if isinstance(gap, dict) else {"reason": str(gap)},
                        "field_gap": True,
                    }
                )
        return out

    def arms(self, rec: Record) -> dict[str, Any] | None:
        """Arms table: ``{stats (columns), rows [{id, label, config, unit, stats{}, deltas{}, baseline}], baseline}``, or ``None``."""
        arms = rec.data.get("arms")
        if not isinstance(arms, list) or not arms:
            return None
        deltas = arm_deltas(rec.data)
        base = rec.data.get("baseline_arm")
        present = {k for a in arms if isinstance(a, dict) for k in (a.get("stats") or {})}
        stats = [s for s in (*DELTA_STATS, "stdev", "n") if s in present]
        stats += sorted(present - set(stats))
        rows = []
        for a in arms:
            if not isinstance(a, dict):
                continue
            rows.append(
                {
                    "id": a.get("id"),
                    "label": a.get("label"),
                    "unit": a.get("unit"),
                    "config": V.value_node(self.linker, rec.type, "config", a.get("config"), 1),
                    "stats": a.get("stats") or {},
                    "deltas": deltas.get(a.get("id"), {}),
                    "baseline": a.get("id") == base,
                }
            )
        return {"stats": stats, "labels": {s: V.label(s) for s in stats}, "rows": rows, "baseline": base}

    # ---- KB-wide -------------------------------------------------------------------------
    def counts(self) -> dict[str, Any]:
        """``{"types": [{type, dir, total, by_status{}}], "statuses": [..], "total": n}``."""
        statuses: Counter[str] = Counter()
        per_type: dict[str, Counter[str]] = {t: Counter() for t in self.kb.profile.types}
        for rec in self.kb.records.values():
            st = str(rec.data.get("status") or "unstated")
            per_type.setdefault(rec.type, Counter())[st] += 1
            statuses[st] += 1
        order = sorted(statuses, key=lambda s: STATUS_ORDER.get(s, 9))
        rows = [
            {"type": t, "dir": self.kb.profile.types[t].dir, "total": sum(c.values()), "by_status": dict(c)}
            for t, c in per_type.items()
            if t in self.kb.profile.types
        ]
        return {"types": rows, "statuses": order, "total": len(self.kb.records)}

    def recently_updated(self, n: int = 12) -> list[Record]:
        """The ``n`` records with the latest ``updated`` date (ties by key)."""
        dated = [r for r in self.kb.records.values() if isinstance(r.data.get("updated"), str)]
        return sorted(dated, key=lambda r: (r.data["updated"], r.key), reverse=True)[:n]

    def needs_attention(self, n: int = 12) -> list[Record]:
        """Contested records first, then drafts, newest first within each (at most ``n``)."""
        picked = [r for r in self.kb.records.values() if r.data.get("status") in ("contested", "draft")]
        picked.sort(key=lambda r: str(r.data.get("updated") or ""), reverse=True)
        picked.sort(key=lambda r: STATUS_ORDER[r.data["status"]])
        return picked[:n]

    def audit_summary(self) -> dict[str, Any]:
        """Findings by severity and by family, plus the load-conditions headline (complete benchmarks out of all)."""
        from ..rules import RULES

        by_sev: Counter[str] = Counter(f.severity for f in self.report.findings)
        by_family: dict[str, Counter[str]] = defaultdict(Counter)
        for f in self.report.findings:
            rule = RULES.get(f.code)
            by_family[rule.family if rule else "other"][f.severity] += 1
        lc = self.report.figures.get("load-conditions") or {}
        return {
            "by_severity": {s: by_sev.get(s, 0) for s in ("error", "warning", "info")},
            "by_family": {k: dict(v) for k, v in sorted(by_family.items())},
            "benchmarks": lc.get("records", 0),
            "complete": len(lc.get("complete") or []),
            "absent_by_condition": lc.get("absent_by_condition") or {},
        }

    def lacking(self, rec: Record) -> list[str]:
        """Labels of the load conditions a benchmark does not establish (the ``lacks`` facet)."""
        return [c["label"] for c in self.load_conditions(rec) if c["status"].startswith("absent")]

    def condition_gaps(self) -> dict[str, Any]:
        """Per load condition: how many benchmarks lack it, grouped by reason (``[{reason, documented, records}]``, largest first).

        A documented gap is grouped by the reason the record gives in
        ``condition_gaps``; an undocumented one by what the audit searched.
        """
        from ..audit.conditions_text import documented_gaps

        groups: dict[str, dict[tuple[bool, str], list[Record]]] = {c: defaultdict(list) for c in LOAD_CONDITIONS}
        status_count: dict[str, Counter[str]] = {c: Counter() for c in LOAD_CONDITIONS}
        for rec in self.kb.by_type("benchmark") if "benchmark" in self.kb.profile.types else ():
            for f in self.findings_by_record.get(rec.key, []):
                cond = (f.extra or {}).get("condition")
                if f.code not in ("KB301", "KB304") or cond not in groups:
                    continue
                documented = f.code == "KB304"
                if documented:
                    reasons = [str(r) for _, r in documented_gaps(rec.data, cond) if isinstance(r, str) and r.strip()]
                    key = "; ".join(dict.fromkeys(reasons)) or _reason_key(f.message)
                else:
                    key = _reason_key(f.message)
                groups[cond][(documented, key)].append(rec)
                status_count[cond]["documented" if documented else "undocumented"] += 1
        out = []
        for c in LOAD_CONDITIONS:
            reasons = sorted(groups[c].items(), key=lambda kv: (-len(kv[1]), kv[0]))
            out.append(
                {
                    "condition": c,
                    "label": CONDITION_LABELS[c],
                    "absent": sum(len(v) for v in groups[c].values()),
                    "documented": status_count[c]["documented"],
                    "undocumented": status_count[c]["undocumented"],
                    "reasons": [{"reason": r, "documented": doc, "records": recs} for (doc, r), recs in reasons],
                }
            )
        return {"conditions": out}


_ABSENT_PREFIX = re.compile(r"^.*? absent(?: \(known: (?:\{.*?\}|[^)]*)\))?: ")


def _reason_key(message: str) -> str:
    """What the audit searched, from a KB301/KB304 message: without the record's "known" detail, sources and recovery hint."""
    m = _ABSENT_PREFIX.match(message)
    text = message[m.end() :] if m else message
    for cut in ("; condition_gaps.", "; sources cited", ". Would recover from"):
        text = text.split(cut, 1)[0]
    return text.strip()


def today() -> str:
    """Today's date, ISO (shown as the build date)."""
    return _dt.date.today().isoformat()
