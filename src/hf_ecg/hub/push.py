"""Publishing: the exact folders that go to the Hub, with their cards, and the upload.

``prepare_dataset_folder`` / ``prepare_model_folder`` write the folder that would be uploaded and
touch no network (``hf-ecg push-* --local-dir``); ``push_dataset`` / ``push_model`` write it to a
temporary folder and upload it with ``huggingface_hub``. The token comes from the standard places
(``HF_TOKEN``, ``hf auth login``) or the ``token`` argument and is never printed or logged.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..runtime.files import read_json
from .dataset_card import ECGDatasetCardData
from .model_card import ECGModelCardData

__all__ = [
    "HubUploadError",
    "check_hub_access",
    "prepare_dataset_folder",
    "prepare_model_folder",
    "push_dataset",
    "push_model",
]

logger = logging.getLogger(__name__)


class HubUploadError(RuntimeError):
    """Creating the repo or uploading failed (no network, no permission, offline mode)."""


def check_repo_id(repo_id: str, *, hint: str = "") -> None:
    """``ValueError`` for a repo id the Hub would refuse (a card must not tell users to load it)."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError as error:
        raise ValueError(f"{repo_id!r} is not a valid Hub repo id ({error}){f' ({hint})' if hint else ''}") from None


def check_hub_access(repo_id: str, token: str | None = None, *, hint: str = "") -> str:
    """The token to push ``repo_id`` with (``token``, else ``HF_TOKEN`` / ``hf auth login``); ``ValueError``
    for a repo id the Hub would refuse or no token at all, ending with ``hint`` (what the caller's user can
    do instead). Touches no network."""
    from huggingface_hub import get_token

    check_repo_id(repo_id, hint=hint)
    tail = f" ({hint})" if hint else ""
    token = token or get_token()
    if token is None:
        raise ValueError(f"no Hugging Face token to push {repo_id}: set HF_TOKEN or run `hf auth login`{tail}")
    return token


def prepare_dataset_folder(
    data_dir: str | os.PathLike,
    local_dir: str | os.PathLike,
    *,
    repo_id: str | None = None,
    overwrite: bool = False,
    silver: bool | None = None,
    **card_fields: Any,
) -> Path:
    """Write the dataset repo for a folder that :func:`~hf_ecg.generate_dataset` wrote.

    ``local_dir`` gets ``data/train-*.parquet``, ``ecg_generation.json`` and a ``README.md`` dataset card (YAML:
    license, language, task, size, data files, features with the ClassLabel names). A folder with a ``silver/``
    split (the user's own text, labelled) needs ``silver`` said: ``True`` publishes the split, ``False`` leaves out
    the split and its record in the manifest and card; ``None`` is refused, so that the text never leaves unasked.
    ``card_fields`` set :class:`~hf_ecg.hub.dataset_card.ECGDatasetCardData` fields (``license``,
    ``language``, ``pretty_name``, ``quality``, ...). ``datasets.load_dataset(local_dir)`` reads it. A folder of
    samples not checked against the private text (``generate --shareable``'s ``OUT-unfiltered``, or a set filtered
    from one without the ``text-copy`` rule) is refused, and so is an unfinished one.
    """
    from ..data.dataset_format import read_generated
    from ..data.manifest import write_manifest
    from ..data.outputs import DATASET, prepare_output
    from ..data.silver import SILVER_DIR, has_silver

    data_dir, local_dir = Path(data_dir), Path(local_dir)
    if repo_id is not None:
        check_repo_id(repo_id)
    manifest, _ = read_generated(data_dir, ["id"])  # a folder still being written is refused as such
    if manifest.unchecked:
        fix = (
            f"publish {manifest.checked_set}, the checked set"
            if manifest.checked_set
            else "check it first (hf-ecg filter --rule text-copy --unlabelled TEXT)"
        )
        raise ValueError(f"{data_dir} holds samples not checked against your text, which may copy it: {fix}")
    holds_silver = silver is not False and has_silver(data_dir)  # a recorded split that is gone: refused here
    if holds_silver and silver is None:
        raise ValueError(silver_question(data_dir))
    if not holds_silver:
        card_fields = {**card_fields, "silver": None}
    card = ECGDatasetCardData.from_generated(data_dir, repo_id=repo_id, **card_fields)  # validates first
    prepare_output(local_dir, DATASET, overwrite=overwrite, inputs=[data_dir])
    (local_dir / "data").mkdir()
    for shard in sorted((data_dir / "data").glob("*.parquet")):
        shutil.copy2(shard, local_dir / "data" / shard.name)
    if holds_silver:  # the card declares the split: its files go with it
        shutil.copytree(data_dir / SILVER_DIR, local_dir / SILVER_DIR)
    write_manifest(local_dir, manifest if holds_silver else replace(manifest, silver=None))
    card.to_dataset_card().save(local_dir / "README.md")
    return local_dir


