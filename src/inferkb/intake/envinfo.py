"""``inferkb env``: capture the local environment a benchmark ran in, as a dict for ``intake --env``.

:func:`capture_env` returns the schema's ``environment`` keys (benchmark
schema, ``environment`` object): ``driver``, ``cuda``, ``rocm``, ``torch``,
``python``, ``host_cpu``, ``os``, ``gpu_raw``, ``engine_version`` (always null
here: which engine a run used is the importer's business) and ``extra`` with
``packages`` (versions of torch, vllm, sglang, tensorrt_llm, llama_cpp_python,
... read with :mod:`importlib.metadata`, never by importing them), ``gpus``
(one dict per device as ``nvidia-smi``/``rocm-smi`` printed it), ``gpu_count``
and ``probes`` (what was run and what happened, e.g. "nvidia-smi not found").

Nothing is guessed: a tool that is absent or fails leaves its keys null and a
note in ``probes``. Every external command runs with a timeout.
"""

from __future__ import annotations

import csv
import io
import json
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

PACKAGES = (
    "torch",
    "vllm",
    "sglang",
    "tensorrt_llm",
    "tensorrt-llm",
    "llama_cpp_python",
    "llama-cpp-python",
    "transformers",
    "triton",
    "flashinfer-python",
    "xformers",
    "mlc-llm",
    "exllamav2",
    "lmdeploy",
)
TIMEOUT_S = 10.0

Runner = Callable[[list[str]], "str | None"]


def run_tool(argv: list[str], timeout: float = TIMEOUT_S) -> str | None:
    """Run ``argv`` and return stdout, or ``None`` when the tool is missing, fails or times out."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """``{distribution name: version}`` for the installed ones among ``names`` (no module is imported)."""
    out: dict[str, str] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def nvidia(run: Runner) -> tuple[dict[str, Any], str]:
    """Driver, CUDA version and GPUs from ``nvidia-smi``; ``({}, note)`` when absent."""
    csv_out = run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,pci.bus_id", "--format=csv,noheader"])
    if csv_out is None:
        return {}, "nvidia-smi not found or failed"
    gpus = []
    for row in csv.reader(io.StringIO(csv_out)):
        if len(row) >= 2:
            gpus.append(
                {
                    "name": row[0].strip(),
                    "driver": row[1].strip(),
                    "memory": row[2].strip() if len(row) > 2 else None,
                    "bus_id": row[3].strip() if len(row) > 3 else None,
                }
            )
    info: dict[str, Any] = {"gpus": gpus, "driver": gpus[0]["driver"] if gpus else None}
    banner = run(["nvidia-smi"]) or ""
    m = re.search(r"CUDA Version:\s*([\d.]+)", banner)
    info["cuda"] = m.group(1) if m else None
    return info, f"nvidia-smi: {len(gpus)} GPU(s)"


def rocm(run: Runner) -> tuple[dict[str, Any], str]:
    """Driver, ROCm version and GPUs from ``rocm-smi --json`` and ``/opt/rocm/.info/version``; ``({}, note)`` when absent."""
    out = run(["rocm-smi", "--showproductname", "--showdriverversion", "--json"])
    if out is None:
        return {}, "rocm-smi not found or failed"
    try:
        doc = json.loads(out)
    except ValueError:
        return {}, "rocm-smi printed no JSON"
    gpus, driver = [], None
    for key, card in doc.items():
        if not isinstance(card, dict):
            continue
        if key.lower().startswith("card"):
            name = card.get("Card Series") or card.get("Card series") or card.get("Card Model")
            gpus.append({"name": name, "card": key, "gfx": card.get("GFX Version")})
        driver = driver or card.get("Driver version")
    version_file = Path("/opt/rocm/.info/version")
    rocm_version = version_file.read_text().strip() if version_file.is_file() else None
    return {"gpus": gpus, "driver": driver, "rocm": rocm_version}, f"rocm-smi: {len(gpus)} GPU(s)"


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The first ``model name`` (x86) / ``Model`` (some ARM) line of ``/proc/cpuinfo``, else ``platform.processor()``."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "Hardware") and value.strip():
            return value.strip()
    return platform.processor() or None


def os_name(os_release: Path = Path("/etc/os-release")) -> str:
    """``PRETTY_NAME`` from os-release plus the kernel, e.g. ``"Ubuntu 22.04.4 LTS (Linux 6.8.0)"``."""
    pretty = None
    try:
        for line in os_release.read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                pretty = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    kernel = f"{platform.system()} {platform.release()}".strip()
    return f"{pretty} ({kernel})" if pretty else kernel


def capture_env(run: Runner = run_tool) -> dict[str, Any]:
    """Capture this machine's environment; see the module docstring for the keys. Never raises for absent tools.

    ``run`` executes a command and returns its stdout or ``None`` (injectable for tests).
    """
    probes: list[str] = []
    gpu: dict[str, Any] = {}
    for probe in (nvidia, rocm):
        info, note = probe(run)
        probes.append(note)
        if info and not gpu:
            gpu = info
    packages = package_versions()
    names = [g.get("name") for g in gpu.get("gpus", []) if g.get("name")]
    gpu_raw = None
    if names:
        gpu_raw = names[0] if len(set(names)) == 1 else ", ".join(names)
    extra: dict[str, Any] = {
        "packages": packages,
        "gpus": gpu.get("gpus", []),
        "gpu_count": len(gpu.get("gpus", [])),
        "probes": probes,
        "python_executable": sys.executable,
    }
    return {
        "engine_version": None,
        "driver": gpu.get("driver"),
        "cuda": gpu.get("cuda"),
        "rocm": gpu.get("rocm"),
        "torch": packages.get("torch"),
        "python": platform.python_version(),
        "host_cpu": cpu_model(),
        "os": os_name(),
        "gpu_raw": gpu_raw,
        "extra": extra,
    }
