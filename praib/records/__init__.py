"""Records: the typed tables every stage of praib reads and writes (schemas and I/O)."""

from praib.records.io import (coerce_record, iter_jsonl, parse_json, read_csv_rows, read_json, read_json_list,
                              read_parquet_rows, read_text, records_to_dataset, save_records)
from praib.records.schema import (CRITICAL, GENERATION_FEATURES, HUMAN_SOURCE, META_REVIEW_FEATURES, NEUTRAL,
                                  PAPER_FEATURES, PARSE_FAILED, PARSE_GIVEN, PARSE_OK, PARSE_PARTIAL,
                                  PERTURBATION_FEATURES, REBUTTAL_FEATURES, REVIEW_FEATURES, REVIEW_SECTIONS, SCHEMAS,
                                  OutputWriteError, RecordError, perturbation_kind)
from praib.records.stream import RecordBatch, iter_record_batches, load_records, raw_rows

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
