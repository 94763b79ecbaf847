"""Online latent PA: real sentences against language-model samples, over hidden chunkings
======================================================================================

The online latent passive-aggressive learner (Clifton, Whitney and Sarkar 2013) is LCLR
made online: it visits one example at a time, decodes its best hidden structure h* under
the current weights and takes the smallest step that meets the margin, so a model takes a
few passes and no batch solve.  Their task is grammaticality: tell real English sentences
from sentences sampled from a trigram language model, where the hidden structure is a
chunking of the POS-tagged sentence, read through several chunk encodings ("views").

The script takes a small slice of ``english_sentences`` (the first 20,000 Reuters
sentences, written to a temporary file): a trigram Kneser-Ney LM is fitted on the slice's
non-held-out sentences and samples the negatives, 1,000 real sentences and 1,000 LM samples
train the model, and 500 held-out real sentences are scored against 3 seeded sets of 500
new LM samples (accuracy: the mean over the sets).  To stay cheap the POS tagger is the
project's own, trained on only 500 EWT sentences (the user guide's experiment uses 3,000).
Two models, 10 passes each, from zero weights:

* one view (IOB2 chunk tags);
* five views (IOB1, IOB2, IOE1, IOE2, O+C) with their features concatenated, the paper's
  multi-view model.

Then it prints the chunking the five-view model picks for a held-out real sentence and for
an LM sample (their IOB2 view).  The chunks are latent: whatever helps the decision, not
CoNLL chunks (the type names are only the tag set's).

At this size the two models are level, both near 70%.  The user guide's experiment (20,000
+ 20,000 training sentences, 3,000 held out) reaches 75.4% with one view (40 passes) and
80.4% with five (10 passes), far below the paper's 98%, whose LM and training set were much
larger.

Reads UD English EWT and the Reuters sentences from ``$LATENTSTRUCT_DATA`` (default
``../shared/data``).  Run it (about 25 s on one core; seeded, so the output is always the
same)::

    python examples/latent_pa_grammaticality.py

Expected output::

    POS tagger (500 EWT sentences): UPOS accuracy 0.855 on EWT dev
    training: 1000 real sentences + 1000 LM samples; held out: 500 real sentences
    against 3 sets of 500 LM samples

    model                        accuracy  on real  on LM samples
    latent PA, 1 view               0.706    0.736          0.676
    latent PA, 5 views              0.704    0.676          0.733

    latent chunkings of the 5-view model (IOB2 view):
    real sentence, f(x) = +0.44:
      Some/B-UCP analysts/B-ADVP said/I-ADVP they/I-ADVP have/I-ADVP recommended/I-ADVP
      BankAmerica/I-ADVP delay/I-ADVP its/I-ADVP up/B-INTJ to/I-INTJ one-billion-dlr/B-ADJP
      equity/I-ADJP offering/O ,/B-NP which/B-VP has/I-VP yet/O to/B-VP be/I-VP approved/O
      by/B-INTJ the/B-PRT Securities/I-PRT and/B-PRT Exchange/I-PRT Commission/I-PRT
      ./B-SBAR
    LM sample, f(x) = -0.74:
      For/B-CONJP a/B-ADJP sixth/I-ADJP straight/B-CONJP bonds/B-CONJP and/B-PRT
      Poindexter/I-PRT had/B-CONJP doctored/O more/B-NP than/I-NP double/B-NP bbd/I-NP
      )/B-UCP is/B-ADVP not/O very/B-NP enthusiastic/B-NP about/I-NP for/I-NP some/B-UCP
      interest/I-UCP with/B-LST another/B-PRT at/B-NP home/I-NP ./B-SBAR
"""

import os
import tempfile
import textwrap

from latentstruct.data.paths import dataset_path
from latentstruct.learners import LatentPA
from latentstruct.pipelines import train_pos_tagger
from latentstruct.tasks import GrammaticalityTask
from latentstruct.tasks.base import Dataset

# %%
# A small POS tagger (a structural SVM on the first 500 sentences of EWT train); the task
# tags every sentence with it before reading chunk features off the tags.
pos_task, pos_coef, pos_accuracy = train_pos_tagger(500)
print(f"POS tagger (500 EWT sentences): UPOS accuracy {pos_accuracy:.3f} on EWT dev")

# %%
# A slice of the Reuters sentences as the corpus: the task holds out 5% of it by hash (for
# evaluation), fits the LM on the rest, and samples 1,000 of the rest as training positives.
folder = tempfile.TemporaryDirectory()
corpus = os.path.join(folder.name, "reuters_slice.txt")
with open(dataset_path("english_sentences", "reuters21578_sentences.txt"),
          encoding="utf-8") as source, open(corpus, "w", encoding="utf-8") as out:
    out.writelines(line for _, line in zip(range(20_000), source))

options = dict(lm_corpus=corpus, n_train=1000, negative_ratio=1.0, seed=0,
               n_test=500, n_negative_sets=3, test_seed=1000)
data = GrammaticalityTask(**options).set_tagger(pos_task, pos_coef)
train, test = data.read(corpus, split="train"), data.read(corpus, split="test")
n_real = int((test.targets > 0).sum())
print(f"training: {(train.targets > 0).sum()} real sentences + {(train.targets < 0).sum()} LM "
      f"samples; held out: {n_real} real sentences\nagainst "
      f"{options['n_negative_sets']} sets of {n_real} LM samples")

# %%
# The same sentences under one view and under five; each task indexes its own features.
print(f"\n{'model':<28}{'accuracy':>9}{'on real':>9}{'on LM samples':>15}")
for label, views in (("latent PA, 1 view", "iob2"),
                     ("latent PA, 5 views", "iob1,iob2,ioe1,ioe2,oc")):
    task = GrammaticalityTask(views=views, **options).set_tagger(pos_task, pos_coef)
    task.fit(train)
    pa = LatentPA(task, max_iter=10, random_state=0)
    pa.fit(task.featurize(train), task.encode_targets(train.targets))
    m = task.evaluate_model(test, pa.predict, pa.decision_function)
    print(f"{label:<28}{m['accuracy']:>9.3f}{m['positive_accuracy']:>9.3f}"
          f"{m['negative_accuracy']:>15.3f}")

# %%
# The latent chunking the five-view model picks for a held-out real sentence and for an LM
# sample (its IOB2 view), with the decision value f(x) = max_h w . Phi(x, h).
print("\nlatent chunkings of the 5-view model (IOB2 view):")
first_sample = next(i for i, r in enumerate(test.records) if r.negative_set == 0)
for what, i in (("real sentence", 0), ("LM sample", first_sample)):
    x = task.featurize(Dataset([test.records[i]], [int(test.targets[i])]))
    tags = task.structure_.decode_structure(pa.latent_argmax(x)[0])["iob2"]
    print(f"{what}, f(x) = {pa.decision_function(x)[0]:+.2f}:")
    print(textwrap.fill(" ".join(f"{w}/{t}" for w, t in zip(test.records[i].words, tags)),
                        88, initial_indent="  ", subsequent_indent="  "))
folder.cleanup()
