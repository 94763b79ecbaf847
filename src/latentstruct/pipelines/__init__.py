"""What combines tasks with learners or trained models, above the learner layer (tasks never
train, load or save anything that needs a learner or a model file):

* :mod:`.tagging`: the training recipes ``latentstruct train`` runs around ``task.fit``:
  a POS tagger for the tasks that tag their sentences (:func:`attach_tagger`), the
  supervised chunker of a task's heuristic (:func:`attach_chunker`);
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

__all__ = [
    "train_pos_tagger",
    "load_pos_tagger",
    "attach_tagger",
    "train_chunker",
    "learner_needs_heuristic",
    "needs_chunker",
    "attach_chunker",
    "DEFAULT_TAGGER_SENTENCES",
]
