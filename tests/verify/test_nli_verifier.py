"""NLIVerifier driven through its real loading, label-mapping and batching code on a tiny random DeBERTa."""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tempo_eval.verify.base import ClaimVerdict, Verdict, Verifier, VerifierUnavailable
from tempo_eval.verify.nli import LABELS, NLIVerifier, aggregate, map_labels
from tests.support.tiny_nli import CANONICAL, build_tiny_nli, tiny_nli_dir  # noqa: F401

PAIRS = [
    ("Paris is the capital of France.", "Paris is in France."),
    ("The Eiffel Tower was completed in 1889 by the company of a French engineer.", "The tower was built in 1500."),
    ("a", "b"),
    ("The war began in 1939 and ended in 1945 with a peace treaty signed in Paris.", "The war ended in 1945."),
    ("The museum opened.", "The Louvre museum in Paris opened to the public in 1793 after the revolution."),
    ("It rained.", "It was sunny."),
    ("The company was founded in 2008 and its shares rose in 2009.", "Shares fell."),
]


@pytest.fixture
def nli(tiny_nli_dir: Path) -> NLIVerifier:  # noqa: F811
    return NLIVerifier(str(tiny_nli_dir), batch_size=3)


def _one_sentence(message: str) -> bool:
    return "\n" not in message and message.endswith(".") and "Traceback" not in message


# --- loading -----------------------------------------------------------------------------------


def test_loads_checkpoint_from_local_directory(nli: NLIVerifier, tiny_nli_dir: Path) -> None:  # noqa: F811
    available, message = nli.check_available()
    assert available, message
    assert nli.model_id == str(tiny_nli_dir)
    assert nli.name == "nli"
    assert nli.effective_max_length == 128
    assert isinstance(nli, Verifier)


def test_missing_local_directory_is_unavailable_with_one_sentence(tmp_path: Path) -> None:
    verifier = NLIVerifier(str(tmp_path / "no" / "such" / "model"))
    available, message = verifier.check_available()
    assert not available
    assert _one_sentence(message)
    assert "no such local directory" in message
    with pytest.raises(VerifierUnavailable, match="could not be loaded"):
        verifier.verify(["A claim."], ["A premise."])


def test_hub_id_without_hub_access_is_unavailable_with_one_sentence() -> None:
    verifier = NLIVerifier("tempo-eval-tests/no-such-nli-model")  # HF_HUB_OFFLINE=1 from conftest
    available, message = verifier.check_available()
    assert not available
    assert _one_sentence(message)
    assert message == (
        "The NLI model 'tempo-eval-tests/no-such-nli-model' could not be loaded: it is not a local "
        "directory and the model hub cannot be reached."
    )
    assert verifier.check_available() == (False, message)  # outcome remembered


