"""Whole training steps of mixture-of-experts models on one GPU, plain PyTorch, for validation
only (nothing here sets a trainsim parameter): issue 38's own MoE set. docs/validation/moe.py
holds them against `trainsim run`.

    python3 bench/device/moe_steps.py OUT.csv [--smoke]

The models are moe.py's (torchtitan's MoE layer; Llama or multi-head latent attention),
shaped after Mixtral 8x7B, OLMoE-1B-7B, Qwen3-30B-A3B, DeepSeek-V2-Lite and DeepSeek-V3 with
fewer layers so that one GPU holds them. The recipe is gpt.Trainer's (bf16 weights, fp32 main
grads by hooks, fp32 masters, fused AdamW), the loss gpt.cross_entropy's plus the
load-balancing loss where the model has one, full recomputation by torch.utils.checkpoint per
block. Timed by steps.time_training (3 warm-ups, median of 10); peaks of
max_memory_allocated and max_memory_reserved.
"""
import argparse
import datetime
import sys

import torch

import gpt
import moe
import steps

MIXTRAL = dict(hidden=4096, heads=32, kv_heads=8, experts=8, topk=2, moe_ffn=14336,
               vocab=32000, score="softmax", aux=0.01)
OLMOE = dict(hidden=2048, heads=16, kv_heads=16, experts=64, topk=8, moe_ffn=1024,
             vocab=50304, score="softmax", route_norm=False, aux=0.01)
QWEN3 = dict(hidden=2048, heads=16, kv_heads=4, experts=128, topk=8, moe_ffn=768,
             vocab=151936, score="softmax", aux=0.001)
DSV2_LITE = dict(hidden=2048, heads=16, mla=True, kv_lora=512, qk_nope=128, qk_rope=64,
                 v_dim=128, experts=64, topk=6, moe_ffn=1408, shared_ffn=2816, first_dense=1,
                 dense_ffn=10944, vocab=102400, score="softmax", aux=0.001)
DSV3_MINI = dict(hidden=2048, heads=16, mla=True, q_lora=768, kv_lora=512, qk_nope=128,
                 qk_rope=64, v_dim=128, experts=128, topk=8, moe_ffn=512, shared_ffn=512,
                 first_dense=1, dense_ffn=5632, vocab=129280, score="sigmoid",
                 expert_bias=True)
SMALL = dict(hidden=1024, heads=16, kv_heads=16, experts=32, topk=4, moe_ffn=512,
             vocab=50304, score="softmax", aux=0.01)


def cfg(name, base, layers, seq, mbs, micro, **extra):
    return dict(base, name=name, layers=layers, seq=seq, mbs=mbs, micro=micro, **extra)


CONFIGS = [
    cfg("mixtral-3l", MIXTRAL, 3, 4096, 1, 2),
    cfg("mixtral-3l-loop", MIXTRAL, 3, 4096, 1, 2, grouped=False),
    cfg("olmoe-8l", OLMOE, 8, 4096, 2, 1),
    cfg("olmoe-8l", OLMOE, 8, 4096, 1, 2, recompute=True),
    cfg("qwen3moe-6l", QWEN3, 6, 4096, 1, 2),
    cfg("qwen3moe-6l", QWEN3, 6, 2048, 1, 4),
    cfg("qwen3moe-6l", QWEN3, 6, 4096, 2, 1, recompute=True),
    cfg("dsv2lite-6l", DSV2_LITE, 6, 4096, 1, 2),
    cfg("dsv2lite-6l", DSV2_LITE, 6, 4096, 2, 1, recompute=True),
    cfg("dsv3mini-6l", DSV3_MINI, 6, 4096, 1, 2),
    cfg("small-4l", SMALL, 4, 1024, 1, 4),
    cfg("small-4l-loop", SMALL, 4, 1024, 1, 4, grouped=False),
    # activations rather than weights and optimizer states set the peak
    cfg("olmoe-2l", OLMOE, 2, 4096, 8, 1),
    cfg("qwen3moe-2l", QWEN3, 2, 4096, 4, 1),
    cfg("dsv2lite-3l", DSV2_LITE, 3, 4096, 8, 1, recompute=True),
    cfg("mixtral-1l", MIXTRAL, 1, 4096, 4, 1),
]
# A second set, chosen after the model was built (held against it, never used to shape it):
# other expert counts and widths (DBRX's 16 experts top-4, DeepSeek-V3's 256 top-8), longer
# sequences, larger micro-batches, recomputation with shared experts.
DBRX = dict(hidden=3072, heads=24, kv_heads=8, experts=16, topk=4, moe_ffn=5376, vocab=100352,
            score="softmax", aux=0.05)
