"""The Python API of ``import praib``: every exported name resolves, it loads lazily, and each verb gives what
the library function it wraps gives."""

import json
import subprocess
import sys
import types
from pathlib import Path

import praib
from praib.evaluation.evaluate import evaluate_reviews
from praib.metrics.perturbation.robustness import robustness_report
from praib.parsing import parse_reviews
from praib.perturb.registry import apply_perturbation
from praib.records import load_records
from tests.paths import ROOT as REPO

DEMO_REVIEWS = Path(praib.__file__).parent / "data" / "demo" / "reviews.jsonl"


def test_every_exported_name_resolves():
    for name in praib.__all__:
        assert getattr(praib, name) is not None, name
        assert name in dir(praib)


def test_unknown_name_is_an_attribute_error():
    try:
        praib.no_such_verb
    except AttributeError as err:
        assert "no_such_verb" in str(err)
    else:
        raise AssertionError("praib.no_such_verb resolved")


def test_perturb_stays_the_subpackage():
    import praib.perturb.surface  # noqa: F401 - importing a submodule rebinds praib.perturb

    assert isinstance(praib.perturb, types.ModuleType)
    assert callable(praib.perturb_records)


def test_evaluate_on_a_small_file_imports_no_heavy_library(tmp_path):
    reviews = tmp_path / "reviews.jsonl"
    reviews.write_text("".join(line for line in DEMO_REVIEWS.read_text().splitlines(keepends=True)[:10]))
    script = ("import sys, praib\n"
              f"result = praib.evaluate({str(reviews)!r})\n"
              "assert result.n_reviews == 10, result.n_reviews\n"
              "print(sorted(m for m in ('torch', 'transformers', 'evaluate') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_evaluate_gives_the_numbers_of_evaluate_reviews():
    through_api = praib.evaluate(str(DEMO_REVIEWS))
    direct = evaluate_reviews(load_records(DEMO_REVIEWS, "review"))
    assert json.dumps(through_api.to_dict(), sort_keys=True) == json.dumps(direct.to_dict(), sort_keys=True)


def test_evaluate_takes_a_dataset_and_a_reference():
    reviews = load_records(DEMO_REVIEWS, "review")
    human = reviews.filter(lambda row: row["source"] == "human")
    models = reviews.filter(lambda row: row["source"] != "human")
    assert praib.evaluate(models, reference=human) == evaluate_reviews(models, human)


def test_perturb_records_and_robustness_match_the_library_functions():
    reviews = load_records(DEMO_REVIEWS, "review")
    flipped = praib.perturb_records(str(DEMO_REVIEWS), "rating-flip", seed=3)
    assert flipped.to_list() == apply_perturbation("rating-flip", reviews, seed=3).to_list()
    report = praib.robustness(str(DEMO_REVIEWS), flipped)
    assert report == robustness_report(parse_reviews(reviews), parse_reviews(flipped))
