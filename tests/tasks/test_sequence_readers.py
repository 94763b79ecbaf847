"""The sequence tasks compose a reader (``task.reader``): the reader of the task's files and
Python lists, built from its parameters and what it was fitted on."""

import pytest

from conftest import TINY_CHUNK

from latentstruct.exceptions import ConfigError, InputError
from latentstruct.tasks import (ChunkReader, ChunkTask, CitationReader, CitationTask,
                                CrfsuiteReader, PosReader, PosTask, SequenceTask)
from latentstruct.tasks.sequence.labelling import BinaryRecord

CONLLU = """\
1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tdog\tdog\tNOUN\tNN\tCase=Nom\t3\tnsubj\t_\t_
3\tbarks\tbark\tVERB\tVBZ\t_\t0\troot\t_\t_

"""


def test_each_sequence_task_composes_the_reader_of_its_parameters():
    assert repr(PosTask(tag_column="xpos").reader) == "PosReader(tag_column='xpos')"
    assert isinstance(ChunkTask().reader, ChunkReader)
    assert isinstance(CitationTask().reader, CitationReader)
    assert isinstance(SequenceTask().reader, CrfsuiteReader)
    # built anew from the parameters of the moment
    task = PosTask()
    task.set_params(tag_column="upos+case")
    assert task.reader.tag_column == "upos+case"


def test_the_task_reads_what_its_reader_reads(tmp_path):
    path = tmp_path / "a.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    task = PosTask(tag_column="upos+case")
    by_task, by_reader = task.read(path), task.reader.read(path)
    assert by_task.records == by_reader.records
    assert list(by_task.targets) == [("DET", "NOUN|Case=Nom", "VERB")]
    assert list(by_reader.targets) == list(by_task.targets)
    # the task checks its parameters before its reader opens the file
    with pytest.raises(ConfigError, match="tag_column"):
        PosTask(tag_column="lemma").read(tmp_path / "missing.conllu")
    with pytest.raises(ConfigError, match="window"):
        CitationTask(window=-1).read(tmp_path / "missing.txt")


def test_a_reader_gives_the_featurizer_words_and_pos_as_its_task_reads_them(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(TINY_CHUNK, encoding="utf-8")
    chunk = ChunkTask().read(path)
    words, pos = ChunkReader().words_pos(chunk.records[0])
    assert words == chunk.records[0].words and pos == chunk.records[0].pos
    # pos predicts UPOS, so they are never its input; J-LIS's copies keep what the task reads
    conllu = tmp_path / "a.conllu"
    conllu.write_text(CONLLU, encoding="utf-8")
    sent = PosTask().read(conllu).records[0]
    assert PosReader().words_pos(sent) == (sent.words, None)
    assert PosReader().binary_record(sent) == BinaryRecord(sent.words, None)
    assert ChunkReader().binary_record(chunk.records[0]).pos == chunk.records[0].pos
    with pytest.raises(InputError, match="no built-in attribute templates"):
        CrfsuiteReader().words_pos(sent)


def test_the_chunk_reader_converts_evaluation_tags_to_the_fitted_scheme(tmp_path):
    iob1 = "He PRP I-NP\nreckons VBZ I-VP\n\nthe DT I-NP\ndeficit NN I-NP\n\n"
    path = tmp_path / "test.txt"
    path.write_text(iob1, encoding="utf-8")
    assert not ChunkReader("iob1", None).converts_input()  # an unfitted task converts nothing
    reader = ChunkReader("iob1", "iob2")
    assert reader.converts_input()
    assert list(reader.read(path, split="test").targets) == [("B-NP", "B-VP"), ("B-NP", "I-NP")]
    assert list(reader.read(path, split="train").targets) == [("I-NP", "I-VP"), ("I-NP", "I-NP")]
    task = ChunkTask(input_scheme="iob1")
    task.tag_scheme_ = "iob2"
    assert task.reader.model_scheme == "iob2" and task.reader.converts_input()


def test_the_readers_tag_checks_are_the_ones_fit_and_make_dataset_apply():
    check_tag, _, any_label = ChunkTask().reader.tag_checks()
    assert check_tag("B-NP") is None and check_tag("NP") is not None and not any_label
    assert SequenceTask().reader.tag_checks()[2]  # any label at all
    with pytest.raises(InputError, match="y\\[0\\]"):
        ChunkTask().make_dataset([[("He", "PRP")]], [["NP"]])


def test_a_reader_gives_every_part_and_a_task_without_one_says_so():
    from latentstruct.tasks import SentenceReader, SequenceLabellingTask

    with pytest.raises(TypeError, match="abstract"):
        SentenceReader()
    with pytest.raises(TypeError, match="has no reader: a sequence task names the reader"):
        _ = SequenceLabellingTask().reader