CONFIGS2 = [
    cfg("dbrx-2l", DBRX, 2, 4096, 2, 2),
    cfg("dbrx-2l", DBRX, 2, 4096, 4, 1, recompute=True),
    cfg("dsv3-256e-3l", dict(DSV3_MINI, experts=256, moe_ffn=256, shared_ffn=256), 3, 4096, 2, 2),
    cfg("qwen3moe-4l", QWEN3, 4, 8192, 1, 2),
    cfg("olmoe-4l", OLMOE, 4, 2048, 4, 2, recompute=True),
    cfg("dsv2lite-4l", dict(DSV2_LITE, score="sigmoid", expert_bias=True, aux=0.0), 4, 8192, 1, 2),
    cfg("mixtral-2l", MIXTRAL, 2, 8192, 1, 2, recompute=True),
    cfg("small-8l", dict(SMALL, experts=64, topk=8, moe_ffn=256), 8, 2048, 2, 2),
]
SMOKE = [
    cfg("tiny", dict(SMALL, hidden=256, heads=4, kv_heads=2, experts=8, topk=2, moe_ffn=128,
                     vocab=1024), 2, 256, 2, 2),
    cfg("tiny-mla", dict(DSV3_MINI, hidden=256, heads=4, kv_lora=64, q_lora=96, experts=8,
                         topk=2, moe_ffn=128, shared_ffn=128, dense_ffn=512, vocab=1024),
        2, 256, 2, 2, recompute=True),
    cfg("tiny-loop", dict(SMALL, hidden=256, heads=4, kv_heads=4, experts=8, topk=2, moe_ffn=128,
                          vocab=1024), 2, 256, 2, 2, grouped=False),
]
COLUMNS = ["name", "layers", "hidden", "heads", "kv_heads", "mla", "q_lora", "kv_lora",
           "experts", "topk", "moe_ffn", "shared_ffn", "first_dense", "dense_ffn", "vocab",
           "score", "expert_bias", "route_norm", "aux", "grouped", "seq", "mbs", "micro",
           "recompute"]
DEFAULTS = dict(kv_heads=0, mla=False, q_lora=0, kv_lora=0, shared_ffn=0, first_dense=0,
                dense_ffn=0, expert_bias=False, route_norm=True, aux=0.0, grouped=True,
                recompute=False)


def run(c, warmup, reps):
    holder = {}

    def build():
        torch.manual_seed(0)
        with torch.device("cuda"):  # initialised on the GPU: on the host it takes a minute
            model = moe.Model(c).to(torch.bfloat16)
        holder["params"] = moe.n_params(model)
        g = torch.Generator(device="cuda").manual_seed(1)
        data = [(torch.randint(0, c["vocab"], (c["mbs"], c["seq"]), device="cuda", generator=g),
                 torch.randint(0, c["vocab"], (c["mbs"], c["seq"]), device="cuda", generator=g))
                for _ in range(c["micro"])]
        return gpt.Trainer(model), data

    result, peak = steps.time_training(build, warmup, reps)
    return result, peak, torch.cuda.max_memory_reserved(), holder.get("params", 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--first", type=int, default=0, help="start at this configuration")
    ap.add_argument("--second-set", action="store_true", help="the second set (CONFIGS2)")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    started = datetime.datetime.now(datetime.timezone.utc)
    props = torch.cuda.get_device_properties(0)
    lines = [
        "# MoE training steps measured by bench/device/moe_steps.py (validation data: sets no",
        f"# parameter). device {torch.cuda.get_device_name(0)} ({props.total_memory / 2**30:.1f}"
        f" GiB), torch {torch.__version__}, CUDA {torch.version.cuda}, {started:%Y-%m-%d %H:%M} UTC",
        "# step times in seconds (median, min, max of 10 after 3 warm-ups); peaks from "
        "torch.cuda.max_memory_allocated and max_memory_reserved",
        ",".join(COLUMNS + ["params", "status", "step_s", "min_s", "max_s", "peak_bytes",
                            "reserved_bytes"]),
    ]
    configs = SMOKE if args.smoke else CONFIGS2 if args.second_set else CONFIGS
    for c in configs[args.first:]:
        (status, med, lo, hi), peak, reserved, params = run(c, 2 if args.smoke else 3,
                                                           3 if args.smoke else 10)
        full = dict(DEFAULTS, **c)
        vals = [str(int(v)) if isinstance(v, bool) else str(v) for v in
                (full[k] for k in COLUMNS)]
        vals += [str(params), status] + ["" if v is None else f"{v:.6f}" for v in (med, lo, hi)]
        vals += [str(peak), str(reserved)]
        lines.append(",".join(vals))
        print(f"moe_steps: {lines[-1]}", file=sys.stderr, flush=True)
        steps.write_lines(args.out, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
