"""The two commands touch no Python but the project's (README, "Two commands"): setup.sh's
Python step, run against Debian's own interpreter (which carries PEP 668's
EXTERNALLY-MANAGED marker, so a pip install into it is refused), makes a virtual
environment of the project's and installs the tests' packages there; the interpreter's
own packages are the same before and after."""
import os
import pathlib
import subprocess

import pytest

from conftest import ROOT

DEBIAN_PYTHON = pathlib.Path("/usr/bin/python3")


def installed(python) -> list:
    """What an interpreter has installed (names and versions), as its own metadata says."""
    return subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; "
                            "print('\\n'.join(sorted(f'{d.metadata[\"Name\"]}=={d.version}' for d in m.distributions())))"],
        capture_output=True, text=True, check=True).stdout.splitlines()


def marker(python) -> pathlib.Path:
    stdlib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('stdlib'))"],
                            capture_output=True, text=True, check=True).stdout.strip()
    return pathlib.Path(stdlib) / "EXTERNALLY-MANAGED"


@pytest.mark.skipif(not DEBIAN_PYTHON.exists(), reason="Debian's python3 is not installed")
def test_setup_changes_no_python_but_its_own(tmp_path):
    assert marker(DEBIAN_PYTHON).exists(), "Debian's python3 is externally managed (PEP 668)"
    before = installed(DEBIAN_PYTHON)
    venv = tmp_path / "venv"
    env = dict(os.environ, PGPROMPT_PYTHON=str(DEBIAN_PYTHON), PGPROMPT_VENV=str(venv))
    done = subprocess.run([str(ROOT / "scripts/setup.sh"), "python"], env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr
    assert installed(DEBIAN_PYTHON) == before, "setup.sh changed Debian's python3"
    # The project's environment is the one that has the packages, and it is made from
    # Debian's interpreter.
    ours = installed(venv / "bin/python")
    assert any(line.startswith("anthropic==") for line in ours) and any(line.startswith("psycopg==") for line in ours)
    base = subprocess.run([str(venv / "bin/python"), "-c", "import sys; print(sys.base_prefix)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert base == "/usr", base
