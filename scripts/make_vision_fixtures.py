#!/usr/bin/env python3
"""Writes a tiny vision transformer and its expected outputs under tests/model/fixtures/vit/.

Run once (the outputs are committed; CI does not need torch):

    apt-get install python3-torch python3-numpy
    python3 scripts/make_vision_fixtures.py

The folder holds config.json (model_type "vit", ViTForImageClassification), model.safetensors
(F32, random seeded weights) and expected.npz: `pixel_values` [C, H, W] (float32, already
processed), `attentions` [L, H, T, T] and `logits` [num_labels], computed in float64 by a
plain-torch forward written from transformers' modeling_vit.py (ViTEmbeddings: a convolution
with stride = kernel = patch size, flattened row by row, the class token first, learned
positions added; pre-LN layers, eager attention, exact GELU; the final LayerNorm; the classifier
on the class token). It reads the weights back from the bytes written and shares no code with
AttnLab. The convolution is torch's own conv2d, not a matrix product written here.

preprocessor_config.json, image.png and processed.npz are the image processor's reference: two
random RGB images and what Pillow (python3-pil) and numpy make of them as transformers'
ViTImageProcessor does, with the bilinear and the bicubic filter, and the model on image.png:
its attentions, attention rollout (numpy) and logits.
"""

import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_model_fixtures import layer_norm, roundtrip, write_checkpoint  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "model", "fixtures")


def seeded(seed):
    """A generator seeded with `seed`, and r(*shape, scale=0.3): normal float64 values from it
    times scale (every fixture's weights; the generator goes on to its pixels)."""
    g = torch.Generator().manual_seed(seed)

    def r(*shape, scale=0.3):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * scale

    return g, r


def vit_forward(cfg, W, pixels):
    """pixels [C, H, W] float64 -> (attentions [L, H, T, T], logits [num_labels]). DeiT
    (model_type "deit", modeling_deit.py) is the same encoder with a distillation token after
    the class token; with its teacher's head (DeiTForImageClassificationWithTeacher) the logits
    are the mean of the class token's classifier and the distillation token's."""
    d, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    hd = d // heads
    eps = cfg["layer_norm_eps"]
    deit = cfg["model_type"] == "deit"
    p = "deit." if deit else "vit."
    x = torch.nn.functional.conv2d(pixels.unsqueeze(0), W[p + "embeddings.patch_embeddings.projection.weight"],
                                   W[p + "embeddings.patch_embeddings.projection.bias"],
                                   stride=cfg["patch_size"])
    x = x.flatten(2).transpose(1, 2)[0]  # [N, d], patches row by row
    lead = [W[p + "embeddings.cls_token"][0]]
    if deit:
        lead.append(W[p + "embeddings.distillation_token"][0])
    x = torch.cat(lead + [x], dim=0)
    x = x + W[p + "embeddings.position_embeddings"][0]
    T = x.shape[0]
    atts = []
    for l in range(cfg["num_hidden_layers"]):
        q_ = f"{p}encoder.layer.{l}."
        h = layer_norm(x, W[q_ + "layernorm_before.weight"], W[q_ + "layernorm_before.bias"], eps)

        def proj(name):
            return h @ W[q_ + name + ".weight"].T + W[q_ + name + ".bias"]

        q = proj("attention.attention.query").view(T, heads, hd).transpose(0, 1)
        k = proj("attention.attention.key").view(T, heads, hd).transpose(0, 1)
        v = proj("attention.attention.value").view(T, heads, hd).transpose(0, 1)
        scores = q @ k.transpose(1, 2) / math.sqrt(hd)
        a = torch.softmax(scores, dim=-1)
        atts.append(a)
        ctx = (a @ v).transpose(0, 1).reshape(T, d)
        x = x + ctx @ W[q_ + "attention.output.dense.weight"].T + W[q_ + "attention.output.dense.bias"]
        h = layer_norm(x, W[q_ + "layernorm_after.weight"], W[q_ + "layernorm_after.bias"], eps)
        h = h @ W[q_ + "intermediate.dense.weight"].T + W[q_ + "intermediate.dense.bias"]
        h = torch.nn.functional.gelu(h)  # exact (erf), config hidden_act "gelu"
        x = x + h @ W[q_ + "output.dense.weight"].T + W[q_ + "output.dense.bias"]
    x = layer_norm(x, W[p + "layernorm.weight"], W[p + "layernorm.bias"], eps)
    if "distillation_classifier.weight" in W:
        logits = (x[0] @ W["cls_classifier.weight"].T + W["cls_classifier.bias"] +
                  x[1] @ W["distillation_classifier.weight"].T + W["distillation_classifier.bias"]) / 2
    else:
        logits = x[0] @ W["classifier.weight"].T + W["classifier.bias"]
    return torch.stack(atts), logits


