"""The package as pip installs it: pyproject.toml's commands, package data and pins, without a network."""

import glob
import importlib
import os
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
    assert "data/balanced_15x15_5.txt" in shipped
    assert config["project"]["requires-python"] == ">=3.11"
    # the version is stated once, in the package
    assert config["project"]["dynamic"] == ["version"]
    assert setuptools["dynamic"]["version"] == {"attr": "gomoku.__version__"}


@pytest.mark.timeout(30)
def test_requirements_install_the_project_and_pyproject_holds_the_pins():
    with open(os.path.join(ROOT, "requirements.txt")) as f:
        lines = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    assert lines == ["-e ."]
    pins = project()["project"]["dependencies"]
    assert {pin.split("==")[0] for pin in pins} == {"paddlepaddle", "numpy", "pygame", "tqdm", "matplotlib"}
    assert all("==" in pin for pin in pins)


@pytest.mark.timeout(120)
def test_the_arena_runs_as_a_module():
    proc = subprocess.run([sys.executable, "-m", "gomoku.play.arena", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=100)
    assert proc.returncode == 0, proc.stderr
    assert "usage: gomoku-arena" in proc.stdout
