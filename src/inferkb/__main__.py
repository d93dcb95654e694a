"""``python -m inferkb`` runs the CLI."""

from .cli import main

main()
