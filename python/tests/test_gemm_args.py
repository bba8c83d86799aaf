"""The torch entry point's argument handling, on CPU and meta tensors.

Every rule raises before any device use, so these run without a GPU: with all
shapes right, a CPU or meta tensor stops at the 'must be a CUDA tensor' rule,
which is how the tests below tell that everything before it passed.
"""

import pytest

torch = pytest.importorskip("torch")

import dgemm  # noqa: E402

F8 = torch.float8_e4m3fn
CUDA_RULE = r"must be a CUDA tensor"


def make_args(m=8, n=12, ks=(128, 0, 256), device="cpu", c="separate"):
    g, total_k = len(ks), sum(ks)
    kb = total_k // 128
    d = torch.empty(g, m, n, device=device)
    args = dict(
        a=(torch.empty(m * total_k, dtype=F8, device=device),
           torch.empty(kb, m, device=device).T),
        b=(torch.empty(n * total_k, dtype=F8, device=device),
           torch.empty(kb, n, device=device).T),
        d=d,
        ks=list(ks),
        ks_tensor=torch.tensor(list(ks), dtype=torch.int32, device=device),
        c={"separate": torch.empty(g, m, n, device=device), "d": d, "none": None}[c],
    )
    return args


def call(args, **overrides):
    merged = dict(args)
    merged.update(overrides)
    dgemm.k_grouped_fp8_gemm_nt_contiguous(**merged)


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("c", ["separate", "d", "none"])
def test_well_formed_arguments_stop_only_at_the_cuda_rule(device, c):
    with pytest.raises(ValueError, match=r"^a must be a CUDA tensor, got device '(cpu|meta)'"):
        call(make_args(device=device, c=c))


