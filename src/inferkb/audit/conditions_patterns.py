"""Regular expressions and vocabulary for the load-conditions extractor.

Every pattern here was written against phrasings that occur in real benchmark
prose (the inference-research sample corpus): "batch size 1", "bs=1", "B=3",
"concurrency 16", "--max-concurrency 1", "ISL/OSL 1000/1000", "128-in/2048-out",
"512 token prompt, 128 token output", llama-bench "pp512"/"tg128", "4x NVIDIA
H100", "8xMI355X", "TP=4", "vLLM commit ee59a7c", "Ollama v0.21.2",
"--warm_up 1", and the many ways a record says a condition is *not* given
("not stated", "OMITTED BY SOURCE: ...", "unrecoverable", "No batch size").

All patterns are compiled once at import. Numbers are captured as text and
parsed by :func:`parse_count` (``"128K"`` -> 128000, ``"1,024"`` -> 1024).
Most patterns also name literals that any match contains (:data:`KEYS`), so
callers can skip a search on text without them (:func:`may_match`).
"""

from __future__ import annotations

import functools
import re

from ..resolve import default_engine_names
from .conditions_lexing import (  # noqa: F401  (re-exported: callers and tests use P.<name>)
    _ANY_TEXT,
    _BOUNDARY,
    _BOUNDARY_AT,
    _DIGITS,
    _KEYED,
    _PAREN,
    _WS,
    IC,
    KEYS,
    KNUM,
    NUM,
    OMITTED_LEAD,
    _boundaries,
    _k,
    _then,
    folded,
    keyed,
    may_match,
    minimal_keys,
    parse_count,
    split_clauses,
)

# The header of an earlier audit block lists all seven conditions in one
# parenthesis; it states nothing about any of them.
AUDIT_HEADER = _k(re.compile(r"\(\d+ of 7 checked:[^)]*\)", IC), "of 7 checked:")

# Clauses about *other* measurements in the same record (sibling points, the
# comparison arm, what a fix would need) must not yield this record's value.
NOT_THIS_RUN = _k(
    re.compile(
        r"\bsibling\b(?!\s+record)|for context|same post reports|comparison figure|would need|unrecoverable|cross-check|"
        r"projection|the paper's own cross-platform",
        IC,
    ),
    "sibling|for context|same post reports|comparison figure|would need|unrecoverable|cross-check|projection",
    "the paper's own cross-platform",
)

# Negation markers: a clause holding one of these and a condition term says the
# condition is not given.
NEG_MARKER = _k(
    re.compile(
        r"\bnot\s+(?:explicitly\s+|a\s+)?(?:stated|given|specified|published|reported|disclosed|documented|"
        r"fixed|controlled|recorded|named)\b|\bnever\s+stated\b|\bunstated\b|\bunspecified\b|\bunknown\b|"
        r"\bomitted\b|\bsource\s+omits\b|\bunrecoverable\b|\bnot\s+in\s+the\s+summary\b",
        IC,
    ),
    "not|never|unstated|unspecified|unknown|omitted|omits|unrecoverable",
)

