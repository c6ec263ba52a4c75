#!/usr/bin/python3
"""Before and after training, from the command line (fashion_mnist, a small MLP on Fashion-MNIST):
- a run keeps model_best.npz, the model alone in Chainer's keys, written at the best validation top-1;
- --evaluate gives back the logged validation loss, top-1 and top-5 of a snapshot (--resume) or of a
  model file (--initmodel) on 1, 2 and 3 ranks and on the loopback device, training nothing;
- --initmodel from model_best.npz starts with the same first loss as from the snapshot of that epoch,
  and not with a fresh model's; a file of another model or none at all is refused naming it;
- the small preset resizes list images of any size, aspect and colour model to --crop-size;
- --version names kusari's version.
Usage: recipe_model_files.py MPIEXEC FASHION_MNIST"""
import json
import os
import subprocess
import sys
import tempfile
import zipfile

from PIL import Image

from command_check import check

mpiexec, recipe = sys.argv[1:3]
SMALL = ["--unit", "64", "--progress", "off"]
failures = []


def expect(condition, what):
    if not condition:
        failures.append(what)


def run(ranks, args):
    done = subprocess.run([mpiexec, "-n", str(ranks), recipe] + SMALL + args, capture_output=True, text=True,
                          timeout=300)
    if done.returncode != 0:
        sys.exit(f"FAIL: {recipe} {' '.join(args)} on {ranks} rank(s) exited {done.returncode}:\n"
                 f"{done.stdout}\n{done.stderr}")
    return done.stdout


def read_json(path):
    with open(path) as f:
        return json.load(f)


def evaluation(ranks, args, out):
    run(ranks, ["--evaluate", "--out", out] + args)
    expect(not os.path.exists(os.path.join(out, "args.json")), f"--evaluate wrote no args.json into {out}")
    return read_json(os.path.join(out, "evaluation.json"))


def same_metrics(got, logged, what):
    for key in ["validation/main/accuracy", "validation/main/accuracy_top5", "validation/main/loss"]:
        close = abs(got.get(key, -1) - logged[key]) <= 1e-9 + 1e-6 * abs(logged[key])
        expect(close, f"{what}: {key} {got.get(key)} against the logged {logged[key]}")


def first_loss(out, args):
    run(2, ["--out", out, "--max-iterations", "1", "--log-interval", "1"] + args)
    return read_json(os.path.join(out, "log"))[0]["main/loss"]


with tempfile.TemporaryDirectory() as tmp:
    trained = os.path.join(tmp, "trained")
    run(2, ["--epoch", "3", "--out", trained])
    log = read_json(os.path.join(trained, "log"))
    best = max(range(len(log)), key=lambda i: log[i]["validation/main/accuracy"])
    best_file = os.path.join(trained, "model_best.npz")
    with zipfile.ZipFile(best_file) as archive:
        names = sorted(archive.namelist())
    expect(names == ["l1/W.npy", "l1/b.npy", "l2/W.npy", "l2/b.npy", "l3/W.npy", "l3/b.npy"],
           f"model_best.npz holds the MLP's weights alone in Chainer's keys, got {names}")
    last = os.path.join(trained, f"snapshot_iter_{log[-1]['iteration']}")
    for ranks, device in [(1, "cpu"), (2, "cpu"), (3, "cpu"), (2, "loopback:0")]:
        got = evaluation(ranks, ["--resume", last, "--device", device], os.path.join(tmp, f"eval_{ranks}_{device}"))
        same_metrics(got, log[-1], f"--evaluate --resume {last} on {ranks} rank(s), {device}")
    got = evaluation(2, ["--initmodel", best_file], os.path.join(tmp, "eval_best"))
    same_metrics(got, log[best], f"--evaluate --initmodel model_best.npz (epoch {best + 1})")

    best_snapshot = os.path.join(trained, f"snapshot_iter_{log[best]['iteration']}")
    from_best = first_loss(os.path.join(tmp, "from_best"), ["--initmodel", best_file])
    from_snapshot = first_loss(os.path.join(tmp, "from_snapshot"), ["--initmodel", best_snapshot])
    fresh = first_loss(os.path.join(tmp, "fresh"), [])
    expect(from_best == from_snapshot, f"first loss from model_best.npz {from_best} equals from {best_snapshot}, "
                                       f"{from_snapshot}")
    expect(abs(from_best - fresh) > 0.1, f"the loaded model's first loss {from_best} is not a fresh model's {fresh}")

    refused = ["--out", os.path.join(tmp, "refused")]
    check([recipe, "--evaluate"] + refused, 2, ["--evaluate", "--initmodel", "--resume", "neither"])
    missing = os.path.join(tmp, "no_such.npz")
    check([recipe, "--initmodel", missing, "--max-iterations", "1"] + refused, 1, [missing])
    check([recipe, "--unit", "32", "--evaluate", "--initmodel", best_file] + refused, 1,
          [best_file, "l1/W", "32", "64"])
    check([recipe, "--version"], 0, ["kusari 0.", "(fashion_mnist)"])

    # A user's own images: any size, aspect and colour model, trained on at 28 x 28 and at 20 x 20.
    images = os.path.join(tmp, "images")
    os.makedirs(images)
    lines = []
    for i, (mode, size, fmt) in enumerate([("RGB", (120, 96), "JPEG"), ("L", (30, 40), "JPEG"),
                                           ("CMYK", (50, 70), "JPEG"), ("RGBA", (9, 200), "PNG"),
                                           ("RGB", (28, 28), "PNG"), ("L", (300, 17), "JPEG")]):
        name = f"{i}.{fmt.lower()}"
        Image.new(mode, size, color=(i * 40,) * len(mode)).save(os.path.join(images, name), format=fmt)
        lines.append(f"{name} {i % 3}\n")
    with open(os.path.join(images, "list.txt"), "w") as f:
        f.writelines(lines)
    lists = ["--train", os.path.join(images, "list.txt"), "--val", os.path.join(images, "list.txt"), "--root", images,
             "--batchsize", "4", "--max-iterations", "2", "--classes", "3"]
    for crop in ["28", "20"]:
        run(2, lists + ["--crop-size", crop, "--out", os.path.join(tmp, "own_images_" + crop)])
    check([recipe, "--crop-size", "20"], 2, ["--crop-size 20", "28", "--train"])
    with open(os.path.join(images, "broken.jpg"), "wb") as f:
        f.write(b"\xff\xd8 not a jpeg")
    with open(os.path.join(images, "list.txt"), "a") as f:
        f.write("broken.jpg 0\n")
    check([recipe] + SMALL + lists + ["--batchsize", "7"] + refused, 1, ["broken.jpg"])

for failure in failures:
    print("FAIL:", failure)
print("PASS" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
