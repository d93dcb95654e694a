"""The mlperf importer in three modules along a row's way (table rows, hardware, submission) keeps its import paths.

Behaviour is pinned by test_intake_mlperf and test_mlperf_rounds and by scripts/import_mlperf.py --dry-run (0 to
write on the bundled KB); this file pins the seam itself: the old names still import from inferkb.intake.mlperf,
they are the new modules' objects, and no module of the importer is over STYLE.md's 400 lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inferkb.intake import mlperf, mlperf_hardware, mlperf_submission, mlperf_table


def test_public_names_import_from_mlperf_as_before():
    from inferkb.intake.mlperf import (  # noqa: F401
        REQUIRED_COLUMNS,
        MLPerfImporter,
        TableContext,
        build_record,
        import_table,
        iter_records,
        iter_rows,
        system_label,
        table_layout,
    )

    assert set(mlperf.__all__) >= {"iter_rows", "iter_records", "import_table", "build_record", "TableContext"}
    assert mlperf.iter_rows is mlperf_table.iter_rows and mlperf.REQUIRED_COLUMNS is mlperf_table.REQUIRED_COLUMNS
    assert mlperf._bounded_id is mlperf_table.bounded_id  # mlperf_enrich and older callers used this name


@pytest.mark.parametrize("module", [mlperf, mlperf_table, mlperf_hardware, mlperf_submission])
def test_importer_modules_stay_under_400_lines(module):
    lines = Path(module.__file__).read_text(encoding="utf-8").count("\n")
    assert lines < 400, f"{module.__name__} has {lines} lines"


def test_cell_numbers_refuse_what_is_not_a_finite_number():
    assert mlperf_table.cell_number(" 1747.67 ") == 1747.67
    assert [mlperf_table.cell_number(t) for t in ("", "n/a", "nan", "inf", "-inf")] == [None] * 5
    assert (mlperf_table.cell_int("2.0"), mlperf_table.cell_int("2.5"), mlperf_table.cell_int("x")) == (2, None, None)
