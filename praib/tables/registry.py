"""Which tables praib can lay out, from which results, and how result files are recognised.

A :class:`TableSpec` names one table of one paper, the kind of result it is built from and the
command that writes that result. Result files are recognised by their content, so ``praib tables``
takes any mix of them: ``praib evaluate --output`` JSON, ``praib robustness --output`` JSON,
``praib counterfactual effects --output`` JSON, ``praib leaderboard eras --output`` JSON, ``praib grounding
--output`` JSON, ``praib judge validate --output`` JSON, the statistics ``praib perturb`` and ``praib counterfactual build`` write beside their output
(``OUTPUT.stats.json``) and ``praib counterfactual stats`` writes, and the folders ``praib leaderboard run
--output`` and ``praib data build --output`` write (the latter read through its ``statistics.json``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from praib.metrics.registry import difference_digits, digits_of
from praib.records import read_json
from praib.tables.layout import Cell, Table

#: Result kinds and the command that writes each.
PRODUCED_BY = {
    "evaluate": "praib evaluate REVIEWS --output results.json",
    "robustness": "praib robustness ORIGINAL PERTURBED... --output robustness.json",
    "effects": "praib counterfactual effects ORIGINAL VARIANTS --output effects.json",
    "eras": "praib leaderboard eras HUMAN_REVIEWS --output eras.json",
    "leaderboard": "praib leaderboard run SUBMISSIONS... --output RESULTS_DIR",
    "grounding": "praib grounding REVIEWS --judge MODEL --output grounding.json",
    "perturb-statistics": "praib perturb KIND INPUT --output PERTURBED (its statistics: PERTURBED.stats.json)",
    "counterfactual-statistics": "praib counterfactual build PAPERS --output VARIANTS (its statistics: "
                                 "VARIANTS.stats.json), or praib counterfactual stats PAPERS VARIANTS",
    "data-statistics": "praib data build --papers PAPERS --reviews REVIEWS --output DIR (its statistics: "
                       "DIR/statistics.json)",
    "validation": "praib judge validate --task TASK --gold GOLD --judge MODEL --output validation.json",
}

#: The kind of a statistics file, by what wrote it (its ``statistics_of``).
STATISTICS_OF = {"praib perturb": "perturb-statistics", "praib counterfactual build": "counterfactual-statistics",
                 "praib counterfactual stats": "counterfactual-statistics", "praib data build": "data-statistics"}
DATASET_STATISTICS = "statistics.json"


@dataclass(frozen=True)
class Result:
    """A result file praib wrote: its kind (a key of :data:`PRODUCED_BY`), where it was read, and its data.
    A leaderboard folder's data is ``{"run": run.json, "rows": [results.jsonl rows], "comparisons":
    [comparisons.parquet rows], "ranks": [ranks.parquet rows]}`` (None for a folder without comparisons)."""

    kind: str
    path: str
    data: Any


@dataclass(frozen=True)
class TableSpec:
    key: str
    paper: str
    number: int
    title: str
    kind: str
    #: One table, or (a spec that lays out one table per model, say) a list of them.
    build: Callable[["TableSpec", Sequence[Result]], "Table | list[Table]"]
    #: True for a table laid out from several results of its kind together (e.g. one robustness report per
    #: prompt setting); otherwise each result gives a table of its own.
    combines: bool = False

    @property
    def produced_by(self) -> str:
        return PRODUCED_BY[self.kind]

    def new(self, header: list[str], **fields) -> Table:
        """An empty table of this spec."""
        return Table(self.key, self.paper, self.number, self.title, header=header, **fields)

    def of(self, what: str) -> "TableSpec":
        """This spec with ``what`` (a model, say) after its title: one of several tables a spec builds."""
        return replace(self, title=f"{self.title} ({what})")


TABLES: dict[str, TableSpec] = {}


def table(key: str, paper: str, number: int, title: str, kind: str, combines: bool = False):
    """Register the function that builds a paper's table from the results of one kind."""
    def register(build):
        if key in TABLES:
            raise ValueError(f"table {key} registered twice")
        TABLES[key] = TableSpec(key, paper, number, title, kind, build, combines)
        return build
    return register


def result_kind(data: Any) -> str | None:
    """The kind of result ``data`` (a parsed JSON file) is, None when it is none praib writes."""
    if not isinstance(data, dict):
        return None
    if data.get("statistics_of") in STATISTICS_OF:
        return STATISTICS_OF[data["statistics_of"]]
    if "grounding_specificity" in data and "groups" in data:
        return "grounding"
    if "template_hash" in data and "task" in data and "metrics" in data:
        return "validation"
    if "groups" in data and "group_by" in data:
        return "evaluate"
    if "reviewers" in data and "margins" in data:
        return "robustness"
    if "reviewers" in data and isinstance(data.get("differences"), list):
        return "effects"
    if "venues" in data and "split_years" in data:
        return "eras"
    return None


def load_result(path: str | Path) -> Result:
    """Read one result file (or a leaderboard results folder, as :func:`praib.leaderboard.report.load_results` reads
    it); every error is one line (a ``ValueError``) naming the path."""
    path = Path(path)
    if path.is_dir() and not (path / "run.json").is_file() and (path / DATASET_STATISTICS).is_file():
        path = path / DATASET_STATISTICS  # a dataset folder `praib data build` wrote
    if path.is_dir():
        from praib.leaderboard.report import load_results

        if not (path / "run.json").is_file():
            raise ValueError(f"{path}: a folder, but not one `praib leaderboard run` (run.json) or `praib data "
                             f"build` ({DATASET_STATISTICS}) wrote")
        # The report's reader: the rows checked and completed as the leaderboard's own page reads them.
        results = load_results(path)
        return Result("leaderboard", str(path), {"run": results.run, "rows": results.rows,
                                                 "comparisons": results.comparisons, "ranks": results.ranks})
    data = read_json(path, "results")
    kind = result_kind(data)
    if kind is None:
        raise ValueError(f"{path}: not a result praib writes (expected the JSON of one of: "
                         f"{', '.join(command.split(' --')[0] for command in PRODUCED_BY.values())})")
    return Result(kind, str(path), data)



def resolve(data: Any, pointer: str) -> Any:
    """The value at a JSON pointer (RFC 6901) in ``data``; None where there is none."""
    value = data
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict):
            value = value.get(token)
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return None
    return value


def pointer(*path: Any) -> str:
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


class Numbers:
    """The numbers of one result as cells, each remembering the file and pointer it was read from."""

    def __init__(self, result: Result):
        self.result = result

    def get(self, *path: Any) -> Any:
        return resolve(self.result.data, pointer(*path))

    def cell(self, *path: Any, metric: str | None = None, difference_of: str | None = None, digits: int | None = None,
             signed: bool = False) -> Cell:
        """The number at ``path``, printed with the decimals the registry gives a value of ``metric`` or a
        difference of two values of ``difference_of``, or with ``digits`` where the paper's table prints it
        otherwise (or it is no metric's value)."""
        value = self.get(*path)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            value = None
        if digits is None and metric is not None:
            digits = digits_of(metric)
        elif digits is None and difference_of is not None:
            digits = difference_digits(difference_of)
        return Cell(value, f"{self.result.path}#{pointer(*path)}", digits, signed)
