"""What the tests of cmake/*.py share: run a check on a fixture tree, compare what it printed."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(script, tree, *folders):
    """(exit code, stdout) of cmake/SCRIPT on tests/cmake/fixtures/TREE, scanning FOLDERS."""
    path = os.path.join(HERE, "..", "..", "cmake", script)
    r = subprocess.run([sys.executable, path, os.path.join(HERE, "fixtures", tree), *folders], capture_output=True, text=True)
    return r.returncode, r.stdout


def expect(what, got, want):
    if got != want:
        print(f"{what}:\n got  {got!r}\n want {want!r}")
        return False
    return True
