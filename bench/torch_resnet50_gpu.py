#!/usr/bin/env python3
"""PyTorch's twin of `bench/resnet50 --device cuda:0` for the GPU check (scripts/gpu_check.sh): torchvision's
ResNet-50, batch 256 of 224x224 images, 1000 classes, one SGD step (lr 0.01, momentum 0.9) of softmax
cross-entropy per iteration on fixed random inputs, synchronized after each step, in float32 and in
channels-last AMP (float16 autocast with a gradient scaler; amp_bf16: bfloat16 autocast, no scaler),
each printing the bench line with the peak device memory and cuDNN's algorithm policy (--cudnn-benchmark,
as kusari's line states its own): "name: X ms/step, Y samples/s peak_device_mb=N peak_live_mb=N
cudnn=benchmark|heuristics" (the most memory the cache held, and the most its live blocks took).
Usage: torch_resnet50_gpu.py [float32|amp|amp_bf16 ...] [--batch N] [--warmup N] [--steps N] [--cudnn-benchmark 0|1]"""
import argparse
import time

import torch
import torchvision


def run(mode, batch, warmup, steps, cudnn_benchmark):
    torch.manual_seed(0)
    device = torch.device("cuda:0")
    torch.backends.cudnn.benchmark = cudnn_benchmark
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = torchvision.models.resnet50(num_classes=1000).to(device)
    x = torch.randn(batch, 3, 224, 224, device=device)
    t = torch.randint(0, 1000, (batch,), device=device)
    amp = mode in ("amp", "amp_bf16")
    half = torch.bfloat16 if mode == "amp_bf16" else torch.float16
    if amp:
        model = model.to(memory_format=torch.channels_last)
        x = x.to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda", enabled=amp and half == torch.float16)  # bfloat16 needs no scaling
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=half, enabled=amp):
            loss = loss_fn(model(x), t)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        torch.cuda.synchronize()

    for _ in range(warmup):
        step()
    torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    ms = (time.perf_counter() - start) * 1000 / steps
    peak = torch.cuda.max_memory_reserved() >> 20
    live = torch.cuda.max_memory_allocated() >> 20
    kind = "bfloat16" if half == torch.bfloat16 else "float16"
    name = f"torch_resnet50_b{batch}_cuda" + (f"_{kind}_amp_channels_last" if amp else "")
    policy = "benchmark" if cudnn_benchmark else "heuristics"
    print(f"{name}: {ms:.4f} ms/step, {batch * 1000 / ms:.1f} samples/s peak_device_mb={peak} peak_live_mb={live} "
          f"cudnn={policy}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("modes", nargs="*", default=["float32", "amp"], choices=["float32", "amp", "amp_bf16"])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--cudnn-benchmark", type=int, choices=[0, 1], default=1,
                        help="torch.backends.cudnn.benchmark: 1 times cuDNN's algorithms, 0 takes its heuristics")
    args = parser.parse_args()
    for mode in args.modes:
        run(mode, args.batch, args.warmup, args.steps, bool(args.cudnn_benchmark))
