"""Multinomial logistic regression: the calibrated probabilities behind the lexical verifier.

Pure numpy, deterministic. `fit_softmax` learns weights from feature rows and labels (full-batch
gradient descent on the mean cross-entropy plus an L2 penalty, features standardised first);
`predict_proba` turns a feature row into class probabilities. A fitted model is a plain dict
(JSON-ready): classes, feature names, means, scales, weights, bias.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def softmax(scores: Any) -> Any:
    """Row-wise softmax of a 2-D array (stable: the row maximum is subtracted first)."""
    import numpy as np

    shifted = scores - scores.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=1, keepdims=True)


def fit_softmax(
    rows: Sequence[Sequence[float]],
    labels: Sequence[str],
    *,
    classes: Sequence[str],
    feature_names: Sequence[str],
    l2: float = 0.01,
    steps: int = 3000,
    learning_rate: float = 0.5,
) -> dict[str, Any]:
    """Weights of a softmax regression of `labels` on `rows` (one row of features per label)."""
    import numpy as np

    x = np.asarray(rows, dtype=float)
    if x.ndim != 2 or x.shape[0] != len(labels) or x.shape[1] != len(feature_names):
        raise ValueError(f"rows must be {len(labels)} x {len(feature_names)}, got shape {x.shape}")
    index = {label: i for i, label in enumerate(classes)}
    unknown = sorted(set(labels) - set(index))
    if unknown:
        raise ValueError(f"labels not among the classes: {unknown}")
    y = np.zeros((len(labels), len(classes)))
    y[np.arange(len(labels)), [index[label] for label in labels]] = 1.0
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale
    weights = np.zeros((z.shape[1], len(classes)))
    bias = np.zeros(len(classes))
    n = len(labels)
    for _ in range(steps):
        p = softmax(z @ weights + bias)
        grad = p - y
        weights -= learning_rate * (z.T @ grad / n + l2 * weights)
        bias -= learning_rate * grad.mean(axis=0)
    return {
        "classes": list(classes),
        "features": list(feature_names),
        "mean": mean.tolist(),
        "scale": scale.tolist(),
        "weights": weights.tolist(),
        "bias": bias.tolist(),
        "l2": l2,
    }


def predict_proba(model: dict[str, Any], row: Sequence[float]) -> dict[str, float]:
    """Class -> probability for one feature row."""
    import numpy as np

    z = (np.asarray(row, dtype=float) - np.asarray(model["mean"])) / np.asarray(model["scale"])
    scores = z @ np.asarray(model["weights"]) + np.asarray(model["bias"])
    probabilities = softmax(scores[None, :])[0]
    return {label: float(p) for label, p in zip(model["classes"], probabilities, strict=True)}


def load_model(path: str | Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def save_model(model: dict[str, Any], path: str | Path) -> None:
    Path(path).write_text(json.dumps(model, indent=1) + "\n", encoding="utf-8")
