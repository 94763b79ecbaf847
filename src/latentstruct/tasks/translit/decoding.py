"""Decoding glue of the transliteration task: cell scores, the alignment argmax (one pair
or a batch), decisions, Phi(x, a), the two-stage heuristic weights and ``explain``.

:class:`CharacterAlignmentDecoding` is a mixin of the task's structure,
:class:`~latentstruct.tasks.translit.structure.TranslitStructure`; it relies on its
``__sklearn_is_fitted__``, ``n_features``, ``n_source_chars`` / ``n_target_chars``, ``bigrams``,
the alphabets and ``encode_pair``.  The structures and the weight layout are described in
:mod:`latentstruct.tasks.translit`.

With the user's character-pair scores (k of them, ``n_scores``) the last k weights score
them: cell (i, j) adds ``scores[i, j] . w[-k:]`` to its compiled score, and Phi(x, a) adds the
scores of the aligned cells to the last k entries.  The batch methods then loop over the
pairs in Python (the compiled kernels know no scores).
"""

from __future__ import annotations

import numpy as np

from ...data.sparse import SparseVector, coalesce_arrays
from ...exceptions import InputError, check_is_fitted
from ...inference.alignment import monotone_alignment
from ...inference.result import EXACT, DecodeResult
from .corpus import TranslitCorpus, concat_translit
from .kernels import argmax_kernel, cell_scores_kernel, decision_kernel

__all__ = ["CharacterAlignmentDecoding"]


