"""ECG-LM, the paper's ablation: the whole template in one go after the entity list, under the same
per-row constraint as ECG-QALM's decoder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .decoding_base import BlockDecoder
from .decoding_cache import TemplateRow
from .decoding_config import DecodedTemplate, DecodingConfig
from .layout import prompt_ids
from .vocabulary import VocabularyTables

__all__ = ["TemplateLMDecoder"]


class TemplateLMDecoder(BlockDecoder):
    """ECG-LM, the paper's ablation: the whole template in one go, prompted with the entity list.

    The prompt is ``<|context|> <|question|> <t1> … <tn> <|answer|>`` (as ``layout="lm"`` training
    writes it); the answer is the template followed by ``<ENDTEXT>``. The same per-row constraint as
    the chained decoder applies (only the next requested tag may appear, a block reaching
    ``max_block_tokens`` gets it forced), so the entities are exactly the request; what differs from
    ECG-QALM is that the model never sees a question per block. Batches of ``batch_size`` rows run
    to their longest row (no refilling: this is a baseline).
    """

    def _lm_prompt_ids(self, sequence: tuple[str, ...]) -> list[int]:
        tags = " ".join(self.ecg_config.tag_tokens[label] for label in sequence)
        question = self.tokenizer(tags, add_special_tokens=False)["input_ids"] if sequence else []
        return prompt_ids(self.segments, [], question, max_length=self.ecg_config.max_length, answer_room=0)

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        ecg_config: Any,
        config: DecodingConfig | None = None,
        vocabulary: VocabularyTables | None = None,
    ) -> None:
        super().__init__(model, tokenizer, ecg_config, config, vocabulary)
        if self.config.mode == "sequential":
            raise ValueError("an ECG-LM model (layout 'lm') has no per-block procedure: use mode='batched'")

    def _decode(
        self, sequences: list[tuple[str, ...]], rng: torch.Generator, progress: Callable[[int], None] | None
    ) -> list[DecodedTemplate]:
        results: list[DecodedTemplate] = []
        for start in range(0, len(sequences), self.config.batch_size):
            chunk = sequences[start : start + self.config.batch_size]
            results.extend(self._decode_chunk(chunk, rng))
            if progress is not None:
                progress(len(chunk))
        return results

    def _decode_chunk(self, sequences: list[tuple[str, ...]], rng: torch.Generator) -> list[DecodedTemplate]:
        rows = [TemplateRow(i, self._targets(sequence)) for i, sequence in enumerate(sequences)]
        prompts = [self._lm_prompt_ids(sequence) for sequence in sequences]
        width = max(map(len, prompts))
        input_ids = torch.tensor([[self.pad_id] * (width - len(p)) + p for p in prompts], device=self.device)
        mask = (torch.arange(width) >= torch.tensor([width - len(p) for p in prompts])[:, None]).long()
        mask = mask.to(self.device)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        cache = self._new_cache()
        out = self.model(input_ids=input_ids, attention_mask=mask, position_ids=positions, cache=cache)
        done = [False] * len(rows)
        while True:
            live = [i for i, finished in enumerate(done) if not finished]
            tokens = self.row_sampler.sample(out.logits[live, -1, :], [rows[i] for i in live], rng)
            feed = [self.pad_id] * len(rows)
            for i, token in zip(live, tokens, strict=True):
                row = rows[i]
                row.model_tokens += 1
                if token != row.target:
                    row.block_ids.append(token)
                    feed[i] = token
                    continue
                row.words.extend(self.row_sampler.block_words(row.block_ids))
                row.block_ids = []
                if row.block < len(row.targets) - 1:
                    row.words.append(self.ecg_config.tag_tokens[sequences[i][row.block]])
                    row.block += 1
                    feed[i] = token
                else:
                    done[i] = True
            if all(done):
                break
            step_mask = torch.tensor([[0 if finished else 1] for finished in done], device=self.device)
            mask = torch.cat([mask, step_mask], 1)
            positions = positions[:, -1:] + 1
            out = self.model(
                input_ids=torch.tensor(feed, device=self.device)[:, None],
                attention_mask=mask,
                position_ids=positions,
                cache=cache,
            )
        self.budget.kept += sum(row.model_tokens for row in rows)
        return [
            self._result(sequence, row.words, forced=row.forced, model_tokens=row.model_tokens, cut=row.cut)
            for sequence, row in zip(sequences, rows, strict=True)
        ]
