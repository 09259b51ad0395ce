#!/usr/bin/env python3
"""Train AttnLab's bundled image classifier: a tiny ViT that names the shape in a picture.

Everything comes from this file and its seeds: the images (drawn by the generator below), the
model and its training. No downloads, no pip packages: Debian's python3-torch, python3-numpy
and python3-pil only.

    apt-get install python3-torch python3-numpy python3-pil
    python3 scripts/train_shapes_vit.py         # under 10 minutes on one CPU thread

Outputs
  resources/models/tiny-vit-shapes/
    config.json                 Hugging Face ViTForImageClassification config
    model.safetensors           F32 tensors named as transformers' ViTForImageClassification
    preprocessor_config.json    transformers' ViTImageProcessor (64 x 64, mean = std = 0.5)
    README.md                   what it is, how it was trained, its measured figures
  resources/images/shapes/{circle,square,triangle,cross}.png
                                one 64 x 64 RGB image of each class, drawn by the generator
                                (seed EXAMPLE_SEED), each one the model names correctly

The generator (tests/model/tiny_vit_shapes_test.cpp draws the same bytes in C++)
  Randomness: one MT19937 stream (numpy's RandomState(seed) = std::mt19937(seed)); u() is its
  next 32-bit output, and uniform(lo, hi) = lo + ((u() * (hi - lo + 1)) >> 32), an integer in
  [lo, hi] (a 64-bit product, no rejection). Per image, in this order:
    label   = uniform(0, 3)                   0 circle, 1 square, 2 triangle, 3 cross
    s       = uniform(12, 28)                 the shape's box is s x s pixels
    x0      = uniform(0, 64 - s), y0 = uniform(0, 64 - s)   its top-left pixel (fully inside)
    colour  = PALETTE[uniform(0, 6)]          seven saturated colours (below)
    grey    = uniform(64, 192); tint_c = uniform(-16, 16) for c = R, G, B
    noise   = uniform(-24, 24) for each pixel, rows top first, then columns, then R, G, B
  A pixel (x, y) belongs to the shape by a test of its centre, in doubled integer coordinates
  relative to the box: px = 2 (x - x0) + 1, py = 2 (y - y0) + 1, inside the box when
  0 < px < 2s and 0 < py < 2s, and then
    circle    (px - s)^2 + (py - s)^2 <= s^2     (the disc inscribed in the box)
    square    always                             (the whole box)
    triangle  2 |px - s| <= py                   (apex at the top middle, base the bottom edge)
    cross     |px - s| < t or |py - s| < t, t = (s + 1) / 3 (integer division): a plus sign of
              two bars about s / 3 thick
  The pixel's value per channel c is clamp(base_c + noise, 0, 255), base_c = colour_c on the
  shape and grey + tint_c off it.
  A patch (8 x 8 pixels, 64 of them) is on the shape when any of its pixels is.

The model is transformers' ViTForImageClassification written here in plain torch: patches by a
convolution with stride = kernel = 8, the class token first, learned positions, pre-LN layers
(eager attention with q/k/v biases, exact GELU), the final LayerNorm, the classifier on the
class token. The loss is plain cross-entropy on the label; every training image is fresh from
the generator (training seed), and the held-out figures come from images of other seeds.
Two initial choices, and nothing in the loss, get training going within the budget: weights of
std 0.1 (transformers' 0.02 left the attention even and the loss at chance for hundreds of
steps) and position embeddings that start as MAE's 2-D sine-cosine table and are learned.
The linear layers run as 1 x 1 convolutions (linear()): the same arithmetic, faster on one
thread with Debian's torch, whose matrix product is the reference BLAS.

Attention on the object (the figures of the README): for each held-out image, the class
token's row of (a) the last layer's attention averaged over heads and (b) attention rollout
(Abnar & Zuidema: A_l = (mean_h W_lh + I) / 2, rows renormalised, R = A_{L-1} ... A_0), with the
class token's own column left out: its weight on the shape's patches divided by its weight on
all 64 patches. The random baseline is the mean share of the 64 patches that are on the shape.
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_model_fixtures import write_safetensors  # noqa: E402

MODEL_NAME = "tiny-vit-shapes"
IMAGE = 64
PATCH = 8
GRID = IMAGE // PATCH
CLASSES = ("circle", "square", "triangle", "cross")
SIZE_MIN, SIZE_MAX = 12, 28
PALETTE = (
    (220, 40, 40),   # red
    (40, 170, 60),   # green
    (40, 90, 220),   # blue
    (230, 200, 30),  # yellow
    (200, 50, 200),  # magenta
    (30, 190, 210),  # cyan
    (240, 130, 20),  # orange
)
GREY_MIN, GREY_MAX = 64, 192
TINT = 16
NOISE = 24

TRAIN_SEED = 1        # the training images' stream
HELDOUT_SEED = 7      # the README's held-out figures
TEST_SEED = 38        # tests/model/tiny_vit_shapes_test.cpp's images
TEST_IMAGES = 160     # ... and how many it draws
EXAMPLE_SEED = 64     # resources/images/shapes/


# ----------------------------------------------------------------------------------------------
# 1. The generator
# ----------------------------------------------------------------------------------------------


class Stream:
    """MT19937 (numpy's RandomState(seed) gives std::mt19937(seed)'s 32-bit outputs) and the
    generator's integer arithmetic on them."""

    def __init__(self, seed):
        self.rs = np.random.RandomState(seed)

    def u32(self, n):
        return self.rs.randint(0, 2 ** 32, size=n, dtype=np.uint64)

    def uniform(self, lo, hi):
        return lo + ((int(self.u32(1)[0]) * (hi - lo + 1)) >> 32)

    def uniform_array(self, lo, hi, n):
        return lo + ((self.u32(n) * np.uint64(hi - lo + 1)) >> np.uint64(32)).astype(np.int64)


