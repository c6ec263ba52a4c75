#!/usr/bin/env python3
"""PyTorch's twin of `bench/kernels --device cuda:0` for the GPU check (scripts/gpu_check.sh): the same
memory-bound operations at ResNet-50's shapes, in the same dtype and memory order, as a PyTorch program
runs them (eager mode: batch normalization then the ReLU as two kernels, autograd for the backwards, the
SGD optimizer's default multi-tensor step), each timed as kusari's is (ten calls, then a synchronization)
and printed with the same name prefixed "torch_" and the same bytes (but for the loss scaler's check,
whose PyTorch kernel also unscales every gradient in place, reading and writing it: twice the bytes),
so that each pair of lines compares one operation: "name: X ms/step, Y samples/s bytes_mb=B gb_s=G
copy_fraction=F", the fraction of this run's own cudaMemcpy line. kusari's channel passes have no
PyTorch counterpart. Batch normalization's scale and shift are float32, as under AMP; AMP also keeps
float32 gradients, but here the loss scaler's check and the widening run on gradients of the bench's
dtype, as kusari's do.
Usage: torch_kernels_gpu.py [--dtype float16|bfloat16|float32] [--channels-last 0|1] [--batch N]
                            [--warmup N] [--steps N] [--seconds S]"""
import argparse
import time

import torch
import torchvision

CALLS_PER_STEP = 10
# The workloads in their order (kusari's without its channel passes; test/bench_kernels.py holds the two
# programs to it); copy_tensors only for the half types.
WORKLOADS = ("copy_reference", "to_channels_last", "bn_relu_forward", "bn_relu_backward", "bn_add_relu_forward",
             "bn_add_relu_backward", "add", "add_relu", "relu_grad", "relu", "max_pool_forward", "max_pool_backward",
             "global_average_pool_forward", "global_average_pool_forward_backward", "all_finite_resnet50_grads",
             "momentum_steps_resnet50", "copy_tensors_resnet50_grads")


def mean_call_ms(call, warmup, steps, seconds):
    """Mean milliseconds per call: warm-up steps first, then at least `steps` steps and `seconds`."""
    def step():
        for _ in range(CALLS_PER_STEP):
            call()
        torch.cuda.synchronize()

    for _ in range(warmup):
        step()
    start = time.perf_counter()
    count = 0
    while count < steps or time.perf_counter() - start < seconds:
        step()
        count += 1
    return (time.perf_counter() - start) * 1000 / count / CALLS_PER_STEP


