"""Binary decisions over latent structures, learned by alternating minimisation.

==================  ===================================================================
``alternating``     the loop LCLR, J-LIS and the LCLR-variant share (latent completion,
                    cutting planes over per-negative caches, the grouped DCD), its
                    result, chunk kernels and checkpoint state
``lclr``            ``LCLR`` (Chang et al. 2010), its two-stage baseline ``TwoStage``,
                    ``LatentBinaryLearner``
``lclr_variant``    ``LCLRVariant``: one cutting-plane round per outer iteration, with
                    early stopping
``jlis``            ``JLIS`` (Chang et al. 2010, ICML): indirect supervision, LCLR's
                    loop with a fully labelled structured part
==================  ===================================================================

Online latent passive-aggressive learning is in ``online.latent_pa``.  The classes are
exported by :mod:`latentstruct.learners`.
"""
