"""Records: the typed tables every stage of praib reads and writes (schemas and I/O).

The names below are loaded on first use: importing a light module of this package (``praib.records.progress``,
``praib.records.atomic``) does not import ``datasets`` and ``pyarrow``, which the schemas and readers need, so
that the command line starts without them (``praib --help``).
"""

import importlib

_EXPORTS = {
    "praib.records.io": ("coerce_record", "iter_jsonl", "parse_json", "read_csv_rows", "read_json", "read_json_list",
                         "read_parquet_rows", "read_text", "records_to_dataset", "save_records"),
    "praib.records.schema": ("CRITICAL", "GENERATION_FEATURES", "HUMAN_SOURCE", "META_REVIEW_FEATURES", "NEUTRAL",
                             "PAPER_FEATURES", "PARSE_FAILED", "PARSE_GIVEN", "PARSE_OK", "PARSE_PARTIAL",
                             "PERTURBATION_FEATURES", "REBUTTAL_FEATURES", "REVIEW_FEATURES", "REVIEW_SECTIONS",
                             "SCHEMAS", "OutputWriteError", "RecordError", "perturbation_kind"),
    "praib.records.stream": ("RecordBatch", "iter_record_batches", "load_records", "raw_rows"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))


__all__ = [
    "CRITICAL",
    "GENERATION_FEATURES",
    "HUMAN_SOURCE",
    "META_REVIEW_FEATURES",
    "NEUTRAL",
    "PAPER_FEATURES",
    "PARSE_FAILED",
    "PARSE_GIVEN",
    "PARSE_OK",
    "PARSE_PARTIAL",
    "PERTURBATION_FEATURES",
    "REBUTTAL_FEATURES",
    "REVIEW_FEATURES",
    "REVIEW_SECTIONS",
    "OutputWriteError",
    "RecordBatch",
    "RecordError",
    "SCHEMAS",
    "coerce_record",
    "iter_jsonl",
    "iter_record_batches",
    "load_records",
    "parse_json",
    "perturbation_kind",
    "raw_rows",
    "read_csv_rows",
    "read_json",
    "read_json_list",
    "read_parquet_rows",
    "read_text",
    "records_to_dataset",
    "save_records",
]