_PX = 2 * np.arange(IMAGE, dtype=np.int64) + 1  # doubled pixel centres


def shape_mask(label, s, x0, y0):
    """[64, 64] bool: the pixels whose centre is inside the shape."""
    px = (_PX - 2 * x0)[None, :]
    py = (_PX - 2 * y0)[:, None]
    box = (px > 0) & (px < 2 * s) & (py > 0) & (py < 2 * s)
    if label == 0:
        inside = (px - s) ** 2 + (py - s) ** 2 <= s * s
    elif label == 1:
        inside = np.ones((IMAGE, IMAGE), dtype=bool)
    elif label == 2:
        inside = 2 * np.abs(px - s) <= py
    else:
        t = (s + 1) // 3
        inside = (np.abs(px - s) < t) | (np.abs(py - s) < t)
    return box & inside


def draw(stream):
    """One image: (rgb uint8 [64, 64, 3], label, mask bool [64, 64])."""
    label = stream.uniform(0, 3)
    s = stream.uniform(SIZE_MIN, SIZE_MAX)
    x0 = stream.uniform(0, IMAGE - s)
    y0 = stream.uniform(0, IMAGE - s)
    colour = np.array(PALETTE[stream.uniform(0, len(PALETTE) - 1)], dtype=np.int64)
    grey = stream.uniform(GREY_MIN, GREY_MAX)
    tint = np.array([stream.uniform(-TINT, TINT) for _ in range(3)], dtype=np.int64)
    noise = stream.uniform_array(-NOISE, NOISE, IMAGE * IMAGE * 3).reshape(IMAGE, IMAGE, 3)
    mask = shape_mask(label, s, x0, y0)
    base = np.where(mask[:, :, None], colour[None, None, :], (grey + tint)[None, None, :])
    rgb = np.clip(base + noise, 0, 255).astype(np.uint8)
    return rgb, label, mask


def draw_batch(stream, n):
    images, labels, masks = [], [], []
    for _ in range(n):
        rgb, label, mask = draw(stream)
        images.append(rgb)
        labels.append(label)
        masks.append(mask)
    return np.stack(images), np.array(labels), np.stack(masks)


def patch_mask(masks):
    """[N, 64, 64] bool -> [N, 64] bool: patches (row by row) holding any shape pixel."""
    n = masks.shape[0]
    return masks.reshape(n, GRID, PATCH, GRID, PATCH).any(axis=(2, 4)).reshape(n, GRID * GRID)


