"""Where the tests find the repository's files, whatever folder a test module sits in."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
METRICS = ROOT / "metrics"
FIXTURES = ROOT / "tests" / "fixtures"
DEMO = ROOT / "praib" / "data" / "demo"
SHARED_DATA = ROOT.parent / "shared" / "data"
