"""Hub publishing: a dataset repository of Parquet files and a card, built locally, then uploaded.

``datasets`` 5.x runs no loading scripts, so a dataset repository is Parquet files plus a
``README.md`` whose YAML header names them: ``configs`` (``config_name``, ``data_files`` per
split, ``default: true`` on one) and ``dataset_info`` (each config's features and split sizes).
:func:`build_dataset_repo` writes that layout::

    DIR/README.md
    DIR/statistics.json
    DIR/data/<config>/train-00000-of-00001.parquet

for the configs in :data:`CONFIGS`, each with the explicit schema of its record kind (``statistics.json``: their
counts per venue and year, :mod:`praib.sources.dataset_statistics`), so
``datasets.load_dataset(DIR, "reviews", split="train")`` returns the records with their features.
The card's prose comes from a Jinja template (:data:`DEFAULT_CARD_TEMPLATE`, package data, by
default) rendered with the configs, their fields and their counts; the YAML header is the
template's own (licence, tags, ...) plus the generated ``configs`` and ``dataset_info``.
:func:`repository_card` renders the same template for all configs without records: the card
checked in as ``datasets/praib/README.md``.

:func:`push_dataset_repo` uploads the built folder in one commit with
``HfApi.upload_folder``: the Hub then holds exactly the files that were built and checked
locally, card included, and a failed upload leaves the previous revision intact. (Pushing each
config with ``Dataset.push_to_hub`` would make one commit per config and rewrite the card each
time.) It honours ``HF_ENDPOINT``, read at call time.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from pathlib import Path
from typing import Mapping

from datasets import Dataset, Features

from praib.records import SCHEMAS, RecordError, load_records, read_text, records_to_dataset
from praib.records.atomic import RECORD, replace_folder
from praib.sources.dataset_statistics import STATISTICS_FILE, dataset_statistics
from praib.templates import TemplateSet

logger = logging.getLogger(__name__)

# config name -> record kind. Counterfactual and perturbed papers keep their original's paper_id
# and say what was changed in their ``perturbation`` struct.
CONFIGS: dict[str, str] = {
    "papers": "paper",
    "reviews": "review",
    "meta_reviews": "meta_review",
    "rebuttals": "rebuttal",
    "generated_reviews": "review",
    "counterfactuals": "paper",
    "perturbations": "paper",
}
SPLIT = "train"
#: The files :func:`build_dataset_repo` writes in its folder.
REPOSITORY_FILES = ("README.md", STATISTICS_FILE)
DEFAULT_CARD_TEMPLATE = Path(__file__).resolve().parents[1] / "data" / "cards" / "praib.md.jinja"
CARD_TEMPLATES = TemplateSet("card", DEFAULT_CARD_TEMPLATE.parent, keep_trailing_newline=True)


class PublishError(ValueError):
    """A dataset repository that cannot be built or pushed; the message says why."""


def data_file(config: str, split: str = SPLIT) -> str:
    """Path of a config's split inside the repository."""
    return f"data/{config}/{split}-00000-of-00001.parquet"


def _feature_rows(features: Features | dict, prefix: str = "") -> list[tuple[str, str]]:
    """(field, type) for every field, struct members as ``parent.member``."""
    from datasets import List, Value

    rows = []
    for name, feature in features.items():
        if isinstance(feature, dict):
            rows.append((prefix + name, "struct, null for none"))
            rows.extend(_feature_rows(feature, f"{prefix}{name}."))
        elif isinstance(feature, List):
            inner = feature.feature
            kind = inner.dtype if isinstance(inner, Value) else "{" + ", ".join(
                f"{k}: {v.dtype}" for k, v in inner.items()) + "}"
            rows.append((prefix + name, f"list of {kind}"))
        else:
            rows.append((prefix + name, feature.dtype))
    return rows


def _counts(records: Dataset) -> list[tuple[str, str, int]]:
    """(venue, year, rows) in order; '-' where a record has none."""
    pairs = Counter(zip(records["venue"], records["year"]))
    return [(venue or "-", str(year) if year is not None else "-", n)
            for (venue, year), n in sorted(pairs.items(), key=lambda item: (str(item[0][0]), item[0][1] or 0))]


