"""torch_npu.contrib with bfloat16 inputs: on an emulated 910B (``APEXNPU_SOC_VERSION=
Ascend910B1``) the layers and functions compute bf16 in fp32 and round once, as their operators
do, and the layers Ascend writes in fp32 (DCNv2, ROIAlign, the IoU fronts) return fp32; a 910
refuses bf16 arithmetic. Each case runs in a fresh interpreter, as the chip is read once."""

import subprocess
import sys
import textwrap

import overlay_support


def run(code, chip):
    environ = overlay_support.overlay_env()
    environ.pop("APEXNPU_INF_NAN_MODE", None)
    environ["APEXNPU_SOC_VERSION"] = chip
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines())


# Each case prints "name dtype-of-result max-error-against-its-fp32-formula-rounded-to-bf16".
CASES = """
    import math, warnings
    import torch, torch_npu
    import torch.nn.functional as F
    from torch_npu.contrib import function as cf, module as cm
    warnings.simplefilter("ignore", FutureWarning)
    torch.manual_seed(0)
    bf = torch.bfloat16

    def report(name, got, want):
        err = (got.detach().cpu().float() - want.detach().to(got.dtype).float()).abs().max()
        print(name, str(got.dtype).replace("torch.", ""), float(err))

    def attempt(name, fn):
        try:
            fn()
        except RuntimeError as e:
            print(name, "refused", "bfloat16" in str(e))

    x = (torch.randn(2, 4, 6, 6) * 3).to(bf)
    def activations():
        for name, layer, f in (("mish", cm.Mish(), lambda v: v * torch.tanh(F.softplus(v))),
                               ("silu", cm.SiLU(), lambda v: v * torch.sigmoid(v))):
            leaf = x.npu().requires_grad_(True)
            out = layer(leaf)
            out.sum().backward()
            ref = x.float().requires_grad_(True)
            f(ref).sum().backward()
            report(name, out, f(x.float()))
            report(name + "_grad", leaf.grad, ref.grad)
    attempt("activations", activations)

    def batch_norm():
        layer = cm.FastBatchNorm2d(4).npu().to(bf)
        report("batchnorm", layer(x.npu()), F.batch_norm(x.float(), None, None, training=True))
    attempt("batchnorm", batch_norm)

    def dropouts():
        layer = cm.NpuCachedDropout(0.25)
        model = torch.nn.Sequential(layer)
        cm.NpuCachedDropout.enable_dropout_ensemble(model)
        model(x.npu())  # makes the mask
        mask = next(iter(cm.NpuCachedDropout.task_dict.values())).mask_queue[0][0]
        want = torch_npu.npu_dropout_do_mask(x.npu().float(), mask, 0.25)[0]
        report("cached_dropout", layer(x.npu()), want.cpu())
        report("byte_mask_eval", cm.DropoutWithByteMask(0.3).eval()(x.npu()), x.float())
    attempt("dropouts", dropouts)

    def attention_probs():
        mask, scores = torch.randn(2, 16, 128, 128).to(bf), torch.randn(2, 16, 128, 128).to(bf)
        got = cf.fuse_add_softmax_dropout(False, None, mask.npu(), scores.npu(), 64, p=0.1)
        report("fuse_add_softmax", got, torch.softmax(mask.float() + scores.float() / 8, -1))
    attempt("fuse_add_softmax", attention_probs)

    def fp32_layers():
        dcn = cm.DCNv2(4, 2, 3, 1, 1).npu().to(bf)
        print("dcn", str(dcn(x.npu()).dtype).replace("torch.", ""), 0.0)
        rois = torch.tensor([[0, 0, 0, 4, 4]], dtype=bf).npu()
        print("roi_align", str(cm.ROIAlign((2, 2), 1.0, 2)(x.npu(), rois).dtype)[6:], 0.0)
        boxes = torch.tensor([[0, 0, 10, 10], [5, 5, 15, 15]], dtype=bf).npu()
        print("iou", str(cf.npu_iou(boxes, boxes).dtype)[6:], 0.0)
    attempt("fp32_layers", fp32_layers)
"""

# Element-wise results are the formula rounded once: exact. Gradients, statistics and softmax
# sums may take another fp32 order, which can move a value to the neighbouring bf16 (2^-6 apart
# below 2, the largest of them).
BF16_BOUNDS = {
    "mish": 0.0,
    "silu": 0.0,
    "cached_dropout": 0.0,
    "byte_mask_eval": 0.0,
    "mish_grad": 2**-6,
    "silu_grad": 2**-6,
    "batchnorm": 2**-6,
    "fuse_add_softmax": 2**-6,
}


def test_contrib_computes_bf16_on_a_910b():
    results = run(CASES, "Ascend910B1")
    for name, bound in BF16_BOUNDS.items():
        dtype, err = results[name].split()
        assert dtype == "bfloat16" and float(err) <= bound, (name, results[name])
    for name in ("dcn", "roi_align", "iou"):  # Ascend's layers compute these in fp32
        assert results[name].split()[0] == "float32", (name, results[name])


def test_a_910_refuses_bf16_in_contrib():
    results = run(CASES, "Ascend910A")
    for name in ("activations", "batchnorm", "dropouts", "fuse_add_softmax", "fp32_layers"):
        assert results[name] == "refused True", (name, results.get(name))