# Terms per negatable aspect. "batching" is deliberately not a batch term:
# "single user, no batching" states batch 1, it does not withhold it.
TERMS: dict[str, re.Pattern[str]] = {
    "batch": _k(
        re.compile(r"\bbatch(?:[ _-]?size)?\b(?!ing|[- ]invarian)|\bbatch/concurrency\b|\bin-flight (?:batch|count)", IC), "batch|in-flight"
    ),
    "concurrency": _k(
        re.compile(r"\bconcurren(?:cy|t)\b|\bbatch/concurrency\b|\bbatch-or-concurrency\b|in-flight", IC), "concurren|in-flight"
    ),
    "input": _k(
        re.compile(
            r"\b(?:prompt|input)(?:/output)?(?:\s+sequence)?\s+lengths?\b|\bISL\b|\bsequence lengths\b|"
            r"\bprompt\s+len\b",
            IC,
        ),
        "prompt|input|isl|sequence lengths",
    ),
    "output": _k(
        re.compile(
            r"\b(?:output|generation)(?:\s+sequence)?\s+lengths?\b|\b(?:prompt|input)/output\b|\bOSL\b|"
            r"\bsequence lengths\b",
            IC,
        ),
        "output|generation|osl|sequence lengths",
    ),
    "engine_release": _k(
        re.compile(
            r"\b(?:engine|vLLM|SGLang|llama\.cpp|Ollama|TensorRT-LLM|framework|ROCm or vLLM)\s+"
            r"(?:and\s+PyTorch\s+)?versions?\b|\bversion/commit\b|\bbuild/commit\b|\bengine:\s*not\b|"
            r"\bengine version\b",
            IC,
        ),
        "version|build/commit|engine:",
    ),
    "engine_commit": _k(
        re.compile(
            r"\b(?:vLLM|vLLM-fork|llama\.cpp|SGLang|framework|engine)\s+(?:commit|build)\b|\bconcrete\s+vLLM-fork\s+commit",
            IC,
        ),
        "commit|build",
    ),
    "warmup": _k(re.compile(r"\bwarm[- _]?ups?\b", IC), "warm"),
    "hardware": _k(
        re.compile(
            r"specific GPUs?(?: model)? not stated|GPU model not stated|no accelerator model|"
            r"unspecified hardware|^\s*-?\s*hardware:\s*unrecoverable",
            IC,
        ),
        "not stated|no accelerator model|unspecified hardware|unrecoverable",
    ),
}

# "No batch size, no TP/PP split, no concurrency" / "No prompt length, output
# length or concurrency level is given": "no" directly before a term.
NO_BEFORE = re.compile(r"\bno\s+(?:[\w/-]+\s+){0,2}?", IC)
# The same "no" ending the text before a term; and a clause that opens with "No".
NO_BEFORE_END = _k(re.compile(r"\bno\s+(?:[\w/-]+\s+){0,2}$", IC), _then("no", _WS))
NO_LEAD = _k(re.compile(r"^\W*No\b"), "no")

# --- harness defaults -------------------------------------------------------

HARNESS_DEFAULT = _k(
    re.compile(
        r"at[- ]the[- ]harness[- ]default|harness defaults? (?:for|were used)|(?:left|kept|run)\s+(?:mostly\s+)?at\s+(?:the\s+)?(?:harness\s+|tool\s+)?defaults?|"
        r"default\s+settings\s+of|\bimplied\s+\d+\s+by\b",
        IC,
    ),
    "default|implied",
)
HARNESS_NAME = re.compile(
    r"`(?:vllm bench \w+|llama-bench[^`]*|trtllm-bench[^`]*|genai-perf[^`]*)`|vllm bench \w+|"
    r"benchmarks?/benchmark_\w+\.py|benchmark_\w+\.py|llama-bench|trtllm-bench|genai-perf|"
    r"mlx_lm\.benchmark|lm-evaluation-harness|gptSessionBenchmark",
    IC,
)

# --- positive patterns: (regex, group giving the value) ---------------------

# "tokens/s", "tokens per second" after a count make it a rate, not a length.
NOT_RATE = r"(?!\s*/|\s+per\b)"

# A range right after a number ("1-64", "1 to 2560", "1..8192") is a sweep, not a value.
RANGE_AFTER = re.compile(r"^\s*(?:-|–|to|\.\.)\s*\d")
# Qualifiers before a number that make it a bound, not the run's value.
BOUND_BEFORE = re.compile(r"(?:beyond|above|exceeds?|past|up to|than|over|below|under|max(?:imum)?)\s*$", IC)
# Its words, for an ASCII text: BOUND_BEFORE finds a match in ``s`` iff
# ``s.lower().rstrip().endswith(BOUND_WORDS)``.
BOUND_WORDS = ("beyond", "above", "exceed", "exceeds", "past", "up to", "than", "over", "below", "under", "max", "maximum")

