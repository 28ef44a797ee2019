"""A mixture-of-experts transformer in plain PyTorch, written the way torchtitan writes it
(torchtitan/models/moe/moe.py), shared by the MoE device benchmarks (moe_steps.py measures its
training steps, moe_parts.py its parts one by one).

The MoE layer (token choice, dropless):
  * router: a linear h -> E without bias, scores in fp32 by softmax or sigmoid, the top-k
    (selected with an expert bias added when the model has one, DeepSeek-V3's auxiliary-loss-free
    balancing; the kept scores are the unbiased ones), scores normalised over the top-k when
    `route_norm`, and the tokens per expert counted by torch.histc;
  * permutation: a stable argsort of the selected experts, the scores gathered in that order,
    the tokens gathered (torch.gather over an expanded index);
  * experts: SwiGLU per expert, three weights (E, f, h) / (E, h, f), run by torch._grouped_mm
    over the experts' token groups (offsets from torch.cumsum, no host synchronisation), or,
    without grouped GEMM, one SwiGLU module per expert one after another (Megatron-Core's
    SequentialMLP; the split sizes come from `.tolist()` of the counts, a host sync);
  * unpermutation: each copy weighted by its score in fp32, then scatter_add into the output
    (which starts as the shared experts' output, or zeros);
  * shared experts: a dense SwiGLU MLP on every token;
  * load-balancing loss (optional): the switch-transformer form, coefficient x E x sum(f_i P_i).
Attention is Llama's (llama_steps.Block's) or DeepSeek's multi-head latent attention.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

import gpt
import llama_steps


class Router(nn.Module):
    def __init__(self, h, experts, topk, score, expert_bias, route_norm):
        super().__init__()
        self.gate = nn.Linear(h, experts, bias=False)
        self.experts, self.topk, self.score, self.route_norm = experts, topk, score, route_norm
        self.register_buffer("expert_bias", torch.zeros(experts) if expert_bias else None)

    def forward(self, x):
        return route(self.gate(x), self.topk, self.score, self.expert_bias, self.route_norm)


def route(logits, topk, score, expert_bias, route_norm):
    """The router after its gate GEMM: scores, the kept top-k scores, their experts, and the
    tokens per expert."""
    if score == "sigmoid":
        scores = torch.sigmoid(logits.float())
    else:
        scores = F.softmax(logits.float(), dim=1)
    if expert_bias is not None:
        _, idx = torch.topk(scores + expert_bias, k=topk, dim=1)
        top = scores.gather(dim=1, index=idx)
    else:
        top, idx = torch.topk(scores, k=topk, dim=1)
    if route_norm:
        top = top / (top.sum(dim=-1, keepdim=True) + 1e-20)
    experts = logits.shape[1]
    counts = torch.histc(idx.view(-1).float(), bins=experts, min=0, max=experts)
    return scores, top, idx, counts


def permute(x, top, idx, topk):
    order = torch.argsort(idx.view(-1), stable=True)
    top_sorted = top.view(-1)[order]
    token = (order // topk).reshape(-1, 1).expand(-1, x.shape[-1])
    return torch.gather(x, dim=0, index=token), top_sorted, token


class SwiGLU(nn.Module):
    def __init__(self, h, ffn):
        super().__init__()
        self.gate_up = nn.Linear(h, 2 * ffn, bias=False)
        self.down = nn.Linear(ffn, h, bias=False)

    def forward(self, x):
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)


class Experts(nn.Module):
    """Grouped: three (E, ...) weights and torch._grouped_mm (torchtitan's GroupedExperts).
    Otherwise one SwiGLU module per expert run one after another, as Megatron-Core's
    SequentialMLP does (split sizes from the counts, a host sync)."""

    def __init__(self, h, ffn, experts, grouped):
        super().__init__()
        self.grouped = grouped
        if grouped:
            self.w1 = nn.Parameter(torch.empty(experts, ffn, h))
            self.w2 = nn.Parameter(torch.empty(experts, h, ffn))
            self.w3 = nn.Parameter(torch.empty(experts, ffn, h))
        else:
            self.mlps = nn.ModuleList(SwiGLU(h, ffn) for _ in range(experts))

    def forward(self, x, counts):
        if self.grouped:
            offs = torch.cumsum(counts, dim=0, dtype=torch.int32)
            g = torch._grouped_mm(x, self.w1.transpose(-2, -1), offs=offs)
            u = torch._grouped_mm(x, self.w3.transpose(-2, -1), offs=offs)
            return torch._grouped_mm(F.silu(g) * u, self.w2.transpose(-2, -1), offs=offs)
        sizes = [int(c) for c in counts.tolist()]
        parts = torch.split(x, sizes, dim=0)
        return torch.cat([mlp(part) for mlp, part in zip(self.mlps, parts)], dim=0)


def unpermute(routed, top_sorted, token, base):
    weighted = (routed.float() * top_sorted.reshape(-1, 1)).to(routed.dtype)
    return base.scatter_add(dim=0, index=token, src=weighted)


class MoE(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.topk, self.aux = c["topk"], c.get("aux", 0.0)
        self.router = Router(h, c["experts"], c["topk"], c.get("score", "softmax"),
                             c.get("expert_bias", False), c.get("route_norm", True))
        self.experts = Experts(h, c["moe_ffn"], c["experts"], c.get("grouped", True))
        self.shared = SwiGLU(h, c["shared_ffn"]) if c.get("shared_ffn", 0) else None

    def forward(self, x):
        b, s, h = x.shape
        x = x.view(-1, h)
        scores, top, idx, counts = self.router(x)
        routed, top_sorted, token = permute(x, top, idx, self.topk)
        out = self.experts(routed, counts)
        base = self.shared(x) if self.shared is not None else torch.zeros_like(x)
        y = unpermute(out, top_sorted, token, base).view(b, s, h)
        if not self.aux:
            return y, None
        f = counts / (x.shape[0] * self.topk)
        return y, self.aux * scores.shape[1] * (f * scores.mean(dim=0)).sum()


class MLA(nn.Module):
    """DeepSeek-V2/V3 multi-head latent attention (torchtitan's deepseek_v3 Attention): queries
    from h (or through a q_lora_rank latent with an RMSNorm), keys and values from a kv_lora_rank
    latent (RMSNorm, then one up-projection to the no-position key parts and the values) plus a
    shared rotary key part; attention over qk = nope + rope dims, values of v dims."""

    def __init__(self, c):
        super().__init__()
        h, self.heads = c["hidden"], c["heads"]
        self.nope, self.rope, self.vd = c["qk_nope"], c["qk_rope"], c["v_dim"]
        self.q_lora, self.kv_lora = c.get("q_lora", 0), c["kv_lora"]
        qd = self.heads * (self.nope + self.rope)
        if self.q_lora:
            self.wq_a = nn.Linear(h, self.q_lora, bias=False)
            self.q_norm = nn.Parameter(torch.ones(self.q_lora))
            self.wq_b = nn.Linear(self.q_lora, qd, bias=False)
        else:
            self.wq = nn.Linear(h, qd, bias=False)
        self.wkv_a = nn.Linear(h, self.kv_lora + self.rope, bias=False)
        self.kv_norm = nn.Parameter(torch.ones(self.kv_lora))
        self.wkv_b = nn.Linear(self.kv_lora, self.heads * (self.nope + self.vd), bias=False)
        self.wo = nn.Linear(self.heads * self.vd, h, bias=False)

    def forward(self, y, cos, sin):
        b, s, _ = y.shape
        if self.q_lora:
            q = self.wq_b(F.rms_norm(self.wq_a(y), (self.q_lora,), self.q_norm))
        else:
            q = self.wq(y)
        q = q.view(b, s, self.heads, self.nope + self.rope).transpose(1, 2)
        q_nope, q_pe = q.split([self.nope, self.rope], dim=-1)
        kv = self.wkv_a(y)
        kv, k_pe = kv.split([self.kv_lora, self.rope], dim=-1)
        k_pe = k_pe.view(b, s, 1, self.rope).transpose(1, 2)
        q_pe = q_pe * cos + llama_steps.rotate_half(q_pe) * sin
        k_pe = k_pe * cos + llama_steps.rotate_half(k_pe) * sin
        kv = self.wkv_b(F.rms_norm(kv, (self.kv_lora,), self.kv_norm))
        kv = kv.view(b, s, self.heads, self.nope + self.vd).transpose(1, 2)
        k_nope, v = kv.split([self.nope, self.vd], dim=-1)
        q = torch.cat([q_nope, q_pe], dim=-1)
        k = torch.cat([k_nope, k_pe.expand(-1, self.heads, -1, -1)], dim=-1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(a.transpose(1, 2).reshape(b, s, self.heads * self.vd))


class GQA(nn.Module):
    """Llama's attention (llama_steps.Block's): rotary embedding applied eagerly, keys and values
    repeated to the query heads, causal SDPA with PyTorch's backend choice."""

    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.heads, self.kv_heads, self.d = c["heads"], c["kv_heads"], h // c["heads"]
        self.q = nn.Linear(h, h, bias=False)
        self.k = nn.Linear(h, self.kv_heads * self.d, bias=False)
        self.v = nn.Linear(h, self.kv_heads * self.d, bias=False)
        self.o = nn.Linear(h, h, bias=False)

    def forward(self, y, cos, sin):
        b, s, h = y.shape
        q = self.q(y).view(b, s, self.heads, self.d).transpose(1, 2)
        k = self.k(y).view(b, s, self.kv_heads, self.d).transpose(1, 2)
        v = self.v(y).view(b, s, self.kv_heads, self.d).transpose(1, 2)
        q = q * cos + llama_steps.rotate_half(q) * sin
        k = k * cos + llama_steps.rotate_half(k) * sin
        rep = self.heads // self.kv_heads
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(a.transpose(1, 2).reshape(b, s, h))


class Block(nn.Module):
    def __init__(self, c, moe):
        super().__init__()
        h = c["hidden"]
        self.norm1 = nn.Parameter(torch.ones(h))
        self.norm2 = nn.Parameter(torch.ones(h))
        self.attn = MLA(c) if c.get("mla") else GQA(c)
        self.mlp = MoE(c) if moe else SwiGLU(h, c["dense_ffn"])

    def forward(self, x, cos, sin):
        h = x.shape[-1]
        x = x + self.attn(F.rms_norm(x, (h,), self.norm1), cos, sin)
        y = self.mlp(F.rms_norm(x, (h,), self.norm2))
        if isinstance(y, tuple):
            y, aux = y
        else:
            aux = None
        if aux is None:
            aux = x.new_zeros((), dtype=torch.float32)
        return x + y, aux


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, self.vocab, self.recompute = c["hidden"], c["vocab"], c.get("recompute", False)
        self.embed = nn.Embedding(self.vocab, h)
        dense = c.get("first_dense", 0)
        self.blocks = nn.ModuleList(Block(c, i >= dense) for i in range(c["layers"]))
        self.norm = nn.Parameter(torch.ones(h))
        self.out = nn.Linear(h, self.vocab, bias=False)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)
        cos, sin = llama_steps.rotary(c["qk_rope"] if c.get("mla") else h // c["heads"], c["seq"],
                                      10000)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, idx, targets):
        x = self.embed(idx)
        cos, sin = self.cos.to(x.dtype), self.sin.to(x.dtype)
        aux = None
        for blk in self.blocks:
            if self.recompute:
                x, a = torch.utils.checkpoint.checkpoint(blk, x, cos, sin, use_reentrant=False)
            else:
                x, a = blk(x, cos, sin)
            aux = a if aux is None else aux + a
        logits = self.out(F.rms_norm(x, (x.shape[-1],), self.norm))
        return gpt.cross_entropy(logits.view(-1, self.vocab), targets.view(-1)) + aux


def n_params(model):
    return sum(p.numel() for p in model.parameters())
