"""Grammaticality: real sentences against trigram-LM samples, over latent chunkings
(Clifton, Whitney & Sarkar 2013, §2-§4).

A sentence is grammatical (+1, a real sentence) or not (-1, a pseudo-negative sampled from a
smoothed trigram LM, after Okanohara & Tsujii 2007).  The decision is
f(x) = max_h w . Phi(x, h) where h is a shallow parse (a chunking) of x read through one
or several *views* -- the chunk encodings iob1, iob2, ioe1, ioe2 and oc (O+C) of
``tasks.sequence.encodings``.

Features (§3.4).  Every token carries the 1-, 2- and 3-grams of lowercased words and of POS
tags that contain it (13 attributes, with a bias): ``w=`` the word, ``w-1,0=`` / ``w0,1=``
the bigrams, ``w-2..0=`` / ``w-1..1=`` / ``w0..2=`` the trigrams, the same for POS (``p``).
Each view v has its own tag set (``encoding_labels`` over the chunk types, 23 tags for an
IOB/IOE view and 45 for O+C with the 11 CoNLL-2000 types) and its own first-order
features: every attribute paired with the token's tag, plus tag bigrams and start / end
tags -- the layout of ``SequenceLabellingTask``, one block per view::

    w = [ view_1: emissions (A x L_1) | transitions (L_1 x L_1) | start | end ] ... [ bias ]

The last weight is a bias shared by every structure.  Views never share weights (the "O" of
iob2 and the "O" of oc are different features).

Structures.  h is an int array of shape (n_views, n_tokens): the tag ids of one chunking per
view.  With ``constrained=True`` (default) every view's sequence must be well-formed
(``encodings.is_well_formed``): ill-formed transitions, first and last tags score -inf.

* ``combine="concat"``: Phi(x, h) is the views' feature vectors concatenated; the views are
  independent given w, so the argmax decodes each view by its own Viterbi (exact).
* ``combine="vote"``: each view is decoded by its own Viterbi, the per-token majority vote is
  taken in O+C space and converted back to every view (``encodings.majority_vote``), and h is
  the voted chunking written in each view; the score is w . Phi(x, h_voted).  This is
  decode-then-vote, as in the paper, not an argmax of the score.

POS tags come from the project's own ``pos`` tagger (``PosTask``), attached with
``set_tagger`` before the sentences are read and fitted.  The task never loads or trains a
tagger itself: :func:`latentstruct.pipelines.attach_tagger` (called by ``latentstruct
train``) loads the ``pos`` model file given as ``tagger_model`` (``latentstruct train pos
--learner ssvm``) or, without one, trains the default tagger on ``tagger_sentences``
sentences of UD EWT (:func:`latentstruct.pipelines.train_pos_tagger`).  The tagger's weights
and feature index are stored in this task's model file.  Records that already carry POS
tags (``Sentence.pos``) are used as they are.

Data.  Positives are sentences, one per line (``data.sentences.read_sentences``: tokenized, empty
lines are errors).  A deterministic share ``heldout_fraction`` of all sentences is held out
for evaluation: a sentence is held out when a hash of its tokens falls below that fraction,
so the split depends only on the sentence.  The trigram LM (``data.lm.TrigramLM``,
interpolated Kneser-Ney) is fitted on the non-held-out sentences of ``lm_corpus`` the first
time negatives are needed, and stored in the model file.  Training (``read(path, "train")``)
uses the non-held-out sentences of the file (optionally ``n_train`` of them, a seeded
sample) and ``round(negative_ratio * n)`` LM samples (seed ``seed``); it also records a
digest of the file's sentences (BLAKE2b), stored in the model file.  Evaluation
(``read(path, "test")``) takes its positives according to ``test_sentences``:

* ``"auto"`` (default): the held-out sentences when the file's sentences have the training
  file's digest (evaluating on the training file), otherwise every sentence of the file (a
  file of new sentences).  A task that never read a training file (or a model saved before
  the digest was recorded) falls back to the held-out sentences;
* ``"heldout"``: always the held-out sentences of the file;
* ``"all"``: every sentence of the file;

at most ``n_test`` of them (the first ones), and ``n_negative_sets`` sets of as many LM
samples, set k drawn with seed ``test_seed + k``; the reported accuracy is the mean over the
sets of the accuracy on the positives plus that set (§4).  LM samples are drawn conditioned
on 4 <= length <= 60 tokens, the length filter of the Reuters sentence file, so length alone
does not separate the classes.

Initialisation from a supervised chunker (§4).  ``heuristic_weights()`` -- used by
``LatentPA(init="heuristic")`` (which scales them as §4 says), by ``TwoStage`` and by the
two-stage initialisation of ``LCLR`` / ``LCLRVariant`` -- are the weights of a supervised
chunker in this task's feature space, one chunker per view in that view's encoding.  The
task does not train it (``fit`` only indexes features); it offers the supervised problem:
``chunking_task()`` is a max-decodable view of the task (``ChunkingView``: structures are
the chunk tags of every view, Phi is ``latent_feature`` without the bias, argmax is the
per-view constrained Viterbi) and ``chunk_training_data()`` its examples, the first
``chunker_sentences`` sentences of CoNLL-2000 (``chunker_corpus``) tagged by the task's POS
tagger.  :func:`latentstruct.pipelines.train_chunker` fits an averaged structured
perceptron (``learners.StructuredPerceptron``, ``chunker_epochs`` epochs, seed ``seed``) on
them and attaches its weights with ``set_chunker_weights``.  The parameter ``chunker`` says
when ``latentstruct train`` (:func:`latentstruct.pipelines.attach_chunker`) does that:
``"auto"`` (default) only when the learner needs heuristic weights (LCLR / LCLR-variant
with ``init="two-stage"``, TwoStage, LatentPA with ``init="heuristic"``), ``"perceptron"``
always, ``None`` never.  The chunker's weights are not stored in the model file (TwoStage
stores the heuristic weights it used).

Modules: ``task`` (:class:`GrammaticalityTask`: parameters, the POS tagger, fitting and
featurising, the chunker's training data, evaluation, persistence), ``featurizer``
(:class:`GrammaticalityFeaturizer`: tagged sentences to attribute ids, the vocabulary),
``decoding`` (the structure :class:`ViewsStructure`, the task's base: per-view Viterbi
decoding, the vote, Phi(x, h), the heuristic weights, and :class:`ChunkingView`), ``data``
(the trigram-LM negatives and reading), ``chunker`` (the supervised chunker's CoNLL-2000
examples), ``views`` (the views and chunk types parameters, n-gram attributes, view
constraints and the views' weight blocks), ``sentences`` (the :class:`Sentence` record,
held-out hashing, file digests) and ``raw`` (``make_dataset``'s in-memory sentences).
"""

from .decoding import ChunkingView, ViewsStructure
from .featurizer import GrammaticalityFeaturizer
from .sentences import Sentence, is_heldout, sentences_digest
from .task import GrammaticalityTask
from .views import CONLL2000_CHUNK_TYPES, ngram_attributes, view_constraints

__all__ = [
    "GrammaticalityTask",
    "GrammaticalityFeaturizer",
    "ViewsStructure",
    "ChunkingView",
    "Sentence",
    "CONLL2000_CHUNK_TYPES",
    "ngram_attributes",
    "view_constraints",
    "is_heldout",
    "sentences_digest",
]
