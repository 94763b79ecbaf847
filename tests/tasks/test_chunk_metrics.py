import pytest

from latentstruct.tasks.sequence.chunk_metrics import chunk_f1, extract_chunks


def test_extract_chunks_iob2():
    tags = ["B-NP", "I-NP", "O", "B-VP", "B-NP", "I-NP"]
    assert extract_chunks(tags) == {("NP", 0, 1), ("VP", 3, 3), ("NP", 4, 5)}


def test_extract_chunks_follows_conlleval_for_stray_inside_tags():
    # conlleval opens a chunk at I-X after O, and at a type change
    assert extract_chunks(["O", "I-NP", "I-NP"]) == {("NP", 1, 2)}
    assert extract_chunks(["B-NP", "I-VP"]) == {("NP", 0, 0), ("VP", 1, 1)}


def test_chunk_f1_counts_exact_matches():
    gold = [["B-NP", "I-NP", "O", "B-VP"]]
    pred = [["B-NP", "O", "O", "B-VP"]]  # NP wrong boundary, VP right
    s = chunk_f1(gold, pred)
    assert s["precision"] == pytest.approx(1 / 2)
    assert s["recall"] == pytest.approx(1 / 2)
    assert s["f1"] == pytest.approx(0.5)
    assert s["accuracy"] == pytest.approx(3 / 4)


def test_chunk_f1_rejects_length_mismatch():
    with pytest.raises(ValueError, match="differ in length"):
        chunk_f1([["O", "O"]], [["O"]])
