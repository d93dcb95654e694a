"""The rules ``inferkb validate`` checks (KB0xx files, KB1xx records, KB2xx references).

Each rule's rationale and examples are shown by ``inferkb rules CODE``.
"""

from __future__ import annotations

from .rules import Rule, register

_OK = '{"id": "nvidia-h100-sxm", "type": "accelerator", ...}'

KB001 = register(
    Rule(
        "KB001",
        "json-invalid",
        "error",
        "validate",
        "The file is not valid JSON.",
        "A file that does not parse holds no usable facts; every tool that reads the KB would skip or crash on it.",
        _OK,
        '{"id": "x", "type": "engine",}   (trailing comma)',
    )
)
KB002 = register(
    Rule(
        "KB002",
        "duplicate-key",
        "error",
        "validate",
        "An object has the same key twice.",
        "JSON parsers silently keep the last value, so one of two conflicting facts disappears without trace.",
        '{"value": 894.0}',
        '{"value": 894.0, "value": 1578.0}',
    )
)
KB003 = register(
    Rule(
        "KB003",
        "non-finite-number",
        "error",
        "validate",
        "NaN or Infinity appears as a number.",
        "NaN/Infinity are not JSON; strict parsers reject the file and lenient ones carry a non-number into arithmetic.",
        '{"request_rate": "inf"}',
        '{"value": NaN}',
    )
)
KB004 = register(
    Rule(
        "KB004",
        "byte-order-mark",
        "error",
        "validate",
        "The file starts with a UTF-8 byte-order mark.",
        "Strict JSON readers reject a BOM; records are plain UTF-8.",
        "(file starts with '{')",
        "(file starts with EF BB BF)",
    )
)
KB005 = register(
    Rule(
        "KB005",
        "not-utf8",
        "error",
        "validate",
        "The file contains bytes that are not UTF-8.",
        "Records are UTF-8; other encodings corrupt names and quotes silently.",
        '{"name": "Café"} (UTF-8)',
        '{"name": "Caf\\xe9"} (Latin-1 byte)',
    )
)
KB006 = register(
    Rule(
        "KB006",
        "empty-file",
        "error",
        "validate",
        "The file is empty.",
        "An empty file is a record that was never written, or was truncated.",
        _OK,
        "(0 bytes)",
    )
)
KB007 = register(
    Rule(
        "KB007",
        "top-level-not-object",
        "error",
        "validate",
        "The top level is not a JSON object.",
        "One record per file: the top level must be the record object.",
        _OK,
        '[{"id": "a"}, {"id": "b"}]',
    )
)
KB008 = register(
    Rule(
        "KB008",
        "file-too-large",
        "error",
        "validate",
        "A record file is over the size limit and was not loaded.",
        "A record is a few kilobytes; a file of many megabytes is a data dump or an accident, and loading it would stall every command.",
        "(4 KB record)",
        "(50 MB file)",
    )
)
KB009 = register(
    Rule(
        "KB009",
        "symlink-outside-kb",
        "error",
        "validate",
        "A symlink points outside the KB; it is not followed.",
        "Following it would read (or later write) files the KB does not own.",
        "data/models/x.json (regular file)",
        "data/models/x.json -> /etc/passwd",
    )
)
KB010 = register(
    Rule(
        "KB010",
        "unknown-path",
        "warning",
        "validate",
        "A file or folder under data/ that the KB does not know.",
        "Records in an unknown directory are invisible to every check; a stray file is usually a mistake.",
        "data/models/llama-3-1-8b.json",
        "data/model/llama-3-1-8b.json (typo in dir), data/models/notes.txt",
    )
)
KB011 = register(
    Rule(
        "KB011",
        "bad-file-name",
        "error",
        "validate",
        "A record file name is not a kebab-case slug.",
        "Ids are file stems; upper case or spaces make ids that differ by case or cannot be referenced safely.",
        "data/engines/tensorrt-llm.json",
        "data/engines/TensorRT LLM.json",
    )
)

