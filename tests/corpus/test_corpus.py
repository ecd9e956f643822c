"""The corpus of Triton kernels written elsewhere (Triton's tutorials, FlagGems' operators) on the
host targets: every export's committed TTIR fixture is imported, compiled for "interp" (checked
mode) and "cpu", launched on its test-size case (shapes that are not multiples of the blocks,
outputs with guard elements) and compared with NumPy. Exports marked slow (dot-heavy kernels
whose checked interpretation takes seconds) run on "cpu" only.

A failure that tests/corpus/expected_failures.json lists for that export and target must happen
exactly as written there (stage and first line of the error); when it stops happening the test
fails too, so the list stays the compiler's to-do list. Needs NumPy and libtri (TRI_LIBRARY),
not Triton.

TRI_CORPUS=tutorials or flaggems restricts the run to one corpus (CTest runs them as two tests)."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from corpus import common, runner  # noqa: E402
from corpus.flaggems import cases as flaggems_cases  # noqa: E402
from corpus.tutorials import cases as tutorial_cases  # noqa: E402

TARGETS = ("interp", "cpu")
REGISTRIES = {"tutorials": tutorial_cases.REGISTRY, "flaggems": flaggems_cases.REGISTRY}
SELECTED = [c for c in REGISTRIES if os.environ.get("TRI_CORPUS", c) == c]
EXPECTED = common.load_expected_failures()


def _params():
    out = []
    for corpus in SELECTED:
        for e in REGISTRIES[corpus].exports.values():
            for target in TARGETS:
                if target == "interp" and e.slow:
                    continue
                out.append(pytest.param(e, target, id=f"{e.key}[{target}]"))
    return out


@pytest.fixture(scope="module")
def fixtures():
    with runner.tri.Context() as ctx:
        yield runner.Fixtures(ctx)


@pytest.mark.parametrize("export,target", _params())
def test_export(fixtures, export, target):
    outcome = runner.run_host(fixtures, export, export.case("test"), target)
    expected = common.expected_failure(EXPECTED, export.key, target)
    if expected is None:
        assert outcome.ok, f"{export.key} on {target}: {outcome.text}"
    elif outcome.ok:
        pytest.fail(f"{export.key} on {target} passes now: remove it from tests/corpus/expected_failures.json "
                    f"(it says: {expected})")
    else:
        assert outcome.text == expected, (f"{export.key} on {target} fails differently from what "
                                          f"tests/corpus/expected_failures.json says:\n  now:      {outcome.text}\n"
                                          f"  expected: {expected}")


def test_fixtures_match_exports():
    """Every export has a fixture and a manifest entry, and every fixture an export; every
    expected failure names an export."""
    for corpus in SELECTED:
        d = runner.CORPUS_DIRS[corpus]
        exports = REGISTRIES[corpus].exports
        fixtures = {p.stem for p in (d / "ttir").glob("*.ttir")}
        manifest = common.load_manifest(d)["exports"]
        missing = sorted(set(exports) - fixtures)
        extra = sorted(fixtures - set(exports))
        assert not missing and not extra, (f"tests/corpus/{corpus}/ttir is out of step with cases.py (missing "
                                           f"{missing}, extra {extra}): run tests/corpus/{corpus}/make_fixtures.py")
        assert sorted(manifest) == sorted(exports), f"tests/corpus/{corpus}/manifest.json is out of step"
    known = {e.key for r in REGISTRIES.values() for e in r.exports.values()}
    unknown = sorted(k for k in EXPECTED if k not in known)
    assert not unknown, f"expected_failures.json names exports that do not exist: {unknown}"