class CharacterAlignmentDecoding:
    """The latent-binary model interface of the transliteration task (module docstring)."""

    # --- model interface ------------------------------------------------------------------
    def _check_w(self, w) -> np.ndarray:
        w = np.ascontiguousarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise InputError(
                f"weight vector must have shape ({self.n_features},) for this task's alphabets "
                f"(A={self.n_source_chars}, B={self.n_target_chars}, bigrams={self.bigrams}), "
                f"got {w.shape}"
            )
        return w

    def _as_corpus(self, X) -> TranslitCorpus:
        if isinstance(X, TranslitCorpus):
            return X
        if isinstance(X, tuple) and len(X) == 2 and all(isinstance(v, str) for v in X):
            return self.encode_pair(*X)
        return concat_translit(list(X))

    def _pair(self, x):
        x = self._as_corpus(x)
        if len(x) != 1:
            raise InputError(f"expected one word pair, got {len(x)}; use the batch methods")
        self._check_corpus_scores(x)
        return x, x.source_ids(0), x.target_ids(0)

    def _check_corpus_scores(self, X: TranslitCorpus) -> None:
        """The model's refusal when featurised pairs carry another number of scores."""
        if len(X):
            self._check_scores_match(X.n_scores)
            if X.pair_scores is not None:
                m, n = X.source_ids(0).shape[0], X.target_ids(0).shape[0]
                if len(X) == 1 and X.pair_scores[0].shape[:2] != (m, n):
                    raise InputError(f"the character-pair scores have shape "
                                     f"{X.pair_scores[0].shape[:2]} but the pair has {m} x {n} "
                                     f"characters")

    def cell_scores(self, x, w) -> np.ndarray:
        """(m, n) scores w . phi_ij of aligning source character i with target character j."""
        check_is_fitted(self)
        w = self._check_w(w)
        x, s, t = self._pair(x)
        n_char = self._n_char_features
        cells = cell_scores_kernel(s, t, np.ascontiguousarray(w[:n_char]), self.n_source_chars,
                                   self.n_target_chars, bool(self.bigrams))
        S = x.scores(0)
        if S is not None:
            cells = cells + S @ w[n_char:]
        return cells

    def latent_argmax(self, x, w, *, random_state=None) -> DecodeResult:
        """Best alignment by :func:`monotone_alignment`; score w . Phi(x, a) (with the bias)."""
        w = self._check_w(w)
        res = monotone_alignment(self.cell_scores(x, w), random_state=random_state)
        return DecodeResult(res.structure, float(w[0] + res.score), res.status)

    def latent_feature(self, x, h) -> SparseVector:
        """Phi(x, a): the bias plus the unigram (and bigram) mappings of every aligned cell."""
        check_is_fitted(self)
        x, s, t = self._pair(x)
        a = self._check_alignment(h, s.shape[0], t.shape[0])
        A, B = self.n_source_chars, self.n_target_chars
        rows = np.flatnonzero(a >= 0)
        cols = a[rows]
        si, tj = s[rows], t[cols]
        parts = [np.zeros(1, np.int64), np.ones(rows.shape[0], np.int64), 2 + si * B + tj]
        if self.bigrams:
            s_pad = np.concatenate([[0], s, [0]])
            t_pad = np.concatenate([[0], t, [0]])
            sp, sn = s_pad[rows], s_pad[rows + 2]
            tp, tn = t_pad[cols], t_pad[cols + 2]
            base = 2 + A * B
            parts.append(base + ((sp * A + si) * B + tp) * B + tj)
            parts.append(base + A * A * B * B + ((si * A + sn) * B + tj) * B + tn)
        values = [np.ones(sum(p.shape[0] for p in parts))]
        S = x.scores(0)
        if S is not None:  # the score block: the aligned cells' scores summed
            k = S.shape[2]
            parts.append(self._n_char_features + np.arange(k, dtype=np.int64))
            values.append(S[rows, cols].sum(axis=0) if rows.size else np.zeros(k))
        idx = np.concatenate(parts)
        return SparseVector(*coalesce_arrays(idx, np.concatenate(values)))

    @staticmethod
    def _check_alignment(h, m, n) -> np.ndarray:
        a = np.asarray(h)
        if a.shape != (m,) or (m and not np.issubdtype(a.dtype, np.integer)):
            raise InputError(f"alignment must be an integer array of shape ({m},), got {a!r}")
        a = a.astype(np.int64)
        if m and (a.min() < -1 or a.max() >= n):
            raise InputError(f"alignment entries must be -1 or in [0, {n}), got {a.tolist()}")
        aligned = a[a >= 0]
        if aligned.size > 1 and not (np.diff(aligned) > 0).all():
            raise InputError(
                f"alignment {a.tolist()} is not one-to-one and non-crossing (aligned targets "
                f"must increase strictly)"
            )
        return a

    def latent_argmax_batch(self, X, w, *, random_state=None) -> list[DecodeResult]:
        """Best alignment of every pair; one numba kernel unless ties are to be randomised."""
        check_is_fitted(self)
        w = self._check_w(w)
        X = self._as_corpus(X)
        self._check_corpus_scores(X)
        if X.pair_scores is not None:  # the kernel knows no scores
            rng = None if random_state is None else np.random.default_rng(random_state)
            return [self.latent_argmax(X[k], w, random_state=rng) for k in range(len(X))]
        if random_state is not None:
            rng = np.random.default_rng(random_state)
            return [self.latent_argmax(X[k], w, random_state=rng) for k in range(len(X))]
        lengths = X.src_offsets[X.pair_src + 1] - X.src_offsets[X.pair_src]
        offsets = np.zeros(len(X) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        align = np.empty(int(offsets[-1]), np.int64)
        scores = np.empty(len(X))
        argmax_kernel(X.src_chars, X.src_offsets, X.tgt_chars, X.tgt_offsets, X.pair_src,
                       X.pair_tgt, w, self.n_source_chars, self.n_target_chars,
                       bool(self.bigrams), offsets, align, scores)
        return [DecodeResult(align[offsets[k]:offsets[k + 1]].copy(), float(scores[k]), EXACT)
                for k in range(len(X))]

    def decision_batch(self, X, w) -> np.ndarray:
        """f(x) = w[0] + best alignment score for every pair (one numba kernel)."""
        check_is_fitted(self)
        w = self._check_w(w)
        X = self._as_corpus(X)
        self._check_corpus_scores(X)
        if X.pair_scores is not None:  # the kernel knows no scores
            return np.array([self.latent_argmax(X[k], w).score for k in range(len(X))],
                            dtype=np.float64)
        return decision_kernel(X.src_chars, X.src_offsets, X.tgt_chars, X.tgt_offsets,
                                X.pair_src, X.pair_tgt, w, self.n_source_chars,
                                self.n_target_chars, bool(self.bigrams))

    def heuristic_weights(self) -> np.ndarray:
        """Two-stage weights from a romanisation table (Chang et al. 2009 style).

        ``U[s, t] = 1`` when the romanisation of source character s,
        ``anyascii(s).lower()`` (letters only, non-empty; ``é`` -> ``e``), occurs in
        ``anyascii(t).lower()`` for target character t (Hebrew ``צ`` -> ``ts`` maps from
        t and s; Russian ``я`` -> ``ya`` from y and a); every other weight, the bias and
        both bigram blocks are 0.  So the fixed alignment maximises the number of aligned
        romanisation matches.  With the user's scores (k per cell) each score weight is
        ``1/k``: a cell's heuristic score is its romanisation match plus the *mean* of its
        scores, read as similarities of about [0, 1] (rescale others before giving them);
        without this the heuristic alignment never sees the scores.  anyascii reads Hebrew vav as ``v`` and yod as ``y`` and alef
        and ayin as apostrophes, so English vowels map to few Hebrew letters.
        """
        from anyascii import anyascii

        check_is_fitted(self)
        w = np.zeros(self.n_features)
        U = w[2:2 + self.n_source_chars * self.n_target_chars].reshape(
            self.n_source_chars, self.n_target_chars)
        tgt_roman = [anyascii(t).lower() for t in self.target_alphabet_]
        for a, s in enumerate(self.source_alphabet_, 1):
            rs = "".join(c for c in anyascii(s).lower() if c.isalpha())
            if not rs:
                continue
            for b, rt in enumerate(tgt_roman, 1):
                if rs in rt:
                    U[a, b] = 1.0
        if self.n_scores:
            w[self._n_char_features:] = 1.0 / self.n_scores
        return w

    def explain(self, x, w, h=None) -> dict:
        """The alignment ``h`` of one pair with its part scores, as JSON-able data.

        ``h`` (int (m,), entries -1 or a target position) defaults to the best alignment
        under ``w`` (:meth:`latent_argmax`); pass the learner's own choice (a two-stage
        model keeps its heuristic alignment) to describe what that model scores.  Drawn by
        :func:`latentstruct.plotting.draw_explanation`.

        Returns a dict of plain Python values (``json.dumps`` works):

        ``kind``
            ``"character-alignment"``.
        ``source``, ``target``
            The words (``None`` when ``x`` was built from character ids only).
        ``source_chars``, ``target_chars``
            One string per character (``"?"`` for an id unseen in training when the word
            is unknown).
        ``alignment``
            ``h`` as a list of ints.
        ``cell_scores``
            (m, n) nested lists: w . phi_ij of aligning source i with target j.
        ``pairs``
            ``[i, j, source char, target char, part score]`` for every aligned cell.
        ``bias``
            w[0], the score every alignment shares.
        ``score``
            w . Phi(x, h) = bias + the sum of the pairs' part scores (unaligned characters
            score nothing); for the model's own alignment this is its decision value.
        """
        x, s_ids, t_ids = self._pair(x)
        w = self._check_w(w)
        cells = self.cell_scores(x, w)
        m, n = cells.shape
        if h is None:
            h = self.latent_argmax(x, w).structure
        a = self._check_alignment(h, m, n)
        source, target = x.source(0), x.target(0)

        def chars(word, ids, alphabet):
            if word is not None:
                return list(word)
            return [alphabet[k - 1] if k > 0 else "?" for k in ids.tolist()]

        src_chars = chars(source, s_ids, self.source_alphabet_)
        tgt_chars = chars(target, t_ids, self.target_alphabet_)
        pairs = [[i, j, src_chars[i], tgt_chars[j], float(cells[i, j])]
                 for i, j in enumerate(a.tolist()) if j >= 0]
        return {
            "kind": "character-alignment",
            "source": source, "target": target,
            "source_chars": src_chars, "target_chars": tgt_chars,
            "alignment": [int(j) for j in a.tolist()],
            "cell_scores": cells.tolist(),
            "pairs": pairs,
            "bias": float(w[0]),
            "score": float(self.latent_feature(x, a).dot(w)),
        }
