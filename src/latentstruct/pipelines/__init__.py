"""What combines tasks with learners or trained models, above the learner layer (tasks never
train, load or save anything that needs a learner or a model file):

* :mod:`.training`: the one training path of ``latentstruct train`` and the estimators
  (:func:`plan_training` before any data, :func:`run_training`, :func:`fit_on_dataset`);
* :mod:`.tagging`: the pretrained helpers that path attaches, as a task declares them
  (``pretrained_helpers``): a POS tagger for the tasks that tag their sentences
  (:func:`attach_tagger`), the supervised chunker of a task's heuristic
  (:func:`attach_chunker`);
* :mod:`.kbest`: k-best dependency lists from a trained parser, and jackknifed
  (``latentstruct kbest``);
* :mod:`.demo`: LCLR against the two-stage system on the CLDR names Babel ships
  (``latentstruct demo``);
* :mod:`.inspection`: what a trained model has learnt, as plain data
  (``latentstruct inspect``).

The command line and the estimators call these; nothing below them does.
"""

from .tagging import (DEFAULT_TAGGER_SENTENCES, attach_chunker, attach_tagger,
                      learner_needs_heuristic, load_pos_tagger, needs_chunker, train_chunker,
                      train_pos_tagger)
from .training import (TrainingPlan, TrainingResult, check_binary_examples, fit_on_dataset,
                       plan_training, run_training)

__all__ = [
    "train_pos_tagger",
    "load_pos_tagger",
    "attach_tagger",
    "train_chunker",
    "learner_needs_heuristic",
    "needs_chunker",
    "attach_chunker",
    "DEFAULT_TAGGER_SENTENCES",
    "TrainingPlan",
    "TrainingResult",
    "plan_training",
    "run_training",
    "fit_on_dataset",
    "check_binary_examples",
]