BATCH = [
    _k(re.compile(r"\bbatch[ _-]?size\s*(?:[=:]|of)?\s*" + NUM, IC), "batch size|batch_size|batch-size|batchsize"),
    _k(re.compile(r"\b(?:static\s+)?batch[ =-]?(\d+)\b(?!\s*(?:-|to)\s*\d)", IC), _then("batch|batch |batch=|batch-", _DIGITS)),
    _k(re.compile(r"(?<![\w-])(?:--)?bs\s?[= ]\s?(\d+)\b", IC), "bs"),
    _k(re.compile(r"\bB=(\d+)\b"), "b="),
]
CONCURRENCY = [
    _k(re.compile(r"\bconcurrency\s*[=:]?\s*(\d+)\b", IC), "concurrency"),
    _k(re.compile(r"--max[-_]concurrency[ =](\d+)|\bmax_concurrency\s*=\s*(\d+)", IC), "max-concurrency|max_concurrency"),
    _k(re.compile(r"\b(\d+)\s+concurrent(?:\s+(?:users?|requests?))?\b", IC), "concurrent"),
    _k(
        re.compile(r"\b(one)\s+(?:concurrent\s+)?(?:user|request)s?\s+at\s+a\s+time\b|\b(one)\s+concurrent\s+(?:user|request)\b", IC), "one"
    ),
    _k(re.compile(r"\b(single)[- ](?:stream|user|request)\b", IC), "single"),
]

INPUT = [
    _k(re.compile(r"\bISL\s*[=:]?\s*" + NUM + r"(?!\s*/\s*\d)", IC), "isl"),
    _k(re.compile(r"\bISL/OSL\s*[=:]?\s*" + NUM + r"\s*/\s*" + NUM, IC), "isl/osl"),
    _k(re.compile(r"\b(?:prompt|input)\s+len(?:gth)?(?:\s+ISL)?\s*(?:[=:]|of)?\s*" + NUM, IC), "prompt|input"),
    _k(re.compile(r"\b" + KNUM + r"\s*/\s*" + KNUM + r"\b"), "0k|1k|2k|3k|4k|5k|6k|7k|8k|9k"),
    _k(re.compile(r"\b" + NUM + r"[- ]token\s+prompt\b", IC), "prompt"),
    _k(re.compile(r"\b" + NUM + r"\s+input\s+tokens\b" + NOT_RATE, IC), "input"),
    _k(re.compile(r"\b" + NUM + r"\s+input\b(?=\s*/|,| \()", IC), "input"),
    _k(re.compile(r"\b" + NUM + r"-in\s*/\s*" + NUM + r"-out\b", IC), "-out"),
    _k(re.compile(r"--(?:sonnet-)?input[-_]len[ =](\d+)|\binput_len\s*=\s*(\d+)", IC), "input"),
    _k(re.compile(r"\bContext:\s*" + NUM + r"\s+tokens\b", IC), "context:"),
]
# Only in name/unit: "TTFT, 128K context" there describes this record's point.
INPUT_HEADLINE = [
    _k(re.compile(r"\b" + NUM + r"\s+context\b", IC), "context"),
    _k(re.compile(r"\bat\s+" + NUM + r"\s+input\b", IC), "input"),
]
INPUT_PREFILL = [_k(re.compile(r"\bpp(\d+)\b"), _then("pp", _DIGITS)), _k(re.compile(r"(?:^|\s)-p\s+(\d+)\b(?!\s*,)"), "-p")]
INPUT_NO_PROMPT = _k(re.compile(r"(?:^|\s)-p\s+0\b|\(no prompt\)", IC), "-p|(no prompt)")

