"""The argument rules on TensorInfo records: no torch, no GPU."""

import math
from dataclasses import replace

import pytest

from dgemm import _checks
from dgemm._checks import TensorInfo

_SIZES = {"float8_e4m3fn": 1, "float32": 4, "int32": 4, "bfloat16": 2, "int64": 8}


def _strides(shape):
    out, step = [], 1
    for dim in reversed(shape):
        out.append(step)
        step *= dim
    return tuple(reversed(out))


def info(name, dtype, shape, strides=None, device="cuda:0", ptr=0x10000, contiguous=None):
    shape = tuple(shape)
    strides = _strides(shape) if strides is None else tuple(strides)
    if contiguous is None:
        contiguous = strides == _strides(shape)
    return TensorInfo(name=name, dtype=dtype, device=device, shape=shape, strides=strides,
                      data_ptr=ptr, element_size=_SIZES[dtype], contiguous=contiguous)


def valid_args(m=8, n=12, ks=(128, 0, 256)):
    """Well-formed arguments, each at its own 256-aligned, non-overlapping address."""
    g, total_k = len(ks), sum(ks)
    kb = total_k // 128
    specs = [
        ("a", "float8_e4m3fn", (m * total_k,), None),
        ("sfa", "float32", (m, kb), (1, m)),
        ("b", "float8_e4m3fn", (n * total_k,), None),
        ("sfb", "float32", (n, kb), (1, n)),
        ("d", "float32", (g, m, n), None),
        ("c", "float32", (g, m, n), None),
        ("ks_tensor", "int32", (g,), None),
    ]
    args, ptr = {}, 0x100000
    for name, dtype, shape, strides in specs:
        args[name] = info(name, dtype, shape, strides, ptr=ptr)
        ptr += (math.prod(shape) * _SIZES[dtype] + 255) // 256 * 256 + 256
    args["ks"] = list(ks)
    return args


def check(args, **overrides):
    merged = dict(args)
    merged.update(overrides)
    return _checks.check_k_grouped(**merged)


def test_valid_arguments_give_the_problem_sizes():
    p = check(valid_args(m=8, n=12, ks=(128, 0, 256)))
    assert (p.m, p.n, p.num_groups, p.ks, p.total_k, p.num_k_blocks) == (8, 12, 3, (128, 0, 256), 384, 3)


def test_c_may_be_omitted_or_be_d():
    args = valid_args()
    check(args, c=None)
    check(args, c=replace(args["d"], name="c"))


@pytest.mark.parametrize("name,bad_dtype", [
    ("a", "bfloat16"), ("sfa", "bfloat16"), ("b", "int32"), ("sfb", "int64"),
    ("d", "bfloat16"), ("c", "bfloat16"), ("ks_tensor", "int64"),
])
def test_wrong_dtype_is_a_type_error_naming_the_argument(name, bad_dtype):
    args = valid_args()
    args[name] = replace(args[name], dtype=bad_dtype)
    with pytest.raises(TypeError, match=rf"^{name} must be a torch\.\w+ tensor, got torch\.{bad_dtype}"):
        check(args)


def test_d_must_be_three_dimensional():
    args = valid_args()
    with pytest.raises(ValueError, match=r"d must have shape \[G, M, N\] \(3 dimensions\)"):
        check(args, d=info("d", "float32", (24, 12)))


def test_d_needs_at_least_one_group():
    args = valid_args(ks=())
    with pytest.raises(ValueError, match=r"num_groups G = d.shape\[0\] = 0 must be >= 1"):
        check(args)


@pytest.mark.parametrize("m,n,what", [(6, 12, "M"), (8, 10, "N"), (8, 2, "N")])
def test_m_and_n_must_be_multiples_of_4(m, n, what):
    with pytest.raises(ValueError, match=rf"{what} = d.shape\[\d\] = \d+ must be a positive multiple of 4"):
        check(valid_args(m=m, n=n))


def test_m_beyond_32_bits_is_rejected():
    args = valid_args(m=8)
    big = 2**31
    d = info("d", "float32", (3, big, 12))
    args.update(d=d, c=None,
                a=info("a", "float8_e4m3fn", (big * 384,)),
                sfa=info("sfa", "float32", (big, 3), (1, big)))
    with pytest.raises(ValueError, match=r"M = 2147483648 exceeds the kernel's limit"):
        check(args)


@pytest.mark.parametrize("name", ["d", "c"])
def test_outputs_must_be_contiguous(name):
    args = valid_args()
    args[name] = replace(args[name], strides=(96, 1, 8), contiguous=False)
    with pytest.raises(ValueError, match=rf"{name} must be contiguous"):
        check(args)