def render_card(template: str | Path, configs: Mapping[str, Dataset], default: str, built: bool = True) -> str:
    """The card: the template rendered with the configs, plus the generated YAML header.

    ``built=False`` renders a card that describes the configs without their records: no row
    counts in the prose, no split sizes in ``dataset_info``."""
    from datasets.info import DatasetInfo, DatasetInfosDict
    from datasets.splits import SplitDict, SplitInfo
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard
    from huggingface_hub.repocard import REGEX_YAML_BLOCK

    template = Path(template)
    context = {"configs": [{
        "name": name, "kind": CONFIGS[name], "rows": len(records), "fields": _feature_rows(records.features),
        "counts": _counts(records), "perturbed": sum(p is not None for p in records["perturbation"]),
        "default": name == default} for name, records in configs.items()], "built": built}
    try:
        text = CARD_TEMPLATES.render(template, **context)
    except ValueError as err:  # one line that names the file, and the line where Jinja knows it
        raise PublishError(f"cannot render the card template: {err}") from None
    header = REGEX_YAML_BLOCK.search(text)
    if not text[header.end() if header else 0:].strip():
        raise PublishError(f"{template}: the card template renders no text{' but its YAML header' if header else ''};"
                           " a dataset card needs a description of the data")
    # praib writes the header, so a template may have none; an empty one spares huggingface_hub's warning.
    card = DatasetCard(text if header else "---\n{}\n---\n" + text)
    metadata = {name: {"data_files": [{"split": SPLIT, "path": data_file(name)}], **({"default": True}
                                                                                      if name == default else {})}
                for name in configs}
    MetadataConfigs(metadata).to_dataset_card_data(card.data)
    infos = {}
    for name, records in configs.items():
        splits = None
        if built:
            splits = SplitDict()
            splits.add(SplitInfo(name=SPLIT, num_bytes=records.data.nbytes, num_examples=len(records)))
        infos[name] = DatasetInfo(features=records.features, splits=splits, config_name=name)
    DatasetInfosDict(infos).to_dataset_card_data(card.data)
    return str(card)


def repository_card(template: str | Path = DEFAULT_CARD_TEMPLATE) -> str:
    """The card of the published repository without its records (every config, features, prose):
    what ``datasets/praib/README.md`` holds."""
    empty = {name: records_to_dataset([], kind) for name, kind in CONFIGS.items()}
    return render_card(template, empty, "reviews", built=False)


def build_dataset_repo(sources: Mapping[str, str | Path | Dataset], output: str | Path, *,
                       card_template: str | Path = DEFAULT_CARD_TEMPLATE, default: str | None = None) -> Path:
    """Write the Parquet files and card of a dataset repository to ``output``.

    ``sources`` maps config names (keys of :data:`CONFIGS`) to records: a Dataset or anything
    :func:`praib.records.load_records` reads, validated against the config's record kind.
    ``default`` is the config loaded when none is named ("reviews" when present, else the first).
    A config without records is skipped with a warning; when all are empty nothing is built.
    Building again into the same folder removes the Parquet files of configs no longer built.
    """
    unknown = [name for name in sources if name not in CONFIGS]
    if unknown:
        raise PublishError(f"unknown config(s) {', '.join(unknown)}; choose from {', '.join(CONFIGS)}")
    if not sources:
        raise PublishError("no records given; a dataset needs at least one config")
    if default is not None and default not in sources:
        raise PublishError(f"default config {default!r} is not among the configs built: {', '.join(sources)}")
    configs: dict[str, Dataset] = {}
    for name, source in sorted(sources.items(), key=lambda item: list(CONFIGS).index(item[0])):
        features = SCHEMAS[CONFIGS[name]][0]
        records = source if isinstance(source, Dataset) else load_records(source, CONFIGS[name], allow_empty=True)
        if records.features != features:
            raise PublishError(f"config {name!r}: records do not have the {CONFIGS[name]} schema "
                               "(load them with praib.records.load_records)")
        if name == "papers":
            ids = [pid for pid, variant in zip(records["paper_id"], records["perturbation"]) if variant is None]
            repeated = sorted({pid for pid, n in Counter(ids).items() if n > 1})
            if repeated:
                raise PublishError(f"config 'papers': paper_id repeats ({', '.join(repeated[:5])}"
                                   f"{', ...' if len(repeated) > 5 else ''}); are these paper records?")
        configs[name] = records
    configs = _without_empty(configs, sources, default)
    default = default or ("reviews" if "reviews" in configs else next(name for name in sources if name in configs))
    output = Path(output)
    card = render_card(card_template, configs, default)
    # A config of an earlier build into the same folder would be pushed too: praib's files there are replaced.
    with replace_folder(output) as folder:
        for name, records in configs.items():
            (folder / data_file(name)).parent.mkdir(parents=True)
            records.to_parquet(str(folder / data_file(name)))
        (folder / "README.md").write_text(card, encoding="utf-8")
        (folder / STATISTICS_FILE).write_text(json.dumps(dataset_statistics(configs), indent=2) + "\n",
                                              encoding="utf-8")
    return output