OUTPUT = [
    _k(re.compile(r"(?<!ISL/)\bOSL\s*[=:]?\s*" + NUM + r"(?!\s*/\s*\d)", IC), "osl"),
    _k(re.compile(r"\bISL/OSL\s*[=:]?\s*" + NUM + r"\s*/\s*" + NUM, IC), "isl/osl"),
    _k(re.compile(r"\b(?:output|generation)\s+len(?:gth)?(?:\s+OSL)?\s*(?:[=:]|of)?\s*" + NUM, IC), "output|generation"),
    _k(re.compile(r"\b" + KNUM + r"\s*/\s*" + KNUM + r"\b"), "0k|1k|2k|3k|4k|5k|6k|7k|8k|9k"),
    _k(re.compile(r"\b" + NUM + r"[- ]token\s+output\b", IC), "output"),
    _k(re.compile(r"\b" + NUM + r"\s+(?:output|generated)\s+tokens\b" + NOT_RATE, IC), "output|generated"),
    _k(re.compile(r"\bgeneration\s+of\s+" + NUM + r"\s+tokens\b|\b" + NUM + r"\s+tokens\s+generated\b", IC), "generat"),
    _k(re.compile(r"\bOutput:\s*" + NUM + r"\s+tokens\b", IC), "output:"),
    _k(re.compile(r"\bOutput:\s*(first)\s+token\s+only\b", IC), "output:"),
    _k(re.compile(r"\b" + NUM + r"-in\s*/\s*" + NUM + r"-out\b", IC), "-out"),
    _k(re.compile(r"\b" + NUM + r"\s+input\s*/\s*" + NUM + r"\s+output\b", IC), "output"),
    _k(re.compile(r"--(?:sonnet-)?output[-_]len[ =](\d+)|\boutput_len\s*=\s*(\d+)", IC), "output"),
    _k(re.compile(r"\bcompletions\s+of\s+" + NUM + r"\s+tokens\b", IC), "completions"),
    _k(re.compile(r"\btg(\d+)\b"), _then("tg", _DIGITS)),
]
# Short flags mean lengths only for the tools that define them: mlx_lm.benchmark
# -p/-g, llama-bench -p/-n ("mpirun -n 8" is a process count).
OUTPUT_MLX = _k(re.compile(r"(?:^|\s)-g\s+(\d+)\b"), "-g")
OUTPUT_LLAMA_BENCH = _k(re.compile(r"(?:^|\s)-n\s+(\d+)\b(?!\s*,)"), "-n")
OUTPUT_RANGE = _k(re.compile(r"\boutput\s+length\s+between\s+(\d+)\s+and\s+(\d+)\s+tokens\b", IC), "output")