def test_c_must_have_d_shape():
    args = valid_args()
    with pytest.raises(ValueError, match=r"c must have shape \[G, M, N\] = \[3, 8, 12\] like d, got \[3, 12, 8\]"):
        check(args, c=info("c", "float32", (3, 12, 8), ptr=args["c"].data_ptr))


def test_len_ks_must_equal_num_groups():
    args = valid_args()
    with pytest.raises(ValueError, match=r"len\(ks\) = 2 does not match num_groups G = d.shape\[0\] = 3"):
        check(args, ks=[128, 256])


@pytest.mark.parametrize("shape", [(2,), (3, 1), (4,)])
def test_ks_tensor_must_have_shape_g(shape):
    args = valid_args()
    with pytest.raises(ValueError, match=r"ks_tensor must have shape \[G\] = \[3\]"):
        check(args, ks_tensor=info("ks_tensor", "int32", shape, ptr=args["ks_tensor"].data_ptr))


def test_ks_tensor_must_be_contiguous():
    args = valid_args()
    with pytest.raises(ValueError, match=r"ks_tensor must be contiguous"):
        check(args, ks_tensor=replace(args["ks_tensor"], strides=(2,), contiguous=False))


@pytest.mark.parametrize("bad", [5, "128", None, {1: 2}])
def test_ks_must_be_a_sequence(bad):
    with pytest.raises(TypeError, match=r"ks must be a host list or tuple of ints"):
        check(valid_args(), ks=bad)


@pytest.mark.parametrize("bad", [128.0, True, "128", None])
def test_ks_entries_must_be_ints(bad):
    with pytest.raises(TypeError, match=r"ks\[1\] must be an int"):
        check(valid_args(), ks=[128, bad, 256])


def test_ks_entries_may_be_any_integer_type():
    class Index:
        def __init__(self, v):
            self.v = v

        def __index__(self):
            return self.v

    assert check(valid_args(), ks=(Index(128), Index(0), Index(256))).ks == (128, 0, 256)


def test_ks_entries_must_not_be_negative():
    with pytest.raises(ValueError, match=r"ks\[1\] = -128 is negative"):
        check(valid_args(), ks=[128, -128, 384])


@pytest.mark.parametrize("bad", [64, 100, 129, 200])
def test_ks_entries_must_be_multiples_of_128(bad):
    with pytest.raises(ValueError, match=rf"ks\[2\] = {bad} is not a multiple of 128"):
        check(valid_args(), ks=[128, 0, bad])


def test_a_must_hold_m_times_sum_k_elements():
    args = valid_args(m=8)
    with pytest.raises(ValueError, match=r"a must hold M \* sum\(ks\) = 8 \* 384 = 3072 FP8 elements"):
        check(args, a=info("a", "float8_e4m3fn", (3071,), ptr=args["a"].data_ptr))


def test_b_must_hold_n_times_sum_k_elements():
    args = valid_args(n=12)
    with pytest.raises(ValueError, match=r"b must hold N \* sum\(ks\) = 12 \* 384 = 4608 FP8 elements"):
        check(args, b=info("b", "float8_e4m3fn", (384, 8), ptr=args["b"].data_ptr))


def test_a_may_have_any_contiguous_shape_with_that_numel():
    args = valid_args(m=8)
    check(args, a=info("a", "float8_e4m3fn", (8, 384), ptr=args["a"].data_ptr))


def test_a_must_be_contiguous():
    args = valid_args(m=8)
    with pytest.raises(ValueError, match=r"a must be contiguous"):
        check(args, a=info("a", "float8_e4m3fn", (384, 8), (1, 384), ptr=args["a"].data_ptr))


@pytest.mark.parametrize("name,rows,shape", [
    ("sfa", "M", (8, 2)), ("sfa", "M", (3, 8)), ("sfb", "N", (12, 4)), ("sfb", "N", (384, 12)),
])
def test_scale_shape_must_be_rows_by_k_blocks(name, rows, shape):
    args = valid_args(m=8, n=12)
    bad = info(name, "float32", shape, (1, shape[0]), ptr=args[name].data_ptr)
    with pytest.raises(ValueError, match=rf"{name} must have shape \({rows}, sum\(ks\)/128\)"):
        check(args, **{name: bad})


@pytest.mark.parametrize("name,rows", [("sfa", 8), ("sfb", 12)])
def test_scale_must_be_the_transpose_of_a_contiguous_tensor(name, rows):
    args = valid_args(m=8, n=12)
    # A contiguous (rows, KB) tensor: right shape, wrong memory order.
    bad = info(name, "float32", (rows, 3), ptr=args[name].data_ptr)
    with pytest.raises(ValueError, match=rf"{name} must have strides \(1, [MN]\) = \(1, {rows}\).*got strides \(3, 1\)"):
        check(args, **{name: bad})


def test_scale_stride_of_a_single_k_block_is_free():
    args = valid_args(m=8, n=12, ks=(128,))
    check(args, sfa=info("sfa", "float32", (8, 1), (1, 1), ptr=args["sfa"].data_ptr))