def pixel_values(images):
    """What ViTImageProcessor makes of 64 x 64 RGB uint8 images [N, 64, 64, 3] (no resize: the
    size is already 64 x 64): x / 255 (float64, stored as float32), then (x - 0.5) / 0.5 in
    float32, channels first."""
    x = (images.astype(np.float64) * (1 / 255)).astype(np.float32)
    x = (x - np.float32(0.5)) / np.float32(0.5)
    return torch.from_numpy(x.transpose(0, 3, 1, 2).copy())


def fnv1a64(data, h=0xcbf29ce484222325):
    for b in bytes(data):
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


# ----------------------------------------------------------------------------------------------
# 2. The model: transformers' ViTForImageClassification, module names as its state_dict's
# ----------------------------------------------------------------------------------------------


def sincos_2d(d, grid):
    """[1, 1 + grid^2, d]: zeros for the class token, then for the patch at (row, column) MAE's
    2-D sine-cosine embedding: sin(row w_i), cos(row w_i), sin(column w_i), cos(column w_i) for
    w_i = 10000^(-i / (d / 4)), i < d / 4."""
    q = d // 4
    omega = 1.0 / 10000 ** (np.arange(q) / q)
    rows, columns = np.meshgrid(np.arange(grid), np.arange(grid), indexing="ij")

    def half(p):
        out = np.outer(p.reshape(-1), omega)
        return np.concatenate([np.sin(out), np.cos(out)], axis=1)

    table = np.concatenate([half(rows), half(columns)], axis=1)
    table = np.concatenate([np.zeros((1, d)), table], axis=0)
    return torch.tensor(table[None], dtype=torch.float32)


def linear(m, x):
    """m (an nn.Linear) applied to x [B, T, d_in], computed as a 1 x 1 convolution: the same
    arithmetic, but torch's oneDNN convolution is several times faster on one thread than the
    reference BLAS matrix product Debian's python3-torch calls for nn.Linear."""
    y = F.conv2d(x.transpose(1, 2).unsqueeze(-1), m.weight[:, :, None, None], m.bias)
    return y.squeeze(-1).transpose(1, 2)


class Dense(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.dense = nn.Linear(d_in, d_out)


class SelfAttention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)


class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.attention = SelfAttention(d)
        self.output = Dense(d, d)


class Layer(nn.Module):
    def __init__(self, d, inner, eps):
        super().__init__()
        self.layernorm_before = nn.LayerNorm(d, eps=eps)
        self.attention = Attention(d)
        self.layernorm_after = nn.LayerNorm(d, eps=eps)
        self.intermediate = Dense(d, inner)
        self.output = Dense(inner, d)


class PatchEmbeddings(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.projection = nn.Conv2d(3, d, kernel_size=PATCH, stride=PATCH)


class Embeddings(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d))
        self.position_embeddings = nn.Parameter(torch.zeros(1, GRID * GRID + 1, d))
        self.patch_embeddings = PatchEmbeddings(d)


class Encoder(nn.Module):
    def __init__(self, d, inner, layers, eps):
        super().__init__()
        self.layer = nn.ModuleList([Layer(d, inner, eps) for _ in range(layers)])


class ViTModel(nn.Module):
    def __init__(self, d, inner, layers, eps):
        super().__init__()
        self.embeddings = Embeddings(d)
        self.encoder = Encoder(d, inner, layers, eps)
        self.layernorm = nn.LayerNorm(d, eps=eps)