# Accelerator tokens that may follow a device count ("4x NVIDIA H100", "8xMI355X").
ACC = (
    r"(?:NVIDIA\s+|AMD\s+(?:Instinct\s+)?|Intel\s+|Google\s+)?"
    r"(?:H100|H200|H20\b|GB200|GB300|B200|B300|A100|A800|A10G?\b|L40S?|L4\b|V100|MI\d{2,3}X?|"
    r"RTX|RX\s?\d|Radeon|Gaudi|Arc\b|TPU|Instinct|Trainium|Inferentia|GPUs?\b)"
)
# The device words a count may be followed by.
DEVICE_WORDS = r"(?:GPUs|chips|cards|accelerators|NPUs|TPUs|devices)"
COUNT = [
    _k(re.compile(r"\b(\d{1,4})\s?[x×]\s?" + ACC), "x|×"),
    # "12-chip instance", "an 8-GPU slice"; a pod's or cluster's size ("256-chip pod") is not what one run used.
    _k(
        re.compile(r"\b(\d{1,4})-(?:GPU|chip|card|accelerator|NPU|TPU|device)s?\b(?!\s+(?:pods?|superpods?|torus|clusters?)\b)", IC),
        "-gpu|-chip|-card|-accelerator|-npu|-tpu|-device",
    ),
    _k(re.compile(r"\b(\d{1,4})\s+(?:" + ACC + r"\s+)?GPUs\b"), "gpus"),
    # "16 Trainium2 chips", "8 AMD MI300X accelerators", "4 cards": up to two capitalised words between count and device word.
    _k(
        re.compile(r"\b(\d{1,4})\s+(?:[A-Z][\w.-]*\s+){0,2}" + DEVICE_WORDS + r"\b"),
        "gpus|chips|cards|accelerators|npus|tpus|devices",
    ),
    _k(
        re.compile(r"\b(single|one)[- ](?:GPU|chip|card|accelerator|laptop)\b|\b(single|one)\s+" + ACC, IC),
        "single|one",
    ),
]
# "from 2 to 4 to 6 to 8 cards": a sweep over device counts, so no one count is the run's.
COUNT_SWEEP = _k(
    re.compile(r"\bfrom\s+(\d{1,4})\s+to\s+(\d{1,4})((?:\s+to\s+\d{1,4})*)\s+(?:[A-Z][\w.-]*\s+){0,2}" + DEVICE_WORDS + r"\b", IC),
    "from",
)
# "4x Test GPU 1000": a count before any capitalised name, counted only when the words after it name the
# record's own accelerator (conditions_text.device_count checks them against the accelerator's tokens).
COUNT_NAMED = _k(re.compile(r"(?<![\w.])(\d{1,4})\s*[x\u00d7]\s*(?=[A-Z])"), "x|\u00d7")
TP_SIZE = _k(
    re.compile(r"\bTP\s?=?\s?(\d+)\b|tensor[- ]parallel(?:[- ]size)?\s*=?\s*(\d+)|\btp_size\s+(\d+)|(?:^|\s)-tp\s+(\d+)|\btp(\d+)\b", IC),
    _then("tp", _WS + "=" + _DIGITS),
    "tp_size|-tp|tensor-parallel|tensor parallel",
)
OTHER_PARALLEL = _k(
    re.compile(r"\b(?:DP|EP|DEP\d*)\b|data parallel|expert parallel|replica", IC), "dp|ep|data parallel|expert parallel|replica"
)

MODEL_IN_NAME = re.compile(
    r"\b(?:Meta-)?(?:Llama|LLaMA|Qwen|Mistral|Mixtral|DeepSeek|Gemma|Phi|Vicuna|MPT|OPT|BLOOM|gpt-oss)"
    r"[\w.\- ]{0,24}?\d+(?:\.\d+)?[BMT]\b"
)

# Version right after the engine's name: "vLLM 0.22.0", "Ollama v0.21.2",
# "TensorRT-LLM v0.5.0". A trailing "+" ("SGLang v0.4+") is a lower bound.
VERSION_AFTER = r"(?:\s+|-|/)(?:release\s+)?(v?\d+\.\d+(?:\.\d+)*(?:[a-z]+\d*)?(?:\.dev\d+)?(?:\+[0-9a-z.]+)?)(?![\w+])"
COMMIT_AFTER = r"[^.;]{0,30}?\b(?:commit|build)\s+((?=[0-9a-f]*\d)[0-9a-f]{7,40}|b\d{3,})\b"
# A branch instead of a release or commit: "SGLang branch deepseek-v3", "vLLM's main branch", "TensorRT-LLM feat/1.2-mlpinf".
# It is what the source states was run (recorded as "branch <name>"), though a branch is not pinned to one commit.
BRANCH_NAMED = r"[^.;]{0,30}?\bbranch\s+[`'\"]?([A-Za-z0-9][\w./-]*[\w/])[`'\"]?"
BRANCH_BEFORE = r"[^.;]{0,30}?\b(?:the\s+)?[`'\"]?([A-Za-z][\w./-]*[\w/])[`'\"]?\s+branch\b"
BRANCH_PATH = r"(?:\s+|@)((?:feat|feature|fix|release|dev|devel|exp|wip|hotfix)/[\w./-]*\w)"
RELEASE_TAG = r"\s+release\s+(b\d{3,})\b"
NIGHTLY = r"[\s\w/.:-]{0,25}?(nightly-[0-9a-f]{5,})\b(?:\s*\(revision\s+(v[\w.+]+)\))?"
HASH_SUFFIX = r"-([0-9a-f]{7,12})\b"
# llama.cpp prints its own build line: "Build: 66906cd8 (b5997)", "build hash ff5ef82".
LLAMACPP_BUILD = _k(
    re.compile(r"\bBuild:\s*([0-9a-f]{7,}(?:\s\(b\d+\))?)|\bbuild hash\s+([0-9a-f]{7,})|\bbuild\s+((?=[0-9a-f]*\d)[0-9a-f]{7,40})\b", IC),
    "build",
)

