#!/usr/bin/python3
"""What the command-line tests share: run a program and check its exit status and the words of its output."""
import subprocess


def check(command, status, words, env=None):
    """Runs command (in the environment `env`, default this one); asserts it exits with `status` and
    prints every one of `words`; returns its output."""
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == status, f"{command}: expected exit {status}, got {result.returncode}\n{output}"
    missing = [w for w in words if w not in output]
    assert not missing, f"{command}: the output lacks {missing}:\n{output}"
    return output