def _without_empty(configs: dict[str, Dataset], sources: Mapping[str, str | Path | Dataset],
                   default: str | None) -> dict[str, Dataset]:
    """The configs that hold records; the empty ones are skipped with a warning that names them, and
    a build where every config (or the chosen default) is empty is refused."""
    empty = [name for name, records in configs.items() if not len(records)]
    if not empty:
        return configs
    named = ", ".join(f"{name} ({'a Dataset' if isinstance(sources[name], Dataset) else sources[name]})"
                      for name in empty)
    if len(empty) == len(configs):
        raise PublishError(f"every config holds no records: {named}; nothing to build")
    if default in empty:
        raise PublishError(f"the default config {default!r} holds no records ({sources[default]})")
    logger.warning("skipped %d empty config%s: %s", len(empty), "s" if len(empty) > 1 else "", named)
    return {name: records for name, records in configs.items() if name not in empty}


def push_dataset_repo(folder: str | Path, repo_id: str, *, private: bool = False, token: str | None = None,
                      endpoint: str | None = None, commit_message: str = "Upload PRAIB dataset") -> str:
    """Create the dataset repository ``repo_id`` if needed and upload ``folder`` in one commit.

    Returns the commit URL. ``endpoint`` defaults to ``$HF_ENDPOINT`` (else the public Hub),
    ``token`` to the one huggingface_hub finds (``$HF_TOKEN``, ``hf auth login``).
    """
    from huggingface_hub import DatasetCard, HfApi

    folder = Path(folder)
    readme = folder / "README.md"
    try:
        card = DatasetCard(read_text(readme, what="dataset card"))
    except RecordError as err:
        raise PublishError(f"{err}; run `praib data build` first") from None
    except ValueError as err:  # a YAML header that does not parse
        raise PublishError(f"{readme}: not a dataset card ({err}); run `praib data build` first") from None
    if not card.data.get("configs"):
        raise PublishError(f"{readme}: the card names no configs (in its YAML header); run `praib data build` first")
    missing = [f["path"] for config in card.data["configs"] for f in config["data_files"]
               if not (folder / f["path"]).is_file()]
    if missing:
        raise PublishError(f"{readme}: the card names files that are missing: {', '.join(missing)}")
    api = HfApi(endpoint=endpoint or os.environ.get("HF_ENDPOINT") or None, token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        commit = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="dataset",
                                   ignore_patterns=[RECORD], commit_message=commit_message)
    except Exception as err:  # noqa: BLE001 - the Hub client raises HTTP, network and offline-mode errors alike
        raise PublishError(f"could not push {folder} to {api.endpoint} as {repo_id}: {type(err).__name__}: {err}") \
            from err
    return commit.commit_url
