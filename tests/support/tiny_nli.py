"""A tiny random DeBERTa-v2/v3 NLI checkpoint with a locally trained tokenizer, built in well under a second.

Tests drive the real `NLIVerifier` loading, label mapping and batching code with it: the weights are
random, so the verdicts mean nothing, but shapes, label order, padding and caching are all real.

`build_tiny_nli(path, id2label, seed)` gives identical weights for the same seed whatever the label
order: the classifier row of each label is chosen by the label's *name*, so two checkpoints with
permuted `id2label` must yield the same probabilities per name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

#: canonical order of the classifier rows before permutation
CANONICAL = ("entailment", "neutral", "contradiction")

_WORDS = """
the a an of in on at to by for with from and or but not never no is was were are be been has had have
it its he she they his her their this that these those there which who what when where how why
paris france capital city country tower eiffel completed built opened closed founded designed
berlin germany london england rome italy madrid spain europe river seine museum louvre church
year years century decade war world first second peace treaty signed ended began started lasted
company firm bank market shares price cost million billion thousand hundred people population
president king queen emperor government election won lost elected appointed born died lived moved
university college school student professor book novel wrote written published author award prize
team match game season cup final scored player coach stadium league champion record
1500 1789 1800 1889 1900 1914 1918 1939 1945 1969 1990 2000 2008 2009 2010 2019 2020 2021 2022
one two three four five ten 3 5 10 20 100 330 m metres tall high long large small old new big
claim evidence premise sentence true false same different supported contradicted neutral
. , ; : ! ? " ' ( ) - $ %
"""


def _corpus() -> list[str]:
    words = _WORDS.split()
    # a few hundred "sentences" so the trainer sees words in context and learns sub-words
    return [" ".join(words[i : i + 12]) for i in range(0, len(words))] + words


def build_tiny_tokenizer(path: str | Path, *, model_max_length: int = 128):
    """Train a small word-level tokenizer and save it as a `PreTrainedTokenizerFast` at `path`.

    The vocabulary is re-sorted after training (specials first, then alphabetical) because the
    trainers order tied words arbitrarily; the same corpus must always give the same ids, or two
    builds with one seed would not share weights per word.
    """
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordLevelTrainer(vocab_size=5000, special_tokens=special, min_frequency=1)
    tokenizer.train_from_iterator(_corpus(), trainer=trainer)
    words = sorted(set(tokenizer.get_vocab()) - set(special))
    vocab = {token: index for index, token in enumerate(special + words)}
    tokenizer.model = models.WordLevel(vocab=vocab, unk_token="[UNK]")
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=model_max_length,
    )
    fast.save_pretrained(str(path))
    return fast


def _canonical_name(label: str) -> str | None:
    low = label.strip().lower()
    for name in CANONICAL:
        if low.startswith(name[:6]):  # "entail", "neutra", "contra"
            return name
    return None


def build_tiny_nli(
    path: str | Path,
    id2label: Mapping[int, str] | None = None,
    seed: int = 0,
    *,
    hidden_size: int = 32,
    num_hidden_layers: int = 2,
    num_attention_heads: int = 2,
    intermediate_size: int = 64,
    max_position_embeddings: int = 128,
) -> Path:
    """Save a random DebertaV2ForSequenceClassification + tokenizer at `path`; return `path`.

    The encoder has DeBERTa-v3's layout (relative attention, no absolute position input); the
    defaults make it a few hundred KB. Pass the real base sizes to get a speed-faithful stand-in.
    """
    import torch
    from transformers import DebertaV2Config, DebertaV2ForSequenceClassification

    id2label = dict(id2label) if id2label is not None else dict(enumerate(CANONICAL))
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tiny_tokenizer(path, model_max_length=max_position_embeddings)
    config = DebertaV2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=num_hidden_layers,
        num_attention_heads=num_attention_heads,
        intermediate_size=intermediate_size,
        max_position_embeddings=max_position_embeddings,
        relative_attention=True,
        position_buckets=min(256, max_position_embeddings // 2),
        max_relative_positions=-1,
        pos_att_type=["p2c", "c2p"],
        position_biased_input=False,
        type_vocab_size=0,
        pad_token_id=tokenizer.pad_token_id,
        # large random weights make the tiny model's outputs depend visibly on its input
        initializer_range=0.2,
        num_labels=len(id2label),
        id2label={int(k): v for k, v in id2label.items()},
        label2id={v: int(k) for k, v in id2label.items()},
    )
    torch.manual_seed(seed)
    model = DebertaV2ForSequenceClassification(config)
    # Random logits near zero give near-uniform probabilities; a larger head spreads them out.
    canonical_head = torch.Generator().manual_seed(seed + 1)
    weight = torch.randn(len(CANONICAL), hidden_size, generator=canonical_head) * 0.5
    bias = torch.randn(len(CANONICAL), generator=canonical_head) * 0.1
    with torch.no_grad():
        for index, label in id2label.items():
            name = _canonical_name(label)
            row = CANONICAL.index(name) if name is not None else int(index) % len(CANONICAL)
            model.classifier.weight[int(index)] = weight[row]
            model.classifier.bias[int(index)] = bias[row]
    model.eval()
    model.save_pretrained(str(path))
    return path


@pytest.fixture(scope="session")
def tiny_nli_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One tiny NLI checkpoint (entailment, neutral, contradiction) shared by the whole session."""
    # Session fixtures run before the per-test offline fixture, and huggingface_hub reads
    # HF_HUB_OFFLINE once, at import: import it here with the variable set.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        return build_tiny_nli(tmp_path_factory.mktemp("tiny_nli") / "model")
