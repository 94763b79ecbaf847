"""The log-linear learners: conditional likelihood over the structures or candidates.

==================  ===================================================================
``crf``             ``CRF``: a regularised conditional random field (L2, and L1 by
                    OWL-QN) over any marginalizable task
``reranker``        ``HiddenVariableReranker``: Koo & Collins' hidden-variable
                    log-linear reranker
``mixture``         ``RerankerMixture``: weighted mixtures of rerankers' log-probabilities
                    and the base parser's score
==================  ===================================================================

The classes are exported by :mod:`latentstruct.learners`.
"""
