"""The dictionary-and-text recipe's one lookup of the user's text (:class:`DictionaryNames`): the names it serves to
the slots, and the same labelling as the silver split."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

from ..data.corpus import Corpus
from ..runtime.mention_sources import NamesAsMentions
from ..runtime.mentions import MentionBank
from .abbreviations import AbbreviationLabeller
from .dictionary import Dictionary
from .labeller import label_sentences

__all__ = ["DictionaryNames"]


@dataclass(frozen=True)
class DictionaryNames:
    """The dictionary-and-text recipe's one lookup of the text: the names of ``dictionary`` that ``text`` (the
    user's tokenized sentences) holds, as slot mentions (``generate_dataset(mentions=names)``), each drawn by how
    often the text holds it, in the text's spelling (the names the text never uses are left out, so the samples
    speak the domain's names), and the text labelled by it (:meth:`silver`: ``generate_dataset(silver=...)``).
    ``ValueError`` when the text holds none.

    With ``abbreviations``, the short forms the text defines after a name of the dictionary are labelled too
    (:class:`~hf_ecg.labelling.abbreviations.AbbreviationLabeller`, in the ``documents`` the text separates, never
    one spelt like a word of ``common_words``); :attr:`abbreviations_found` counts them."""

    dictionary: Dictionary
    text: Sequence[Sequence[str]]
    abbreviations: bool = True
    documents: Sequence[int] | None = None
    common_words: Collection[str] = field(default_factory=frozenset)

    @cached_property
    def _short_forms(self) -> AbbreviationLabeller | None:
        """The labeller of the short forms (``None`` without ``abbreviations``); it counts what it found."""
        if not self.abbreviations:
            return None
        return AbbreviationLabeller(self.dictionary, documents=self.documents, common_words=self.common_words)

    @cached_property
    def labelled(self) -> Corpus:
        """The text as the dictionary labels it (:meth:`Dictionary.label`: the silver split), with the short forms
        the text defines when asked, looked up once; the names come from its entities."""
        if self._short_forms is None:
            return self.dictionary.label(self.text)
        corpus = label_sentences(
            self.text, self._short_forms, name="unlabelled, labelled by the dictionary and the short forms it defines"
        )
        corpus.weak = True
        return corpus

    @property
    def abbreviations_found(self) -> dict[str, int] | None:
        """How many short forms the text defines after a dictionary name, and how many words they label
        (``None`` without ``abbreviations``)."""
        if self._short_forms is None:
            return None
        self.labelled  # noqa: B018  (the labelling counts them)
        return {"definitions": len(self._short_forms.definitions), "labelled": self._short_forms.added}

    @cached_property
    def _as_mentions(self) -> NamesAsMentions:
        found: dict[str, Counter[tuple[str, ...]]] = {}
        for sentence in self.labelled:
            for label, words in sentence.mentions:
                found.setdefault(label, Counter())[words] += 1
        if not found:
            raise ValueError(f"the {len(self.text):,} sentences of text hold none of the dictionary's names")
        return NamesAsMentions(MentionBank(found), "weighted", split=False, text_sentences=len(self.text))

    def names_as_mentions(self) -> NamesAsMentions:
        """The names the text holds, with how often (built once, whoever resolves the mentions)."""
        return self._as_mentions

    def silver(self, gold: Sequence[Corpus] = ()) -> Corpus:
        """The silver split: the text as the dictionary labels it (the same lookup the names came from), with the
        lookup's recall on the ``gold`` sentences when given (:meth:`Dictionary.label`)."""
        return replace(self.labelled, labeller_recall=self.dictionary.recall_on(gold) if gold else None)
