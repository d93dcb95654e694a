"""Specification of ``inferkb env`` capture (:mod:`inferkb.intake.envinfo`) and of attaching it to records."""

from __future__ import annotations

import json
import platform

import pytest

from conftest import BUNDLED
from inferkb.intake import envinfo
from inferkb.intake.common import attach_env

NVIDIA_CSV = (
    "NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB, 00000000:18:00.0\nNVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB, 00000000:2A:00.0\n"
)
NVIDIA_BANNER = "| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4     |\n"


def fake_runner(outputs: dict[str, str]):
    """A runner that answers by the tool name (argv[0]) plus whether it was asked for CSV; None = tool absent."""

    def run(argv: list[str]) -> str | None:
        key = argv[0] + (" csv" if any("--format=csv" in a for a in argv) else "")
        return outputs.get(key)

    return run


def environment_schema_keys() -> set[str]:
    schema = json.loads((BUNDLED / "schemas" / "benchmark.schema.json").read_text())
    return set(schema["properties"]["environment"]["properties"])


def test_capture_without_gpu_tools_leaves_gpu_keys_null_and_says_why():
    env = envinfo.capture_env(run=fake_runner({}))
    assert env["driver"] is None and env["cuda"] is None and env["rocm"] is None and env["gpu_raw"] is None
    assert env["extra"]["gpu_count"] == 0
    assert any("nvidia-smi not found" in p for p in env["extra"]["probes"])
    assert env["python"] == platform.python_version()


def test_capture_keys_are_the_schema_environment_keys():
    env = envinfo.capture_env(run=fake_runner({}))
    assert set(env) <= environment_schema_keys()


def test_nvidia_smi_output_gives_driver_cuda_and_gpus():
    env = envinfo.capture_env(run=fake_runner({"nvidia-smi csv": NVIDIA_CSV, "nvidia-smi": NVIDIA_BANNER}))
    assert (env["driver"], env["cuda"], env["gpu_raw"]) == ("550.54.15", "12.4", "NVIDIA H100 80GB HBM3")
    assert env["extra"]["gpu_count"] == 2
    assert env["extra"]["gpus"][1]["bus_id"] == "00000000:2A:00.0"


def test_different_gpu_names_are_all_kept():
    csv_out = "NVIDIA A100-SXM4-80GB, 535.1, 81920 MiB, 0:1\nNVIDIA H100 PCIe, 535.1, 81559 MiB, 0:2\n"
    env = envinfo.capture_env(run=fake_runner({"nvidia-smi csv": csv_out}))
    assert env["gpu_raw"] == "NVIDIA A100-SXM4-80GB, NVIDIA H100 PCIe"
    assert env["cuda"] is None


def test_rocm_smi_json_gives_driver_and_gpus():
    out = json.dumps({"card0": {"Card Series": "AMD Instinct MI300X", "GFX Version": "gfx942"}, "system": {"Driver version": "6.7.0"}})
    env = envinfo.capture_env(run=fake_runner({"rocm-smi": out}))
    assert env["gpu_raw"] == "AMD Instinct MI300X" and env["driver"] == "6.7.0"


def test_real_run_tool_returns_none_for_an_absent_tool():
    assert envinfo.run_tool(["no-such-tool-inferkb-test"]) is None


def test_package_versions_come_from_metadata():
    assert envinfo.package_versions(("pytest", "no-such-package-inferkb")) == {"pytest": pytest.__version__}


def test_cpu_model_reads_model_name_line(tmp_path):
    path = tmp_path / "cpuinfo"
    path.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Example CPU @ 3.00GHz\n")
    assert envinfo.cpu_model(path) == "Example CPU @ 3.00GHz"


def test_os_name_uses_pretty_name(tmp_path):
    path = tmp_path / "os-release"
    path.write_text('NAME="Debian"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')
    assert envinfo.os_name(path).startswith("Debian GNU/Linux 12 (bookworm) (")


def test_attached_env_keeps_schema_keys_and_moves_the_rest_to_extra():
    record: dict = {}
    attach_env(
        record, {"python": "3.11.7", "gpu_raw": "X", "hostname": "node1", "extra": {"packages": {"vllm": "0.9.0"}}}, engine_package="vllm"
    )
    env = record["environment"]
    assert env["python"] == "3.11.7" and env["engine_version"] == "0.9.0"
    assert env["extra"]["hostname"] == "node1" and "hostname" not in env


def test_captured_env_attaches_to_a_schema_valid_environment():
    import jsonschema_rs

    schema = json.loads((BUNDLED / "schemas" / "benchmark.schema.json").read_text())
    validator = jsonschema_rs.validator_for(schema["properties"]["environment"])
    record: dict = {}
    attach_env(record, envinfo.capture_env(run=fake_runner({"nvidia-smi csv": NVIDIA_CSV})))
    assert validator.is_valid(record["environment"])
