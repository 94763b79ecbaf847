"""Shared fixtures: real data under LATENTSTRUCT_DATA (skipped when absent, required in CI)."""

from __future__ import annotations

import pytest

from latentstruct.testing import require_data as _require


@pytest.fixture
def require_data():
    """``require_data(name, *parts)`` -> Path, skipping (or failing under CI=true) if absent."""
    return _require


TINY_CHUNK = """\
He PRP B-NP
reckons VBZ B-VP
the DT B-NP
current JJ I-NP
account NN I-NP
deficit NN I-NP
will MD B-VP
narrow VB I-VP
. . O

The DT B-NP
pound NN I-NP
is VBZ B-VP
widely RB I-VP
expected VBN I-VP
to TO I-VP
fall VB I-VP
. . O

In IN B-PP
Britain NNP B-NP
, , O
the DT B-NP
deficit NN I-NP
rose VBD B-VP
sharply RB B-ADVP
. . O
"""


@pytest.fixture
def tiny_chunk_file(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text(TINY_CHUNK, encoding="utf-8")
    return path
