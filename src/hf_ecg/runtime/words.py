"""Words of generated text, split the way the training corpus is tokenized.

NER corpora split punctuation from words (``light , the cells .``); a language model writes
``light, the cells.``. A tagger trained on synthetic text that keeps punctuation attached sees
tokens it never meets at test time, so generated text is split here: brackets and quotes come off
the front of a word, punctuation off its end. Corpus tokens that this rule would break
(``e.g.``, ``'s``, ``5'``) are learnt from the training corpus (:func:`word_exceptions`) and kept
whole, so on the training corpus the split is the identity.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

__all__ = [
    "BREAK_KINDS",
    "DEFAULT_SENTENCE_ENDINGS",
    "INVISIBLE_CATEGORIES",
    "OPEN_AT_END",
    "OPEN_WORDS",
    "RARE_IN_TRAINING_SHARE",
    "REPETITION_MAX_N",
    "REPETITION_TIMES",
    "REPLACEMENT_CHARACTER",
    "UNENDED_RULE_MAX_SHARE",
    "WordSplitter",
    "empty_slots",
    "has_repetition",
    "number_shape",
    "opening_kind",
    "repeats_at_end",
    "sentence_break_shares",
    "sentence_breaks",
    "sentence_endings",
    "split_word",
    "unended_share",
    "visible",
    "word_exceptions",
    "words_before_punctuation",
]

#: Characters split off the front of a word.
LEADING = "([{\"'`"
#: Characters split off the end of a word.
TRAILING = ".,;:!?)]}\"'"
#: How sentences end when the corpus does not say.
DEFAULT_SENTENCE_ENDINGS = (".", "!", "?")


def split_word(word: str) -> list[str]:
    """``"(IL-2),"`` → ``["(", "IL-2", ")", ","]``: leading brackets/quotes and trailing punctuation
    become tokens of their own; the inside of a word (``IL-2``, ``3.5``, ``NF-kappa``) is kept."""
    head: list[str] = []
    tail: list[str] = []
    while len(word) > 1 and word[0] in LEADING:
        head.append(word[0])
        word = word[1:]
    while len(word) > 1 and word[-1] in TRAILING:
        tail.append(word[-1])
        word = word[:-1]
    return [*head, word, *reversed(tail)]


def word_exceptions(sentences: Iterable[Sequence[str]]) -> list[str]:
    """The corpus tokens :func:`split_word` would break, sorted: kept whole when generated text is split."""
    return sorted({token for tokens in sentences for token in tokens if split_word(token) != [token]})


def sentence_endings(sentences: Iterable[Sequence[str]], *, min_share: float = 0.01) -> list[str]:
    """The punctuation tokens that end at least ``min_share`` of the corpus's sentences (``["."]`` for
    most corpora), or :data:`DEFAULT_SENTENCE_ENDINGS` when none does (a corpus of tweets)."""
    last = Counter(tokens[-1] for tokens in sentences if tokens)
    total = sum(last.values())
    endings = sorted(t for t, n in last.items() if n >= min_share * total and not any(c.isalnum() for c in t))
    return endings or list(DEFAULT_SENTENCE_ENDINGS)


#: The decoder's redraw_unended applies to models whose training sentences end with a sentence ending at least
#: this often (not tweets, about half of which end on a word): it draws again what the corpus rarely writes.
UNENDED_RULE_MAX_SHARE = 0.05


def unended_share(sentences: Iterable[Sequence[str]], endings: Collection[str]) -> float:
    """The share of the (non-empty) sentences whose last token is not one of ``endings``."""
    last = [tokens[-1] for tokens in sentences if tokens]
    return sum(token not in endings for token in last) / len(last) if last else 0.0


#: What can open a second sentence right after a sentence ending (:func:`sentence_breaks`).
BREAK_KINDS = ("capital", "digit", "entity")
#: A pattern under this share of the training sentences is foreign to the corpus: the decoder's redraw_run_on
#: looks only for such kinds of second-sentence opening, and the selection's tag-leak only for such type names.
RARE_IN_TRAINING_SHARE = 0.01


def opening_kind(token: str, *, entity: bool = False) -> str | None:
    """The :data:`BREAK_KINDS` kind of a token that follows a sentence ending: ``"entity"`` when it begins
    one, ``"capital"`` (``The``), ``"digit"`` (``7``), or None (``p`` in ``i . p .``, ``)``)."""
    if entity:
        return "entity"
    first = token[:1]
    return "capital" if first.isupper() else "digit" if first.isdigit() else None


def sentence_breaks(
    tokens: Sequence[str],
    endings: Collection[str],
    entity_starts: Collection[int] = (),
    kinds: Collection[str] = BREAK_KINDS,
) -> list[int]:
    """Where a second sentence begins inside ``tokens``: the positions ``i`` whose token follows a sentence
    ending (``endings``) and opens a sentence the way ``kinds`` say (:func:`opening_kind`; ``i`` in
    ``entity_starts`` begins an entity): ``cells . The``, ``cells . IM-9``, ``cells . 4 5 6``."""
    return [
        i
        for i in range(1, len(tokens))
        if tokens[i - 1] in endings and opening_kind(tokens[i], entity=i in entity_starts) in kinds
    ]


def sentence_break_shares(
    sentences: Iterable[tuple[Sequence[str], Collection[int]]], endings: Collection[str]
) -> dict[str, float]:
    """For each of :data:`BREAK_KINDS`, the share of ``(tokens, entity_starts)`` sentences with a break of that
    kind inside (:func:`sentence_breaks`). Sentence-split corpora have almost none (JNLPBA: 0.06% capital, 0%
    digit, 0.2% entity; BC5CDR writes ``P = 0 . 047``: 8.8% digit); tweets many (WNUT-16: 37% capital)."""
    counts = dict.fromkeys(BREAK_KINDS, 0)
    total = 0
    for tokens, starts in sentences:
        total += 1
        for kind in {opening_kind(tokens[i], entity=i in starts) for i in sentence_breaks(tokens, endings, starts)}:
            counts[kind] += 1
    return {kind: n / total if total else 0.0 for kind, n in counts.items()}


class WordSplitter:
    """Split text into corpus-style tokens, keeping the corpus's own ``exceptions`` whole."""

    def __init__(self, exceptions: Iterable[str] = ()) -> None:
        self.exceptions = frozenset(exceptions)

    def __call__(self, text: str) -> list[str]:
        words: list[str] = []
        for word in text.split():
            words.extend([word] if word in self.exceptions else self._split(word))
        return words

    def _split(self, word: str) -> list[str]:
        # An exception may sit inside punctuation: "(e.g." → "(", "e.g."
        parts = split_word(word)
        if len(parts) == 1:
            return parts
        for i in range(len(word)):
            for j in range(len(word), i, -1):
                if (
                    word[i:j] in self.exceptions
                    and all(c in LEADING for c in word[:i])
                    and all(c in TRAILING for c in word[j:])
                ):
                    return [*word[:i], word[i:j], *word[j:]]
        return parts


