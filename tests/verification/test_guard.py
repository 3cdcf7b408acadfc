"""The regression guard (``verification.guard``): a verdict change and a tracked value's drift
are found. (``guard save``/``compare`` at the command line: tests/cli/test_cli.py.)"""

import json

from verification.guard import compare


def test_guard_detects_verdict_change_and_drift():
    base = {"claims": [{"id": "a", "verdict": "confirmed",
                        "evidence": {"tracked": {"v": {"value": 1.0, "tol": 0.1}}}}]}
    same = json.loads(json.dumps(base))
    assert compare(base, same) == []
    drift = json.loads(json.dumps(base))
    drift["claims"][0]["evidence"]["tracked"]["v"]["value"] = 1.5
    assert "drifted" in compare(base, drift)[0]
    flipped = json.loads(json.dumps(base))
    flipped["claims"][0]["verdict"] = "refuted"
    assert "confirmed -> refuted" in compare(base, flipped)[0]