def test_broken_checkpoint_directory_is_unavailable_with_one_sentence(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{ this is not json")
    available, message = NLIVerifier(str(tmp_path)).check_available()
    assert not available
    assert _one_sentence(message)
    assert "local directory" in message


def test_an_unusable_device_is_unavailable_with_one_sentence(tiny_nli_dir: Path) -> None:  # noqa: F811
    available, message = NLIVerifier(str(tiny_nli_dir), device="not-a-device").check_available()
    assert not available
    assert _one_sentence(message)
    assert "device 'not-a-device'" in message


@pytest.mark.parametrize(
    "labels",
    [
        {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"},
        {0: "entailment", 1: "not_entailment"},
        {0: "entailment", 1: "entailment", 2: "contradiction"},
    ],
)
def test_unmappable_labels_make_the_verifier_unavailable(tmp_path: Path, labels: dict[int, str]) -> None:
    path = build_tiny_nli(tmp_path / "model", id2label=labels)
    available, message = NLIVerifier(str(path)).check_available()
    assert not available
    assert _one_sentence(message)
    for label in labels.values():
        assert repr(label) in message


def test_map_labels_reads_names_case_insensitively() -> None:
    assert map_labels({0: "CONTRADICTION", 1: "Entailment", 2: "neutral"}) == [1, 2, 0]
    assert map_labels({"0": "entail", "1": "neutral", "2": "contradict"}) == [0, 1, 2]


@pytest.mark.parametrize("order", list(itertools.permutations(CANONICAL)))
def test_every_label_order_gives_the_same_probabilities_by_name(
    tmp_path: Path, nli: NLIVerifier, order: tuple[str, ...]
) -> None:
    # same seed, permuted classifier rows + labels: by-name probabilities must not move
    labels = {i: name.upper() if i == 0 else name for i, name in enumerate(order)}
    permuted = NLIVerifier(str(build_tiny_nli(tmp_path / "model", id2label=labels)))
    expected = nli.predict(PAIRS)
    assert not np.allclose(expected[:, 0], expected[:, 2])  # the check can see a column swap
    np.testing.assert_allclose(permuted.predict(PAIRS), expected, atol=1e-6)


def test_constructor_rejects_bad_settings(tiny_nli_dir: Path) -> None:  # noqa: F811
    with pytest.raises(ValueError, match="candidates"):
        NLIVerifier(str(tiny_nli_dir), candidates="all")
    with pytest.raises(ValueError, match="batch_size"):
        NLIVerifier(str(tiny_nli_dir), batch_size=0)
    with pytest.raises(ValueError, match="top_k"):
        NLIVerifier(str(tiny_nli_dir), top_k=1.5)  # type: ignore[arg-type]


def test_importing_the_verifiers_loads_no_heavy_package() -> None:
    code = (
        "import sys, tempo_eval.verify.nli, tempo_eval.verify.lexical, tempo_eval.verify.cache, "
        "tempo_eval.verify.embeddings, tempo_eval.core.text; "
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- predict -----------------------------------------------------------------------------------


def test_predict_returns_probability_rows_in_label_order(nli: NLIVerifier) -> None:
    probs = nli.predict(PAIRS)
    assert probs.shape == (len(PAIRS), 3)
    assert LABELS == ("entailment", "neutral", "contradiction")
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-6)
    assert (probs >= 0).all() and (probs <= 1).all()


def test_predict_of_no_pairs_is_an_empty_array(nli: NLIVerifier) -> None:
    assert nli.predict([]).shape == (0, 3)


def test_predict_rejects_malformed_pairs(nli: NLIVerifier) -> None:
    with pytest.raises(TypeError, match="pairs"):
        nli.predict([("only one",)])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="pairs"):
        nli.predict("premise")  # type: ignore[arg-type]


def test_sorted_batches_give_the_same_rows_as_one_by_one(nli: NLIVerifier) -> None:
    batched = nli.predict(PAIRS, batch_size=3)
    single = np.vstack([nli.predict([pair], batch_size=1) for pair in PAIRS])
    np.testing.assert_allclose(batched, single, atol=1e-5)


def test_rows_come_back_in_input_order(nli: NLIVerifier) -> None:
    forward = nli.predict(PAIRS, batch_size=2)
    backward = nli.predict(PAIRS[::-1], batch_size=2)
    np.testing.assert_allclose(backward[::-1], forward, atol=1e-5)


def test_batches_are_sorted_and_padded_to_their_longest_pair(nli: NLIVerifier) -> None:
    widths: list[tuple[int, int]] = []

    def record(_module, _args, kwargs):
        widths.append(tuple(kwargs["input_ids"].shape))

    lengths = sorted(len(nli.tokenizer(p, h)["input_ids"]) for p, h in PAIRS)
    expected = [(len(lengths[i : i + 2]), max(lengths[i : i + 2])) for i in range(0, len(lengths), 2)]
    handle = nli.model.register_forward_pre_hook(record, with_kwargs=True)
    try:
        nli.predict(PAIRS, batch_size=2)
    finally:
        handle.remove()
    assert widths == expected
    assert max(width for _, width in widths) < nli.effective_max_length


def test_only_the_premise_is_truncated_at_max_length(tiny_nli_dir: Path) -> None:  # noqa: F811
    verifier = NLIVerifier(str(tiny_nli_dir), max_length=32)
    premise = " ".join(["the tower was built in paris"] * 40)
    claim = "The Eiffel Tower was completed in 1889."
    features = verifier._tokenize([(premise, claim)])
    ids = features[0]["input_ids"]
    claim_ids = verifier.tokenizer(claim, add_special_tokens=False)["input_ids"]
    assert len(ids) == 32
    assert ids[-len(claim_ids) - 1 : -1] == claim_ids
    assert verifier.predict([(premise, claim)]).shape == (1, 3)


def test_num_threads_is_applied(tiny_nli_dir: Path) -> None:  # noqa: F811
    import torch

    before = torch.get_num_threads()
    try:
        NLIVerifier(str(tiny_nli_dir), num_threads=1).predict(PAIRS[:1])
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


# --- aggregation ---------------------------------------------------------------------------------


def test_aggregate_supported_when_best_entailment_wins() -> None:
    verdict = aggregate("c", ["s1", "s2"], [[0.2, 0.5, 0.3], [0.7, 0.1, 0.2]])
    assert verdict.verdict is Verdict.SUPPORTED
    assert verdict.evidence == "s2"
    assert verdict.probabilities == pytest.approx({"entailment": 0.7, "neutral": 0.1, "contradiction": 0.2})


def test_aggregate_contradicted_when_no_entailment_and_a_contradiction_wins() -> None:
    verdict = aggregate("c", ["s1", "s2", "s3"], [[0.3, 0.6, 0.1], [0.1, 0.1, 0.8], [0.2, 0.3, 0.5]])
    assert verdict.verdict is Verdict.CONTRADICTED
    assert verdict.evidence == "s2"
    assert verdict.probabilities["contradiction"] == pytest.approx(0.8)


def test_aggregate_entailment_beats_a_contradiction_elsewhere() -> None:
    verdict = aggregate("c", ["s1", "s2"], [[0.05, 0.05, 0.9], [0.6, 0.3, 0.1]])
    assert verdict.verdict is Verdict.SUPPORTED
    assert verdict.evidence == "s2"


def test_aggregate_neutral_keeps_the_best_entailment_candidate() -> None:
    verdict = aggregate("c", ["s1", "s2"], [[0.3, 0.6, 0.1], [0.4, 0.5, 0.1]])
    assert verdict.verdict is Verdict.NEUTRAL
    assert verdict.evidence == "s2"
    assert verdict.probabilities["entailment"] == pytest.approx(0.4)


# --- verify ------------------------------------------------------------------------------------------

PREMISES = [
    "Paris is the capital of France. The Eiffel Tower was completed in 1889. It is 330 m tall.",
    "The Louvre opened in 1793. The war began in 1939. The war ended in 1945. The museum closed in 2020.",
]
CLAIMS = ["The Eiffel Tower was built in 1500.", "Paris is the capital of France.", "The war ended in 1945."]


def test_verify_keeps_evidence_and_the_deciding_probabilities(nli: NLIVerifier) -> None:
    verdicts = nli.verify(CLAIMS, PREMISES)
    assert [v.claim for v in verdicts] == CLAIMS
    sentences = [s for p in PREMISES for s in nli.premise_units([p])]
    for verdict in verdicts:
        assert verdict.verdict in {Verdict.SUPPORTED, Verdict.NEUTRAL, Verdict.CONTRADICTED}
        assert verdict.evidence in sentences
        expected = nli.predict([(verdict.evidence, verdict.claim)])[0]
        assert [verdict.probabilities[name] for name in LABELS] == pytest.approx(list(expected), abs=1e-5)
        assert verdict.reason


def test_verify_without_premises_is_neutral_for_every_claim(nli: NLIVerifier) -> None:
    for premises in ([], ["", "   "]):
        verdicts = nli.verify(CLAIMS, premises)
        assert [(v.verdict, v.reason) for v in verdicts] == [(Verdict.NEUTRAL, "no premises")] * 3


def test_verify_without_claims_returns_nothing(nli: NLIVerifier) -> None:
    assert nli.verify([], PREMISES) == []


def test_verify_rejects_a_bare_string(nli: NLIVerifier) -> None:
    with pytest.raises(TypeError, match="claims"):
        nli.verify("A claim.", PREMISES)  # type: ignore[arg-type]


def _count_pairs(verifier: NLIVerifier, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = verifier.predict

    def spy(pairs, batch_size=None, show_progress_bar=False):
        calls.append(len(pairs))
        return real(pairs, batch_size=batch_size, show_progress_bar=show_progress_bar)

    monkeypatch.setattr(verifier, "predict", spy)
    return calls


def test_exhaustive_checks_every_claim_against_every_sentence_in_one_call(
    tiny_nli_dir: Path, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    verifier = NLIVerifier(str(tiny_nli_dir), candidates="exhaustive")
    calls = _count_pairs(verifier, monkeypatch)
    verifier.verify(CLAIMS, PREMISES)
    assert calls == [len(CLAIMS) * 7]


def test_embedding_candidates_are_top_k_plus_sentences_sharing_a_year(
    tiny_nli_dir: Path, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    verifier = NLIVerifier(str(tiny_nli_dir), top_k=1)
    units = verifier.premise_units(PREMISES)
    claims = ["Paris is the capital of France.", "The museum closed in 2020 and the war ended in 1945."]
    candidates = verifier.candidate_indices(claims, units)
    assert [units[j] for j in candidates[0]] == ["Paris is the capital of France."]
    # top-1 plus every other sentence that mentions 2020 or 1945
    assert {units[j] for j in candidates[1]} == {"The museum closed in 2020.", "The war ended in 1945."}
    calls = _count_pairs(verifier, monkeypatch)
    verifier.verify(claims, PREMISES)
    assert calls == [3]


def test_without_embeddings_every_sentence_is_a_candidate(tiny_nli_dir: Path) -> None:  # noqa: F811
    class Unavailable:
        def embed(self, texts):
            raise VerifierUnavailable("The MiniLM embedding model is not installed.")

    verifier = NLIVerifier(str(tiny_nli_dir), top_k=1, embedder=Unavailable())
    units = verifier.premise_units(PREMISES)
    assert verifier.candidate_indices(CLAIMS, units) == [list(range(len(units)))] * len(CLAIMS)


def test_a_sentence_opening_with_a_pronoun_keeps_the_sentence_before_it(nli: NLIVerifier) -> None:
    premise = "Paris is the capital of France.\nThe Eiffel Tower was completed in 1889.\nIt is 330 m tall."
    assert nli.premise_units([premise]) == [
        "Paris is the capital of France.",
        "The Eiffel Tower was completed in 1889.",
        "The Eiffel Tower was completed in 1889.\nIt is 330 m tall.",
    ]


def test_long_premise_sentences_are_cut_into_windows_under_the_budget(nli: NLIVerifier) -> None:
    sentence = " ".join(f"the tower number {i} was built in paris" for i in range(40)) + "."
    units = nli.premise_units([sentence])
    budget = nli.effective_max_length * 3 // 4 - 3
    assert len(units) > 1
    for unit in units:
        assert unit in sentence
        assert len(nli.tokenizer(unit, add_special_tokens=False)["input_ids"]) <= budget


def test_a_model_failure_turns_claims_into_error_verdicts(
    nli: NLIVerifier, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args, **kwargs):
        raise RuntimeError("out of memory")

    monkeypatch.setattr(nli, "predict", broken)
    verdicts = nli.verify(CLAIMS[:2], PREMISES)
    assert [v.verdict for v in verdicts] == [Verdict.ERROR, Verdict.ERROR]
    assert verdicts[0].error == "RuntimeError: out of memory"


def test_averify_gives_the_same_verdicts_as_verify(nli: NLIVerifier) -> None:
    sync = nli.verify(CLAIMS, PREMISES)
    result: list[ClaimVerdict] = asyncio.run(nli.averify(CLAIMS, PREMISES))
    assert [v.verdict for v in result] == [v.verdict for v in sync]
    assert [v.evidence for v in result] == [v.evidence for v in sync]


def test_batches_are_padded_on_the_tokenizers_padding_side(tiny_nli_dir: Path) -> None:  # noqa: F811
    verifier = NLIVerifier(str(tiny_nli_dir))
    verifier.tokenizer.padding_side = "left"
    short, long = verifier._tokenize([("It was 2001.", "In 2001."), ("The tower was built in paris in 1889.", "It was built.")])
    padded = verifier._pad([short, long])
    pad_id = verifier.tokenizer.pad_token_id
    width = len(long["input_ids"])
    assert padded["input_ids"].shape == (2, width)
    assert padded["input_ids"][0, 0].item() == pad_id and padded["attention_mask"][0, 0].item() == 0
    assert padded["input_ids"][0, -1].item() == short["input_ids"][-1]


def test_a_tokenizer_without_a_pad_token_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    import json

    path = build_tiny_nli(tmp_path / "nopad")
    config_file = path / "tokenizer_config.json"
    config = json.loads(config_file.read_text())
    config["pad_token"] = None
    config_file.write_text(json.dumps(config))
    verifier = NLIVerifier(str(path))
    available, why = verifier.check_available()
    assert not available
    assert "padding token" in why
