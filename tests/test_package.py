"""The package as pip installs it: pyproject.toml's commands, package data and pins, without a network."""

import glob
import importlib
import os
import shutil
import subprocess
import sys
import tomllib

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMANDS = {"gomoku-train", "gomoku-play", "gomoku-arena", "gomoku-bench", "pbrain-gomokuzero"}


def project() -> dict:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


@pytest.mark.timeout(60)
def test_every_command_names_a_function_that_imports():
    scripts = project()["project"]["scripts"]
    assert set(scripts) == COMMANDS
    for name, target in scripts.items():
        module, _, function = target.partition(":")
        assert callable(getattr(importlib.import_module(module), function)), name


@pytest.mark.timeout(30)
def test_the_packages_and_their_data_are_found():
    config = project()
    setuptools = config["tool"]["setuptools"]
    assert setuptools["packages"]["find"]["include"] == ["gomoku", "gomoku.*"]
    shipped = {os.path.relpath(path, os.path.join(ROOT, "gomoku")).replace(os.sep, "/")
               for pattern in setuptools["package-data"]["gomoku"]
               for path in glob.glob(os.path.join(ROOT, "gomoku", pattern))}
    assert {"data/balanced_15x15_5.txt", "data/probe_rapfi_15x15_5_freestyle.jsonl",
            "data/probe_rapfi_15x15_5_renju.jsonl"} <= shipped
    assert config["project"]["requires-python"] == ">=3.11"
    # the version is stated once, in the package
    assert config["project"]["dynamic"] == ["version"]
    assert setuptools["dynamic"]["version"] == {"attr": "gomoku.__version__"}


@pytest.mark.timeout(30)
def test_requirements_install_the_project_and_pyproject_holds_the_pins():
    with open(os.path.join(ROOT, "requirements.txt")) as f:
        lines = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    assert lines == ["-e .[cpu]"]
    pins = project()["project"]["dependencies"]
    assert {pin.split("==")[0] for pin in pins} == {"numpy", "pygame", "tqdm", "matplotlib", "numba", "tensorboardX"}
    assert all("==" in pin for pin in pins)


@pytest.mark.timeout(30)
def test_paddle_is_one_build_or_the_other_at_one_version():
    # The CPU and CUDA builds both install the module `paddle`: the GPU file must not pull the CPU
    # build in through the project's own dependencies, and both must be the same Paddle version.
    extras = project()["project"]["optional-dependencies"]
    assert [pin.split("==")[0] for pin in extras["cpu"]] == ["paddlepaddle"]
    assert [pin.split("==")[0] for pin in extras["gpu"]] == ["paddlepaddle-gpu"]
    assert extras["cpu"][0].split("==")[1] == extras["gpu"][0].split("==")[1]
    with open(os.path.join(ROOT, "requirements-gpu.txt")) as f:
        lines = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    assert lines[-1] == "-e .[gpu]" and lines[0].startswith("--extra-index-url https://")
    assert not any("paddlepaddle" in line for line in lines if not line.startswith("--"))


@pytest.mark.timeout(60)
def test_without_paddle_the_error_says_how_to_install_it():
    # find_spec answering None for `paddle` stands for a machine where the project was installed
    # without its extra.
    code = ("import importlib.util, sys\n"
            "real = importlib.util.find_spec\n"
            "importlib.util.find_spec = lambda name, *a: None if name == 'paddle' else real(name, *a)\n"
            "import gomoku.net.model\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=50)
    assert proc.returncode != 0
    assert "PaddlePaddle is not installed: pip install -r requirements.txt" in proc.stderr


@pytest.mark.timeout(120)
def test_the_arena_runs_as_a_module():
    proc = subprocess.run([sys.executable, "-m", "gomoku.play.arena", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=100)
    assert proc.returncode == 0, proc.stderr
    assert "usage: gomoku-arena" in proc.stdout


@pytest.mark.timeout(300)
def test_the_built_package_holds_the_shipped_models_and_plays_them_from_anywhere(tmp_path):
    # What pip install . puts into site-packages, built by setuptools from a copy of the checkout.
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(ROOT, name), source / name)
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(os.path.join(ROOT, "gomoku"), source / "gomoku", symlinks=True, ignore=ignore)
    shutil.copytree(os.path.join(ROOT, "models"), source / "models")
    built = tmp_path / "built"
    proc = subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build",
                           "--build-lib", str(built)], cwd=source, capture_output=True, text=True, timeout=100)
    assert proc.returncode == 0, proc.stderr
    shipped = sorted(name for name in os.listdir(os.path.join(ROOT, "models")) if name.endswith(".npz"))
    assert "gomoku_15x15_5.npz" in shipped
    packaged = built / "gomoku" / "models"
    assert sorted(p.name for p in packaged.glob("*.npz")) == shipped
    assert all(p.is_file() and not p.is_symlink() for p in packaged.iterdir())
    # The installed copy (no pyproject.toml above it) finds them from an empty directory.
    empty = tmp_path / "empty"
    empty.mkdir()
    code = ("from gomoku.net.shipped import DEFAULT_MODEL, IN_CHECKOUT, shipped_model_for\n"
            "print(IN_CHECKOUT, DEFAULT_MODEL, shipped_model_for(15, 15, 5, 'renju'), sep='\\n')\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=empty, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(built)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", str(packaged / "gomoku_8x8_5.npz"),
                                   str(packaged / "gomoku_15x15_renju.npz")]
    # Without Paddle, the installed commands name the package's extra: there is no repository
    # whose requirements files they could point to.
    without_paddle = ("import importlib.util, sys\n"
                      "real = importlib.util.find_spec\n"
                      "importlib.util.find_spec = lambda name, *a: None if name == 'paddle' else real(name, *a)\n"
                      "sys.modules['paddle'] = None\n")
    for command, args in (("train", ["--iterations", "1", "--run-dir", "run"]), ("play", ["--text"])):
        code = without_paddle + (f"sys.argv = {[f'gomoku-{command}', *args]!r}\n"
                                 f"from gomoku.commands import {command}\nsys.exit({command}())\n")
        proc = subprocess.run([sys.executable, "-c", code], cwd=empty, capture_output=True, text=True,
                              timeout=100, env=dict(os.environ, PYTHONPATH=str(built)))
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(f'gomoku-{command}: PaddlePaddle is not installed: pip install "gomoku-zero[cpu]"'), \
            proc.stderr
        assert "requirements" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
