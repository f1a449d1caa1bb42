"""The selection rules by name: which exist, which run by default, what each drops (the dataset card's
table) and which need gold taggers. Apart from :mod:`hf_ecg.selection`, which applies them, so
that the dataset card and the CLI can name them without importing the taggers."""

__all__ = ["DEFAULT_RULES", "REPAIR_RULES", "RULES", "RULE_DESCRIPTIONS", "TAGGER_RULES", "WEIGHT_RULES"]

#: Every rule, in the order the default applies the cheap ones before the tagger ones.
RULES = (
    "duplicate",
    "near-copy",
    "text-copy",
    "tag-leak",
    "whole",
    "empty-slot",
    "mention-type",
    "consistent",
    "no-extra",
    "unlabel",
    "relabel",
    "dictionary",
    "unknown",
    "exact",
)
#: The default rules: whole sentences first, since a tagger alone favours fragments.
DEFAULT_RULES = ("duplicate", "near-copy", "tag-leak", "whole", "consistent")
#: What each rule drops, in a few words (the dataset card's selection table).
RULE_DESCRIPTIONS = {
    "duplicate": "the same tokens as a gold sentence or an earlier sample",
    "near-copy": "ROUGE-L to the nearest gold sentence above the threshold",
    "text-copy": "a sentence of the user's text (--unlabelled) copied: a run of max_shared_run of its words or more "
    "(a mention standing for any name), the whole sentence with other names, or a ROUGE-L above near_copy_threshold",
    "tag-leak": "a word outside the entities that spells an entity tag's name (Dise, ase)",
    "whole": "incomplete, forced, cut, short, looping or two-sentence samples",
    "empty-slot": "a phrase left open before punctuation (with , / of .): a mention missing from the text",
    "mention-type": "a mention the gold taggers read as another entity type than its own (a drug in a disease slot)",
    "consistent": "a generated entity the gold taggers do not predict with its span and type",
    "no-extra": "a word outside the entities that the gold taggers confidently label as an entity",
    "unlabel": "keeps and unlabels: a requested entity whose words the taggers read as O (a mention that names "
    "nothing, 'in rats' as a chemical) becomes O text",
    "relabel": "keeps and relabels: words outside the entities that the gold taggers confidently read as an entity "
    "get that label; drops only a sample where such a word cannot be labelled without touching a requested entity",
    "dictionary": "keeps and relabels by the name dictionary: its names left O get their type, and an entity that is "
    "one of its names of another type gets that type",
    "unknown": "keeps and marks unknown: words outside the entities that the gold taggers confidently read as an "
    "entity, or that are names of the dictionary, leave the tagger's loss (label weight 0) instead of teaching O",
    "exact": "any word whose predicted tag differs from the generated one",
}
#: Rules that need taggers trained on gold.
TAGGER_RULES = frozenset({"mention-type", "consistent", "no-extra", "unlabel", "relabel", "unknown", "exact"})
#: Rules that change labels rather than drop samples (their changes are the ``relabelled`` column).
REPAIR_RULES = frozenset({"unlabel", "relabel", "dictionary"})
#: Rules that mark words unknown rather than change labels (their marks are the ``label_weights`` column: 0.0).
WEIGHT_RULES = frozenset({"unknown"})
