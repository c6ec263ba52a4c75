#!/usr/bin/python3
"""Every recipe refuses a bad command line before starting anything: exit status 2 and a message naming
the flag, the expected form and what came; --help lists the flags with their defaults and exits 0; a
global batch the ranks cannot share evenly is refused under mpiexec -n 3; a process that another MPI's
mpiexec started as one of several is refused, naming the MPI built with (KUSARI_TEST_MPI: mpich or
openmpi, the build's).
Usage: recipe_flags.py MPIEXEC RECIPE [RECIPE ...]"""
import os
import sys
import tempfile

from command_check import check

mpiexec, recipes = sys.argv[1], sys.argv[2:]
scratch = tempfile.TemporaryDirectory()
built_with_mpich = os.environ.get("KUSARI_TEST_MPI", "mpich") == "mpich"
FOREIGN = {"OMPI_COMM_WORLD_SIZE": "2"} if built_with_mpich else {"PMI_SIZE": "2"}
FOREIGN_WORDS = ["built with " + ("MPICH" if built_with_mpich else "Open MPI"), "one of 2", "sees 1 rank",
                 "mpiexec.mpich" if built_with_mpich else "mpiexec.openmpi"]
BAD = [
    (["--batchsize", "12x"], ["--batchsize", "integer", "12x"]),
    (["--batchsize", "0"], ["--batchsize", "integer >= 1", "'0'"]),
    (["--seed", "-1"], ["--seed", "integer >= 0", "-1"]),
    (["--epoch", "-1"], ["--epoch", "number > 0", "-1"]),
    (["--epoch", "abc"], ["--epoch", "number > 0", "abc"]),
    (["--bogus", "1"], ["--bogus"]),
    (["--dtype", "int8"], ["--dtype", "float16", "int8"]),
    (["--memory-order", "nhwc"], ["--memory-order", "channels_last", "nhwc"]),
    (["--progress", "spinner"], ["--progress", "bar|lines|off", "'spinner'"]),
    (["--progress-interval", "0"], ["--progress-interval", "integer >= 1", "'0'"]),
    (["--device", "cuda:0"], ["--device cuda:0", "no CUDA device"]),
    (["--device", "gpu"], ["--device", "cuda:N", "'gpu'"]),
    (["--train", "only.txt"], ["--train", "--val"]),
    (["--batchsize"], ["--batchsize"]),
    (["--loaders", "-2"], ["--loaders", "-1", "-2"]),
    (["--loss-scale", "big"], ["--loss-scale", "dynamic", "big"]),
    (["--model", "resnet50"], ["--model resnet50", "imagenet preset", "fashion_mnist"]),
    (["--bn", "multi_node", "--bn-batch", "32"], ["--bn multi_node", "--bn-batch 0", "32"]),
    # On GPUs every algorithm runs as on a CPU or is refused: kusari's host-memory engines and their pacing.
    (["--device", "cuda", "--communicator", "ring"],
     ["--communicator ring with --device cuda", "not built on NCCL", "nccl", "hierarchical", "hybrid", "multi_color"]),
    (["--device", "cuda", "--communicator", "hybrid", "--chunk-bytes", "4096"], ["chunk_bytes (4096)", "NCCL chunks"]),
]


for recipe in recipes:
    for args, words in BAD:
        check([recipe, "--preset", "fashion_mnist"] + args, 2, words)
    if os.path.basename(recipe) == "fashion_mnist":
        check([recipe, "--preset", "imagenet"], 2, ["--preset", "fashion_mnist", "imagenet"])
    else:
        check([recipe, "--preset", "imagenet"], 2, ["--train", "--val"])
    text = check([recipe, "--help"], 0, ["--batchsize", "--epoch", "--resume", "--autoload", "--frequency",
                                          "--seed", "--threads", "--device", "--dtype", "--wire-dtype",
                                          "--communicator", "--preset", "--train", "--val", "--root",
                                          "--dataset", "--model", "--bn-batch", "--cudnn-benchmark",
                                          "--memory-order"])
    assert "=" in text, text  # defaults are shown
    groups = ["Run:", "Data:", "Model:", "Device:", "Distributed:", "Output:", "Optimizer:", "Environment:"]
    missing = [group for group in groups if group not in text]
    assert not missing, f"{recipe} --help lacks the groups {missing}:\n{text}"
    for flag, group in [("--batchsize", "Run:"), ("--initmodel", "Model:"), ("--communicator", "Distributed:"),
                        ("--dtype", "Device:"), ("--out", "Output:"), ("--train", "Data:")]:
        following = text[text.index(group):]
        assert flag in following.split("\n\n\n")[0], f"{recipe} --help: {flag} is not in the group {group}"
    assert "KUSARI_STALL_TIMEOUT" in text, f"{recipe} --help lists the environment variables"
    check([recipe, "--preset", "fashion_mnist"], 2, ["KUSARI_CUDNN_BENCHMARK", "expected 0 or 1", "'yes'"],
          env=dict(os.environ, KUSARI_CUDNN_BENCHMARK="yes"))
    check([mpiexec, "-n", "3", recipe, "--preset", "fashion_mnist", "--batchsize", "8"], 2,
          ["--batchsize", "multiple of the 3 ranks", "8"])
    check([mpiexec, "-n", "2", recipe, "--preset", "fashion_mnist", "--batchsize", "96", "--bn", "local",
           "--bn-batch", "32"], 2, ["--bn-batch", "divisor of the local batch 48", "32"])
    name = os.path.basename(recipe)
    check([recipe, "--preset", "fashion_mnist", "--max-iterations", "1", "--out", scratch.name], 1, FOREIGN_WORDS,
          env=dict(os.environ, **FOREIGN))
    if name == "fashion_mnist":  # every model it takes with its own defaults, never the MLP's for a ResNet
        for model, batch in [("mlp", "200"), ("resnet20", "256"), ("resnet32", "256"), ("resnet56", "256")]:
            shown = check([recipe, "--model", model, "--help"], 0, ["--batchsize"])
            assert f"--batchsize INT:an integer >= 1={batch}" in shown, f"--model {model}: default batch {batch}"
    if name in ("akiba2017", "kumar2017"):  # ring becomes NCCL's own on a GPU; multi_color runs its NCCL colors
        check([recipe, "--preset", "fashion_mnist", "--device", "cuda"], 2, ["--device cuda", "no CUDA device"])
    if name == "akiba2017":
        check([recipe, "--preset", "fashion_mnist", "--slow-start-epochs", "7,4,8"], 2,
              ["--slow-start-epochs", "strictly increasing", "7,4,8"])
    if name in ("goyal2017", "kumar2017", "fashion_mnist"):
        check([recipe, "--preset", "fashion_mnist", "--lr-milestones", "3,3"], 2,
              ["--lr-milestones", "strictly increasing", "3,3"])
    print(f"{name}: flag errors refused")
