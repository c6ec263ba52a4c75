"""A stand-in for PyTorch, for test/bench_kernels.py only: it takes every call bench/torch_kernels_gpu.py
makes and returns tensors that know only their shape (2-byte elements), so that the twin's own Python (its
workloads' names and order, their bytes, the line format) runs on a machine without PyTorch. It computes
nothing; whether the calls are PyTorch's is for a GPU run."""
import math


float16, bfloat16, float32 = "float16", "bfloat16", "float32"


class Tensor:
    """A tensor of `shape` and `dtype`: every method returns one of the same shape and dtype."""

    def __init__(self, shape=(1,), dtype=float32):
        self.shape = tuple(shape)
        self.dtype = dtype

    def numel(self):
        return math.prod(self.shape)

    def element_size(self):
        return 4 if self.dtype == float32 else 2

    def __getattr__(self, name):
        return lambda *args, **kwargs: Tensor(self.shape, self.dtype)

    def __mul__(self, other):
        return Tensor(self.shape, self.dtype)

    __rmul__ = __add__ = __mul__


class Namespace:
    def __init__(self, **members):
        self.__dict__.update(members)


class no_grad:
    def __enter__(self):
        return self

    def __exit__(self, *exception):
        return False


def _made(shape, *args, dtype=float32, **kwargs):
    return Tensor((shape,) if isinstance(shape, int) else shape, dtype)


def _like(x, *args, **kwargs):
    return Tensor(x.shape, x.dtype)


def _pooled(x, *args, **kwargs):
    return Tensor((x.shape[0], x.shape[1], 1, 1), x.dtype)


def _max_pooled(x, kernel, stride, padding):
    return Tensor(x.shape[:2] + tuple((n + 2 * padding - kernel) // stride + 1 for n in x.shape[2:]), x.dtype)


def _nothing(*args, **kwargs):
    return None


class _SGD:
    def __init__(self, params, **options):
        self.params = list(params)

    def step(self):
        return None


randn = ones = zeros = _made
empty_like = randn_like = ones_like = relu = add = _like
manual_seed = _nothing
_amp_foreach_non_finite_check_and_unscale_ = _foreach_copy_ = _nothing
channels_last, contiguous_format = "channels_last", "contiguous_format"
cuda = Namespace(synchronize=_nothing, empty_cache=_nothing)
autograd = Namespace(grad=_nothing)
ops = Namespace(aten=Namespace(threshold_backward=_like))
nn = Namespace(functional=Namespace(batch_norm=_like, max_pool2d=_max_pooled, adaptive_avg_pool2d=_pooled),
               Parameter=_like)
optim = Namespace(SGD=_SGD)


def device(name):
    return name
