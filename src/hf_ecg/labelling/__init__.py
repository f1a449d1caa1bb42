"""The labellers: what puts entity labels on the user's words without a person. Each answers
``spans(tokens)`` (:class:`~hf_ecg.labelling.labeller.Labeller`): a dictionary lookup
(:class:`~hf_ecg.labelling.dictionary.Dictionary`), a tagger trained on the gold sentences
(:mod:`.self_labelling`), an ensemble of such taggers (:mod:`.ensemble`);
:func:`~hf_ecg.labelling.labeller.label_sentences` joins them over sentences, and :mod:`.mining` turns an
ensemble's reading of the user's text into name lists."""