def make_vit(name, seed, deit=False, teacher=True):
    architecture = ("DeiTForImageClassificationWithTeacher" if teacher else "DeiTForImageClassification") \
        if deit else "ViTForImageClassification"
    cfg = {"model_type": "deit" if deit else "vit", "architectures": [architecture],
           "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
           "intermediate_size": 32, "hidden_act": "gelu", "layer_norm_eps": 1e-12,
           "image_size": 32, "patch_size": 8, "num_channels": 3, "qkv_bias": True,
           "encoder_stride": 8, "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
           "initializer_range": 0.02,
           "id2label": {"0": "circle", "1": "square", "2": "triangle"},
           "label2id": {"circle": 0, "square": 1, "triangle": 2},
           "transformers_version": "5.17.0", "dtype": "float32"}
    g, r = seeded(seed)

    d, inner, C, P = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_channels"], cfg["patch_size"]
    patches = (cfg["image_size"] // P) ** 2
    labels = len(cfg["id2label"])
    T = {}
    p = "deit." if deit else "vit."
    T[p + "embeddings.cls_token"] = r(1, 1, d)
    if deit:
        T[p + "embeddings.distillation_token"] = r(1, 1, d)
    T[p + "embeddings.position_embeddings"] = r(1, patches + (2 if deit else 1), d)
    T[p + "embeddings.patch_embeddings.projection.weight"] = r(d, C, P, P, scale=0.1)
    T[p + "embeddings.patch_embeddings.projection.bias"] = r(d)
    for l in range(cfg["num_hidden_layers"]):
        q_ = f"{p}encoder.layer.{l}."
        for n in ("query", "key", "value"):
            T[q_ + f"attention.attention.{n}.weight"] = r(d, d)
            T[q_ + f"attention.attention.{n}.bias"] = r(d)
        T[q_ + "attention.output.dense.weight"] = r(d, d)
        T[q_ + "attention.output.dense.bias"] = r(d)
        T[q_ + "intermediate.dense.weight"] = r(inner, d)
        T[q_ + "intermediate.dense.bias"] = r(inner)
        T[q_ + "output.dense.weight"] = r(d, inner)
        T[q_ + "output.dense.bias"] = r(d)
        for n in ("layernorm_before", "layernorm_after"):
            T[q_ + n + ".weight"] = 1.0 + r(d, scale=0.1)
            T[q_ + n + ".bias"] = r(d, scale=0.1)
    T[p + "layernorm.weight"] = 1.0 + r(d, scale=0.1)
    T[p + "layernorm.bias"] = r(d, scale=0.1)
    for head in (("cls_classifier", "distillation_classifier") if deit and teacher else ("classifier",)):
        T[head + ".weight"] = r(labels, d)
        T[head + ".bias"] = r(labels)

    folder = os.path.join(ROOT, name)
    write_checkpoint(folder, T, "F32")
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    W = {k: roundtrip(t, "F32") for k, t in T.items()}
    # An image already processed (rescaled to [0, 1], normalised with mean = std = 0.5), as
    # float32: what the model's forward receives.
    pixels = (torch.rand(C, cfg["image_size"], cfg["image_size"], generator=g, dtype=torch.float64) * 2 - 1)
    pixels = pixels.to(torch.float32).to(torch.float64)
    atts, logits = vit_forward(cfg, W, pixels)
    np.savez(os.path.join(folder, "expected.npz"),
             pixel_values=pixels.numpy().astype(np.float32),
             attentions=atts.numpy().astype(np.float32),
             logits=logits.numpy().astype(np.float32))
    return cfg, W


PROCESSOR = {"image_processor_type": "ViTImageProcessor", "do_resize": True,
             "size": {"height": 32, "width": 32}, "resample": 2, "do_rescale": True,
             "rescale_factor": 0.00392156862745098, "do_normalize": True,
             "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}


def processed(image, resample):
    """What transformers' ViTImageProcessor makes of an RGB uint8 image [H, W, 3]: Pillow's
    resize (reducing_gap None), then numpy's rescale (float64 product stored as float32) and
    normalise (float32), channels first."""
    from PIL import Image
    pil = Image.fromarray(image, "RGB")
    size = (PROCESSOR["size"]["width"], PROCESSOR["size"]["height"])
    resized = np.array(pil.resize(size, resample=resample, reducing_gap=None))
    x = (resized.astype(np.float64) * PROCESSOR["rescale_factor"]).astype(np.float32)
    mean = np.array(PROCESSOR["image_mean"], dtype=np.float32)
    std = np.array(PROCESSOR["image_std"], dtype=np.float32)
    x = (x - mean) / std
    return x.transpose(2, 0, 1).copy()


# The other processors AttnLab follows, at the fixture's scale: DeiT's (a fixed resize, then the
# centre crop), CLIP's (the shortest edge, then the crop) and a crop larger than the resize (the
# image sits in zeros). transformers' class defaults are not relied on: every key is written.
OTHER_PROCESSORS = {
    "deit": {"image_processor_type": "DeiTImageProcessor", "do_resize": True,
             "size": {"height": 40, "width": 40}, "resample": 3, "do_center_crop": True,
             "crop_size": {"height": 32, "width": 32}, "do_rescale": True,
             "rescale_factor": 0.00392156862745098, "do_normalize": True,
             "image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]},
    "clip": {"image_processor_type": "CLIPImageProcessor", "do_resize": True,
             "size": {"shortest_edge": 32}, "resample": 3, "do_center_crop": True,
             "crop_size": {"height": 32, "width": 32}, "do_rescale": True,
             "rescale_factor": 0.00392156862745098, "do_normalize": True, "do_convert_rgb": True,
             "image_mean": [0.48145466, 0.4578275, 0.40821073],
             "image_std": [0.26862954, 0.26130258, 0.27577711]},
    "pad": {"image_processor_type": "BitImageProcessor", "do_resize": True,
            "size": {"shortest_edge": 29}, "resample": 2, "do_center_crop": True,
            "crop_size": {"height": 32, "width": 32}, "do_rescale": True,
            "rescale_factor": 0.00392156862745098, "do_normalize": True, "do_convert_rgb": True,
            "image_mean": [0.48145466, 0.4578275, 0.40821073],
            "image_std": [0.26862954, 0.26130258, 0.27577711]},
}


def processed_by(image, cfg):
    """What transformers' image processors make of an RGB uint8 image [H, W, 3] under cfg:
    Pillow's resize to `size` (height x width, or the shortest edge to N and the longer side
    int(N * long / short), as get_resize_output_image_size(default_to_square=False)), then
    center_crop (numpy: from (size - crop) // 2; a smaller image placed in zeros from
    ceil((crop - size) / 2)), rescale and normalise as above."""
    from PIL import Image
    h, w = image.shape[:2]
    size = cfg["size"]
    if "shortest_edge" in size:
        n = size["shortest_edge"]
        short, long = (w, h) if w <= h else (h, w)
        new_long = int(n * long / short)
        nh, nw = (new_long, n) if w <= h else (n, new_long)
    else:
        nh, nw = size["height"], size["width"]
    x = np.array(Image.fromarray(image, "RGB").resize((nw, nh), resample=cfg["resample"],
                                                      reducing_gap=None))
    ch, cw = cfg["crop_size"]["height"], cfg["crop_size"]["width"]
    top, left = (nh - ch) // 2, (nw - cw) // 2
    if top >= 0 and left >= 0:
        x = x[top:top + ch, left:left + cw]
    else:
        H, W = max(ch, nh), max(cw, nw)
        canvas = np.zeros((H, W, 3), dtype=x.dtype)
        tp, lp = math.ceil((H - nh) / 2), math.ceil((W - nw) / 2)
        canvas[tp:tp + nh, lp:lp + nw] = x
        top, left = top + tp, left + lp
        x = canvas[max(0, top):min(H, top + ch), max(0, left):min(W, left + cw)]
    x = (x.astype(np.float64) * cfg["rescale_factor"]).astype(np.float32)
    x = (x - np.array(cfg["image_mean"], dtype=np.float32)) / np.array(cfg["image_std"], dtype=np.float32)
    return x.transpose(2, 0, 1).copy()


def rollout(atts):
    """Attention rollout (Abnar & Zuidema 2020) of atts [L, H, T, T] in float64 numpy: each
    layer's heads averaged, the identity added for the residual, rows renormalised, multiplied
    from the first layer up."""
    T = atts.shape[-1]
    result = np.eye(T)
    for layer in atts:
        a = layer.mean(axis=0) + np.eye(T)
        a = a / a.sum(axis=-1, keepdims=True)
        result = a @ result
    return result


def make_processor(name, seed, cfg, W):
    """preprocessor_config.json, two images (one larger than 32 x 32, one smaller) and what the
    processor makes of each with Pillow's bilinear (2) and bicubic (3) filters; image.png is the
    larger one, for the command line."""
    from PIL import Image
    folder = os.path.join(ROOT, name)
    with open(os.path.join(folder, "preprocessor_config.json"), "w") as f:
        json.dump(PROCESSOR, f, indent=1)
    rng = np.random.default_rng(seed)
    down = rng.integers(0, 256, size=(37, 45, 3), dtype=np.uint8)
    up = rng.integers(0, 256, size=(24, 20, 3), dtype=np.uint8)
    Image.fromarray(down, "RGB").save(os.path.join(folder, "image.png"))
    for kind, other in OTHER_PROCESSORS.items():
        with open(os.path.join(folder, f"preprocessor_{kind}.json"), "w") as f:
            json.dump(other, f, indent=1)
    # The model on image.png as the processor leaves it (bilinear, as the config says).
    atts, logits = vit_forward(cfg, W, torch.from_numpy(processed(down, 2)).to(torch.float64))
    np.savez(os.path.join(folder, "processed.npz"),
             image_down=down.astype(np.float32), image_up=up.astype(np.float32),  # 0..255, exact
             down_bilinear=processed(down, 2), down_bicubic=processed(down, 3),
             up_bilinear=processed(up, 2), up_bicubic=processed(up, 3),
             **{f"{which}_{kind}": processed_by(image, other)
                for which, image in (("down", down), ("up", up))
                for kind, other in OTHER_PROCESSORS.items()},
             image_attentions=atts.numpy().astype(np.float32),
             image_rollout=rollout(atts.numpy()).astype(np.float32),
             image_logits=logits.numpy().astype(np.float32))


def make_cmyk(name):
    """cmyk.jpg: a 16 x 16 CMYK JPEG (as print workflows save them), four quadrants: cyan,
    magenta, yellow and half black. Pillow's RGB of them is (0, 255, 255), (255, 0, 255),
    (255, 255, 0) and (127, 127, 127); the window must read it as such."""
    from PIL import Image
    a = np.zeros((16, 16, 4), dtype=np.uint8)
    a[:8, :8] = (255, 0, 0, 0)
    a[:8, 8:] = (0, 255, 0, 0)
    a[8:, :8] = (0, 0, 255, 0)
    a[8:, 8:] = (0, 0, 0, 128)
    Image.fromarray(a, "CMYK").save(os.path.join(ROOT, name, "cmyk.jpg"), quality=95)


def attention_layer(x, W, q_, names, heads, hd, scale):
    """Eager two-way self-attention of x [T, d] (q/k/v and output projections with biases) ->
    (its attention [H, T, T], the output projection's result [T, d])."""
    T, d = x.shape

    def proj(name):
        return x @ W[q_ + name + ".weight"].T + W[q_ + name + ".bias"]

    q = proj(names[0]).view(T, heads, hd).transpose(0, 1)
    k = proj(names[1]).view(T, heads, hd).transpose(0, 1)
    v = proj(names[2]).view(T, heads, hd).transpose(0, 1)
    a = torch.softmax(q @ k.transpose(1, 2) * scale, dim=-1)
    ctx = (a @ v).transpose(0, 1).reshape(T, d)
    return a, ctx @ W[q_ + names[3] + ".weight"].T + W[q_ + names[3] + ".bias"]


def dinov2_forward(cfg, W, pixels, p):
    """pixels [C, H, W] float64 -> (attentions [L, H, T, T], logits or the class token's final
    state), from transformers' modeling_dinov2.py: Dinov2Embeddings (the class token, the patch
    convolution, positions interpolated by torch's own interpolate(mode="bicubic",
    align_corners=False, antialias=True) in float32 when the image's grid is not the table's),
    layers with norm1/norm2 and the layer scale (lambda1) on each block's output, the final
    LayerNorm, and Dinov2ForImageClassification's classifier on [CLS, mean of the patches]."""
    d, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    hd = d // heads
    eps = cfg["layer_norm_eps"]
    P = cfg["patch_size"]
    x = torch.nn.functional.conv2d(pixels.unsqueeze(0), W[p + "embeddings.patch_embeddings.projection.weight"],
                                   W[p + "embeddings.patch_embeddings.projection.bias"], stride=P)
    g = x.shape[-1]
    x = x.flatten(2).transpose(1, 2)[0]
    x = torch.cat([W[p + "embeddings.cls_token"][0], x], dim=0)
    pos = W[p + "embeddings.position_embeddings"]
    table = int(round((pos.shape[1] - 1) ** 0.5))
    if table != g:
        patch_pos = pos[:, 1:].reshape(1, table, table, d).permute(0, 3, 1, 2)
        patch_pos = torch.nn.functional.interpolate(patch_pos.to(torch.float32), size=(g, g), mode="bicubic",
                                                    align_corners=False, antialias=True).to(torch.float64)
        patch_pos = patch_pos.permute(0, 2, 3, 1).reshape(1, -1, d)
        pos = torch.cat([pos[:, :1], patch_pos], dim=1)
    x = x + pos[0]
    atts = []
    for l in range(cfg["num_hidden_layers"]):
        q_ = f"{p}encoder.layer.{l}."
        h = layer_norm(x, W[q_ + "norm1.weight"], W[q_ + "norm1.bias"], eps)
        a, out = attention_layer(h, W, q_, ("attention.attention.query", "attention.attention.key",
                                            "attention.attention.value", "attention.output.dense"),
                                 heads, hd, 1 / math.sqrt(hd))
        atts.append(a)
        x = x + out * W[q_ + "layer_scale1.lambda1"]
        h = layer_norm(x, W[q_ + "norm2.weight"], W[q_ + "norm2.bias"], eps)
        h = torch.nn.functional.gelu(h @ W[q_ + "mlp.fc1.weight"].T + W[q_ + "mlp.fc1.bias"])
        x = x + (h @ W[q_ + "mlp.fc2.weight"].T + W[q_ + "mlp.fc2.bias"]) * W[q_ + "layer_scale2.lambda1"]
    x = layer_norm(x, W[p + "layernorm.weight"], W[p + "layernorm.bias"], eps)
    if "classifier.weight" in W:
        out = torch.cat([x[0], x[1:].mean(dim=0)]) @ W["classifier.weight"].T + W["classifier.bias"]
    else:
        out = x[0]  # Dinov2Model's pooler_output
    return torch.stack(atts), out


def make_dinov2(name, seed, image_size, crop, classifier):
    """A tiny DINOv2 whose positions' grid (image_size / patch) is not its processor's (crop /
    patch): interpolated down (5 -> 4) or up (3 -> 4)."""
    cfg = {"model_type": "dinov2", "architectures": ["Dinov2ForImageClassification" if classifier else "Dinov2Model"],
           "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2, "mlp_ratio": 4,
           "hidden_act": "gelu", "layer_norm_eps": 1e-6, "image_size": image_size, "patch_size": 8,
           "num_channels": 3, "qkv_bias": True, "layerscale_value": 1.0, "drop_path_rate": 0.0,
           "use_swiglu_ffn": False, "use_mask_token": True, "hidden_dropout_prob": 0.0,
           "attention_probs_dropout_prob": 0.0, "initializer_range": 0.02,
           "out_features": ["stage2"], "out_indices": [2], "stage_names": ["stem", "stage1", "stage2"],
           "apply_layernorm": True, "reshape_hidden_states": True,
           "transformers_version": "5.17.0", "dtype": "float32"}
    if classifier:
        cfg["id2label"] = {"0": "circle", "1": "square", "2": "triangle"}
        cfg["label2id"] = {"circle": 0, "square": 1, "triangle": 2}
    g, r = seeded(seed)

    d, C, P = cfg["hidden_size"], cfg["num_channels"], cfg["patch_size"]
    inner = d * cfg["mlp_ratio"]
    table = image_size // P
    p = "dinov2." if classifier else ""  # a bare Dinov2Model saves without the prefix
    T = {p + "embeddings.cls_token": r(1, 1, d), p + "embeddings.mask_token": r(1, d),
         p + "embeddings.position_embeddings": r(1, table * table + 1, d),
         p + "embeddings.patch_embeddings.projection.weight": r(d, C, P, P, scale=0.1),
         p + "embeddings.patch_embeddings.projection.bias": r(d)}
    for l in range(cfg["num_hidden_layers"]):
        q_ = f"{p}encoder.layer.{l}."
        for n in ("attention.attention.query", "attention.attention.key", "attention.attention.value",
                  "attention.output.dense"):
            T[q_ + n + ".weight"] = r(d, d)
            T[q_ + n + ".bias"] = r(d)
        T[q_ + "mlp.fc1.weight"] = r(inner, d)
        T[q_ + "mlp.fc1.bias"] = r(inner)
        T[q_ + "mlp.fc2.weight"] = r(d, inner)
        T[q_ + "mlp.fc2.bias"] = r(d)
        for n in ("norm1", "norm2"):
            T[q_ + n + ".weight"] = 1.0 + r(d, scale=0.1)
            T[q_ + n + ".bias"] = r(d, scale=0.1)
        for n in ("layer_scale1", "layer_scale2"):
            T[q_ + n + ".lambda1"] = 0.5 + r(d, scale=0.3)
    T[p + "layernorm.weight"] = 1.0 + r(d, scale=0.1)
    T[p + "layernorm.bias"] = r(d, scale=0.1)
    if classifier:
        T["classifier.weight"] = r(3, 2 * d)
        T["classifier.bias"] = r(3)
    folder = os.path.join(ROOT, name)
    write_checkpoint(folder, T, "F32")
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    processor = {"image_processor_type": "BitImageProcessor", "do_resize": True,
                 "size": {"shortest_edge": crop + 4}, "resample": 3, "do_center_crop": True,
                 "crop_size": {"height": crop, "width": crop}, "do_rescale": True,
                 "rescale_factor": 0.00392156862745098, "do_normalize": True, "do_convert_rgb": True,
                 "image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]}
    with open(os.path.join(folder, "preprocessor_config.json"), "w") as f:
        json.dump(processor, f, indent=1)
    W = {k: roundtrip(t, "F32") for k, t in T.items()}
    pixels = (torch.rand(C, crop, crop, generator=g, dtype=torch.float64) * 2 - 1).to(torch.float32).to(torch.float64)
    atts, out = dinov2_forward(cfg, W, pixels, p)
    key = "logits" if classifier else "image_embeds"
    np.savez(os.path.join(folder, "expected.npz"), pixel_values=pixels.numpy().astype(np.float32),
             attentions=atts.numpy().astype(np.float32), **{key: out.numpy().astype(np.float32)})
    save_on_image(folder, processor, lambda px: dinov2_forward(cfg, W, px, p), key)


def save_on_image(folder, processor, forward, key):
    """on_image.npz: the model on fixtures/vit/image.png as its processor makes it (Pillow and
    numpy, processed_by): `attentions` and `key` (logits or image_embeds), for the command
    line's test."""
    from PIL import Image
    image = np.array(Image.open(os.path.join(ROOT, "vit", "image.png")).convert("RGB"))
    atts, out = forward(torch.from_numpy(processed_by(image, processor)).to(torch.float64))
    np.savez(os.path.join(folder, "on_image.npz"), attentions=atts.numpy().astype(np.float32),
             **{key: out.numpy().astype(np.float32)})


def clip_forward(vcfg, W, pixels):
    """pixels [C, H, W] float64 -> (attentions [L, H, T, T], the image embedding), from
    transformers' modeling_clip.py (CLIPVisionTransformer): the bias-free patch convolution,
    class_embedding first, position_embedding, pre_layrnorm, layers with layer_norm1/2 and
    quick_gelu (x * sigmoid(1.702 x)), post_layernorm on the class token, visual_projection."""
    d, heads = vcfg["hidden_size"], vcfg["num_attention_heads"]
    hd = d // heads
    eps = vcfg["layer_norm_eps"]
    p = "vision_model."
    x = torch.nn.functional.conv2d(pixels.unsqueeze(0), W[p + "embeddings.patch_embedding.weight"], None,
                                   stride=vcfg["patch_size"])
    x = x.flatten(2).transpose(1, 2)[0]
    x = torch.cat([W[p + "embeddings.class_embedding"][None], x], dim=0)
    x = x + W[p + "embeddings.position_embedding.weight"]
    x = layer_norm(x, W[p + "pre_layrnorm.weight"], W[p + "pre_layrnorm.bias"], eps)
    atts = []
    for l in range(vcfg["num_hidden_layers"]):
        q_ = f"{p}encoder.layers.{l}."
        h = layer_norm(x, W[q_ + "layer_norm1.weight"], W[q_ + "layer_norm1.bias"], eps)
        a, out = attention_layer(h, W, q_, ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                                            "self_attn.out_proj"), heads, hd, hd ** -0.5)
        atts.append(a)
        x = x + out
        h = layer_norm(x, W[q_ + "layer_norm2.weight"], W[q_ + "layer_norm2.bias"], eps)
        h = h @ W[q_ + "mlp.fc1.weight"].T + W[q_ + "mlp.fc1.bias"]
        h = h * torch.sigmoid(1.702 * h)
        x = x + h @ W[q_ + "mlp.fc2.weight"].T + W[q_ + "mlp.fc2.bias"]
    pooled = layer_norm(x[0], W[p + "post_layernorm.weight"], W[p + "post_layernorm.bias"], eps)
    return torch.stack(atts), pooled @ W["visual_projection.weight"].T


def make_clip(name, seed, nested):
    """CLIPVisionModelWithProjection (model_type clip_vision_model) or, nested, CLIPModel (clip):
    its vision_config as an old transformers wrote it (every PretrainedConfig key, and a
    vision_config_dict that agrees), the text tower's weights beside (not run)."""
    vcfg = {"model_type": "clip_vision_model", "hidden_size": 16, "intermediate_size": 40,
            "num_hidden_layers": 2, "num_attention_heads": 2, "num_channels": 3, "image_size": 32,
            "patch_size": 8, "hidden_act": "quick_gelu", "layer_norm_eps": 1e-5, "attention_dropout": 0.0,
            "dropout": 0.0, "initializer_range": 0.02, "initializer_factor": 1.0, "projection_dim": 8}
    projection = 6 if nested else vcfg["projection_dim"]
    if nested:
        legacy = {"add_cross_attention": False, "architectures": None, "bad_words_ids": None,
                  "begin_suppress_tokens": None, "bos_token_id": None, "chunk_size_feed_forward": 0,
                  "cross_attention_hidden_size": None, "decoder_start_token_id": None,
                  "diversity_penalty": 0.0, "do_sample": False, "early_stopping": False,
                  "encoder_no_repeat_ngram_size": 0, "eos_token_id": None,
                  "exponential_decay_length_penalty": None, "finetuning_task": None,
                  "forced_bos_token_id": None, "forced_eos_token_id": None,
                  "id2label": {"0": "LABEL_0", "1": "LABEL_1"}, "is_decoder": False,
                  "is_encoder_decoder": False, "label2id": {"LABEL_0": 0, "LABEL_1": 1},
                  "length_penalty": 1.0, "max_length": 20, "min_length": 0, "no_repeat_ngram_size": 0,
                  "num_beam_groups": 1, "num_beams": 1, "num_return_sequences": 1,
                  "output_attentions": False, "output_hidden_states": False, "output_scores": False,
                  "pad_token_id": None, "prefix": None, "problem_type": None, "pruned_heads": {},
                  "remove_invalid_values": False, "repetition_penalty": 1.0, "return_dict": True,
                  "return_dict_in_generate": False, "sep_token_id": None, "suppress_tokens": None,
                  "task_specific_params": None, "temperature": 1.0, "tf_legacy_loss": False,
                  "tie_encoder_decoder": False, "tie_word_embeddings": True, "tokenizer_class": None,
                  "top_k": 50, "top_p": 1.0, "torch_dtype": None, "torchscript": False,
                  "transformers_version": "4.21.3", "typical_p": 1.0, "use_bfloat16": False}
        cfg = {"model_type": "clip", "architectures": ["CLIPModel"], "projection_dim": projection,
               "logit_scale_init_value": 2.6592, "initializer_factor": 1.0,
               "text_config": {"model_type": "clip_text_model", "hidden_size": 12, "vocab_size": 50},
               "text_config_dict": {"hidden_size": 12},
               "vision_config": {**legacy, **vcfg},
               "vision_config_dict": {"hidden_size": 16, "patch_size": 8, "projection_dim": 8},
               "transformers_version": None, "torch_dtype": "float32"}
    else:
        cfg = {**vcfg, "architectures": ["CLIPVisionModelWithProjection"],
               "transformers_version": "5.17.0", "dtype": "float32"}
    g, r = seeded(seed)

    d, inner, C, P = vcfg["hidden_size"], vcfg["intermediate_size"], vcfg["num_channels"], vcfg["patch_size"]
    patches = (vcfg["image_size"] // P) ** 2
    p = "vision_model."
    T = {p + "embeddings.class_embedding": r(d), p + "embeddings.patch_embedding.weight": r(d, C, P, P, scale=0.1),
         p + "embeddings.position_embedding.weight": r(patches + 1, d)}
    for n in ("pre_layrnorm", "post_layernorm"):
        T[p + n + ".weight"] = 1.0 + r(d, scale=0.1)
        T[p + n + ".bias"] = r(d, scale=0.1)
    for l in range(vcfg["num_hidden_layers"]):
        q_ = f"{p}encoder.layers.{l}."
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            T[q_ + "self_attn." + n + ".weight"] = r(d, d)
            T[q_ + "self_attn." + n + ".bias"] = r(d)
        T[q_ + "mlp.fc1.weight"] = r(inner, d)
        T[q_ + "mlp.fc1.bias"] = r(inner)
        T[q_ + "mlp.fc2.weight"] = r(d, inner)
        T[q_ + "mlp.fc2.bias"] = r(d)
        for n in ("layer_norm1", "layer_norm2"):
            T[q_ + n + ".weight"] = 1.0 + r(d, scale=0.1)
            T[q_ + n + ".bias"] = r(d, scale=0.1)
    T["visual_projection.weight"] = r(projection, d)
    if nested:  # the text tower: read by nobody here
        T["text_model.embeddings.token_embedding.weight"] = r(50, 12)
        T["text_projection.weight"] = r(projection, 12)
        T["logit_scale"] = torch.tensor(2.6592, dtype=torch.float64)
    folder = os.path.join(ROOT, name)
    write_checkpoint(folder, T, "F32")
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    with open(os.path.join(folder, "preprocessor_config.json"), "w") as f:
        json.dump(OTHER_PROCESSORS["clip"], f, indent=1)
    W = {k: roundtrip(t, "F32") for k, t in T.items()}
    pixels = (torch.rand(C, vcfg["image_size"], vcfg["image_size"], generator=g, dtype=torch.float64) * 2 - 1)
    pixels = pixels.to(torch.float32).to(torch.float64)
    atts, embeds = clip_forward(vcfg, W, pixels)
    np.savez(os.path.join(folder, "expected.npz"), pixel_values=pixels.numpy().astype(np.float32),
             attentions=atts.numpy().astype(np.float32), image_embeds=embeds.numpy().astype(np.float32))
    save_on_image(folder, OTHER_PROCESSORS["clip"], lambda px: clip_forward(vcfg, W, px), "image_embeds")


def main():
    torch.set_default_dtype(torch.float64)
    cfg, W = make_vit("vit", 7)
    make_processor("vit", 11, cfg, W)
    make_cmyk("vit")
    make_vit("deit", 13, deit=True)
    make_vit("deit_plain", 17, deit=True, teacher=False)
    make_dinov2("dinov2", 19, image_size=40, crop=32, classifier=True)
    make_dinov2("dinov2_base", 23, image_size=24, crop=32, classifier=False)
    make_clip("clip_vision", 29, nested=False)
    make_clip("clip", 31, nested=True)
    print("vision fixtures written to", os.path.normpath(ROOT))


if __name__ == "__main__":
    sys.exit(main())