KB012 = register(
    Rule(
        "KB012",
        "orphan-temp-file",
        "warning",
        "validate",
        "A temp or backup file left by an interrupted write (named .<file>.inferkb-<pid>-<hex>.tmp|.bak).",
        "A killed writer leaves its temp files behind; nothing reads them, but they take space and hide what happened. "
        "The next inferkb write to this KB removes them.",
        "data/engines/vllm.json only",
        "data/engines/.vllm.json.inferkb-4711-0a1b2c3d.tmp",
    )
)
KB013 = register(
    Rule(
        "KB013",
        "interrupted-batch",
        "error",
        "validate",
        "A batch write was interrupted while its files were being put in place (its journal .inferkb-journal.json remains).",
        "Some files of that batch may be new and others old; the next inferkb write to this KB rolls the batch back "
        "(every file it still owns returns to its previous content), so the KB is as it was before the batch. "
        "A journal naming a path outside the KB, through a symlink, or a temp/backup file that is not its target's "
        "is refused instead: nothing is touched and writes stop until it is removed by hand.",
        "(no .inferkb-journal.json in the KB root)",
        ".inferkb-journal.json listing data/benchmarks/a.json, data/benchmarks/b.json",
    )
)
KB014 = register(
    Rule(
        "KB014",
        "not-a-regular-file",
        "error",
        "validate",
        "A path named like a record (or a KB file) is a FIFO, socket or device, not a regular file; it is not read.",
        "Reading a FIFO blocks until some other process writes to it: one stray named pipe would hang every command.",
        "data/models/x.json (regular file)",
        "data/models/x.json (created with mkfifo)",
    )
)
KB015 = register(
    Rule(
        "KB015",
        "number-out-of-range",
        "error",
        "validate",
        "A number no floating-point value can hold: an integer of more than 308 digits, or a literal such as 1e400.",
        "Such a number overflows every computation on it (and past 4,300 digits Python refuses to even print it); "
        "it is never a measurement. The record is not loaded; the finding names the field.",
        '"value": 1520.5',
        '"value": 1e400',
    )
)
KB016 = register(
    Rule(
        "KB016",
        "unpaired-surrogate",
        "error",
        "validate",
        "A string holds a \\ud800-\\udfff escape without its pair: text no UTF-8 file or terminal can hold.",
        "A lone surrogate cannot be encoded as UTF-8, so printing, searching or writing the record would fail. "
        "The record is not loaded; the finding names the field.",
        '"name": "\\ud83d\\ude00 (a valid pair)"',
        '"name": "\\ud800"',
    )
)
KB017 = register(
    Rule(
        "KB017",
        "symlinked-directory",
        "error",
        "validate",
        "A data/<type-dir>, provenance/ or provenance/<type-dir> folder is a symlink to a place inside the KB; "
        "it is not followed (one leading outside is KB009).",
        "Whoever can swap a symlinked folder can redirect a write anywhere, so inferkb writes only through real "
        "folders and refuses a symlinked one wherever it points. The loader, the cleaner of orphan temp files and "
        "validate treat it the same way: not looked behind, so its records are not loaded and its temp files are "
        "neither reported nor removed. Replace the link by the folder itself.",
        "data/engines/ (a folder)",
        "data/engines -> ../shared-engines",
    )
)