def test_the_seed_reports_exact_call_is_accepted():
    # The report's shapes and layouts (meta tensors: no memory), called as it
    # calls DeepGEMM: ks positional 4th, the int32 tensor 5th, c = d 6th.
    ks = [256, 128, 128, 256]
    hidden = ffn = 2048
    total_k = sum(ks)
    fp8_grad_y = (torch.empty(total_k * hidden, dtype=F8, device="meta"),
                  torch.empty(total_k // 128, hidden, device="meta").T)
    fp8_s = (torch.empty(total_k * ffn, dtype=F8, device="meta"),
             torch.empty(total_k // 128, ffn, device="meta").T)
    out = torch.zeros(len(ks), hidden, ffn, device="meta")
    grouped_layout = torch.tensor(ks, dtype=torch.int32, device="meta")
    with pytest.raises(ValueError, match=CUDA_RULE):
        dgemm.k_grouped_fp8_gemm_nt_contiguous(
            fp8_grad_y, fp8_s, out, ks, grouped_layout, out, recipe=(1, 1, 128),
            use_psum_layout=False)


def test_deepgemm_positional_order_includes_compiled_dims():
    args = make_args()
    with pytest.raises(ValueError, match=CUDA_RULE):
        dgemm.k_grouped_fp8_gemm_nt_contiguous(
            args["a"], args["b"], args["d"], args["ks"], args["ks_tensor"], args["c"],
            (1, 1, 128), "mn", False)


def test_deepgemm_keyword_spellings_are_accepted():
    args = make_args()
    ks, ks_tensor = args.pop("ks"), args.pop("ks_tensor")
    with pytest.raises(ValueError, match=CUDA_RULE):
        call(args, ks_cpu=ks, grouped_layout=ks_tensor)


def test_both_spellings_of_ks_are_rejected():
    args = make_args()
    with pytest.raises(TypeError, match=r"pass ks or its DeepGEMM spelling ks_cpu, not both"):
        call(args, ks_cpu=args["ks"])


def test_both_spellings_of_ks_tensor_are_rejected():
    args = make_args()
    with pytest.raises(TypeError, match=r"pass ks_tensor or its DeepGEMM spelling grouped_layout, not both"):
        call(args, grouped_layout=args["ks_tensor"])


def test_ks_is_required():
    args = make_args()
    del args["ks"]
    with pytest.raises(TypeError, match=r"ks \(DeepGEMM: ks_cpu\) is required"):
        call(args)
    with pytest.raises(TypeError, match=r"ks \(DeepGEMM: ks_cpu\) is required"):
        call(args, ks=None)


def test_ks_tensor_is_required():
    args = make_args()
    del args["ks_tensor"]
    with pytest.raises(TypeError, match=r"ks_tensor \(DeepGEMM: grouped_layout\) is required"):
        call(args)
    with pytest.raises(TypeError, match=r"ks_tensor \(DeepGEMM: grouped_layout\) is required"):
        call(args, ks_tensor=None)


def test_ks_may_be_a_cpu_tensor():
    args = make_args()
    with pytest.raises(ValueError, match=CUDA_RULE):
        call(args, ks=torch.tensor(args["ks"]))


def test_ks_on_a_device_is_a_type_error():
    args = make_args()
    with pytest.raises(TypeError, match=r"ks must be on the host"):
        call(args, ks=torch.tensor(args["ks"], device="meta"))


@pytest.mark.parametrize("bad", [None, "tensor", 3])
def test_a_must_be_a_pair(bad):
    with pytest.raises(TypeError, match=r"a must be a pair \(a_fp8, sfa\)"):
        call(make_args(), a=bad)


def test_b_must_be_a_pair_of_tensors():
    args = make_args()
    with pytest.raises(TypeError, match=r"b must be a pair"):
        call(args, b=(args["b"][0],))
    with pytest.raises(TypeError, match=r"sfb must be a torch.Tensor, got list"):
        call(args, b=(args["b"][0], [1.0]))


@pytest.mark.parametrize("name", ["d", "c", "ks_tensor"])
def test_tensor_arguments_must_be_tensors(name):
    with pytest.raises(TypeError, match=rf"{name} must be a torch.Tensor"):
        call(make_args(), **{name: [0]})


def test_fp8_operand_dtype_is_checked():
    args = make_args()
    with pytest.raises(TypeError, match=r"a must be a torch.float8_e4m3fn tensor, got torch.bfloat16"):
        call(args, a=(torch.empty(args["a"][0].shape, dtype=torch.bfloat16), args["a"][1]))


def test_e5m2_is_rejected():
    args = make_args()
    with pytest.raises(TypeError, match=r"b must be a torch.float8_e4m3fn tensor, got torch.float8_e5m2"):
        call(args, b=(args["b"][0].view(torch.float8_e5m2), args["b"][1]))


def test_ks_tensor_int64_is_a_type_error():
    args = make_args()
    with pytest.raises(TypeError, match=r"ks_tensor must be a torch.int32 tensor, got torch.int64"):
        call(args, ks_tensor=args["ks_tensor"].long())


def test_d_bf16_is_a_type_error():
    args = make_args()
    with pytest.raises(TypeError, match=r"d must be a torch.float32 tensor, got torch.bfloat16"):
        call(args, d=args["d"].bfloat16(), c=None)


def test_contiguous_scales_are_rejected_with_the_rule():
    args = make_args(m=8)
    sfa = args["a"][1].contiguous()
    with pytest.raises(ValueError, match=r"sfa must have strides \(1, M\) = \(1, 8\)"):
        call(args, a=(args["a"][0], sfa))


def test_scale_shape_is_checked():
    args = make_args(m=8)
    with pytest.raises(ValueError, match=r"sfa must have shape \(M, sum\(ks\)/128\) = \(8, 3\), got \(8, 2\)"):
        call(args, a=(args["a"][0], torch.empty(2, 8).T))


def test_operand_size_is_checked():
    args = make_args(m=8)
    with pytest.raises(ValueError, match=r"a must hold M \* sum\(ks\) = 8 \* 384 = 3072"):
        call(args, a=(torch.empty(3000, dtype=F8), args["a"][1]))


def test_transposed_output_is_rejected():
    args = make_args(m=8, n=8)
    with pytest.raises(ValueError, match=r"d must be contiguous"):
        call(args, d=args["d"].transpose(1, 2), c=None)


def test_ks_not_multiple_of_128():
    args = make_args(ks=(128, 0, 256))
    with pytest.raises(ValueError, match=r"ks\[1\] = 56 is not a multiple of 128"):
        call(args, ks=[128, 56, 200])  # the first offender is named


def test_recipe_and_psum_layout():
    args = make_args()
    with pytest.raises(ValueError, match=r"only recipe=\(1, 1, 128\)"):
        call(args, recipe=(1, 128, 128))
    with pytest.raises(ValueError, match=r"use_psum_layout=True is not supported"):
        call(args, use_psum_layout=True)


def test_check_ks_tensor_must_be_a_bool():
    with pytest.raises(TypeError, match=r"check_ks_tensor must be a bool"):
        call(make_args(), check_ks_tensor=1)


def test_mixed_devices_report_the_first_non_cuda_tensor():
    args = make_args()
    with pytest.raises(ValueError, match=r"^a must be a CUDA tensor, got device 'cpu'"):
        call(args, d=args["d"].to("meta"), c=None)
