"""Prefill positions the mention writer encodes for a set's templates (first tries only), per mention layout, on top
of the decoder's kept prefix as `generate` gives it: `in-sentence` (the default) and `after-template` as built, and
a layout that would continue the decoder's last row (3 ids a slot: `<|question|> tag <|answer|>` after the answer
the row just drew). No model is run: only the tokenizer.
usage: prompt_positions.py MODEL SET"""
import dataclasses
import sys

from transformers import AutoTokenizer

from hf_ecg.data.dataset_format import load_data_folder
from hf_ecg.runtime.blocks import Template, tag_label
from hf_ecg.runtime.ecg_config import ECGConfig
from hf_ecg.runtime.layout import SegmentIds
from hf_ecg.runtime.mention_writer import MentionWriter, _shared_length

model, folder = sys.argv[1], sys.argv[2]
tok = AutoTokenizer.from_pretrained(model)
config = ECGConfig.from_pretrained(model)
rows = load_data_folder(folder)
segments = SegmentIds.of(tok)
totals = {}
for layout in ("in-sentence", "after-template"):
    writer = MentionWriter.__new__(MentionWriter)
    writer.tokenizer, writer.segments = tok, segments
    writer.ecg_config = dataclasses.replace(config, mention_layout=layout)
    writer.tag_ids = {label: tok.convert_tokens_to_ids(t) for label, t in config.tag_tokens.items()}
    writer.max_tokens = config.mention_max_tokens or 16
    positions = slots = 0
    for row in rows:
        template = Template(tuple(row["template"].split(" ")))
        tags = [i for i, t in enumerate(template.tokens) if tag_label(t) is not None]
        if not tags:
            continue
        # the decoder's kept prefix: <|context|> and the template up to its last block (after its last tag)
        prefix = [segments.context, *tok(" ".join(template.tokens[: tags[-1] + 1]), add_special_tokens=False)["input_ids"]]
        mentions = [tuple(row["text"][span["start"] : span["end"]].split(" ")) for span in row["spans"]]
        written = [None] * len(tags)
        last = prefix
        for k in range(len(tags)):
            prompt = writer.prompt(template, written, k)
            positions += len(prompt) - min(_shared_length(prompt, last), len(prompt) - 1)
            last = prompt
            written[k] = mentions[k]
            slots += 1
    totals[layout] = positions
    print(f"{layout}: {positions} positions for {slots} slots of {len(rows)} templates, {positions / len(rows):.1f} a template")
print(f"continuing the decoder's row: {3 * slots} positions, {3 * slots / len(rows):.1f} a template")
