"""Prints "N passed, N failed" over every doctest case in a meson test log (one case per test
executable that prints no doctest summary, e.g. a crashed suite or a shell-script test). An MPI test
prints one summary per rank, and the launcher may interleave their lines: its cases count once, with
the largest counts any rank reported."""
import json
import re
import sys

SUMMARY = re.compile(r"test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed(?:\s*\|\s*(\d+) skipped)?")


def main(path):
    passed = failed = skipped = 0
    with open(path) as log:
        for line in log:
            entry = json.loads(line)
            ok = entry["result"] in ("OK", "EXPECTEDFAIL", "SKIP")
            counts = SUMMARY.findall(entry.get("stdout", "") or "")
            if counts and ok:
                passed += max(int(p) for _, p, _, _ in counts)
                failed += max(int(f) for _, _, f, _ in counts)
                skipped += max(int(s or 0) for _, _, _, s in counts)
            elif counts:
                case_failures = max(int(f) for _, _, f, _ in counts)
                passed += max(int(p) for _, p, _, _ in counts)
                failed += max(1, case_failures)
            elif entry["result"] == "SKIP":
                skipped += 1
            elif ok:
                passed += 1
            else:
                failed += 1
    if skipped:
        print(f"{skipped} skipped (doctest cases a suite filtered out, e.g. for another rank count)")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