#: A loop: an n-gram of at most this many tokens ...
REPETITION_MAX_N = 4
#: ... repeated this many times in a row.
REPETITION_TIMES = 3


_DIGITS = re.compile(r"\d+")


def number_shape(token: str) -> str:
    """``token`` with each run of digits as ``0`` (``6.5`` → ``0.0``, ``IL-12`` → ``IL-0``): a loop whose numbers
    change (``20 % of 30 % of 50 % of``) repeats in shapes. Under 0.5% of BC5CDR's and JNLPBA's gold sentences
    repeat a shape three times in a row (number lists: ``0 , 5 , 7 , 11 , 21``)."""
    return _DIGITS.sub("0", token)


def has_repetition(tokens: Sequence[str], *, max_n: int = REPETITION_MAX_N, times: int = REPETITION_TIMES) -> bool:
    """Whether some n-gram (``n <= max_n``) occurs ``times`` or more times in a row (``36-I 36-I 36-I``,
    ``of the of the of the``): the loop a language model falls into, which gold text does not have."""
    return any(_repeats_ending_at(tokens, end, max_n, times) for end in range(len(tokens) + 1))


def repeats_at_end(tokens: Sequence[str], *, max_n: int = REPETITION_MAX_N, times: int = REPETITION_TIMES) -> bool:
    """Whether ``tokens`` end with an n-gram (``n <= max_n``) repeated ``times`` times in a row: the test
    :func:`has_repetition` makes, for the newest token only (cheap enough for every decoding step)."""
    return _repeats_ending_at(tokens, len(tokens), max_n, times)