KB101 = register(
    Rule(
        "KB101",
        "schema-violation",
        "error",
        "validate",
        "The record does not satisfy its type's JSON Schema.",
        "The schema is the contract other tools build on; every error is reported with its JSON path, what was expected and what was found.",
        '{"confidence": 0.8}',
        '{"confidence": "high"}',
    )
)
KB102 = register(
    Rule(
        "KB102",
        "id-file-mismatch",
        "error",
        "validate",
        "The record's id differs from its file stem.",
        "References use ids and tools find files by id; a mismatch breaks every reference to the record.",
        'data/engines/vllm.json: {"id": "vllm"}',
        'data/engines/vllm.json: {"id": "vllm-engine"}',
    )
)
KB103 = register(
    Rule(
        "KB103",
        "id-not-kebab",
        "error",
        "validate",
        "The record's id is not a kebab-case slug.",
        "Ids must be stable, URL-safe and unambiguous.",
        '{"id": "nvidia-h100-sxm"}',
        '{"id": "NVIDIA_H100"}',
    )
)
KB104 = register(
    Rule(
        "KB104",
        "type-dir-mismatch",
        "error",
        "validate",
        "The record's type does not match its directory.",
        "A benchmark filed under data/models/ is checked against the wrong schema and found by the wrong queries.",
        'data/models/x.json: {"type": "model"}',
        'data/models/x.json: {"type": "benchmark"}',
    )
)
KB105 = register(
    Rule(
        "KB105",
        "invalid-date",
        "error",
        "validate",
        "A YYYY-MM-DD value is not a real calendar date.",
        "A pattern check accepts 2026-02-30; a date that never existed cannot be when something was verified.",
        '{"updated": "2026-02-28"}',
        '{"updated": "2026-02-30"}',
    )
)
KB106 = register(
    Rule(
        "KB106",
        "future-date",
        "error",
        "validate",
        "An updated/accessed/provenance date is in the future.",
        "Nothing can have been verified or accessed on a date that has not happened yet.",
        '{"updated": "2026-10-04"}',
        '{"updated": "2099-01-01"}',
    )
)
KB107 = register(
    Rule(
        "KB107",
        "confidence-out-of-range",
        "error",
        "validate",
        "confidence is not a number in [0, 1].",
        "Confidence is a probability-like score; 85 or -0.1 means a different scale was used.",
        '{"confidence": 0.85}',
        '{"confidence": 85}',
    )
)
KB108 = register(
    Rule(
        "KB108",
        "unknown-metric",
        "error",
        "validate",
        "A benchmark's metric is not in the KB's metric registry.",
        "Every metric has a dimension, unit and direction; an unregistered name cannot be compared or checked.",
        '{"metric": "ttft_ms"}',
        '{"metric": "ttft"}',
    )
)
KB109 = register(
    Rule(
        "KB109",
        "baseline-arm-unknown",
        "error",
        "validate",
        "baseline_arm names no arm, or arms have duplicate ids.",
        "Deltas are computed against the baseline arm; it must be one of the arms.",
        '{"arms": [{"id": "baseline"}, ...], "baseline_arm": "baseline"}',
        '{"arms": [{"id": "a"}], "baseline_arm": "base"}',
    )
)
KB110 = register(
    Rule(
        "KB110",
        "schema-missing",
        "warning",
        "validate",
        "The KB has no schema for a record type; the bundled schema was used.",
        "A KB is validated against its own schemas; without one the report says which contract was applied instead.",
        "schemas/engine.schema.json present",
        "no schemas/ directory",
    )
)
KB111 = register(
    Rule(
        "KB111",
        "schema-invalid",
        "error",
        "validate",
        "A schema file does not parse or is not a valid JSON Schema.",
        "Without a usable schema no record of that type can be checked.",
        '{"type": "object", ...}',
        '{"type": "objekt"}',
    )
)

KB112 = register(
    Rule(
        "KB112",
        "unsafe-url",
        "error",
        "validate",
        "A field holds a javascript:, vbscript: or data: URL.",
        "Readers follow links from records. A javascript:, vbscript: or data: URL runs code or opens a forged document "
        "when clicked. The site links only http(s) and relative URLs and shows everything else as text; validate reports "
        "the script-capable ones so the record gets fixed (a file: URL citing a local harness file is not reported).",
        '{"url": "https://docs.vllm.ai/en/latest/"}',
        '{"url": "javascript:alert(1)"}',
    )
)
KB113 = register(
    Rule(
        "KB113",
        "schema-remote-ref",
        "error",
        "validate",
        "A schema refers ($ref) to a document outside the KB (an http(s) or file URL); validation never fetches it.",
        "Validating must not touch the network or read files the KB does not hold: a remote $ref makes the result depend on "
        "a server (and tells it you ran). Records of that type are not checked against the schema until the reference is "
        "replaced by a local one (a $defs entry or a schema under schemas/).",
        '"$ref": "#/$defs/stats"',
        '"$ref": "https://example.org/stats.schema.json"',
    )
)
KB124 = register(
    Rule(
        "KB124",
        "per-layer-list-length",
        "error",
        "validate",
        "A model's num_kv_heads_per_layer does not have one entry per layer (its length differs from num_layers).",
        "The KV-cache size of a variable-GQA model is the sum of the per-layer KV heads; a list one entry short or long "
        "silently drops or adds a layer's cache in fit and roofline, and says the record was transcribed wrongly.",
        '{"num_layers": 4, "num_kv_heads_per_layer": [4, 2, 2, 1]}',
        '{"num_layers": 4, "num_kv_heads_per_layer": [4, 2, 1]}',
    )
)
KB125 = register(
    Rule(
        "KB125",
        "base-model-differs",
        "warning",
        "validate",
        "A benchmark's base_model_id names another model than its model_id.",
        "model_id says which model ran; base_model_id says which published model a modified one (pruned, retrained, "
        "requantised) was derived from, for results whose model has no identity of its own. Both set and different is "
        "either a model_id that is wrong or a base that belongs on the model record (a fine-tune's parent), not on the "
        "benchmark. It is a warning, not an error: compare ranks by model_id alone, so no comparison goes wrong, and the "
        "pair can be true (a published fine-tune with its own model record).",
        '{"model_id": null, "base_model_id": "llama-3-1-70b"}',
        '{"model_id": "llama-2-70b", "base_model_id": "llama-3-1-70b"}',
    )
)

