"""Counts distinct test cases, each once, as "N passed, N failed, N skipped".

A case is a doctest case of one program, from the "kusari-case: OUTCOME PROGRAM: NAME" lines the suites
print (test/case_report.h), or a meson test without such lines (a script, a program that crashed before
its first case). A case that ran several times (on several ranks, under 2 and 3 ranks, on loopback:0, in
the sanitized build) failed if any run failed, else passed if any run passed, else was skipped; a meson
test that failed without a failing case line counts as a failed case of its own, and a skip is never a
pass.

  summarize_tests.py meson PART TESTLOG [--suite-part SUITE=PART ...] [--record FILE]
      the cases of a meson test log (meson-logs/testlog.json): one line per part (tests of SUITE go to
      their own part), then the line over the whole log; --record appends every case to FILE
  summarize_tests.py fuzz PART LOG [--record FILE]
      the lines "fuzz_TARGET: ... crashes=0|1" of scripts/fuzz.sh, a target being one case
  summarize_tests.py total FILE
      one line per part recorded in FILE, then the line over distinct cases of all of them
Exits 1 when a case failed."""
import argparse
import json
import re
import sys

CASE_LINE = re.compile(r"^kusari-case: (passed|failed|skipped) (\S+): (.*)$", re.M)
# Terminal colour codes, which doctest writes where the launcher gives the ranks a terminal (Open MPI's).
COLOUR = re.compile(r"\x1b\[[0-9;]*m")
FUZZ_LINE = re.compile(r"^fuzz_(\S+): .*crashes=([01])", re.M)
RANK = {"skipped": 0, "passed": 1, "failed": 2}


def merge(cases, key, outcome):
    if RANK[outcome] >= RANK[cases.get(key, "skipped")]:
        cases[key] = outcome


def counts_line(cases):
    values = list(cases.values())
    return f"{values.count('passed')} passed, {values.count('failed')} failed, {values.count('skipped')} skipped"


def meson_cases(path, default_part, suite_parts):
    """{part: {(program, case): outcome}} of one meson test log."""
    parts = {}
    with open(path) as log:
        for line in log:
            test = json.loads(line)
            # "kusari:SUITE / NAME" (meson's log names the first suite in the test's name).
            suites = [s.split(":")[-1] for s in test.get("suite") or [test["name"].split(" / ")[0]]]
            part = next((suite_parts[s] for s in suites if s in suite_parts), default_part)
            cases = parts.setdefault(part, {})
            found = CASE_LINE.findall(COLOUR.sub("", test.get("stdout", "") or ""))
            for outcome, program, name in found:
                merge(cases, (program, name), outcome)
            result = test["result"]
            ok = result in ("OK", "EXPECTEDFAIL")
            if not ok and result != "SKIP" and not any(outcome == "failed" for outcome, _, _ in found):
                merge(cases, ("meson test", test["name"]), "failed")
            elif not found:
                merge(cases, ("meson test", test["name"]), "passed" if ok else "skipped" if result == "SKIP" else "failed")
    return parts


def fuzz_cases(path):
    with open(path) as log:
        return {("fuzz", target): "failed" if crashed == "1" else "passed"
                for target, crashed in FUZZ_LINE.findall(log.read())}


def record(path, parts):
    if not path:
        return
    with open(path, "a") as out:
        for part, cases in parts.items():
            for (program, name), outcome in cases.items():
                out.write(json.dumps({"part": part, "program": program, "case": name, "outcome": outcome}) + "\n")


def print_parts(parts):
    every = {}
    for part, cases in parts.items():
        print(f"{part}: {counts_line(cases)}")
        for key, outcome in cases.items():
            merge(every, key, outcome)
            if outcome == "failed":
                print(f"  failed: {key[0]}: {key[1]}")
    return every


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["meson", "fuzz", "total"])
    parser.add_argument("args", nargs="+")
    parser.add_argument("--suite-part", action="append", default=[])
    parser.add_argument("--record", default="")
    options = parser.parse_args()
    if options.mode == "total":
        parts = {}
        with open(options.args[0]) as records:
            for line in records:
                entry = json.loads(line)
                merge(parts.setdefault(entry["part"], {}), (entry["program"], entry["case"]), entry["outcome"])
    else:
        part, path = options.args
        if options.mode == "meson":
            parts = meson_cases(path, part, dict(s.split("=", 1) for s in options.suite_part))
        else:
            parts = {part: fuzz_cases(path)}
        record(options.record, parts)
    every = print_parts(parts)
    print(counts_line(every))
    return 1 if "failed" in every.values() else 0


if __name__ == "__main__":
    sys.exit(main())