class ViTForImageClassification(nn.Module):
    def __init__(self, d, heads, inner, layers, labels, eps, init_std=0.02):
        super().__init__()
        self.heads = heads
        self.vit = ViTModel(d, inner, layers, eps)
        self.classifier = nn.Linear(d, labels)
        self._init(init_std)

    def _init(self, std):
        """Truncated normal weights (std `std`, cut at 2 std), zero biases, unit LayerNorms,
        as transformers' ViTPreTrainedModel does with initializer_range; the positions start as
        MAE's 2-D sine-cosine table (sincos_2d) and are learned from there."""
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Conv2d)):
                nn.init.trunc_normal_(m.weight, std=std, a=-2 * std, b=2 * std)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
        e = self.vit.embeddings
        nn.init.trunc_normal_(e.cls_token, std=std, a=-2 * std, b=2 * std)
        with torch.no_grad():
            e.position_embeddings.copy_(sincos_2d(e.position_embeddings.shape[-1], GRID))

    def forward(self, pixels, attentions=False):
        """pixels [B, 3, 64, 64] -> logits [B, labels] (and attentions [L, B, H, T, T])."""
        e = self.vit.embeddings
        x = e.patch_embeddings.projection(pixels).flatten(2).transpose(1, 2)  # [B, 64, d]
        x = torch.cat([e.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        x = x + e.position_embeddings
        B, T, d = x.shape
        H, hd = self.heads, d // self.heads
        maps = []
        for layer in self.vit.encoder.layer:
            h = layer.layernorm_before(x)
            a = layer.attention.attention
            q = linear(a.query, h).reshape(B, T, H, hd).transpose(1, 2)
            k = linear(a.key, h).reshape(B, T, H, hd).transpose(1, 2)
            v = linear(a.value, h).reshape(B, T, H, hd).transpose(1, 2)
            w = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd), dim=-1)
            if attentions:
                maps.append(w)
            ctx = (w @ v).transpose(1, 2).reshape(B, T, d)
            x = x + linear(layer.attention.output.dense, ctx)
            h = layer.layernorm_after(x)
            x = x + linear(layer.output.dense, F.gelu(linear(layer.intermediate.dense, h)))
        x = self.vit.layernorm(x)
        logits = self.classifier(x[:, 0])
        if attentions:
            return logits, torch.stack(maps)
        return logits


# ----------------------------------------------------------------------------------------------
# 3. Measuring: accuracy and the class token's attention on the shape
# ----------------------------------------------------------------------------------------------


def rollout(maps):
    """maps [L, B, H, T, T] -> [B, T, T]: (mean_h W + I) / 2, rows renormalised, multiplied
    from the first layer up."""
    L, B, H, T, _ = maps.shape
    eye = torch.eye(T, dtype=maps.dtype)
    r = None
    for l in range(L):
        a = (maps[l].mean(dim=1) + eye) / 2
        a = a / a.sum(dim=-1, keepdim=True)
        r = a if r is None else a @ r
    return r


def on_object(row, patches):
    """row [B, T] (the class token's), patches [B, 64] bool -> [B]: the share of its weight on
    the 64 patches that lands on the shape's."""
    w = row[:, 1:].double()
    m = torch.from_numpy(patches).double()
    return ((w * m).sum(dim=1) / w.sum(dim=1)).numpy()


def images_hash(seed, n):
    """FNV-1a 64 of the RGB bytes of the stream's first n images, one after another (the C++
    test's check that it draws the same images)."""
    stream, h = Stream(seed), 0xcbf29ce484222325
    for _ in range(n):
        h = fnv1a64(draw(stream)[0].tobytes(), h)
    return h


@torch.no_grad()
def measure(model, seed, n, batch=200):
    stream = Stream(seed)
    right, last, roll, base, done = 0, [], [], [], 0
    seen, named = np.zeros(len(CLASSES), dtype=int), np.zeros(len(CLASSES), dtype=int)
    while done < n:
        k = min(batch, n - done)
        images, labels, masks = draw_batch(stream, k)
        logits, maps = model(pixel_values(images), attentions=True)
        correct = logits.argmax(dim=1).numpy() == labels
        right += int(correct.sum())
        np.add.at(seen, labels, 1)
        np.add.at(named, labels, correct.astype(int))
        patches = patch_mask(masks)
        last.append(on_object(maps[-1].mean(dim=1)[:, 0], patches))
        roll.append(on_object(rollout(maps)[:, 0], patches))
        base.append(patches.mean(axis=1))
        done += k
    return {"images": n, "accuracy": right / n, "last_layer": float(np.concatenate(last).mean()),
            "rollout": float(np.concatenate(roll).mean()),
            "baseline": float(np.concatenate(base).mean()),
            "per_class": {c: f"{named[i]}/{seen[i]}" for i, c in enumerate(CLASSES)}}


# ----------------------------------------------------------------------------------------------
# 4. Files
# ----------------------------------------------------------------------------------------------


def write_f32_safetensors(path, tensors):
    """model.safetensors in F32, as the fixture scripts write checkpoints."""
    write_safetensors(path, tensors, "F32")


