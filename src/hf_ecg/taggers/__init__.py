"""The downstream tagger: a token classifier over words (:mod:`.tagger`), how it is trained (:mod:`.training`) and
scored (:mod:`.metrics`). Everything that trains or reads a tagger (the labellers, evaluation, selection) stands
above it."""
