#!/usr/bin/env python3
"""Every row of docs/DEVELOPERS.md's device-path table names tests that CTest runs.

Usage: check_device_path_table.py <source root> <build dir>

The last column of each row names test programs (`halo3d_...`, MPI ones as `halo3d_x.np1/2/4`) and GoogleTest
cases (`Suite.Case*`, `Instantiation/Suite.*/param`, `.OtherCase` continuing the previous suite, `*_device`).
A program must be registered with CTest (`ctest -N` in the build dir); a case pattern must match a registered
test's name, or, for the cases of an MPI program (registered once per rank count), a TEST/TEST_P of that suite in
tests/. Prints each row it cannot back and exits 1, so the table cannot name a test that does not run.
"""
import glob
import re
import subprocess
import sys


def table_rows(doc):
    text = open(doc).read()
    section = text.split("## Device paths", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("|---")]
    return rows[1:]  # the header row


def main():
    src, build = sys.argv[1], sys.argv[2]
    listed = subprocess.run(["ctest", "-N"], cwd=build, capture_output=True, text=True, check=True).stdout
    names = [m.group(1) for m in re.finditer(r"Test\s+#\d+: (\S+)", listed)]
    sources = "\n".join(open(f).read() for f in glob.glob(src + "/tests/**/*.cpp", recursive=True))
    bad = 0
    rows = table_rows(src + "/docs/DEVELOPERS.md")
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        tokens = re.findall(r"`([^`]+)`", cells[-1])
        problems, suite, mpi = [], None, False
        for token in tokens:
            if token.startswith("halo3d_"):
                program = re.match(r"halo3d_[a-z0-9_]+", token).group(0)
                mpi = ".np" in token
                if not any(n == program or n.startswith(program + ".") for n in names):
                    problems.append("program %s is not registered with CTest" % program)
                rest = token[len(program):].strip()
                if rest and not rest.startswith(".np"):
                    token = rest
                elif rest.startswith(".np") and " " in rest:
                    token = rest.split(" ", 1)[1]
                else:
                    continue
            if token.startswith(".") and suite:
                token = suite + token
            token = token.split(" ")[0]
            parts = token.split("/")
            suite = next((p.split(".")[0] for p in parts if "." in p), suite)
            if mpi:
                if not re.search(r"TEST(_P|_F)?\(\s*%s\s*," % re.escape(suite or token.split(".")[0]), sources):
                    problems.append("no test suite %s in tests/" % suite)
                continue
            pattern = re.escape(token).replace(r"\*", ".*")
            if not any(re.search(pattern, n) for n in names):
                problems.append("no registered test matches %s" % token)
        if not tokens:
            problems.append("names no test")
        for p in problems:
            print("device-path table row '%s': %s" % (cells[0], p))
            bad += 1
    print("%d rows, %d problems" % (len(rows), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
