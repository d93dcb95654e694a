"""CLI command ``import-community``: the reproducible import of the community data sets (a thin wrapper)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import command, emit_json, open_kb


def default_corpus() -> Path:
    """``../shared/corpus`` beside the repository checkout (where the team's corpus lives)."""
    return Path(__file__).resolve().parents[3].parent / "shared" / "corpus"


@command("import-community")
@click.option("--kb", "kb_path", type=click.Path(path_type=Path), help="KB to write (default: the bundled KB).")
@click.option(
    "--corpus",
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder holding community/ (default: ../shared/corpus beside the checkout).",
)
@click.option("--set", "only", multiple=True, help="Import only this data set (repeatable); default: all of them.")
@click.option("--dry-run", is_flag=True, help="Parse and compare; write nothing.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def import_community_cmd(kb_path, corpus, only, dry_run, fmt) -> None:
    """Import the community data sets (LLM-Inference-Bench, llmperf-leaderboard, LocalScore,
    Strix Halo llama-bench sweeps, InferenceX decode-SLO) into a KB.

    The data sets, their files, origins and sources are listed in
    inferkb/intake/community_sets.toml; each file is pinned to its upstream
    repository, path and commit from community/SOURCES.md, whose SHA-256 it
    must match. Re-running it is a no-op when nothing changed.

    \b
    Examples:
      inferkb import-community --dry-run
      inferkb import-community --set localscore --kb ./kb-copy --format json
    """
    from ..intake.community import import_community
    from ..intake.counts import describe

    kb = open_kb(kb_path, write=not dry_run)
    reports = import_community(kb, corpus or default_corpus(), dry_run=dry_run, only=list(only) or None)
    if fmt == "json":
        emit_json({"dry_run": dry_run, "sets": [r.__dict__ for r in reports]})
        return
    verb = "to write" if dry_run else "written"
    for r in reports:
        skipped = sum(r.stats.get("skipped", {}).values())
        click.echo(
            f"{r.name:36} {r.files:4} files  built {describe(r.built):28} {r.written:5} {verb}  {r.unchanged:5} unchanged"
            f"  {skipped:5} rows skipped  {r.seconds:6.2f} s"
        )
    built: dict[str, int] = {}
    for r in reports:
        for t, n in r.built.items():
            built[t] = built.get(t, 0) + n
    click.echo(f"{'total':36}       built {describe(built):28} {sum(r.written for r in reports):5} {verb}")
    for r in reports:
        for path in r.wrote:
            click.echo(f"{'would write' if dry_run else 'wrote'} {kb.root / path}")
