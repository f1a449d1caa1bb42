"""Tag pieces: words of ``O`` text that spell an entity tag's name (``The Dise of Dise was ...``).

Each tag token starts at the mean embedding of its name's sub-words (``<Disease>`` from ``Dise`` + ``ase``,
:func:`hf_ecg.runtime.blocks.token_description`), so where the model wants a tag it may not write, the nearest
tokens it can write are those pieces: every such word is a place where the model meant an entity and the
label says ``O``. A word of ``O`` text is a tag piece when it, or a part of it between punctuation marks,

- is one of the *forms* of a type's name (the sub-words the model's tokenizer splits its description
  into, the description, the type name and its beginnings of 4 or more characters: ``Dise``, ``ase``,
  ``Disease``, ``Chem``, ``cell_line``), or several run together (``DiseDise``, ``asease``), or
- begins with one, or with a type's name in any case, and goes on with a capital, a digit or ``_`` (``DiseHLA``,
  ``DiseEases``, ``cell_``, ``PersonI``), or a type's name goes on with letters that make no vocabulary word
  (``Diseaseangenics``), or
  with whole words of the tokenizer's vocabulary (``Chemicaldaily``, ``Diseaseand``, ``asewing``; only
  after a type name or a form that is no word itself, so ``lineage`` and ``cellphone`` pass),

and the training corpus never writes it as ordinary text (JNLPBA's ``protein``, ``cell`` and ``line`` are
words, not pieces), in that case or, for the first word of a sentence, in any case: BC5CDR writes
``Disease`` only inside names (``Parkinson 's Disease``), so ``the effects of Disease neuronal loss`` holds
the tag's name, written where the model could not write the tag ``<Disease>``. Forms under 3 characters are
left out (``c`` of ``c orpor ation`` would catch ``cDNA``). :func:`tag_piece_forms` and
:func:`tag_piece_exceptions` run at training (``ECGConfig.tag_pieces``, ``ECGConfig.tag_piece_exceptions``);
:class:`TagPieceFinder` finds the words in generated text, with the :func:`vocabulary_words` of the model's
tokenizer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .blocks import tag_token, token_description

__all__ = ["MIN_FORM_LENGTH", "TagPieceFinder", "tag_piece_exceptions", "tag_piece_forms", "vocabulary_words"]

#: Shorter forms are left out: one or two letters begin too many real words.
MIN_FORM_LENGTH = 3
#: A type name's beginnings this long are forms too (``Chem``, ``Diseas``: a name cut off).
MIN_PREFIX_LENGTH = 4
#: Shorter vocabulary words do not count as what a glued piece goes on with (``protein`` + ``ase`` is a word),
#: but for the short words that glue to a leaked name (``Diseaseand``).
MIN_WORD_LENGTH = 4
SHORT_GLUE_WORDS = frozenset({"and", "the", "for", "are", "was", "not", "but", "has", "had", "its", "can", "may"})
_PARTS = re.compile(r"[^\w]+")  # a word's parts: between punctuation marks (``_`` belongs to a part)


def tag_piece_forms(tokenizer: Any, entity_types: Iterable[str]) -> dict[str, list[str]]:
    """Per entity type, the forms of its name a leaking model writes: the type name, the description its tag
    token starts from (:func:`~hf_ecg.runtime.blocks.token_description`: ``cell line``, also without the space) and
    the sub-words ``tokenizer`` splits that description into (``Dise``, ``ase``), each of at least
    :data:`MIN_FORM_LENGTH` characters."""
    forms: dict[str, list[str]] = {}
    for label in entity_types:
        description = token_description(tag_token(label))
        found = {label, description, description.replace(" ", "")}
        for text in (description, " " + description):
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
            found.update(tokenizer.decode([i]).strip() for i in ids)
        forms[label] = sorted(f for f in found if len(f) >= MIN_FORM_LENGTH and " " not in f)
    return forms


def vocabulary_words(vocabulary: Iterable[str]) -> frozenset[str]:
    """The words a tokenizer's ``vocabulary`` (its tokens: ``tokenizer.get_vocab()``) holds whole (a token that
    begins a word, ``Ġdaily`` or ``▁daily``, letters only, :data:`MIN_WORD_LENGTH` or more), lower-cased, and
    :data:`SHORT_GLUE_WORDS`."""
    words = set()
    for token in vocabulary:
        if token[:1] in ("Ġ", "▁") and token[1:].isalpha() and len(token) > MIN_WORD_LENGTH:
            words.add(token[1:].lower())
    return frozenset(words | SHORT_GLUE_WORDS)


def tag_piece_exceptions(
    forms: Mapping[str, Sequence[str]],
    sentences: Iterable[Sequence[str]],
    words: Iterable[str] = (),
    labels: Iterable[Sequence[str]] | None = None,
) -> list[str]:
    """The training corpus's words, as it writes them, that :class:`TagPieceFinder` with ``forms`` (and the
    vocabulary ``words``) would flag: the corpus writes them, so they are words, not pieces (``protein``,
    ``cell``). With ``labels`` (the sentences' tags), only the words it writes as ordinary text (``O``): BC5CDR
    writes ``Disease`` only inside names (``Parkinson 's Disease``), so a ``Disease`` left as ``O`` text is the
    tag's name, not a word."""
    finder = TagPieceFinder(forms, words=words)
    rows = zip(sentences, labels, strict=True) if labels is not None else ((s, None) for s in sentences)
    return sorted({word for tokens, tags in rows for word in (tokens[i] for i in finder(tokens, tags))})


class TagPieceFinder:
    """Find tag pieces in words: ``finder(words)`` gives the positions of the words that spell a tag's name.

    Args:
        forms: per entity type (the keys), the forms of its name (:func:`tag_piece_forms`).
        exceptions: words that are never pieces in the case given, nor in any case as the first word of a
            sentence: the corpus writes them (:func:`tag_piece_exceptions`). An all lower-case list (as models
            trained before the case was kept recorded it) excuses its words in any case.
        words: the tokenizer's whole words (:func:`vocabulary_words`), for pieces glued to a word
            (``Chemicaldaily``); without them only a capital, a digit or ``_`` after a form counts.
    """

    def __init__(
        self, forms: Mapping[str, Sequence[str]], exceptions: Iterable[str] = (), words: Iterable[str] = ()
    ) -> None:
        found = {f for group in forms.values() for f in group if len(f) >= MIN_FORM_LENGTH}
        found.update(label[:k] for label in forms for k in range(MIN_PREFIX_LENGTH, len(label)))
        self.forms = sorted(found, key=len)
        self.exceptions = frozenset(exceptions)
        self._folded_exceptions = frozenset(w.lower() for w in self.exceptions)
        # Lists recorded before exceptions kept their case are all lower-case (``dna`` for JNLPBA's ``DNA``):
        # they excuse a word in any case, as when they were recorded.
        self._any_case = all(w == w.lower() for w in self.exceptions)
        self.words = frozenset(words)
        self._whole = frozenset(self.forms)  # case as written: Dise, not dise
        # Forms a vocabulary word may follow: the type names, and the forms that are no word themselves
        # (``line`` + ``age`` is a word, ``Dise`` + ``ase`` + ``and`` is not).
        self._glue = [f for f in self.forms if f in forms or f.lower() not in self.words]
        self._rest_pieces = (self.words | {f.lower() for f in self.forms}) if self.words else frozenset()
        # Type names in any case, for a name glued to what follows it (``PersonI``, ``Diseaseangenics``).
        self._names = sorted({name.casefold() for name in forms if len(name) >= MIN_PREFIX_LENGTH}, key=len)

    def is_piece(self, word: str, *, first: bool = False) -> bool:
        """Whether ``word`` spells a tag's name (and is not one of the exceptions); ``first``: it begins its
        sentence, where an exception may be capitalised."""
        if self._excepted(word, first) or not self.forms:
            return False
        return any(self._part_is_piece(part, first) for part in _PARTS.split(word))

    def _excepted(self, word: str, first: bool) -> bool:
        if word in self.exceptions:
            return True
        return (first or self._any_case) and word.lower() in self._folded_exceptions

    def _part_is_piece(self, part: str, first: bool = False) -> bool:
        if not part or self._excepted(part, first):
            return False
        if self._spelt_by(part, self._whole):
            return True
        for form in self.forms:
            if len(part) > len(form) and part.startswith(form):
                following = part[len(form)]
                if following.isupper() or following.isdigit() or following == "_":
                    return True
        if self._glued_to_a_name(part):
            return True
        if self.words and part.lower() not in self.words:
            return any(
                len(part) > len(form)
                and part.startswith(form)
                and self._spelt_by(part[len(form) :].lower(), self._rest_pieces)
                for form in self._glue
            )
        return False

    def _glued_to_a_name(self, part: str) -> bool:
        """Whether ``part`` is a type's name in any case run into a word: followed by a capital, a digit or ``_``
        (``PersonI``), or, with a vocabulary, by 3 or more letters where the whole is no word of it
        (``Diseaseangenics``; ``Diseases``, ``Personality`` pass). An all-capitals word is an acronym, not a glue."""
        if part.isupper():
            return False
        folded = part.casefold()
        for name in self._names:
            if len(part) > len(name) and folded.startswith(name):
                rest = part[len(name) :]
                if rest[0].isupper() or rest[0].isdigit() or rest[0] == "_":
                    return True
                if self.words and len(rest) >= MIN_FORM_LENGTH and rest.isalpha() and folded not in self.words:
                    return True
        return False

    @staticmethod
    def _spelt_by(text: str, pieces: frozenset[str]) -> bool:
        """Whether ``text`` is one of ``pieces`` or several run together: forms (``Dise``, ``DiseDise``,
        ``asease``), or vocabulary words and forms (``daily``, ``treatment``, ``and``). Every piece has at
        least :data:`MIN_FORM_LENGTH` characters."""
        ends = {0}
        for end in range(MIN_FORM_LENGTH, len(text) + 1):
            if any(text[start:end] in pieces for start in ends if end - start >= MIN_FORM_LENGTH):
                ends.add(end)
        return len(text) in ends

    def __call__(
        self, words: Sequence[str], labels: Sequence[str] | None = None, *, starts_sentence: bool = True
    ) -> list[int]:
        """Positions of the tag pieces among ``words``; with ``labels`` (IOB tags), only where the label is ``O``.
        ``starts_sentence``: ``words[0]`` begins its sentence (false for the words of a later block)."""
        return [
            i
            for i, word in enumerate(words)
            if (labels is None or labels[i] == "O") and self.is_piece(word, first=starts_sentence and i == 0)
        ]