def config_json(args):
    return {
        "model_type": "vit",
        "architectures": ["ViTForImageClassification"],
        "hidden_size": args.hidden,
        "num_hidden_layers": args.layers,
        "num_attention_heads": args.heads,
        "intermediate_size": args.intermediate,
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-12,
        "image_size": IMAGE,
        "patch_size": PATCH,
        "num_channels": 3,
        "qkv_bias": True,
        "encoder_stride": PATCH,
        "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0,
        "initializer_range": args.init_std,
        "id2label": {str(i): c for i, c in enumerate(CLASSES)},
        "label2id": {c: i for i, c in enumerate(CLASSES)},
        "transformers_version": "5.17.0",
        "dtype": "float32",
    }


PROCESSOR = {"image_processor_type": "ViTImageProcessor", "do_resize": True,
             "size": {"height": IMAGE, "width": IMAGE}, "resample": 2, "do_rescale": True,
             "rescale_factor": 0.00392156862745098, "do_normalize": True,
             "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}


@torch.no_grad()
def write_examples(model, folder):
    """The first image of each class in the EXAMPLE_SEED stream that the model names correctly:
    {index: (class, fnv1a64 of its RGB bytes)}."""
    from PIL import Image
    os.makedirs(folder, exist_ok=True)
    stream = Stream(EXAMPLE_SEED)
    found = {}
    index = 0
    while len(found) < len(CLASSES):
        rgb, label, _ = draw(stream)
        if CLASSES[label] not in found:
            guess = int(model(pixel_values(rgb[None])).argmax(dim=1)[0])
            if guess == label:
                path = os.path.join(folder, CLASSES[label] + ".png")
                Image.fromarray(rgb, "RGB").save(path, optimize=True)
                back = np.array(Image.open(path).convert("RGB"))
                assert np.array_equal(back, rgb), path
                found[CLASSES[label]] = (index, fnv1a64(rgb.tobytes()))
        index += 1
    return found


def write_readme(path, args, cfg, params, sizes, stats, heldout, test, examples, minutes):
    c = CLASSES
    palette = ", ".join(f"({r}, {g}, {b})" for r, g, b in PALETTE)

    def figures(m):
        return (f"accuracy **{m['accuracy']:.3f}**; the class token's attention on the shape's "
                f"patches: last layer, mean of heads **{m['last_layer']:.3f}**, rollout "
                f"**{m['rollout']:.3f}**; random baseline (share of patches on the shape) "
                f"{m['baseline']:.3f}")

    example_lines = "\n".join(
        f"- `{name}.png`: image {i} (FNV-1a 64 of its RGB bytes `0x{h:016x}`)"
        for name, (i, h) in examples.items())
    heads = cfg["num_attention_heads"]
    labels = ", ".join(f"{i} {n}" for i, n in enumerate(c))
    per_class = ", ".join(f"{k} {v}" for k, v in heldout["per_class"].items())
    text = f"""# {MODEL_NAME}

A tiny vision transformer bundled with AttnLab so that a fresh install shows a real image
classifier's attention with no download: it names the shape in a 64 × 64 picture — {c[0]},
{c[1]}, {c[2]} or {c[3]} — and its class token looks at the shape to do it. The window's
example images are in `resources/images/shapes/`.

- Architecture: `ViTForImageClassification` — {cfg['num_hidden_layers']} layers, {heads} heads of
  dimension {cfg['hidden_size'] // heads}, hidden size {cfg['hidden_size']}, MLP of
  {cfg['intermediate_size']} (exact GELU), pre-LN (eps 1e-12); 8 × 8 patches of a 64 × 64 RGB
  image: the class token and 64 patches, learned positions; the classifier reads the class token
  after the final LayerNorm. Labels: {labels}.
- Parameters: {params:,}. Files: `model.safetensors` {sizes['model.safetensors']:,} bytes (F32),
  `config.json` {sizes['config.json']:,} bytes, `preprocessor_config.json`
  {sizes['preprocessor_config.json']:,} bytes (ViTImageProcessor: 64 × 64, bilinear, rescale
  1/255, mean = std = 0.5).

## The images

Drawn by `scripts/train_shapes_vit.py` from a seed; nothing is downloaded. A 64 × 64 RGB
image holds one shape on a low-contrast noisy background:

- Randomness: one MT19937 stream (`std::mt19937(seed)`, which numpy's `RandomState(seed)`
  also gives); `u()` is its next 32-bit output and `uniform(lo, hi) = lo + ((u() * (hi - lo + 1)) >> 32)`
  (64-bit product, no rejection). Per image, in this order:
  `label = uniform(0, 3)` (0 circle, 1 square, 2 triangle, 3 cross);
  `s = uniform({SIZE_MIN}, {SIZE_MAX})`, the side of the shape's box;
  `x0 = uniform(0, 64 − s)`, `y0 = uniform(0, 64 − s)`, its top-left pixel (the shape is fully inside);
  `colour = palette[uniform(0, {len(PALETTE) - 1})]` of {palette};
  `grey = uniform({GREY_MIN}, {GREY_MAX})`, then `tint_c = uniform(−{TINT}, {TINT})` for R, G, B;
  then `noise = uniform(−{NOISE}, {NOISE})` for every pixel (rows top first, then columns, then R, G, B).
- A pixel (x, y) is on the shape when its centre is, tested in doubled integer coordinates of
  the box, `px = 2 (x − x0) + 1`, `py = 2 (y − y0) + 1`, inside the box when `0 < px < 2s` and
  `0 < py < 2s`, and then — circle: `(px − s)² + (py − s)² ≤ s²`; square: the whole box;
  triangle (apex at the top middle, base the bottom edge): `2 |px − s| ≤ py`; cross (a plus sign):
  `|px − s| < t` or `|py − s| < t` with `t = (s + 1) / 3` (integer division, about s / 3).
- Its value per channel is `clamp(base_c + noise, 0, 255)`, `base_c = colour_c` on the shape and
  `grey + tint_c` off it.
- A patch is on the shape when any of its 64 pixels is.

## How it was trained

- Every training image is fresh from the generator (seed {TRAIN_SEED}): {args.steps} steps of
  {args.batch} images, {args.steps * args.batch:,} images in all, none seen twice. The loss is
  plain cross-entropy on the label; nothing else steers the attention.
- Initialisation: truncated normal weights of std {args.init_std} (transformers' is 0.02; from
  there the attention stayed even for hundreds of steps and training stalled near chance), zero
  biases, unit LayerNorms; the position embeddings start as MAE's 2-D sine-cosine table and are
  learned from there; torch seed {args.seed}. Those two choices and nothing else got training
  going within the time budget: the loss, the data and the architecture are as above.
- AdamW (lr {args.lr}, linear warm-up over {args.warmup} steps then cosine to zero, weight decay
  {args.weight_decay}, betas 0.9/0.999, gradient clip 1.0), on one CPU thread with Debian's
  python3-torch {torch.__version__}: {minutes:.1f} minutes of training on a shared 2-core machine.
- Final training loss (mean of the last 100 steps) {stats['final_loss']:.4f}, accuracy on those
  steps' images {stats['final_accuracy']:.3f}.

Reproduce (writes this folder and `resources/images/shapes/`):

    python3 scripts/train_shapes_vit.py

Every random choice is seeded and training runs on one thread, so the same torch build is
expected to give the same weights; other CPUs or torch versions may differ in the last bits.

## Measured

Computed by the script's float32 forward from the weights written. Attention on the shape is
the class token's row with its own column left out: its weight on the shape's patches divided
by its weight on all 64 patches, averaged over the images. Rollout is Abnar & Zuidema's
(`A_l = (mean_h W_lh + I) / 2`, rows renormalised, `R = A_{{L−1}} … A_0`, row 0), as AttnLab's
`attentionRollout` computes it. The random baseline is the mean share of the 64 patches that are
on the shape: what a class token attending evenly to every patch would score.

- Held out, {heldout['images']:,} images of seed {HELDOUT_SEED}: {figures(heldout)}.
  Named right per class: {per_class}.
- The C++ test's {test['images']} images of seed {TEST_SEED} (FNV-1a 64 of their RGB bytes, one
  after another, `0x{test['hash']:016x}`): {figures(test)}.

The C++ test draws the same {test['images']} images byte for byte, runs them through AttnLab's
own image processor, forward, `meanHeadAttention` and `attentionRollout`, prints its figures
and checks floors a little under these (accuracy 0.9, last layer 0.65, rollout 0.5), and that
each example image below is named as its file is:

    cmake --build build/release --target attnlab_model_tests
    build/release/tests/attnlab_model_tests --gtest_filter='TinyVitShapes*'

## Example images

`resources/images/shapes/` holds the first image of each class in the stream of seed
{EXAMPLE_SEED} that the model names correctly (images counted from 0); the C++ test draws them
again and checks their bytes and the model's answer:

{example_lines}

## License

Same as AttnLab (the project's license). The weights and the images are produced entirely by
the script above.
"""
    with open(path, "w") as f:
        f.write(text)


# ----------------------------------------------------------------------------------------------
# 5. Training
# ----------------------------------------------------------------------------------------------


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1234, help="torch's seed (initialisation)")
    ap.add_argument("--steps", type=int, default=2800)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--intermediate", type=int, default=128)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--init-std", type=float, default=0.1,
                    help="std of the initial weights (transformers' initializer_range is 0.02)")
    ap.add_argument("--weight-decay", type=float, default=0.05)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--heldout", type=int, default=2000, help="held-out images measured")
    ap.add_argument("--out", default=os.path.join(root, "resources", "models", MODEL_NAME))
    ap.add_argument("--images", default=os.path.join(root, "resources", "images", "shapes"))
    ap.add_argument("--no-write", action="store_true", help="train and measure only")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    model = ViTForImageClassification(args.hidden, args.heads, args.intermediate, args.layers,
                                      len(CLASSES), 1e-12, args.init_std)
    params = sum(p.numel() for p in model.parameters())
    print(f"model: {params:,} parameters", flush=True)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "embeddings" not in n]
    rest = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "embeddings" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": rest, "weight_decay": 0.0}], lr=args.lr)

    def lr_at(step):
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        p = (step - args.warmup) / max(1, args.steps - args.warmup)
        return args.lr * 0.5 * (1 + math.cos(math.pi * p))

    stream = Stream(TRAIN_SEED)
    losses, accs = [], []
    t0 = time.time()
    model.train()
    for step in range(args.steps):
        images, labels, _ = draw_batch(stream, args.batch)
        logits = model(pixel_values(images))
        loss = F.cross_entropy(logits, torch.from_numpy(labels))
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        accs.append(float((logits.argmax(dim=1).numpy() == labels).mean()))
        if (step + 1) % 100 == 0:
            print(f"step {step + 1}: loss {np.mean(losses[-100:]):.4f} "
                  f"acc {np.mean(accs[-100:]):.3f} ({time.time() - t0:.0f}s)", flush=True)
        if (step + 1) % 700 == 0 and step + 1 < args.steps:
            model.eval()
            m = measure(model, HELDOUT_SEED, 400)
            print(f"  held out (400): {m}", flush=True)
            model.train()
    minutes = (time.time() - t0) / 60
    stats = {"final_loss": float(np.mean(losses[-100:])),
             "final_accuracy": float(np.mean(accs[-100:]))}
    print(f"trained in {minutes:.1f} minutes", flush=True)

    # Measure from the weights as written (F32 already: the file holds these exact values).
    model.eval()
    heldout = measure(model, HELDOUT_SEED, args.heldout)
    test = measure(model, TEST_SEED, TEST_IMAGES)
    test["hash"] = images_hash(TEST_SEED, TEST_IMAGES)
    print("held out:", json.dumps(heldout), flush=True)
    print("C++ test images:", json.dumps(test), flush=True)
    if args.no_write:
        return 0

    os.makedirs(args.out, exist_ok=True)
    cfg = config_json(args)
    write_f32_safetensors(os.path.join(args.out, "model.safetensors"), model.state_dict())
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    with open(os.path.join(args.out, "preprocessor_config.json"), "w") as f:
        json.dump(PROCESSOR, f, indent=1)
    examples = write_examples(model, args.images)
    print("examples:", {k: (i, f"0x{h:016x}") for k, (i, h) in examples.items()}, flush=True)
    sizes = {n: os.path.getsize(os.path.join(args.out, n))
             for n in ("model.safetensors", "config.json", "preprocessor_config.json")}
    write_readme(os.path.join(args.out, "README.md"), args, cfg, params, sizes, stats, heldout,
                 test, examples, minutes)
    print("written to", os.path.normpath(args.out), "and", os.path.normpath(args.images))
    return 0


if __name__ == "__main__":
    sys.exit(main())
