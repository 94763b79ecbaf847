"""The "Using latentstruct in spaCy" page (docs/guide/spacy.md) says what runs.

Every ```python block of the page is a doctest; together, in the page's order and sharing
their names, they run in a fresh interpreter in an empty folder (the page writes model files
and a pipeline folder), and each printed value is compared with the page's.  The page's
shell commands name options that exist.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guide" / "spacy.md"


def test_every_python_block_is_a_doctest(fenced_blocks):
    blocks = fenced_blocks(PAGE, "python")
    assert len(blocks) >= 6
    for block in blocks:
        assert block.lstrip().startswith(">>>"), block[:200]


@pytest.mark.slow  # trains small models and loads en_core_web_sm (about 20 s)
def test_python_blocks_run_and_print_what_the_page_says(run_page_doctests, require_spacy):
    run_page_doctests(PAGE)


def _help(*command: str) -> str:
    return subprocess.run([sys.executable, "-m", *command, "--help"], capture_output=True,
                          text=True, timeout=120).stdout


def test_shell_commands_name_options_that_exist(fenced_blocks):
    lines = [line.split("#")[0].split() for block in fenced_blocks(PAGE, "bash")
             for line in block.splitlines() if line.strip()]
    assert len(lines) >= 6
    helps: dict[tuple, str] = {}
    for words in lines:
        if words[:3] == ["python", "-m", "spacy"]:
            command = ("spacy", words[3])
        else:
            assert words[0] == "latentstruct", words
            command = ("latentstruct", words[1])
        if command not in helps:
            helps[command] = _help(*command)
        configs = [ROOT / w for w in words if w.startswith("examples/")]
        assert all(path.is_file() for path in configs), words
        for option in (w for w in words if w.startswith("--")):
            if "." in option:  # spaCy's override of a config setting: --section.key
                section, key = option[2:].rsplit(".", 1)
                text = configs[0].read_text(encoding="utf-8")
                assert re.search(rf"^\[{re.escape(section)}\]\n(?:[^\[].*\n)*?{key} = ",
                                 text, flags=re.M), (configs[0], option)
            else:
                assert option in helps[command], (command, option)


def test_page_is_linked_from_the_index_and_the_readme():
    assert re.search(r"^guide/spacy$", (ROOT / "docs" / "index.md").read_text(
        encoding="utf-8"), flags=re.M)
    assert "(docs/guide/spacy.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
