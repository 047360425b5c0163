"""The package as a user installs it.

``make test-wheel`` builds the sdist and the wheel, installs the wheel (not editable) into a clean
venv and runs this file there with ``ALETHEIA_TEST_DIST`` set to the folder of the built files;
the checks that need the built files or a non-editable install skip in a development venv.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import aletheia_mem

pytestmark = pytest.mark.e2e

BIN = Path(sys.executable).parent
DIST = os.environ.get("ALETHEIA_TEST_DIST", "")
needs_dist = pytest.mark.skipif(not DIST, reason="run by make test-wheel on the built wheel")


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=30, check=False, env=env, cwd=BIN
    )


def _built(pattern: str) -> Path:
    (found,) = Path(DIST).glob(pattern)
    return found


def test_the_old_import_name_aletheia_is_not_importable() -> None:
    result = _run([sys.executable, "-c", "import aletheia"])
    assert result.returncode == 1
    assert "No module named 'aletheia'" in result.stderr


def test_python_m_aletheia_mem_prints_the_version() -> None:
    result = _run([sys.executable, "-m", "aletheia_mem", "--version"])
    assert result.returncode == 0, result.stderr
    assert aletheia_mem.__version__ in result.stdout


SCRIPTS = ["aletheia-mem", "aletheia", "aletheia-mcp", "aletheia-server", "aletheia-sync"]


@pytest.mark.parametrize("command", [*SCRIPTS, "aletheia-hook"])
def test_each_installed_command_prints_the_version(command: str) -> None:
    result = _run([str(BIN / command), "--version"])
    assert result.returncode == 0, result.stderr
    assert aletheia_mem.__version__ in result.stdout


def test_the_version_is_written_once_and_the_metadata_reads_it() -> None:
    assert metadata.version("aletheia-mem") == aletheia_mem.__version__


def test_the_metadata_declares_the_license_and_every_runtime_import() -> None:
    meta = metadata.metadata("aletheia-mem")
    assert meta["License-Expression"] == "MIT"
    runtime = [Requirement(text) for text in metadata.requires("aletheia-mem") or []]
    required = {req.name for req in runtime if "extra" not in str(req.marker)}
    assert {"click", "starlette", "anyio", "uvicorn", "httptools", "uvloop", "tomlkit"} <= required


@needs_dist
def test_the_package_under_test_is_the_installed_wheel_not_this_tree() -> None:
    purelib = Path(sysconfig.get_paths()["purelib"]).resolve()
    assert Path(aletheia_mem.__file__).resolve().is_relative_to(purelib)
    direct_url = metadata.distribution("aletheia-mem").read_text("direct_url.json") or "{}"
    assert not json.loads(direct_url).get("dir_info", {}).get("editable", False)


@needs_dist
def test_the_wheel_holds_the_package_and_the_license_only() -> None:
    with zipfile.ZipFile(_built("*.whl")) as wheel:
        names = wheel.namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"aletheia_mem", f"aletheia_mem-{aletheia_mem.__version__}.dist-info"}
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert "aletheia_mem/py.typed" in names


@needs_dist
def test_the_sdist_has_the_license_and_tests_and_no_benchmark_corpus_or_ci() -> None:
    with tarfile.open(_built("*.tar.gz")) as sdist:
        names = [name.split("/", 1)[1] for name in sdist.getnames() if "/" in name]
    assert "LICENSE" in names and "README.md" in names and "constraints.txt" in names
    assert any(name.startswith("tests/e2e/") for name in names)
    for excluded in ("bench/", "tests/bench/", ".ci/", "site/", ".venv"):
        assert not [name for name in names if name.startswith(excluded)], excluded
    assert not [name for name in names if "node_modules/" in name]