@pytest.mark.parametrize("recipe", [(1, 128, 128), (128, 128, 128), (1, 1, 32)])
def test_only_the_1_1_128_recipe_is_supported(recipe):
    with pytest.raises(ValueError, match=r"recipe=.* is not supported: only recipe=\(1, 1, 128\)"):
        check(valid_args(), recipe=recipe)


@pytest.mark.parametrize("recipe", [None, "1,1,128", (1, 1), (1, 1, 128.0)])
def test_recipe_must_be_three_ints(recipe):
    with pytest.raises(TypeError, match=r"recipe must be a tuple of 3 ints"):
        check(valid_args(), recipe=recipe)


def test_recipe_may_be_a_list():
    check(valid_args(), recipe=[1, 1, 128])


def test_psum_layout_is_not_supported():
    with pytest.raises(ValueError, match=r"use_psum_layout=True is not supported"):
        check(valid_args(), use_psum_layout=True)


def test_use_psum_layout_must_be_a_bool():
    with pytest.raises(TypeError, match=r"use_psum_layout must be a bool"):
        check(valid_args(), use_psum_layout=0)


def test_compiled_dims_is_checked_then_ignored():
    check(valid_args(), compiled_dims="nk")
    check(valid_args(), compiled_dims="")
    with pytest.raises(ValueError, match=r"compiled_dims='mx' may only contain"):
        check(valid_args(), compiled_dims="mx")
    with pytest.raises(TypeError, match=r"compiled_dims must be a str"):
        check(valid_args(), compiled_dims=None)


@pytest.mark.parametrize("name", ["a", "sfa", "b", "sfb", "d", "c", "ks_tensor"])
@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_every_tensor_must_be_on_cuda(name, device):
    args = valid_args()
    args[name] = replace(args[name], device=device)
    with pytest.raises(ValueError, match=rf"^{name} must be a CUDA tensor, got device '{device}'"):
        check(args)


@pytest.mark.parametrize("name", ["a", "sfb", "c", "ks_tensor"])
def test_all_tensors_must_share_one_device(name):
    args = valid_args()
    args[name] = replace(args[name], device="cuda:1")
    with pytest.raises(ValueError, match=rf"{name} is on cuda:1 but d is on cuda:0"):
        check(args)


def test_shape_errors_come_before_device_errors():
    args = {k: (replace(v, device="cpu") if isinstance(v, TensorInfo) else v)
            for k, v in valid_args().items()}
    with pytest.raises(ValueError, match=r"len\(ks\)"):
        check(args, ks=[128])


@pytest.mark.parametrize("name", ["a", "sfa", "b", "sfb", "d", "c", "ks_tensor"])
def test_pointers_must_be_16_byte_aligned(name):
    args = valid_args()
    args[name] = replace(args[name], data_ptr=args[name].data_ptr + 8)
    with pytest.raises(ValueError, match=rf"{name}'s data pointer 0x[0-9a-f]+ is not 16-byte aligned"):
        check(args)


def test_empty_operands_need_no_address():
    args = valid_args(ks=(0, 0))
    for name in ("a", "sfa", "b", "sfb"):
        args[name] = replace(args[name], data_ptr=0)
    assert check(args).total_k == 0


def test_c_must_not_partially_overlap_d():
    args = valid_args()
    d = args["d"]
    with pytest.raises(ValueError, match=r"c must either be d itself .* or not overlap d"):
        check(args, c=replace(d, name="c", data_ptr=d.data_ptr + 64))


def test_ks_entries_must_fit_int32():
    # ctypes would wrap 2**31 to -2**31 on its way to the runtime.
    with pytest.raises(ValueError, match=r"ks\[1\] = 2147483648 does not fit in int32"):
        _checks.normalize_ks([128, 2**31])


def test_sum_of_ks_must_fit_int32():
    big = 2**31 - 128
    assert _checks.normalize_ks([big]) == (big,)
    with pytest.raises(ValueError, match=r"sum\(ks\) = 2147483648 does not fit in int32"):
        _checks.normalize_ks([big, 128])


@pytest.mark.parametrize("name", ["a", "sfa", "b", "sfb", "ks_tensor"])
def test_d_must_not_overlap_an_input(name):
    args = valid_args()
    d = args["d"]
    with pytest.raises(ValueError, match=rf"d must not overlap {name}: the kernel writes d"):
        check(args, **{name: replace(args[name], data_ptr=d.data_ptr + 64)})


def test_inputs_may_share_memory():
    # Only read: a . a^T with one tensor for both operands is fine.
    args = valid_args(m=8, n=8)
    assert check(args, b=replace(args["a"], name="b"),
                 sfb=replace(args["sfa"], name="sfb")).m == 8