def _repeats_ending_at(tokens: Sequence[str], end: int, max_n: int, times: int) -> bool:
    """Whether ``tokens[:end]`` ends with an n-gram (``n <= max_n``) repeated ``times`` times in a row."""
    for n in range(1, min(max_n, end // times) + 1):
        gram = list(tokens[end - n : end])
        if all(list(tokens[end - n * (k + 1) : end - n * k]) == gram for k in range(1, times)):
            return True
    return False


#: English words that leave a phrase open: an article or preposition is followed by what it introduces, so
#: right before punctuation it marks a slot left empty (``is associated with , but not , .``: the language
#: model wrote around a mention it did not write). Lower case only: ``group A )`` names a group.
OPEN_WORDS = frozenset(
    "a an the of in on at to for with by from into onto upon than between among against during via versus".split()
)
#: Conjunctions leave a sentence open only at its end: ``and , at rest ,`` is a parenthesis.
OPEN_AT_END = frozenset("and or nor but".split())


#: What cannot follow an open word: punctuation that closes a phrase (not a hyphen, ``at - risk``, nor a quote).
CLOSING_PUNCTUATION = frozenset(".,;:!?)]}")


def _is_punctuation(token: str, marks: Collection[str] = CLOSING_PUNCTUATION) -> bool:
    return bool(token) and all(c in marks for c in token)


def words_before_punctuation(sentences: Iterable[Sequence[str]]) -> set[str]:
    """The words that some sentence puts right before punctuation or at its end: the words
    :func:`empty_slots` must not count as open in this corpus (a corpus where ``in`` may close a sentence)."""
    closing: set[str] = set()
    for tokens in sentences:
        for word, following in zip(tokens, [*tokens[1:], "."], strict=True):
            if _is_punctuation(following):
                closing.add(word)
    return closing


def empty_slots(
    tokens: Sequence[str], *, closing: Collection[str] = (), endings: Collection[str] = DEFAULT_SENTENCE_ENDINGS
) -> list[int]:
    """Where ``tokens`` leave a slot empty: the positions of the :data:`OPEN_WORDS` followed by punctuation,
    of the :data:`OPEN_AT_END` followed by a sentence ending (``endings``) or ending ``tokens``, and position 0
    when the sentence opens with punctuation (``- induced and TET ...``: the mention before ``-`` is missing).
    Words in ``closing`` (:func:`words_before_punctuation` of the training corpus) are never open."""
    slots = [0] if tokens and _is_punctuation(tokens[0], CLOSING_PUNCTUATION | {"-"}) else []
    for i, word in enumerate(tokens):
        if word in closing or (i and tokens[i - 1] in LEADING):  # ( a ): a list label
            continue
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if word in OPEN_WORDS and (following is None or _is_punctuation(following)):
            slots.append(i)
        elif word in OPEN_AT_END and (following is None or following in endings):
            slots.append(i)
    return slots


#: Unicode categories that never belong in a token: control, format (zero-width, byte-order mark), surrogate
#: and private-use characters.
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co"})


#: What a tokenizer decodes a cut byte sequence to (an undertrained model's half of a multi-byte character).
REPLACEMENT_CHARACTER = "\ufffd"


def visible(text: str) -> str:
    """``text`` without control or invisible characters (a model's NUL or zero-width space) and without
    U+FFFD (a character a block was cut inside when its tag was forced), whitespace kept: what a decoded block is
    split into words from, so that no such character reaches a sample."""
    return "".join(
        ch
        for ch in text
        if ch.isspace() or (ch != REPLACEMENT_CHARACTER and unicodedata.category(ch) not in INVISIBLE_CATEGORIES)
    )