def silver_question(data_dir: str | os.PathLike) -> str:
    """What a push of a folder with a silver split, and no word on it, answers."""
    from ..data.silver import recorded_silver

    sentences = (recorded_silver(data_dir) or {}).get("sentences", "its")
    return (
        f"{data_dir} holds a silver split: {sentences} sentences of your own text, labelled; publish them with "
        "silver=True (--silver), or leave them out with silver=False (--no-silver)"
    )


def _read_ner_report(report: str | os.PathLike | dict[str, Any]) -> dict[str, Any]:
    if not isinstance(report, dict):
        path = Path(report)
        if not path.is_file():
            raise FileNotFoundError(f"no such NER report: {path} (write one with hf-ecg evaluate ner -o FILE)")
        report = read_json(path, "hf-ecg evaluate ner's report")
    missing = [key for key in ("entity_f1_mean", "entity_f1_std", "runs", "test", "config") if key not in report]
    if missing:
        raise ValueError(f"the NER report lacks {missing}: give the JSON that hf-ecg evaluate ner writes")
    report.setdefault("per_type", {})
    report.setdefault("train", [])
    report.setdefault("synthetic", [])
    return report


def prepare_model_folder(
    model_dir: str | os.PathLike,
    local_dir: str | os.PathLike,
    *,
    repo_id: str | None = None,
    drop_mention_bank: bool = False,
    overwrite: bool = False,
    trust_remote_code: bool = False,
    ner_report: str | os.PathLike | dict[str, Any] | None = None,
    license: str | None = None,
    language: list[str] | None = None,
    dataset_id: str | None = None,
) -> Path:
    """Write the model repo for a model that ``hf-ecg train`` wrote.

    ``local_dir`` gets the weights, tokenizer, ``ecg_config.json``, the pipeline's code with a
    ``custom_pipelines`` entry in ``config.json`` (so ``pipeline(model=repo, trust_remote_code=True)``
    works without hf_ecg) and the model card rendered for ``repo_id``. ``drop_mention_bank`` leaves
    out the bank of real training mentions that ``ecg_config.json`` may carry. ``ner_report`` (the JSON
    of ``hf-ecg evaluate ner``, or its path) puts the downstream scores in the card and its ``model-index``.
    ``license``, ``language`` and ``dataset_id`` (the Hub id of the gold corpus the model learned from:
    ``datasets:``) go into the card's metadata when given.
    """
    from ..data.outputs import MODEL, prepare_output
    from ..modeling import load_ecg_model, upstream_model_id
    from ..runtime.pipeline import EntityControlledGenerationPipeline

    model_dir, local_dir = Path(model_dir), Path(local_dir)
    if repo_id is not None:
        check_repo_id(repo_id)
    model, tokenizer, ecg_config = load_ecg_model(model_dir, trust_remote_code=trust_remote_code)
    if drop_mention_bank:
        ecg_config.mention_bank = None
    elif ecg_config.mention_bank:
        logger.warning(
            "ecg_config.json carries the mention bank: %d distinct real mentions from the training corpus will "
            "be published (leave them out: `hf-ecg push-model --drop-mention-bank`, `hf-ecg train --save_mention_bank "
            "false`, or drop_mention_bank=True)",
            sum(map(len, ecg_config.mention_bank.values())),
        )
    prepare_output(local_dir, MODEL, overwrite=overwrite, inputs=[model_dir])
    generator = EntityControlledGenerationPipeline(model=model, tokenizer=tokenizer, ecg_config=ecg_config)
    generator.save_pretrained(str(local_dir))

    card = ECGModelCardData.load(model_dir) or ECGModelCardData(  # a model saved before ecg_card.json existed
        base_model=upstream_model_id(ecg_config.base_model),
        dataset_name=(ecg_config.corpus_statistics or {}).get("name"),
        corpus_statistics=ecg_config.corpus_statistics,
        hyperparameters={"lora": ecg_config.lora, "loss_on": ecg_config.loss_on, "max_length": ecg_config.max_length},
    )
    card.entity_types = list(ecg_config.entity_types)
    card.model_id = repo_id
    card.has_pipeline_code = True
    if ner_report is not None:
        card.downstream = _read_ner_report(ner_report)
    card.hyperparameters["save_mention_bank"] = bool(ecg_config.mention_bank)
    card.license = license or card.license
    card.language = language or card.language
    card.dataset_id = dataset_id or card.dataset_id
    card.save(local_dir)
    card.to_model_card().save(local_dir / "README.md")
    return local_dir


