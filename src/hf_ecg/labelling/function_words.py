"""English function words: articles, pronouns, prepositions, conjunctions, auxiliaries and the commonest
determiners and adverbs. A dictionary never looks them up, whatever its lists hold (a list of chemical names with
``the`` or ``was`` in it would otherwise label every ``the`` as a chemical); case aside, so an abbreviation spelt
like one (``ALL``) is not looked up either, since the lookup could not tell it from the word."""

__all__ = ["FUNCTION_WORDS"]

FUNCTION_WORDS = frozenset(
    """
    a an the this that these those
    i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
    myself yourself himself herself itself ourselves themselves one ones
    who whom whose which what whatever whichever whoever
    be am is are was were been being have has had having do does did doing done
    will would shall should may might must can could ought
    not no nor neither either
    and or but if then else because as while whereas although though whether since unless until so than
    about above across after against along among amongst around at before behind below beneath beside besides
    between beyond by despite down during except for from in inside into like near of off on onto out outside
    over past per through throughout to toward towards under underneath unlike up upon via with within without
    all any both each every few many more most much other others some such several own same
    also only very too just even still yet again ever never always often here there where when why how
    however thus hence therefore
    """.split()
)