def nbytes(*tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def workloads(batch, dtype, memory_format):
    """(name, bytes, call) makers in kusari's order; each makes its operands when its turn comes."""
    device = torch.device("cuda:0")
    stem, block_end, last = (batch, 64, 112, 112), (batch, 256, 56, 56), (batch, 2048, 7, 7)

    def activation(shape, requires_grad=False):
        x = torch.randn(shape, device=device, dtype=dtype).contiguous(memory_format=memory_format)
        return x.requires_grad_(requires_grad)

    def channel_parameters(channels):
        # float32, as AMP keeps them: cuDNN's batch normalization takes half inputs only with float32 ones
        return (torch.ones(channels, device=device, requires_grad=True),
                torch.zeros(channels, device=device, requires_grad=True))

    def copy_reference():
        x = activation(block_end).contiguous()
        out = torch.empty_like(x)
        return "copy_reference", nbytes(x, out), lambda: out.copy_(x)

    def to_channels_last():
        x = torch.randn(block_end, device=device, dtype=dtype)
        return "to_channels_last", 2 * nbytes(x), lambda: x.contiguous(memory_format=torch.channels_last)

    def batch_norm(x, gamma, beta, residual):
        y = torch.nn.functional.batch_norm(x, None, None, gamma, beta, training=True, eps=1e-5)
        return torch.relu(y if residual is None else y + residual)

    def bn_forward(shape, with_residual):
        x = activation(shape)
        gamma, beta = channel_parameters(shape[1])
        residual = activation(shape) if with_residual else None

        def call():
            with torch.no_grad():
                batch_norm(x, gamma, beta, residual)
        name = "bn_add_relu_forward" if with_residual else "bn_relu_forward"
        return name, (3 if with_residual else 2) * nbytes(x), call

    def bn_backward(shape, with_residual):
        x = activation(shape, requires_grad=True)
        gamma, beta = channel_parameters(shape[1])
        residual = activation(shape) if with_residual else None
        y = batch_norm(x, gamma, beta, residual)
        gy = activation(shape)
        name = "bn_add_relu_backward" if with_residual else "bn_relu_backward"
        return name, (4 if with_residual else 3) * nbytes(x), lambda: torch.autograd.grad(
            y, (x, gamma, beta), gy, retain_graph=True)

    def binary(name, op):
        a, b = activation(block_end), activation(block_end)
        return name, 3 * nbytes(a), lambda: op(a, b)

    def relu():
        x = activation(block_end)
        return "relu", 2 * nbytes(x), lambda: torch.relu(x)

    def max_pool_forward():
        x = activation(stem)
        y = torch.nn.functional.max_pool2d(x, 3, 2, 1)
        return "max_pool_forward", nbytes(x, y), lambda: torch.nn.functional.max_pool2d(x, 3, 2, 1)

    def max_pool_backward():
        x = activation(stem, requires_grad=True)
        y = torch.nn.functional.max_pool2d(x, 3, 2, 1)
        gy = torch.randn_like(y)
        return "max_pool_backward", nbytes(gy, x), lambda: torch.autograd.grad(y, x, gy, retain_graph=True)

    def global_average_pool_forward():
        x = activation(last)
        y = torch.nn.functional.adaptive_avg_pool2d(x, 1)
        return "global_average_pool_forward", nbytes(x, y), lambda: torch.nn.functional.adaptive_avg_pool2d(x, 1)

    def global_average_pool_forward_backward():
        x = activation(last, requires_grad=True)

        def call():
            y = torch.nn.functional.adaptive_avg_pool2d(x, 1)
            torch.autograd.grad(y, x, torch.ones_like(y))
        y = torch.nn.functional.adaptive_avg_pool2d(x, 1)
        return "global_average_pool_forward_backward", 2 * nbytes(x, y), call

    shapes = [p.shape for p in torchvision.models.resnet50(num_classes=1000).parameters()]

    def parameters(kind):
        return [torch.randn(shape, device=device, dtype=kind) * 0.01 for shape in shapes]

    def all_finite():
        grads = parameters(dtype)
        found_inf = torch.zeros(1, device=device)
        scale = torch.ones(1, device=device)
        def call():  # reads and writes every gradient (multiplied in place by the inverse scale, 1 here)
            torch._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, scale)
        return "all_finite_resnet50_grads", 2 * nbytes(*grads), call

    def momentum_steps():
        weights = [torch.nn.Parameter(w) for w in parameters(torch.float32)]
        for w, g in zip(weights, parameters(torch.float32)):
            w.grad = g
        optimizer = torch.optim.SGD(weights, lr=0.1, momentum=0.9, weight_decay=1e-4)
        optimizer.step()  # makes the momentum buffers
        return "momentum_steps_resnet50", 5 * nbytes(*weights), optimizer.step

    def widen_gradients():
        grads, wide = parameters(dtype), parameters(torch.float32)
        return "copy_tensors_resnet50_grads", nbytes(*grads, *wide), lambda: torch._foreach_copy_(wide, grads)

    makers = [copy_reference, to_channels_last,
              lambda: bn_forward(stem, False), lambda: bn_backward(stem, False),
              lambda: bn_forward(block_end, True), lambda: bn_backward(block_end, True),
              lambda: binary("add", torch.add), lambda: binary("add_relu", lambda a, b: torch.relu(a + b)),
              lambda: binary("relu_grad", lambda gy, y: torch.ops.aten.threshold_backward(gy, y, 0)),
              relu, max_pool_forward, max_pool_backward, global_average_pool_forward,
              global_average_pool_forward_backward, all_finite, momentum_steps]
    if dtype != torch.float32:
        makers.append(widen_gradients)
    return makers


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", default="float16", choices=["float16", "bfloat16", "float32"])
    parser.add_argument("--channels-last", type=int, default=1, choices=[0, 1])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.5)
    args = parser.parse_args()
    torch.manual_seed(0)
    dtype = getattr(torch, args.dtype)
    memory_format = torch.channels_last if args.channels_last else torch.contiguous_format
    suffix = f"_{args.dtype}_cuda" + ("_channels_last" if args.channels_last else "")
    copy_gb_s = None
    for expected, make in zip(WORKLOADS, workloads(args.batch, dtype, memory_format)):
        name, bytes_moved, call = make()
        assert name == expected, (name, expected)
        ms = mean_call_ms(call, args.warmup, args.steps, args.seconds)
        gb_s = bytes_moved / (ms * 1e6)
        copy_gb_s = copy_gb_s or gb_s
        print(f"torch_kernels_b{args.batch}_{name}{suffix}: {ms:.4f} ms/step, {args.batch * 1000 / ms:.1f} samples/s "
              f"bytes_mb={bytes_moved / 2**20:.1f} gb_s={gb_s:.1f} copy_fraction={gb_s / copy_gb_s:.3f}", flush=True)
        del call
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
