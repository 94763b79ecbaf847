"""Sequence classification through a hidden chain: the hidden-state CRF (``hcrf``).

The model of Quattoni, Wang, Morency, Collins & Darrell (2007), "Hidden conditional random
fields" (the one the ``pyhcrf`` package implements).  A sentence x = (x_1..x_T) gets a class
y among K; with S hidden states per class, the hidden labels are the K·S pairs (k, j), and a
hidden chain h = (h_1..h_T) of class y stays inside y's block (a transition between blocks is
ruled out by construction, not by a weight).  Features Φ(x, y, h): every token attribute
(bias, word, lowercased window words and bigrams, prefixes / suffixes, word shape:
``featurizers.TokenTemplates``) crossed with the token's hidden label, the
transitions between hidden labels of one block, and start / end weights per hidden label::

    p(y | x) = Σ_h exp(w·Φ(x, y, h)) / Σ_{y', h} exp(w·Φ(x, y', h)).

The ``crf`` learner trains it (L2-regularised conditional log-likelihood, L-BFGS): the task
offers *marginalizable* (log Z(x), node marginals over the hidden labels, E[Φ]) and
*class-posterior* (log Z(x, k) per class, and the corpus log-loss with its gradient in one
compiled pass, ``kernels``); ``predict`` is the class of highest posterior.  It offers no
*max-decodable*: there is no gold hidden chain, so Φ of a labelled structure does not exist,
and the structured SVM or perceptron cannot be paired with it.

Data (by default) are the grammaticality task's: real Reuters sentences (+1) against
trigram-LM samples (-1), read by the same
:class:`~latentstruct.tasks.grammaticality.data.LanguageModelData` with the same parameters,
so the same ``n_train``, ``negative_ratio`` and ``seed`` give the same training sample, and
the test split is the same held-out share and negative sets.  No POS tagger is needed.

Besides sentences, ``make_dataset`` takes numbers: a (tokens x d) array per sentence, or
``(tokens, array)`` pairs whose columns join the built-in attributes (``numbers``).

Modules: ``task`` (:class:`HiddenChainTask`: fitting, evaluation and persistence),
``structure`` (:class:`HiddenChainStructure`, which the task holds: the weight layout, log Z
per class, the log-loss and its gradient, the marginals), ``featurizer`` (:class:`HiddenChainFeaturizer`: records to attribute ids, the
vocabulary, the input form and the classes), ``kernels`` (the compiled pass) and ``numbers``
(the records of numeric input).
"""

from .featurizer import HiddenChainFeaturizer
from .kernels import hidden_chain_pass
from .structure import HiddenChainStructure
from .task import HiddenChainTask

__all__ = ["HiddenChainTask", "HiddenChainStructure", "HiddenChainFeaturizer",
           "hidden_chain_pass"]
