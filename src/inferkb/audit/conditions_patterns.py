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
"""

from __future__ import annotations

import re

IC = re.IGNORECASE

# A token count as written: "512", "1,024", "128K", "1k", "23k", "2.5K".
NUM = r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?\s?[kK]\b|\d+)"


# "1k/1k": both sides carry the k, so "2.1/3" or a date never reads as lengths.
KNUM = r"(\d+(?:\.\d+)?[kK])"


def parse_count(text: str) -> int:
    """Parse a written count: ``"1,024"`` -> 1024, ``"128K"``/``"128k"`` -> 128000.

    ``K`` is read as 1000 (the prose uses "128K" for both 128,000 and 131,072;
    callers comparing lengths should allow a few percent). Raises ``ValueError``
    on text with no number.
    """
    t = text.strip().replace(",", "").replace(" ", "")
    if t[-1:] in ("k", "K"):
        return int(round(float(t[:-1]) * 1000))
    return int(float(t))


# Sentence/clause boundaries. Semicolons split too: records write "Prompt
# length 2000 tokens; output length NOT stated" in one sentence.
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'`-])|;\s+|\n+")
OMITTED_LEAD = re.compile(r"^\W*omitted\s+by\s+(?:the\s+)?source\s*:", IC)


def split_clauses(text: str) -> list[tuple[str, bool]]:
    """Split prose into clauses, each an exact substring of ``text``.

    Returns ``[(clause, inherited_negation)]``. Boundaries inside parentheses
    are ignored ("TP size (never stated; the model ...)" stays one clause). A
    sentence opened by "OMITTED BY SOURCE:" lists its items separated by
    semicolons, so every later clause of that sentence inherits the negation.
    """
    out: list[tuple[str, bool]] = []
    start, depth, omitted = 0, 0, False
    bounds = {m.start(): m for m in _BOUNDARY.finditer(text)}
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        m = bounds.get(i)
        if m and (depth == 0 or "\n" in m.group(0)):
            piece = text[start:i]
            omitted = omitted or bool(OMITTED_LEAD.match(piece))
            if piece.strip():
                out.append((piece, omitted))
            if ";" not in m.group(0):
                omitted = False
            if "\n" in m.group(0):
                depth = 0
            start = i = m.end()
            continue
        i += 1
    piece = text[start:]
    if piece.strip():
        out.append((piece, omitted or bool(OMITTED_LEAD.match(piece))))
    return out


# The header of an earlier audit block lists all seven conditions in one
# parenthesis; it states nothing about any of them.
AUDIT_HEADER = re.compile(r"\(\d+ of 7 checked:[^)]*\)", IC)

# Clauses about *other* measurements in the same record (sibling points, the
# comparison arm, what a fix would need) must not yield this record's value.
NOT_THIS_RUN = re.compile(
    r"\bsibling\b(?!\s+record)|for context|same post reports|comparison figure|would need|unrecoverable|cross-check|"
    r"projection|the paper's own cross-platform",
    IC,
)

# Negation markers: a clause holding one of these and a condition term says the
# condition is not given.
NEG_MARKER = re.compile(
    r"\bnot\s+(?:explicitly\s+|a\s+)?(?:stated|given|specified|published|reported|disclosed|documented|"
    r"fixed|controlled|recorded|named)\b|\bnever\s+stated\b|\bunstated\b|\bunspecified\b|\bunknown\b|"
    r"\bomitted\b|\bsource\s+omits\b|\bunrecoverable\b|\bnot\s+in\s+the\s+summary\b",
    IC,
)

# Terms per negatable aspect. "batching" is deliberately not a batch term:
# "single user, no batching" states batch 1, it does not withhold it.
TERMS: dict[str, re.Pattern[str]] = {
    "batch": re.compile(r"\bbatch(?:[ _-]?size)?\b(?!ing|[- ]invarian)|\bbatch/concurrency\b|\bin-flight (?:batch|count)", IC),
    "concurrency": re.compile(r"\bconcurren(?:cy|t)\b|\bbatch/concurrency\b|\bbatch-or-concurrency\b|in-flight", IC),
    "input": re.compile(
        r"\b(?:prompt|input)(?:/output)?(?:\s+sequence)?\s+lengths?\b|\bISL\b|\bsequence lengths\b|"
        r"\bprompt\s+len\b",
        IC,
    ),
    "output": re.compile(
        r"\b(?:output|generation)(?:\s+sequence)?\s+lengths?\b|\b(?:prompt|input)/output\b|\bOSL\b|"
        r"\bsequence lengths\b",
        IC,
    ),
    "engine_release": re.compile(
        r"\b(?:engine|vLLM|SGLang|llama\.cpp|Ollama|TensorRT-LLM|framework|ROCm or vLLM)\s+"
        r"(?:and\s+PyTorch\s+)?versions?\b|\bversion/commit\b|\bbuild/commit\b|\bengine:\s*not\b|"
        r"\bengine version\b",
        IC,
    ),
    "engine_commit": re.compile(
        r"\b(?:vLLM|vLLM-fork|llama\.cpp|SGLang|framework|engine)\s+(?:commit|build)\b|\bconcrete\s+vLLM-fork\s+commit",
        IC,
    ),
    "warmup": re.compile(r"\bwarm[- _]?ups?\b", IC),
    "hardware": re.compile(
        r"specific GPUs?(?: model)? not stated|GPU model not stated|no accelerator model|"
        r"unspecified hardware|^\s*-?\s*hardware:\s*unrecoverable",
        IC,
    ),
}

# "No batch size, no TP/PP split, no concurrency" / "No prompt length, output
# length or concurrency level is given": "no" directly before a term.
NO_BEFORE = re.compile(r"\bno\s+(?:[\w/-]+\s+){0,2}?", IC)

# --- harness defaults -------------------------------------------------------

HARNESS_DEFAULT = re.compile(
    r"at[- ]the[- ]harness[- ]default|harness defaults? (?:for|were used)|(?:left|kept|run)\s+(?:mostly\s+)?at\s+(?:the\s+)?(?:harness\s+|tool\s+)?defaults?|"
    r"default\s+settings\s+of|\bimplied\s+\d+\s+by\b",
    IC,
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

BATCH = [
    re.compile(r"\bbatch[ _-]?size\s*(?:[=:]|of)?\s*" + NUM, IC),
    re.compile(r"\b(?:static\s+)?batch[ =-]?(\d+)\b(?!\s*(?:-|to)\s*\d)", IC),
    re.compile(r"(?<![\w-])(?:--)?bs\s?[= ]\s?(\d+)\b", IC),
    re.compile(r"\bB=(\d+)\b"),
]
CONCURRENCY = [
    re.compile(r"\bconcurrency\s*[=:]?\s*(\d+)\b", IC),
    re.compile(r"--max[-_]concurrency[ =](\d+)|\bmax_concurrency\s*=\s*(\d+)", IC),
    re.compile(r"\b(\d+)\s+concurrent(?:\s+(?:users?|requests?))?\b", IC),
    re.compile(r"\b(one)\s+(?:concurrent\s+)?(?:user|request)s?\s+at\s+a\s+time\b|\b(one)\s+concurrent\s+(?:user|request)\b", IC),
    re.compile(r"\b(single)[- ](?:stream|user|request)\b", IC),
]

INPUT = [
    re.compile(r"\bISL\s*[=:]?\s*" + NUM + r"(?!\s*/\s*\d)", IC),
    re.compile(r"\bISL/OSL\s*[=:]?\s*" + NUM + r"\s*/\s*" + NUM, IC),
    re.compile(r"\b(?:prompt|input)\s+len(?:gth)?(?:\s+ISL)?\s*(?:[=:]|of)?\s*" + NUM, IC),
    re.compile(r"\b" + KNUM + r"\s*/\s*" + KNUM + r"\b"),
    re.compile(r"\b" + NUM + r"[- ]token\s+prompt\b", IC),
    re.compile(r"\b" + NUM + r"\s+input\s+tokens\b" + NOT_RATE, IC),
    re.compile(r"\b" + NUM + r"\s+input\b(?=\s*/|,| \()", IC),
    re.compile(r"\b" + NUM + r"-in\s*/\s*" + NUM + r"-out\b", IC),
    re.compile(r"--(?:sonnet-)?input[-_]len[ =](\d+)|\binput_len\s*=\s*(\d+)", IC),
    re.compile(r"\bContext:\s*" + NUM + r"\s+tokens\b", IC),
]
# Only in name/unit: "TTFT, 128K context" there describes this record's point.
INPUT_HEADLINE = [re.compile(r"\b" + NUM + r"\s+context\b", IC), re.compile(r"\bat\s+" + NUM + r"\s+input\b", IC)]
INPUT_PREFILL = [re.compile(r"\bpp(\d+)\b"), re.compile(r"(?:^|\s)-p\s+(\d+)\b(?!\s*,)")]
INPUT_NO_PROMPT = re.compile(r"(?:^|\s)-p\s+0\b|\(no prompt\)", IC)

OUTPUT = [
    re.compile(r"(?<!ISL/)\bOSL\s*[=:]?\s*" + NUM + r"(?!\s*/\s*\d)", IC),
    re.compile(r"\bISL/OSL\s*[=:]?\s*" + NUM + r"\s*/\s*" + NUM, IC),
    re.compile(r"\b(?:output|generation)\s+len(?:gth)?(?:\s+OSL)?\s*(?:[=:]|of)?\s*" + NUM, IC),
    re.compile(r"\b" + KNUM + r"\s*/\s*" + KNUM + r"\b"),
    re.compile(r"\b" + NUM + r"[- ]token\s+output\b", IC),
    re.compile(r"\b" + NUM + r"\s+(?:output|generated)\s+tokens\b" + NOT_RATE, IC),
    re.compile(r"\bgeneration\s+of\s+" + NUM + r"\s+tokens\b|\b" + NUM + r"\s+tokens\s+generated\b", IC),
    re.compile(r"\bOutput:\s*" + NUM + r"\s+tokens\b", IC),
    re.compile(r"\bOutput:\s*(first)\s+token\s+only\b", IC),
    re.compile(r"\b" + NUM + r"-in\s*/\s*" + NUM + r"-out\b", IC),
    re.compile(r"\b" + NUM + r"\s+input\s*/\s*" + NUM + r"\s+output\b", IC),
    re.compile(r"--(?:sonnet-)?output[-_]len[ =](\d+)|\boutput_len\s*=\s*(\d+)", IC),
    re.compile(r"\bcompletions\s+of\s+" + NUM + r"\s+tokens\b", IC),
    re.compile(r"\btg(\d+)\b"),
]
# Short flags mean lengths only for the tools that define them: mlx_lm.benchmark
# -p/-g, llama-bench -p/-n ("mpirun -n 8" is a process count).
OUTPUT_MLX = re.compile(r"(?:^|\s)-g\s+(\d+)\b")
OUTPUT_LLAMA_BENCH = re.compile(r"(?:^|\s)-n\s+(\d+)\b(?!\s*,)")
OUTPUT_RANGE = re.compile(r"\boutput\s+length\s+between\s+(\d+)\s+and\s+(\d+)\s+tokens\b", IC)

# Accelerator tokens that may follow a device count ("4x NVIDIA H100", "8xMI355X").
ACC = (
    r"(?:NVIDIA\s+|AMD\s+(?:Instinct\s+)?|Intel\s+|Google\s+)?"
    r"(?:H100|H200|H20\b|GB200|GB300|B200|B300|A100|A800|A10G?\b|L40S?|L4\b|V100|MI\d{2,3}X?|"
    r"RTX|RX\s?\d|Radeon|Gaudi|Arc\b|TPU|Instinct|Trainium|Inferentia|GPUs?\b)"
)
COUNT = [
    re.compile(r"\b(\d{1,4})\s?[x×]\s?" + ACC),
    re.compile(r"\b(\d{1,4})-GPU\b", IC),
    re.compile(r"\b(\d{1,4})\s+(?:" + ACC + r"\s+)?GPUs\b"),
    re.compile(r"\b(single|one)[- ]GPU\b|\b(single)\s+" + ACC, IC),
]
TP_SIZE = re.compile(
    r"\bTP\s?=?\s?(\d+)\b|tensor[- ]parallel(?:[- ]size)?\s*=?\s*(\d+)|\btp_size\s+(\d+)|(?:^|\s)-tp\s+(\d+)|\btp(\d+)\b", IC
)
OTHER_PARALLEL = re.compile(r"\b(?:DP|EP|DEP\d*)\b|data parallel|expert parallel|replica", IC)

MODEL_IN_NAME = re.compile(
    r"\b(?:Meta-)?(?:Llama|LLaMA|Qwen|Mistral|Mixtral|DeepSeek|Gemma|Phi|Vicuna|MPT|OPT|BLOOM|gpt-oss)"
    r"[\w.\- ]{0,24}?\d+(?:\.\d+)?[BMT]\b"
)

# Engine ids -> how the prose names them.
ENGINE_ALIASES: dict[str, str] = {
    "vllm": r"vLLM|vllm",
    "sglang": r"SGLang",
    "tensorrt-llm": r"TensorRT-LLM|TRT-LLM",
    "llama-cpp": r"llama\.cpp|llama-server|llama-bench",
    "ollama": r"Ollama",
    "mlx-lm": r"mlx-lm|MLX-LM",
    "lm-eval-harness": r"lm-evaluation-harness|lm-eval",
    "fastertransformer": r"FasterTransformer",
}
# Version right after the engine's name: "vLLM 0.22.0", "Ollama v0.21.2",
# "TensorRT-LLM v0.5.0". A trailing "+" ("SGLang v0.4+") is a lower bound.
VERSION_AFTER = r"(?:\s+|-|/)(?:release\s+)?(v?\d+\.\d+(?:\.\d+)*(?:[a-z]+\d*)?(?:\.dev\d+)?(?:\+[0-9a-z.]+)?)(?![\w+])"
COMMIT_AFTER = r"[^.;]{0,30}?\bcommit\s+([0-9a-f]{7,40}|b\d{3,})\b"
RELEASE_TAG = r"\s+release\s+(b\d{3,})\b"
NIGHTLY = r"[\s\w/.:-]{0,25}?(nightly-[0-9a-f]{5,})\b(?:\s*\(revision\s+(v[\w.+]+)\))?"
HASH_SUFFIX = r"-([0-9a-f]{7,12})\b"
# llama.cpp prints its own build line: "Build: 66906cd8 (b5997)", "build hash ff5ef82".
LLAMACPP_BUILD = re.compile(r"\bBuild:\s*([0-9a-f]{7,}(?:\s\(b\d+\))?)|\bbuild hash\s+([0-9a-f]{7,})", IC)

WARMUP = [
    re.compile(r"--warm_?up[ =](\d+)", IC),
    re.compile(r"\bwarm-?up\s+(?:of\s+)?(\d+)\s+(?:iter\w*|requests?|runs?|steps?)\b", IC),
    re.compile(r"\b(\d+)\s+warm-?up\s+(?:iter\w*|requests?|runs?|steps?)\b", IC),
    # "no warmup" states none; "no warmup phase is stated" withholds it.
    re.compile(r"\b(no)\s+warm-?up\b(?!\s+(?:\w+\s+){0,2}(?:is\s+|was\s+)?(?:stated|given|specified|reported|published))", IC),
]

PREFILL_RECORD = re.compile(r"prefill|prompt processing|\bpp\d+\b", IC)

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
    "hardware": ("accelerator_count",),
    "model": ("model",),
}

# Per engine id, (kind, pattern) for a release or commit named right after the engine.
ENGINE_PATTERNS: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    eid: [
        ("release", re.compile(rf"(?:{alias}){RELEASE_TAG}")),
        ("commit", re.compile(rf"(?:{alias}){COMMIT_AFTER}")),
        ("release", re.compile(rf"(?:{alias}){NIGHTLY}")),
        ("release", re.compile(rf"(?:{alias}){VERSION_AFTER}")),
        ("commit", re.compile(rf"(?:{alias}){HASH_SUFFIX}")),
    ]
    for eid, alias in ENGINE_ALIASES.items()
}
