#!/usr/bin/python3
"""The commands README.md and docs/*.md show (their sh blocks) still work:
- the README's first screen (its first 30 lines) holds the two commands, training and testing;
- every `bash SCRIPT` names a script of the repository that bash can parse;
- every recipe command runs as written, in a directory where build/ is this build and result/ holds a
  short run of the default recipe (training commands are cut to 5 iterations), and every flag it uses is
  in the recipe's --help.
Usage: readme_commands.py SOURCE_DIR BUILD_DIR MPIEXEC"""
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

source, build, mpiexec = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
failures = []


def expect(condition, what):
    if not condition:
        failures.append(what)


readme = open(os.path.join(source, "README.md")).read()
first_screen = "\n".join(readme.split("\n")[:30])
for command in ["bash scripts/train.sh", "bash .ci/run"]:
    expect(command in first_screen, f"README.md's first 30 lines show `{command}`")

commands = []
for path in [os.path.join(source, "README.md")] + sorted(glob.glob(os.path.join(source, "docs", "*.md"))):
    for block in re.findall(r"```(?:sh|bash)\n(.*?)```", open(path).read(), re.S):
        for line in block.strip().split("\n"):
            commands.append((os.path.relpath(path, source), line.split("  #")[0].strip()))

with tempfile.TemporaryDirectory() as work:
    os.symlink(os.path.abspath(build), os.path.join(work, "build"))
    subprocess.run([os.path.join(build, "recipes", "fashion_mnist"), "--max-iterations", "5",
                    "--progress", "off", "--out", "result"], cwd=work, check=True, capture_output=True, timeout=300)
    ran = 0
    for where, line in commands:
        words = shlex.split(line)
        if not words:
            continue  # a comment's own line
        if words[0] == "bash":
            script = os.path.join(source, words[1])
            expect(os.path.isfile(script), f"{where}: `{line}`: {words[1]} exists")
            if os.path.isfile(script):
                parsed = subprocess.run(["bash", "-n", script], capture_output=True, text=True)
                expect(parsed.returncode == 0, f"{where}: `{line}`: bash -n {words[1]}: {parsed.stderr}")
            continue
        if words[0] == "mpiexec":
            words = [mpiexec] + words[1:]
        program = next((w for w in words if w.startswith("build/recipes/")), None)
        if program is None:
            continue  # meson and ninja commands: the suite itself runs them
        shown = subprocess.run([os.path.join(work, program), "--help"], capture_output=True, text=True).stdout
        for flag in (w.split("=")[0] for w in words if w.startswith("--")):
            expect(flag in shown, f"{where}: `{line}`: {program} --help lists {flag}")
        if "--evaluate" not in words:
            words += ["--max-iterations", "5", "--progress", "off"]
        done = subprocess.run(words, cwd=work, capture_output=True, text=True, timeout=300)
        expect(done.returncode == 0, f"{where}: `{line}` exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        ran += 1
    expect(ran >= 2, f"at least the README's two recipe commands ran, ran {ran}")

for failure in failures:
    print("FAIL:", failure)
print("PASS" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
