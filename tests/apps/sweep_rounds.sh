#!/usr/bin/env bash
# sweep_rounds.sh SWEEP DATA WORK LAUNCHER...: halo3d-sweep --rounds. Two ranks run two grids in turn twice (two
# measured steps each time): the log must show the grids interleaved (A, B, A, B, not A, A, B, B), and each record
# must pool its rounds: four steps, two round medians, their mean as measured_step_s. Each grid's
# summary line but the last says about how long the sweep has left. Then a sweep whose grids fail.
set -eu
sweep="$1"; data="$2"; work="$3"; shift 3
rm -rf "$work"
mkdir -p "$work"
"$@" 2 "$sweep" --model cosmoflow --data "$data" --width 0.125 --batch 2 --steps 2 --warmup 0 --rounds 2 \
  --grids 1x1x2x1,2x1x1x1 --out "$work/out" | tee "$work/log"
python3 - "$work/out" "$work/log" <<'PY'
import json, re, statistics, sys
out, log = sys.argv[1], sys.argv[2]
order = re.findall(r"^round (\d) of 2: grid \d of 2: (\S+) ", open(log).read(), re.M)
expected = [("1", "1x1x2x1"), ("1", "2x1x1x1"), ("2", "1x1x2x1"), ("2", "2x1x1x1")]
problems = [] if order == expected else [f"the grids ran in the order {order}, expected {expected}"]
summaries = re.findall(r"^grid \S+: \S+ s per step \(the (?:median|mean of its rounds' medians so far);.*$",
                       open(log).read(), re.M)
lefts = [bool(re.search(r"; about \d\d:\d\d:\d\d left$", line)) for line in summaries]
if lefts != [True, True, True, False]:
    problems.append(f"the time left in the grids' summary lines: {summaries}")
records = [json.loads(line) for line in open(f"{out}/sweep.jsonl")]
if [r["grid"] for r in records] != ["1x1x2x1", "2x1x1x1"]:
    problems.append(f"sweep.jsonl holds {[r['grid'] for r in records]}")
for r in records:
    s = r["step_s"]
    if r.get("status") != "measured" or r.get("rounds") != 2:
        problems.append(f"{r['grid']}: status {r.get('status')}, rounds {r.get('rounds')}")
        continue
    if len(s["all"]) != 4 or len(s["round_medians"]) != 2 or min(s["all"]) <= 0:
        problems.append(f"{r['grid']}: step_s = {s}")
    elif abs(r["measured_step_s"] - statistics.mean(s["round_medians"])) > 1e-12 * r["measured_step_s"]:
        problems.append(f"{r['grid']}: measured_step_s {r['measured_step_s']} is not the mean of the round "
                        f"medians {s['round_medians']}")
    elif abs(s["median"] - statistics.median(s["all"])) > 1e-12 * s["median"]:
        problems.append(f"{r['grid']}: step_s.median {s['median']} is not the median of {s['all']}")
    elif s["min"] != min(s["all"]) or s["max"] != max(s["all"]):
        problems.append(f"{r['grid']}: min/max {s['min']}/{s['max']} of {s['all']}")
    medians = [statistics.median(s["all"][:2]), statistics.median(s["all"][2:])]
    if any(abs(a - b) > 1e-12 * a for a, b in zip(medians, s["round_medians"])):
        problems.append(f"{r['grid']}: round_medians {s['round_medians']}, expected {medians}")
if problems:
    sys.exit("sweep rounds test:\n  " + "\n  ".join(problems))
print("sweep rounds test: " + ", ".join(f"{r['grid']} {r['measured_step_s']:.4g} s over {r['step_s']['all']}"
                                         for r in records))
PY

# A grid that fails (here every grid: a learning rate that makes the loss NaN at the first step) is recorded as
# failed in round 1 and not run in round 2; the sweep exits non-zero, naming the failed grids.
cd "$work"
rc=0
"$@" 2 "$sweep" --model cosmoflow --data "$data" --width 0.125 --batch 2 --steps 2 --warmup 0 --rounds 2 \
  --grids 1x1x2x1,2x1x1x1 --lr 1e30 --out "$work/failed" > "$work/failed.log" 2>&1 || rc=$?
python3 - "$work/failed" "$work/failed.log" "$rc" <<'PY'
import json, sys
out, log, rc = sys.argv[1], open(sys.argv[2]).read(), int(sys.argv[3])
records = [json.loads(line) for line in open(f"{out}/sweep.jsonl")]
problems = []
if rc == 0:
    problems.append("the sweep exited 0")
if [(r["grid"], r["status"]) for r in records] != [("1x1x2x1", "failed"), ("2x1x1x1", "failed")]:
    problems.append(f"records {[(r['grid'], r['status']) for r in records]}")
if "round 2 of 2" in log:
    problems.append("a failed grid ran again in round 2")
if "2 of 2 valid grids failed at run time" not in log:
    problems.append("no error naming the failed grids")
if problems:
    sys.exit("sweep rounds test, failed grids:\n  " + "\n  ".join(problems) + "\n" + log)
print("sweep rounds test: both failed grids recorded in round 1 and not run again")
PY
