"""fit and roofline on an accelerator the runtime sees as several devices: TP = count x runtime_devices.

The bundled AMD Instinct MI250 record states runtime_devices 2 (one OAM module is two GCDs, each one ROCm device) and
vram_gb 128 for the module. llama-2-70b has 64 attention heads and 8 KV heads, so 3 modules are TP 6 (divides
neither), 4 modules are TP 8 (divides both), and 8 modules are TP 16: each GCD holds ceil(8 / 16) = 1 KV head, i.e. 1/8
of the cache, and a module (two GCDs) 2/8.
"""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

import inferkb
from inferkb.analysis.fit import fit, runtime_devices
from inferkb.analysis.roofline import roofline

MI250 = "amd-instinct-mi250"
MODEL = "llama-2-70b"


@pytest.fixture(scope="module")
def kb():
    kb = inferkb.open()
    if kb.get(f"accelerators/{MI250}").data.get("runtime_devices") != 2:
        pytest.skip("the bundled MI250 record no longer states runtime_devices 2")
    return kb


def test_three_mi250_modules_are_tp6_and_the_warning_says_so(kb):
    res = fit(kb, MODEL, MI250, count=3, fmt="fp16", context=4096)
    assert (res.count, res.tp, res.runtime_devices) == (3, 6, 2)
    assert res.warnings[0].startswith("TP 6 does not divide llama-2-70b's 64 attention heads")
    assert "6 runtime devices (3 accelerators x runtime_devices 2)" in res.warnings[0]
    assert any(w.startswith("TP 6 neither divides nor is a multiple of llama-2-70b's 8 KV heads") for w in res.warnings)


def test_four_mi250_modules_are_tp8_with_no_head_warning(kb):
    res = fit(kb, MODEL, MI250, count=4, fmt="fp16", context=4096)
    assert res.tp == 8 and res.warnings == []
    # the same count on a one-device accelerator stays TP 4 (64 and 8 heads divide by 4: no warning either)
    assert fit(kb, MODEL, "nvidia-h100-sxm", count=4, fmt="fp16", context=4096).tp == 4


def test_memory_stays_per_module_and_the_kv_split_follows_the_runtime_devices(kb):
    res = fit(kb, MODEL, MI250, count=8, fmt="fp16", context=4096, batch=2)
    assert res.tp == 16
    assert res.memory_per_device == 128e9  # the module's vram_gb, not one GCD's 64 GB
    assert res.weights_per_device == pytest.approx(70e9 * 2 / 8)  # a module's share: two of 16 ranks
    assert res.kv_per_device == pytest.approx(2 * res.kv_bytes_per_sequence * 2 / 8)  # 2 GCDs x 1 of 8 KV heads each
    assert "TP = count 8 x runtime_devices 2" in " ".join(res.assumptions)


def test_roofline_reads_kv_copies_and_warns_at_the_runtime_device_degree(kb):
    res = roofline(kb, MODEL, MI250, count=3, fmt="fp16", batch=4, context=2048)
    assert res.runtime_devices == 2
    assert res.warnings[0].startswith("TP 6 does not divide")
    # 6 ranks each hold ceil(8 / 6) = 2 of 8 KV heads: together 1.5 copies of the cache are read per step
    assert "read 1.5x across the 6 runtime devices (3 x 2 per amd-instinct-mi250)" in " ".join(res.assumptions)
    assert "GB per accelerator" in res.memory_note


def test_runtime_devices_reads_only_a_positive_integer():
    def acc(value):
        return SimpleNamespace(data={"runtime_devices": value})

    assert [runtime_devices(acc(v)) for v in (2, 1, 0, -2, "2", True, None, 2.0)] == [2, 1, 1, 1, 1, 1, 1, 1]


def test_help_names_runtime_devices():
    for cmd in ("fit", "roofline"):
        proc = subprocess.run([sys.executable, "-m", "inferkb", cmd, "--help"], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and "runtime_devices" in " ".join(proc.stdout.split()), proc.stdout


def test_fit_on_mi250_with_a_bad_count_exits_2_without_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "inferkb", "fit", "--model", MODEL, "--accelerator", MI250, "--count", "0", "--weights", "fp16"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "count" in proc.stderr
