"""``StructuredPerceptron``: Collins' structured perceptron, online or batch, averaged."""

from __future__ import annotations

import numbers

import numpy as np

from latentstruct.params import BOOL, NJOBS, PASSES, CALLABLE, Interval, Satisfies
from latentstruct.pystruct.learners.base import BaseSSVM, inference_job

__all__ = ["StructuredPerceptron"]


def _average_value(value) -> bool:
    return isinstance(value, (bool, np.bool_, numbers.Integral))


class StructuredPerceptron(BaseSSVM):
    """Structured perceptron (Collins 2002), with averaging.

    Problem: find ``w`` with ``w . phi(x_i, y_i) >= w . phi(x_i, y)`` for every example
    and labelling (separable data); no objective is minimised.

    Algorithm: each epoch visits the examples in order; a prediction ``y_hat`` (the model's
    inference at ``w``) with ``loss(y_i, y_hat) > 0`` moves ``w`` by ``eta * (phi(x_i, y_i) -
    phi(x_i, y_hat))`` with ``eta = (decay_t0 + epoch) ** decay_exponent`` (epochs from 0).
    Later updates weigh more: the perceptron's predictions do not change when ``w`` is
    scaled, so this is a decay of the earlier steps.  With ``batch=True`` an epoch predicts
    every example at one ``w`` and then applies the sum of the updates.  An epoch without a
    mistake ends training.

    ``average``: ``False`` returns the last ``w``; ``True`` the mean of ``w`` after every
    step (every example online, every epoch in batch mode) of all epochs; an int ``k >= 0``
    the mean over the epochs from the k-th (counted from 0; a zero vector when training
    stopped before it); ``k < 0`` the mean over the last ``|k|`` epochs run.

    Attributes: ``w``, ``loss_curve_`` (per epoch, the summed loss of its predictions over
    the summed ``max_loss``), ``timestamps_``.
    """

    _parameter_constraints = {
        "max_iter": [PASSES],
        "verbose": [Interval(int, 0, None), BOOL],
        "batch": [BOOL],
        "decay_exponent": [Interval(float, 0, None)],
        "decay_t0": [Interval(float, 0, None)],
        "average": [Satisfies(_average_value, "a bool or an int")],
        "n_jobs": [NJOBS],
        "logger": [CALLABLE, None],
    }

    def __init__(self, model, max_iter=100, verbose=0, batch=False, decay_exponent=0,
                 decay_t0=10, average=False, n_jobs=1, logger=None):
        super().__init__(model, max_iter=max_iter, verbose=verbose, n_jobs=n_jobs,
                         logger=logger)
        del self.C, self.show_loss_every  # not the perceptron's parameters
        self.batch = batch
        self.decay_exponent = decay_exponent
        self.decay_t0 = decay_t0
        self.average = average

    def _after_iteration(self, X, Y, iteration):
        if self.logger is not None:
            self.logger(self, iteration)

    def fit(self, X, Y, initialize=True):
        """Train on inputs ``X`` and labellings ``Y``."""
        Y = self._start(X, Y, initialize)
        model = self.model
        w = np.zeros(model.size_joint_feature)
        epoch_means, epoch_counts = [], []
        max_loss = float(sum(model.max_loss(y) for y in Y)) or 1.0
        for epoch in range(self.max_iter):
            rate = float(self.decay_t0 + epoch) ** self.decay_exponent
            mean, count, total_loss, mistakes = np.zeros_like(w), 0, 0.0, 0
            if self.batch:
                Y_hat = self._map(inference_job, [model] * len(X), X, [w] * len(X))
                step = np.zeros_like(w)
                for x, y, y_hat in zip(X, Y, Y_hat):
                    loss = model.loss(y, y_hat)
                    if loss > 0:
                        step += model.joint_feature(x, y) - model.joint_feature(x, y_hat)
                        total_loss += loss
                        mistakes += 1
                w = w + rate * step
                mean, count = w.copy(), 1
            else:
                for x, y in zip(X, Y):
                    y_hat = model.inference(x, w)
                    loss = model.loss(y, y_hat)
                    if loss > 0:
                        w = w + rate * (model.joint_feature(x, y) - model.joint_feature(x, y_hat))
                        total_loss += loss
                        mistakes += 1
                    count += 1
                    # a running mean: a sum of huge weights would overflow
                    mean += (w - mean) / count
            epoch_means.append(mean)
            epoch_counts.append(count)
            self.loss_curve_.append(total_loss / max_loss)
            self.w = w
            self._tick()
            self._say("epoch %d: %d mistakes", epoch, mistakes)
            self._after_iteration(X, Y, epoch)
            if mistakes == 0:
                break
        self.w = self._averaged(w, epoch_means, epoch_counts)
        self._finish()
        return self

    def _averaged(self, w, means, counts):
        average = self.average
        if isinstance(average, (bool, np.bool_)):
            if not average:
                return w
            chosen = range(len(means))
        elif average >= 0:
            chosen = range(int(average), len(means))
        else:
            chosen = range(max(0, len(means) + int(average)), len(means))
        result, seen = np.zeros_like(w), 0
        for e in chosen:
            seen += counts[e]
            result += (counts[e] / seen) * (means[e] - result)
        return result