def _upload(folder: Path, repo_id: str, repo_type: str, private: bool, token: str | None) -> str:
    from huggingface_hub import HfApi

    token = check_hub_access(repo_id, token, hint="or write the folder with --local-dir")
    api = HfApi(token=token)
    try:
        url = api.create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True)
        api.upload_folder(
            folder_path=str(folder),
            repo_id=repo_id,
            repo_type=repo_type,
            commit_message=f"Upload {repo_type} with hf_ecg",
        )
    except Exception as err:  # network, auth, offline mode: one line, and never the token
        message = str(err).replace(token, "***").splitlines()[0] if str(err) else type(err).__name__
        raise HubUploadError(f"could not upload to the {repo_type} repo {repo_id}: {message}") from None
    return str(url)


def push_dataset(
    data_dir: str | os.PathLike,
    repo_id: str,
    *,
    private: bool = False,
    local_dir: str | os.PathLike | None = None,
    token: str | None = None,
    overwrite: bool = False,
    silver: bool | None = None,
    **card_fields: Any,
) -> str:
    """Upload a generated dataset with its card to ``repo_id`` (a dataset repo, created if needed); a folder with
    a silver split (the user's own text) needs ``silver``: ``True`` publishes it, ``False`` leaves it out.

    With ``local_dir``, only write the folder that would be uploaded there and return its path.
    Otherwise return the repo URL.
    """
    options = {"repo_id": repo_id, "silver": silver, **card_fields}
    if local_dir is not None:
        prepare_dataset_folder(data_dir, local_dir, overwrite=overwrite, **options)
        return str(local_dir)
    with tempfile.TemporaryDirectory(prefix="hf-ecg-dataset-") as folder:
        prepare_dataset_folder(data_dir, folder, overwrite=True, **options)
        return _upload(Path(folder), repo_id, "dataset", private, token)


def push_model(
    model_dir: str | os.PathLike,
    repo_id: str,
    *,
    private: bool = False,
    local_dir: str | os.PathLike | None = None,
    token: str | None = None,
    drop_mention_bank: bool = False,
    overwrite: bool = False,
    trust_remote_code: bool = False,
    ner_report: str | os.PathLike | dict[str, Any] | None = None,
    license: str | None = None,
    language: list[str] | None = None,
    dataset_id: str | None = None,
) -> str:
    """Upload a trained model with its pipeline code and card to ``repo_id`` (created if needed).

    With ``local_dir``, only write the folder that would be uploaded there and return its path.
    Otherwise return the repo URL. The other arguments are :func:`prepare_model_folder`'s.
    """
    options = {
        "repo_id": repo_id,
        "drop_mention_bank": drop_mention_bank,
        "trust_remote_code": trust_remote_code,
        "ner_report": ner_report,
        "license": license,
        "language": language,
        "dataset_id": dataset_id,
    }
    if local_dir is not None:
        prepare_model_folder(model_dir, local_dir, overwrite=overwrite, **options)
        return str(local_dir)
    with tempfile.TemporaryDirectory(prefix="hf-ecg-model-") as folder:
        prepare_model_folder(model_dir, folder, overwrite=True, **options)
        return _upload(Path(folder), repo_id, "model", private, token)
