"""A GPT in plain PyTorch, trained the way Megatron-LM trains in bf16, and its operations one by
one, so that kernel_table.py measures exactly the operations that steps.py runs.

The recipe (each choice is what trainsim's cost and memory models describe for a workload
with `gradient_accumulation_fusion: false`, the plain-PyTorch setting):
  * parameters and activations in bf16; pre-LN GPT blocks (LayerNorm, QKV, causal flash
    attention through scaled_dot_product_attention with the flash backend forced, projection,
    dropout + residual, LayerNorm, FC1, GeLU (tanh), FC2, dropout + residual), learned
    positions, tied embeddings, cross-entropy in fp32;
  * hidden dropout 0.1, attention dropout 0 (the flash kernels are measured without dropout);
  * gradients accumulated in fp32 `main_grad` buffers by a hook per parameter (fp32 += bf16,
    one kernel per tensor and microbatch), as Megatron's --accumulate-allreduce-grads-in-fp32
    does without its fused wgrad kernel;
  * fp32 master weights and Adam states: clip_grad_norm_ (foreach) on the main grads, fused
    AdamW (torch.optim.AdamW(fused=True)) on the masters, then the masters copied to the bf16
    parameters (foreach);
  * full recomputation: torch.utils.checkpoint per block (use_reentrant=False).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HIDDEN_DROPOUT = 0.1
VOCAB = 50304  # GPT-2's 50,257 padded to a multiple of 128, as Megatron pads it


def attention(q, k, v):
    """Causal flash attention; q, k, v are (batch, heads, seq, head_dim) views."""
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def dropout_add(y, residual):
    return residual + F.dropout(y, HIDDEN_DROPOUT, training=True)


def gelu(x):
    return F.gelu(x, approximate="tanh")


def cross_entropy(logits, targets):
    return F.cross_entropy(logits.float(), targets)


class Block(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(h)
        self.qkv = nn.Linear(h, 3 * h)
        self.proj = nn.Linear(h, h)
        self.ln2 = nn.LayerNorm(h)
        self.fc1 = nn.Linear(h, 4 * h)
        self.fc2 = nn.Linear(4 * h, h)

    def forward(self, x):
        b, s, h = x.shape
        d = h // self.heads
        qkv = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, d)
        q, k, v = (t.transpose(1, 2) for t in qkv.unbind(2))
        y = attention(q, k, v).transpose(1, 2).reshape(b, s, h)
        x = dropout_add(self.proj(y), x)
        return dropout_add(self.fc2(gelu(self.fc1(self.ln2(x)))), x)


class GPT(nn.Module):
    def __init__(self, layers, h, heads, seq, recompute=False):
        super().__init__()
        self.recompute = recompute
        self.wte = nn.Embedding(VOCAB, h)
        self.wpe = nn.Embedding(seq, h)
        self.blocks = nn.ModuleList(Block(h, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(h)
        for p in self.parameters():  # GPT-2's initialisation scale; the values do not matter
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)

    def forward(self, idx, targets):
        s = idx.shape[1]
        pos = torch.arange(s, device=idx.device)
        x = F.dropout(self.wte(idx) + self.wpe(pos), HIDDEN_DROPOUT, training=True)
        for blk in self.blocks:
            if self.recompute:
                x = torch.utils.checkpoint.checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        logits = F.linear(self.ln_f(x), self.wte.weight)
        return cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def n_params(layers, h, seq):
    return layers * (12 * h * h + 13 * h) + VOCAB * h + seq * h + 2 * h


class Trainer:
    """bf16 model, fp32 main grads accumulated by hooks, fp32 masters stepped by fused AdamW."""

    def __init__(self, model, clip=1.0):
        self.model = model
        self.params = [p for p in model.parameters()]
        self.masters = [p.detach().float() for p in self.params]
        for p, m in zip(self.params, self.masters):
            p.main_grad = torch.zeros_like(m)
            m.grad = p.main_grad
            p.register_post_accumulate_grad_hook(self._accumulate)
        self.opt = torch.optim.AdamW(self.masters, lr=1e-4, fused=True)
        self.clip = clip

    @staticmethod
    def _accumulate(p):
        p.main_grad.add_(p.grad)
        p.grad = None

    def step(self, batches):
        """One iteration: forward and backward of each microbatch, then the optimizer."""
        total = None
        for idx, targets in batches:
            loss = self.model(idx, targets)
            loss.backward()
            total = loss.detach() if total is None else total + loss.detach()
        torch.nn.utils.clip_grad_norm_(self.masters, self.clip, foreach=True)
        self.opt.step()
        torch._foreach_copy_([p.data for p in self.params], self.masters)
        torch._foreach_zero_([m.grad for m in self.masters])
        return total


def make_model(layers, h, heads, seq, recompute, device="cuda"):
    torch.manual_seed(0)
    return GPT(layers, h, heads, seq, recompute).to(device=device, dtype=torch.bfloat16)


def batches(n_micro, mbs, seq, device="cuda"):
    g = torch.Generator(device=device).manual_seed(1)
    return [
        (
            torch.randint(0, VOCAB, (mbs, seq), device=device, generator=g),
            torch.randint(0, VOCAB, (mbs, seq), device=device, generator=g),
        )
        for _ in range(n_micro)
    ]

