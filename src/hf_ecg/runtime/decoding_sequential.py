"""The paper's procedure, kept as the reference: one sample at a time, ``model.generate`` each block
and regenerate it until it ends with its tag (forced after ``max_attempts``)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from transformers import LogitsProcessorList

from .char_boundaries import CharacterBoundaryLogitsProcessor
from .decoding_base import BlockDecoder
from .decoding_config import DecodedTemplate

__all__ = ["decode_sequential"]


def decode_sequential(
    decoder: BlockDecoder,
    sequences: list[tuple[str, ...]],
    rng: torch.Generator,
    progress: Callable[[int], None] | None,
) -> list[DecodedTemplate]:
    torch.manual_seed(int(torch.randint(0, 2**62, (1,), generator=rng)))  # generate() uses the global RNG
    sampling = decoder.config.sampling.generate_kwargs()
    results = []
    for sequence in sequences:
        words: list[str] = []
        forced = attempts = model_tokens = redrawn_tokens = refused = 0
        targets = decoder._targets(sequence)
        budget = decoder.budget
        for block, target in enumerate(targets):
            words.extend(decoder._phrase(len(results), block))
            prompt = torch.tensor(
                [decoder._prompt_ids(words, targets[block:], len(results), block)], device=decoder.device
            )
            for attempt in range(1, decoder.config.max_attempts + 1):
                attempts += 1
                out = decoder.model.generate(
                    prompt,
                    attention_mask=torch.ones_like(prompt),
                    max_new_tokens=decoder.config.max_block_tokens,
                    eos_token_id=decoder.stop_ids,
                    pad_token_id=decoder.pad_id,
                    logits_processor=LogitsProcessorList(
                        [CharacterBoundaryLogitsProcessor(decoder.row_sampler.characters)]
                    ),
                    **sampling,
                )
                new = out[0, prompt.shape[1] :].tolist()
                ended = bool(new) and new[-1] == target
                if ended:
                    tag = decoder.ecg_config.tag_tokens[sequence[block]] if block < len(sequence) else None
                    rejected = decoder.rules.rejects_block(words, decoder.row_sampler.block_words(new[:-1]), tag=tag)
                    if not (rejected and decoder.row_sampler.tries_left(attempt)):
                        break
                if attempt == decoder.config.max_attempts:
                    break
                if not budget.spend(len(new)):  # the block is kept as it is (its tag forced if it has none)
                    refused += 1
                    break
                redrawn_tokens += len(new)
            if not ended:  # the paper loops until the tag appears; we stop and force it
                forced += 1
                kept = [t for t in new if t not in decoder.stop_ids][: decoder.config.max_block_tokens - 1]
                redrawn_tokens += len(new) - len(kept)
                budget.redrawn += len(new) - len(kept)
                new = [*kept, target]
            budget.kept += len(new)
            model_tokens += len(new)
            words.extend(decoder.row_sampler.block_words(new[:-1]))
            if block < len(sequence):
                words.append(decoder.ecg_config.tag_tokens[sequence[block]])
        results.append(
            decoder._result(
                sequence,
                words,
                forced=forced,
                model_tokens=model_tokens,
                attempts=attempts,
                redrawn_tokens=redrawn_tokens,
                refused=refused,
            )
        )
        if progress is not None:
            progress(1)
    return results
