"""Tables derived from a KB, read-only SQL over them, and open-data exports.

- :mod:`~inferkb.export.tables` — the tables (columns from the KB's schemas, keys from kb.toml);
- :mod:`~inferkb.export.sql` — read-only DuckDB with a timeout (``inferkb sql``);
- :mod:`~inferkb.export.writers` — DuckDB, Parquet, SQLite (Datasette), CSV, Frictionless data package + Croissant.
"""