KB126 = register(
    Rule(
        "KB126",
        "repeat-group-dangling",
        "error",
        "validate",
        "A benchmark's repeat_group names no benchmark record, or one that is not itself in that group.",
        "A repeat group's id is the id of its first member, so a reader (and compare) can find the group from any member; "
        "an id that leads nowhere, or to a record outside the group, links nothing and hides which rows are repeats.",
        '"repeat_group": "lib-x-bs64" where benchmarks/lib-x-bs64.json has "repeat_group": "lib-x-bs64"',
        '"repeat_group": "lib-x-bs46" (no such benchmark)',
    )
)
KB127 = register(
    Rule(
        "KB127",
        "repeat-group-mismatch",
        "error",
        "validate",
        "Members of one repeat_group differ in a comparability condition (compare's class key), the metric or the unit.",
        "Repeats are measurements of one configuration: compare folds them into one row and ranks their median. Two "
        "records that differ in model, hardware, load, lengths, engine, format, scenario or unit are different setups, "
        "and folding them would hide a real difference behind a spread.",
        "two rows with batch_size 64, one with value 1485.4 and one with 1490.1, both unit tok/s",
        "one member with batch_size 64 and another with batch_size 32",
    )
)

KB201 = register(
    Rule(
        "KB201",
        "source-unresolved",
        "error",
        "validate",
        "A source id in `sources` (or an accelerator's `flops[].source_id`) has no source record.",
        "Every number is traced to a source; a citation that leads nowhere traces it to nothing.",
        '"sources": ["nv-h100-datasheet"] (data/sources/nv-h100-datasheet.json exists)',
        '"sources": ["no-such-source"]',
    )
)
KB202 = register(
    Rule(
        "KB202",
        "strict-reference-unresolved",
        "error",
        "validate",
        "A reference that must resolve (e.g. benchmark.engine_id) does not.",
        "A benchmark whose engine does not exist cannot be compared by engine at all.",
        '"engine_id": "vllm" (data/engines/vllm.json exists)',
        '"engine_id": "alt-neuron-compiler" (no such engine)',
    )
)
KB203 = register(
    Rule(
        "KB203",
        "reference-unresolved",
        "warning",
        "validate",
        "A reference field names a record that does not exist.",
        "Dangling references are counted against the KB's budget; each is a fact whose target is missing.",
        '"accelerator_ids": ["nvidia-h100-sxm"]',
        '"accelerator_ids": ["nvidia-h100"] (no such accelerator)',
    )
)
KB207 = register(
    Rule(
        "KB207",
        "basis-source-unresolved",
        "error",
        "validate",
        "An accelerator's runtime_devices_basis.source_id names no source record, or one its `sources` do not list.",
        "runtime_devices changes how many devices a layout needs (an MI250 module is two ROCm devices), so the sentence "
        "that states it must lead to a source a reader can open, and that source must be cited by the record like every "
        "other source of its facts.",
        '"sources": ["rocm-mi250-microarchitecture-089d751"], '
        '"runtime_devices_basis": {"source_id": "rocm-mi250-microarchitecture-089d751", "quote": "..."}',
        '"sources": ["amd-mi250-datasheet"], "runtime_devices_basis": {"source_id": "rocm-mi250-microarchitecture-089d751", ...}',
    )
)
KB204 = register(
    Rule(
        "KB204",
        "dangling-budget-exceeded",
        "error",
        "validate",
        "More unresolved references than the KB's budget allows.",
        "The budget ratchets: CI is green on the known debt and red on any new dangling reference. Lower it when the count drops; never raise it to go green.",
        "12 dangling references, budget 12",
        "13 dangling references, budget 12",
    )
)
KB205 = register(
    Rule(
        "KB205",
        "ambiguous-id",
        "warning",
        "validate",
        "The same bare id is used by records of two types.",
        "Bare-id references to 'any type' (gotcha.affects) and `inferkb show ID` cannot tell them apart.",
        "data/engines/vllm.json only",
        "data/engines/vllm.json and data/sources/vllm.json",
    )
)
KB206 = register(
    Rule(
        "KB206",
        "dangling-budget-slack",
        "info",
        "validate",
        "Fewer unresolved references than the budget: lower the budget.",
        "A budget above the real count lets new dangling references in unnoticed.",
        "count == budget",
        "count 8, budget 30",
    )
)
