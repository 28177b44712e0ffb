#!/usr/bin/env python3
"""scripts/model_accuracy.py on a hand-made validation: model_accuracy_check.py SCRIPT WORK.

Config "m" at P = 2: grid 1x1x2x1 measured 1.2 s, predicted 1.0 s; grid 2x1x1x1 measured 2.4 s, predicted 2.0 s;
peaks 100 and 200 bytes against 110 and 200 predicted; the probe read 1.20 before and after. So: both errors
16.7%, the pick 1x1x2x1 is the measured best (+0.0%), the worst memory error 10.0%, and with the predictions scaled
by the probe's 1.2 every error is 0.0%. A grid that failed is left out."""
import json
import pathlib
import subprocess
import sys

script, work = sys.argv[1], pathlib.Path(sys.argv[2])
sweep = work / "m" / "P2"
sweep.mkdir(parents=True, exist_ok=True)
rows = [
    {"grid": "1x1x2x1", "status": "measured", "measured_step_s": 1.2, "predicted_step_s": 1.0, "peak_bytes": 100,
     "predicted_peak_bytes": 110},
    {"grid": "2x1x1x1", "status": "measured", "measured_step_s": 2.4, "predicted_step_s": 2.0, "peak_bytes": 200,
     "predicted_peak_bytes": 200},
    {"grid": "1x2x1x1", "status": "failed", "note": "a test failure"},
]
(sweep / "sweep.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
for when in ("before", "after"):
    (work / "m" / f"P2.drift-{when}.json").write_text(json.dumps({"ratio": 1.2}))
out = subprocess.run([sys.executable, script, str(work), "--json", str(work / "accuracy.json")], check=True,
                     capture_output=True, text=True).stdout
expected = ("| m | 2 | 2 | 16.7% | 16.7% (1x1x2x1) | 1x1x2x1 (1.200 s) | 1x1x2x1 (1.200 s) | +0.0% | 10.0% "
            "| 1.20 / 1.20 | 0.0% |")
figures = json.loads((work / "accuracy.json").read_text())["m"]["2"]
problems = []
if expected not in out.splitlines():
    problems.append(f"expected the row\n  {expected}\nin\n{out}")
if abs(figures["median_error_speed_scaled"]) > 1e-12 or abs(figures["median_error"] - 1 / 6) > 1e-12:
    problems.append(f"JSON figures {figures}")
if problems:
    sys.exit("model_accuracy check:\n" + "\n".join(problems))
print("model_accuracy check: " + expected)