WARMUP = [
    _k(re.compile(r"--warm_?up[ =](\d+)", IC), "--warmup|--warm_up"),
    _k(re.compile(r"\bwarm-?up\s+(?:of\s+)?(\d+)\s+(?:iter\w*|requests?|runs?|steps?)\b", IC), "warmup|warm-up"),
    _k(re.compile(r"\b(\d+)\s+warm-?up\s+(?:iter\w*|requests?|runs?|steps?)\b", IC), "warmup|warm-up"),
    # "no warmup" states none; "no warmup phase is stated" withholds it.
    _k(
        re.compile(r"\b(no)\s+warm-?up\b(?!\s+(?:\w+\s+){0,2}(?:is\s+|was\s+)?(?:stated|given|specified|reported|published))", IC),
        "warmup|warm-up",
    ),
]

PREFILL_RECORD = _k(re.compile(r"prefill|prompt processing|\bpp\d+\b", IC), "prefill|prompt processing", _then("pp", _DIGITS))

# What would recover each condition, named in every absent finding.
RECOVER = {
    "model": "the model name or checkpoint id from the source (served-model name, HF repo id)",
    "hardware": "the accelerator model and device count (nvidia-smi name, system description, 'Nx <GPU>' or TP/PP layout)",
    "batch_or_concurrency": "the harness command line (--batch-size / --max-concurrency) or the achieved in-flight batch in the server log",
    "input_length": "the run's ISL: the harness command line (--input-len) or the dataset's input-length profile",
    "output_length": "the run's OSL: the harness command line (--output-len / max_tokens)",
    "engine_version": "the engine release or commit (pip freeze, container digest, the engine's --version output)",
    "warmup": "the log's warmup phase or the harness command line (--warmup / --warm_up N)",
}

# condition_gaps keys (bundled schema) whose recorded reasons are carried into an absent reason.
GAP_KEYS = {
    "batch_or_concurrency": ("batch_size", "concurrency"),
    "input_length": ("input_tokens",),
    "output_length": ("output_tokens",),
    "engine_version": ("engine_version",),
    "warmup": ("warmup",),
    "hardware": ("accelerator_count", "accelerator_ids"),
    "model": ("model",),
}


@functools.cache
def engine_patterns(names: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """``((kind, pattern), ...)`` for a release or commit named right after one of an engine's ``names``.

    The names come from the KB's engine records (:func:`inferkb.resolve.engine_names`),
    never from a list in code; every pattern starts with one of them, so they are
    its pre-filter literals. Compiled once per set of names.
    """
    alias = "|".join(re.escape(n) for n in names)
    keys = "|".join(dict.fromkeys(n.lower() for n in names))
    return tuple(
        (kind, _k(re.compile(rf"(?:{alias}){tail}"), keys))
        for kind, tail in (
            ("release", RELEASE_TAG),
            ("commit", COMMIT_AFTER),
            ("release", NIGHTLY),
            ("release", VERSION_AFTER),
            ("commit", HASH_SUFFIX),
            ("branch", BRANCH_PATH),
            ("branch", BRANCH_NAMED),
            ("branch", BRANCH_BEFORE),
        )
    )


# The patterns for the bundled KB's engines: what a record assessed without its KB is read with.
ENGINE_PATTERNS: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    eid: list(engine_patterns(names)) for eid, names in default_engine_names().items()
}
