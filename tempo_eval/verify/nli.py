"""The local NLI verifier: a DeBERTa (or any 3-way NLI) sequence-classification checkpoint.

Use it like sentence-transformers' CrossEncoder::

    nli = NLIVerifier()                                   # hub id or local directory
    probs = nli.predict([(premise, hypothesis), ...], batch_size=8)   # (n, 3) entail/neutral/contra
    verdicts = nli.verify(claims, premises)               # list[ClaimVerdict] with evidence

How a claim is decided (`verify`)
    1. Premises are split into sentences (`sentence_spans`); a sentence opening with a pronoun
       keeps the sentence before it ("The tower was completed in 1889. It is 330 m tall."); a
       sentence longer than the premise budget (3/4 of the max length) is cut into overlapping
       token windows.
    2. Candidates per claim: with ``candidates="embedding"`` the `top_k` premise sentences most
       similar to the claim (MiniLM cosine) plus every premise sentence sharing a year with the
       claim; with ``candidates="exhaustive"`` all of them.
    3. All (premise sentence, claim) pairs of all claims go through one `predict` call.
    4. Aggregation by maximum over a claim's candidates, probabilities (e, n, c):
       - take the candidate with the highest entailment; if entailment is its argmax, the claim is
         SUPPORTED and that sentence is the evidence;
       - otherwise take the candidate with the highest contradiction; if contradiction is its
         argmax, the claim is CONTRADICTED with that evidence;
       - otherwise NEUTRAL, with the highest-entailment candidate as evidence.
       The verdict keeps the deciding pair's three probabilities. A claim with no premise
       sentences at all is NEUTRAL with reason "no premises".

Label order is read from the checkpoint's ``config.id2label`` (names matched case-insensitively:
entailment/entail, neutral, contradiction/contradict), never assumed.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from tempo_eval.common.values import require_text_list
from tempo_eval.core.text import sentence_spans
from tempo_eval.verify.base import ClaimVerdict, Verdict, VerifierUnavailable
from tempo_eval.verify.cross_rows import CrossRowBatches
from tempo_eval.verify.facts import mentioned_years
from tempo_eval.verify.lexical import ANAPHORIC_START

if TYPE_CHECKING:
    import numpy as np

    from tempo_eval.verify.embeddings import Embedder

logger = logging.getLogger(__name__)

DEFAULT_NLI_MODEL = "MoritzLaurer/DeBERTa-v3-base-mnli-fever-anli"
#: the fixed column order of `predict`'s output and the keys of `ClaimVerdict.probabilities`
LABELS = ("entailment", "neutral", "contradiction")
_LABEL_PREFIXES = {"entail": "entailment", "neutral": "neutral", "contradict": "contradiction"}
#: "name" or "org/name"; anything else that is not an existing directory is a missing path
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")
#: used when neither the tokenizer nor the config states a usable maximum
_FALLBACK_MAX_LENGTH = 512


def map_labels(id2label: dict[Any, str]) -> list[int]:
    """Column indices of entailment, neutral, contradiction in the model's logits.

    Raises `VerifierUnavailable` unless the labels map one-to-one onto these three names.
    """
    found = {int(index): str(label) for index, label in id2label.items()}
    mapped: dict[str, int] = {}
    for index, label in sorted(found.items()):
        key = label.strip().lower()
        name = next((full for prefix, full in _LABEL_PREFIXES.items() if key.startswith(prefix)), None)
        if name is None or name in mapped:
            mapped = {}
            break
        mapped[name] = index
    if len(found) != 3 or len(mapped) != 3:
        labels = ", ".join(repr(found[index]) for index in sorted(found))
        raise VerifierUnavailable(
            f"The NLI model's labels ({labels}) cannot be mapped to entailment, neutral and contradiction."
        )
    return [mapped[name] for name in LABELS]


class NLIVerifier:
    """Verdicts from a local 3-way NLI cross-encoder (see the module docstring for the rules).

    Args:
        model: a model hub id or a local directory with a sequence-classification checkpoint.
        device: torch device ("cpu", "cuda", "mps").
        batch_size: pairs per forward pass (default 8).
        max_length: token limit per pair; default the model's own (tokenizer / config).
        candidates: "embedding" (top_k similar sentences + shared years) or "exhaustive".
        top_k: premise sentences per claim chosen by embedding similarity.
        num_threads: `torch.set_num_threads` before inference, when given.
        embedder: anything with `embed(texts) -> unit vectors`; default the process-wide MiniLM.
    """

    name = "nli"

    def __init__(
        self,
        model: str = DEFAULT_NLI_MODEL,
        *,
        device: str = "cpu",
        batch_size: int = 8,
        max_length: int | None = None,
        candidates: str = "embedding",
        top_k: int = 3,
        num_threads: int | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        if not isinstance(model, (str, os.PathLike)) or not str(model).strip():
            raise ValueError(f"model must be a model hub id or a local directory, got {model!r}")
        _require_positive_int("batch_size", batch_size)
        _require_positive_int("top_k", top_k)
        if max_length is not None:
            _require_positive_int("max_length", max_length)
        if num_threads is not None:
            _require_positive_int("num_threads", num_threads)
        if candidates not in ("embedding", "exhaustive"):
            raise ValueError(f"candidates must be 'embedding' or 'exhaustive', got {candidates!r}")
        self.model_id = str(model)
        self.device = device
        self.batch_size = batch_size
        self.max_length = max_length
        self.candidates = candidates
        self.top_k = top_k
        self.num_threads = num_threads
        self._embedder = embedder
        self._tokenizer: Any = None
        self._model: Any = None
        self._columns: list[int] | None = None
        self._model_max_length: int | None = None
        self._load_error: VerifierUnavailable | None = None
        self._lock = threading.Lock()
        self._cross_rows = CrossRowBatches(self.verify_many)
        #: called with the number of (premise, claim) pairs after each forward pass (progress)
        self.on_pairs: Callable[[int], None] | None = None

    # --- identity ------------------------------------------------------------------------------

    @property
    def settings(self) -> str:
        """The settings that change verdicts, for cache keys (`CachedVerifier` adds them)."""
        return f"candidates={self.candidates};top_k={self.top_k};max_length={self.max_length}"

    def __repr__(self) -> str:
        return f"NLIVerifier({self.model_id!r}, device={self.device!r}, candidates={self.candidates!r})"

    # --- loading ----------------------------------------------------------------------------------

    def _load(self) -> None:
        """Load tokenizer and model once; a failure is remembered and raised again as is."""
        if self._model is not None:
            return
        with self._lock:
            if self._model is not None:
                return
            if self._load_error is not None:
                raise self._load_error
            try:
                self._load_checkpoint()
            except VerifierUnavailable as exc:
                self._load_error = exc
                raise

    def _load_checkpoint(self) -> None:
        model_id = self.model_id
        local = Path(model_id).expanduser()
        is_dir = local.is_dir()
        looks_like_path = not _HUB_ID.match(model_id)
        if not is_dir and looks_like_path:
            raise VerifierUnavailable(
                f"The NLI model '{model_id}' could not be loaded: there is no such local directory."
            )
        try:
            import transformers  # noqa: F401
        except ImportError:
            raise VerifierUnavailable(
                "The NLI verifier needs the transformers and torch packages: install the [nli] extra "
                "(pip install 'tempo-eval[nli]')."
            ) from None
        if is_dir:
            try:
                tokenizer, model = _from_pretrained(str(local), local_files_only=True)
            except Exception as exc:
                logger.debug("loading NLI model %r failed", model_id, exc_info=True)
                detail = (str(exc).strip().splitlines() or [""])[0][:200].rstrip(".")
                raise VerifierUnavailable(
                    f"The NLI model '{model_id}' could not be loaded from its local directory "
                    f"({type(exc).__name__}{': ' + detail if detail else ''})."
                ) from None
        else:
            tokenizer, model = self._load_from_hub(model_id)
        if tokenizer.pad_token is None:
            # padding with token 0 would feed the model a real word; the checkpoint must say how to pad
            raise VerifierUnavailable(
                f"The NLI model '{model_id}' has a tokenizer without a padding token, so pairs cannot "
                "be batched; set its pad_token (tokenizer_config.json) or choose another checkpoint."
            )
        columns = map_labels(model.config.id2label)
        try:
            model.to(self.device)
        except Exception as exc:  # "cuda" without a GPU, an unknown device string, ...
            logger.debug("moving NLI model to %r failed", self.device, exc_info=True)
            raise VerifierUnavailable(
                f"The NLI model '{model_id}' could not be moved to device '{self.device}' ({type(exc).__name__})."
            ) from None
        model.eval()
        self._tokenizer, self._columns = tokenizer, columns
        self._model_max_length = _model_max_length(tokenizer, model.config)
        self._model = model  # set last: its presence means "fully loaded"

    @staticmethod
    def _load_from_hub(model_id: str) -> tuple[Any, Any]:
        """The local hub cache first; the hub itself only when it can be reached.

        Without the quick reachability probe an unreachable hub costs about a minute of retries.
        """
        unreachable = (
            f"The NLI model '{model_id}' could not be loaded: it is not a local directory "
            "and the model hub cannot be reached."
        )
        try:
            return _from_pretrained(model_id, local_files_only=True)
        except Exception:
            logger.debug("NLI model %r is not in the local hub cache", model_id, exc_info=True)
        if _hub_offline() or not _hub_reachable():
            raise VerifierUnavailable(unreachable)
        try:
            return _from_pretrained(model_id, local_files_only=False)
        except Exception as exc:
            logger.debug("loading NLI model %r from the hub failed", model_id, exc_info=True)
            if _looks_like_connection_error(exc):
                raise VerifierUnavailable(unreachable) from None
            raise VerifierUnavailable(
                f"The NLI model '{model_id}' could not be loaded: it is not a local directory "
                f"and the model hub did not provide it ({type(exc).__name__})."
            ) from None

    def check_available(self) -> tuple[bool, str]:
        """(True, description) when the checkpoint loads, else (False, the one-sentence reason).

        Tries to load the model; the outcome is remembered, so a second call is instant.
        """
        try:
            self._load()
        except VerifierUnavailable as exc:
            return False, str(exc)
        return True, f"The NLI model '{self.model_id}' is loaded on {self.device}."

    @property
    def model(self) -> Any:
        """The loaded transformers model (loads it on first access)."""
        self._load()
        return self._model

    @property
    def tokenizer(self) -> Any:
        """The loaded tokenizer (loads it on first access)."""
        self._load()
        return self._tokenizer

    @property
    def effective_max_length(self) -> int:
        """Tokens per (premise, claim) pair: `max_length` when given, else the model's own limit."""
        self._load()
        assert self._model_max_length is not None
        return min(self.max_length, self._model_max_length) if self.max_length else self._model_max_length

    # --- inference --------------------------------------------------------------------------------

    def predict(
        self,
        pairs: Sequence[tuple[str, str]],
        batch_size: int | None = None,
        show_progress_bar: bool = False,
        on_pairs: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Probabilities (entailment, neutral, contradiction) for each (premise, hypothesis) pair.

        Pairs are tokenised once (premise truncated first at the max length), sorted by token
        length, batched, padded to the longest pair of each batch and run under
        `torch.inference_mode()`; rows come back in input order. No pairs -> array of shape (0, 3).
        """
        import numpy as np

        pairs = _check_pairs(pairs)
        batch_size = self.batch_size if batch_size is None else batch_size
        _require_positive_int("batch_size", batch_size)
        if not pairs:
            return np.zeros((0, len(LABELS)), dtype=np.float32)
        self._load()
        import torch

        if self.num_threads is not None:
            torch.set_num_threads(self.num_threads)
        features = self._tokenize(pairs)
        order = sorted(range(len(pairs)), key=lambda i: len(features[i]["input_ids"]))
        batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
        if show_progress_bar:
            from tqdm.auto import tqdm

            batches = tqdm(batches, desc="NLI", unit="batch")
        probabilities = np.empty((len(pairs), len(LABELS)), dtype=np.float32)
        columns = torch.tensor(self._columns)
        with torch.inference_mode():
            for batch in batches:
                inputs = self._pad([features[i] for i in batch])
                logits = self._model(**inputs).logits.float()
                probs = torch.softmax(logits, dim=-1).index_select(1, columns.to(logits.device))
                probabilities[batch] = probs.cpu().numpy()
                if on_pairs is not None:
                    on_pairs(len(batch))
        return probabilities

    def _tokenize(self, pairs: list[tuple[str, str]]) -> list[dict[str, list[int]]]:
        self._load()
        tokenizer = self._tokenizer
        max_length = self.effective_max_length
        premises = [premise for premise, _ in pairs]
        hypotheses = [hypothesis for _, hypothesis in pairs]
        encoded = tokenizer(
            premises, hypotheses, truncation="only_first", max_length=max_length, padding=False
        )
        keys = [key for key in tokenizer.model_input_names if key in encoded]
        features = [{key: encoded[key][i] for key in keys} for i in range(len(pairs))]
        too_long = [i for i, feature in enumerate(features) if len(feature["input_ids"]) > max_length]
        if too_long:
            # the hypothesis alone exceeds the budget: truncate both sides rather than fail
            fixed = tokenizer(
                [premises[i] for i in too_long], [hypotheses[i] for i in too_long],
                truncation="longest_first", max_length=max_length, padding=False,
            )
            for row, i in enumerate(too_long):
                features[i] = {key: fixed[key][row] for key in keys}
        return features

    def _pad(self, batch: list[dict[str, list[int]]]) -> dict[str, Any]:
        """Pad a batch to its own longest sequence (never to the model max length) with the
        tokenizer's own rules: its padding side, its pad values per input and its attention mask."""
        padded = self._tokenizer.pad(batch, padding="longest", return_tensors="pt")
        return {key: value.to(self.device) for key, value in padded.items()}

    # --- verification ---------------------------------------------------------------------------

    def premise_units(self, premises: Sequence[str]) -> list[str]:
        """The premise texts each claim may be checked against, in order.

        One unit per premise sentence. A sentence opening with a pronoun ("It is 330 m tall.")
        carries the sentence before it (the exact slice of the premise), so the model sees what
        "It" is, as long as both fit the premise budget (3/4 of the max length). A single
        sentence over the budget is cut into overlapping token windows.
        """
        candidates: list[tuple[str, str]] = []  # (unit with context, sentence alone)
        for premise in premises:
            spans = sentence_spans(premise)
            for k, (start, end) in enumerate(spans):
                sentence = premise[start:end]
                anaphoric = k > 0 and ANAPHORIC_START.match(sentence)
                with_context = premise[spans[k - 1][0] : end] if anaphoric else sentence
                candidates.append((with_context, sentence))
        if not candidates:
            return []
        self._load()
        budget = max(8, self.effective_max_length * 3 // 4 - 3)
        texts = list(dict.fromkeys(text for pair in candidates for text in pair))
        token_ids = self._tokenizer(texts, add_special_tokens=False)["input_ids"]
        lengths = {text: len(ids) for text, ids in zip(texts, token_ids, strict=True)}
        units: list[str] = []
        for with_context, sentence in candidates:
            if lengths[with_context] <= budget:
                units.append(with_context)
            elif lengths[sentence] <= budget:
                units.append(sentence)
            else:
                units.extend(self._windows(sentence, budget))
        return units

    def _windows(self, sentence: str, budget: int) -> list[str]:
        """Overlapping windows of at most `budget` tokens (stride budget/2), as substrings."""
        offsets = self._tokenizer(sentence, add_special_tokens=False, return_offsets_mapping=True)[
            "offset_mapping"
        ]
        stride = max(1, budget // 2)
        windows = []
        for start in range(0, len(offsets), stride):
            chunk = offsets[start : start + budget]
            windows.append(sentence[chunk[0][0] : chunk[-1][1]].strip())
            if start + budget >= len(offsets):
                break
        return [window for window in windows if window]

    def candidate_indices(self, claims: Sequence[str], units: Sequence[str]) -> list[list[int]]:
        """For each claim, the indices of the premise units it is checked against (see module doc)."""
        everything = list(range(len(units)))
        if self.candidates == "exhaustive" or len(units) <= self.top_k:
            return [everything for _ in claims]
        try:
            embedder = self._embedder
            if embedder is None:
                from tempo_eval.verify.embeddings import default_embedder

                embedder = default_embedder()
            vectors = embedder.embed(list(claims) + list(units))
        except VerifierUnavailable as exc:
            # exhaustive is slower but never less correct than the embedding shortcut
            logger.warning("embedding candidates unavailable (%s); checking every premise sentence", exc)
            return [everything for _ in claims]
        claim_vectors, unit_vectors = vectors[: len(claims)], vectors[len(claims) :]
        similarity = claim_vectors @ unit_vectors.T
        unit_years = [mentioned_years(unit) for unit in units]
        chosen: list[list[int]] = []
        for row, claim in enumerate(claims):
            ranked = sorted(everything, key=lambda j, row=row: -float(similarity[row, j]))
            picks = ranked[: self.top_k]
            years = mentioned_years(claim)
            if years:
                picks += [j for j in ranked[self.top_k :] if unit_years[j] & years]
            chosen.append(picks)
        return chosen

    def verify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        """One verdict per claim against `premises` (rules in the module docstring).

        Raises `VerifierUnavailable` when the model cannot be loaded; any other model failure
        turns every claim into an ERROR verdict (the metric reports NaN with the reason).
        """
        return self.verify_many([(claims, premises)])[0]

    def verify_many(self, requests: Sequence[tuple[Sequence[str], Sequence[str]]]) -> list[list[ClaimVerdict]]:
        """`verify` for many (claims, premises) requests (the rows of a batch): the pairs of all
        of them go through one `predict` call, sorted by length across rows; each request's
        verdicts are decided on its own pairs, as `verify` decides them."""
        plans = []
        pairs: list[tuple[str, str]] = []
        for claims, premises in requests:
            claims = require_text_list(claims, "claims")
            premises = require_text_list(premises, "premises")
            units = self.premise_units(premises) if claims else []
            candidates = self.candidate_indices(claims, units) if claims and units else [[] for _ in claims]
            plans.append((claims, units, candidates, len(pairs)))
            pairs += [(units[j], claim) for claim, picks in zip(claims, candidates, strict=True) for j in picks]
        try:
            probabilities = self.predict(pairs) if self.on_pairs is None else self.predict(pairs, on_pairs=self.on_pairs)
        except VerifierUnavailable:
            raise
        except Exception as exc:
            logger.exception("NLI inference failed")
            error = f"{type(exc).__name__}: {exc}"
            return [[ClaimVerdict(claim, Verdict.ERROR, error=error) for claim in claims] for claims, *_ in plans]
        out: list[list[ClaimVerdict]] = []
        for claims, units, candidates, row in plans:  # no units, no picks: "no premises"
            verdicts: list[ClaimVerdict] = []
            for claim, picks in zip(claims, candidates, strict=True):
                verdicts.append(aggregate(claim, [units[j] for j in picks], probabilities[row : row + len(picks)]))
                row += len(picks)
            out.append(verdicts)
        return out

    async def averify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        """`verify` in a worker thread, so an event loop stays responsive during inference; the
        requests of rows in flight together go through the model together (`CrossRowBatches`)."""
        return await self._cross_rows.averify(claims, premises)


def aggregate(claim: str, evidence: Sequence[str], probabilities: Any) -> ClaimVerdict:
    """Decide one claim from its candidates' (entailment, neutral, contradiction) rows (rule 4 of
    the module docstring). No candidates -> NEUTRAL "no premises"."""
    if len(evidence) == 0:
        return ClaimVerdict(claim, Verdict.NEUTRAL, reason="no premises")
    rows = [[float(value) for value in row] for row in probabilities]
    entail, _, contra = range(3)
    best_entail = max(range(len(rows)), key=lambda i: rows[i][entail])
    best_contra = max(range(len(rows)), key=lambda i: rows[i][contra])
    if _argmax(rows[best_entail]) == entail:
        index, verdict = best_entail, Verdict.SUPPORTED
        reason = f"entailed by the evidence (p={rows[index][entail]:.2f})"
    elif _argmax(rows[best_contra]) == contra:
        index, verdict = best_contra, Verdict.CONTRADICTED
        reason = f"contradicted by the evidence (p={rows[index][contra]:.2f})"
    else:
        index, verdict = best_entail, Verdict.NEUTRAL
        reason = f"no premise sentence entails or contradicts it (best entailment p={rows[index][entail]:.2f})"
    return ClaimVerdict(
        claim,
        verdict,
        evidence=evidence[index],
        probabilities=dict(zip(LABELS, rows[index], strict=True)),
        reason=reason,
        confidence=_clip01(rows[index][_LABEL_OF[verdict]]),
    )


#: the probability column each verdict rests on
_LABEL_OF = {Verdict.SUPPORTED: 0, Verdict.NEUTRAL: 1, Verdict.CONTRADICTED: 2}


def _clip01(value: float) -> float:
    # softmax output can exceed 1 by a rounding error
    return min(1.0, max(0.0, float(value)))


def _argmax(row: Sequence[float]) -> int:
    return max(range(len(row)), key=row.__getitem__)


def _model_max_length(tokenizer: Any, config: Any) -> int:
    """The smaller of the tokenizer's stated limit and the config's positions (ignoring sentinels)."""
    limits = []
    tokenizer_limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(tokenizer_limit, int) and 0 < tokenizer_limit < 100_000:
        limits.append(tokenizer_limit)
    positions = getattr(config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        limits.append(positions)
    return min(limits) if limits else _FALLBACK_MAX_LENGTH


def _from_pretrained(source: str, *, local_files_only: bool) -> tuple[Any, Any]:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_files_only)
    model = AutoModelForSequenceClassification.from_pretrained(source, local_files_only=local_files_only)
    return tokenizer, model


def _hub_reachable(timeout: float = 3.0) -> bool:
    """Can a TCP connection to the hub endpoint be opened? (Assumed yes behind an HTTP proxy.)"""
    if any(os.environ.get(name) for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return True
    endpoint = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    try:
        socket.create_connection((endpoint.hostname or "huggingface.co", port), timeout=timeout).close()
    except OSError:
        return False
    return True


def _hub_offline() -> bool:
    return any(
        os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def _looks_like_connection_error(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        name, text = type(seen).__name__.lower(), str(seen).lower()
        if any(word in name for word in ("connection", "timeout", "offline")) or any(
                word in text for word in ("connect", "offline", "resolve", "network")):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _require_positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _check_pairs(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    if isinstance(pairs, (str, bytes)):
        raise TypeError("pairs must be a list of (premise, hypothesis) tuples, not a string")
    result = []
    for pair in pairs:  # once: `pairs` may be an iterator
        if not isinstance(pair, (tuple, list)) or len(pair) != 2 or not all(
                isinstance(part, str) for part in pair):
            raise TypeError(f"pairs must contain (premise, hypothesis) string pairs, found {pair!r}")
        result.append((pair[0], pair[1]))
    return result
