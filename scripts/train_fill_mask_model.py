#!/usr/bin/env python3
"""Train AttnLab's bundled fill-mask model: a tiny English BERT (BertForMaskedLM).

Everything comes from this file and a seed: the sentences (the English grammar of the other
bundled models, scripts/train_translation_model.py, which is the grammar of
scripts/train_demo_model.py, plus a small "world" of facts that makes a masked word
recoverable from the rest of its sentence), a WordPiece vocabulary holding every word of them
whole, the model and its masked-language-model training. No downloads and no transformers:
Debian's python3-torch, python3-numpy (and python3-sentencepiece, which the imported
translation script needs) only.

    apt-get install python3-torch python3-numpy python3-sentencepiece libopenblas0-serial
    LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-serial \
        /usr/bin/python3 scripts/train_fill_mask_model.py   # writes resources/models/tiny-bert-en/

Outputs (resources/models/tiny-bert-en/)
  config.json        BertConfig with the keys transformers 5 writes (BertForMaskedLM)
  model.safetensors  F32 tensors named as in transformers' BertForMaskedLM (no pooler; the
                     decoder is tied to bert.embeddings.word_embeddings.weight and not stored;
                     cls.predictions.bias)
  tokenizer.json     Hugging Face tokenizers' layout of bert-base-uncased's tokenizer:
                     BertNormalizer (lowercase), BertPreTokenizer, WordPiece (##),
                     TemplateProcessing "[CLS] $A [SEP]", WordPiece decoder
  reference.npz      held-out masked sentences: texts, ids, the script's attentions and logits,
                     masked positions and the grammar's words for them
  README.md          what it is, how it was trained, measured fill accuracy

The forward follows transformers' BertForMaskedLM (eager attention) step by step:
  x = LN(word[ids] + position[0..S-1] + token_type[0])                   (eps layer_norm_eps)
  per layer (post-LN):
    q, k, v = x Wq^T + bq, x Wk^T + bk, x Wv^T + bv  (per head, head_dim = hidden / heads)
    a = softmax(q k^T / sqrt(head_dim) + padding mask)     two-way: every token sees every one
    x = LN(x + (a v) Wo^T + bo)                               attention.output.{dense,LayerNorm}
    x = LN(x + W2 gelu(W1 x + b1) + b2)          intermediate.dense, output.{dense,LayerNorm}
  head: h = LN(gelu(x Wt^T + bt))                   cls.predictions.transform.{dense,LayerNorm}
        logits = h word^T + cls.predictions.bias                         (tie_word_embeddings)
gelu is the exact erf form (hidden_act "gelu").
"""

import argparse
import json
import math
import os
import random
import string
import struct
import sys
import time
import unicodedata

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_file  # noqa: E402
import train_translation_model as tg  # noqa: E402  (the English grammar and its lexicon)

# The same batching and BLAS report as the translation model's.
pad_batch = tg.pad_batch
blas_library = tg.blas_library

MODEL_NAME = "tiny-bert-en"
OPENBLAS_DIR = "/usr/lib/x86_64-linux-gnu/openblas-serial"
PAD, UNK, CLS, SEP, MASK = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"
SPECIALS = (PAD, UNK, CLS, SEP, MASK)

# ----------------------------------------------------------------------------------------------
# 1. Sentences: the translation model's English grammar, and a world of facts
# ----------------------------------------------------------------------------------------------

# In the grammar every noun, verb and adjective is drawn independently, so a masked content
# word of its sentences cannot be told from the rest (chance is 1 in 20 or worse). The world
# below fixes what goes with what, so that the rest of a sentence says what was masked:
# "the [MASK] meowed" (cat), "the cow ate the [MASK]" (grass), "the [MASK] sat on the mat".

# animal: (its sound, the preposition of its home, its home, the verb of its food, its food)
ANIMAL_WORLD = {
    "cat": ("meowed", "on", "mat", "drank", "milk"),
    "dog": ("barked", "in", "yard", "ate", "bone"),
    "cow": ("mooed", "in", "field", "ate", "grass"),
    "duck": ("quacked", "on", "pond", "ate", "bread"),
    "lion": ("roared", "on", "rock", "ate", "meat"),
    "bee": ("buzzed", "on", "flower", None, None),
    "owl": ("hooted", "on", "branch", "ate", "mouse"),
    "bird": ("sang", "in", "nest", "ate", "seeds"),
    "horse": ("neighed", "in", "stable", "ate", "hay"),
    "pig": ("oinked", "in", "mud", "ate", "apple"),
    "frog": ("croaked", "on", "log", "ate", "fly"),
    "snake": ("hissed", "under", "stone", "ate", "egg"),
    "wolf": ("howled", "in", "forest", "ate", "sheep"),
    "hen": ("clucked", "in", "coop", "ate", "corn"),
    "sheep": ("bleated", "on", "hill", "ate", "grass"),
    "mouse": ("squeaked", "in", "hole", "ate", "cheese"),
    "monkey": ("chattered", "in", "tree", "ate", "banana"),
    "bear": ("growled", "in", "cave", "ate", "honey"),
    "rabbit": (None, "in", "burrow", "ate", "carrot"),
    "fish": (None, "in", "river", "ate", "worm"),
}
# person: (what they do, to what, where they work)
PEOPLE_WORLD = {
    "teacher": ("taught", "lesson", "school"),
    "farmer": ("milked", "cow", "farm"),
    "doctor": ("helped", "patient", "hospital"),
    "baker": ("baked", "bread", "bakery"),
    "cook": ("cooked", "soup", "kitchen"),
    "driver": ("drove", "bus", "station"),
    "pilot": ("flew", "plane", "airport"),
    "king": ("ruled", "kingdom", "castle"),
    "student": ("read", "book", "library"),
    "gardener": ("watered", "flowers", "garden"),
    "painter": ("painted", "picture", "studio"),
    "fisherman": ("caught", "fish", "boat"),
}
# thing: its colour
COLOUR_WORLD = {
    "grass": "green", "sky": "blue", "snow": "white", "sun": "yellow", "banana": "yellow",
    "coal": "black", "milk": "white", "apple": "red", "carrot": "orange", "sea": "blue",
    "cherry": "red", "leaf": "green", "night": "black", "pig": "pink", "bear": "brown",
    "frog": "green", "crow": "black", "cloud": "white", "lemon": "yellow", "chocolate": "brown",
}
FACT_SHAPES = ("sound", "home", "food", "work", "goes", "colour")


class FactGrammar:
    """Sentences about the world above, decorated with the grammar's determiners, adjectives,
    adverbs, time phrases, reasons and sentence shapes. sentence() returns (words, facts): the
    words (punctuation a word of its own) and the indices of the words the world fixes given
    the rest of the sentence (the ones measured when masked)."""

    def __init__(self, rng):
        self.rng = rng
        self.g = tg.Grammar(rng)  # for its modifiers (adverbs, time phrases)

    def pick(self, xs):
        return self.rng.choice(sorted(xs) if isinstance(xs, (dict, set)) else xs)

    def np_(self, p, noun, adj_p=0.2, det=None):
        """Appends "DET [ADJ] NOUN"; returns the noun's index."""
        det = det or self.pick(("the", "the", "the", "the", "a", "my", "your", "his", "her",
                                "this", "that", "our", "their", "one"))
        adj = self.pick(tg.ADJECTIVES) if self.rng.random() < adj_p else None
        if det == "a" and (adj or noun)[0] in "aeiou":
            det = "an"
        p.en(det)
        if adj:
            p.en(adj)
        return p.en(noun)

    def subject(self, p, noun, pronoun):
        """The subject: the noun phrase, or the pronoun when the noun came before."""
        if pronoun:
            p.en(pronoun)
            return []
        return [self.np_(p, noun)]

    def clause(self, p, shape, subject, pronoun=None):
        """Appends a clause of the given shape about `subject`; returns the fixed indices."""
        mods = lambda: self.g.modifiers(p, adverb_p=0.15, time_p=0.1)  # noqa: E731
        if shape == "sound":
            facts = self.subject(p, subject, pronoun)
            facts.append(p.en(ANIMAL_WORLD[subject][0]))
            mods()
        elif shape == "home":
            _, prep, home, _, _ = ANIMAL_WORLD[subject]
            facts = self.subject(p, subject, pronoun)
            p.en(self.pick(("sat", "slept", "rested", "hid", "stayed", "lived", "waited")))
            p.en(prep)
            facts.append(self.np_(p, home, adj_p=0.1, det="the"))
            mods()
        elif shape == "food":
            _, _, _, verb, food = ANIMAL_WORLD[subject]
            facts = self.subject(p, subject, pronoun)
            facts.append(p.en(verb))
            facts.append(self.np_(p, food, adj_p=0.1, det="the"))
            mods()
        elif shape == "work":
            verb, obj, place = PEOPLE_WORLD[subject]
            facts = self.subject(p, subject, pronoun)
            facts.append(p.en(verb))
            facts.append(self.np_(p, obj, adj_p=0.1, det="the"))
            if self.rng.random() < 0.5:
                p.en(self.pick(("in", "at")))
                facts.append(self.np_(p, place, adj_p=0.0, det="the"))
            mods()
        elif shape == "goes":
            place = PEOPLE_WORLD[subject][2]
            facts = self.subject(p, subject, pronoun)
            p.en(self.pick(("went", "walked", "ran", "came", "hurried")), "to", "the")
            facts.append(p.en(place))
            mods()
        else:  # colour
            facts = [] if pronoun else [self.np_(p, subject, adj_p=0.0, det="the")]
            if pronoun:
                p.en(pronoun)
            p.en("was")
            facts.append(p.en(COLOUR_WORLD[subject]))
            self.g.modifiers(p, adverb_p=0.15, time_p=0.1, adverbs=("today", "yesterday"))
        return facts

    def shapes_of(self, noun):
        out = []
        if noun in ANIMAL_WORLD:
            sound, _, _, _, food = ANIMAL_WORLD[noun]
            out += (["sound"] if sound else []) + ["home"] + (["food"] if food else [])
        if noun in PEOPLE_WORLD:
            out += ["work", "goes"]
        if noun in COLOUR_WORLD:
            out += ["colour"]
        return out

    def sentence(self):
        p = tg.Pair()
        r = self.rng.random()
        if r < 0.7:
            kind = self.pick(("animal", "animal", "person", "colour"))
            table = {"animal": ANIMAL_WORLD, "person": PEOPLE_WORLD, "colour": COLOUR_WORLD}[kind]
            subject = self.pick(table)
            shapes = [s for s in self.shapes_of(subject)
                      if (s in ("sound", "home", "food")) == (kind == "animal")
                      and (s == "colour") == (kind == "colour")]
            first = self.pick(shapes)
            facts = self.clause(p, first, subject)
            r2 = self.rng.random()
            if r2 < 0.45 and kind != "colour":
                # a second fact about the same subject: "... and then it slept on the mat"
                rest = [s for s in shapes if s != first] or shapes
                p.en("and", "then") if self.rng.random() < 0.6 else p.en("and")
                pron = "it" if kind == "animal" else self.pick(("he", "she"))
                facts += self.clause(p, self.pick(rest), subject, pronoun=pron)
            elif r2 < 0.6:
                p.en("because", *self.pick(tg.REASONS).split())
        elif r < 0.85:
            # two subjects: "the dog barked and the cow ate the grass"
            facts = []
            for n in range(2):
                if n:
                    p.en("and")
                subject = self.pick(ANIMAL_WORLD if self.rng.random() < 0.7 else PEOPLE_WORLD)
                shapes = [s for s in self.shapes_of(subject) if s != "colour"]
                facts += self.clause(p, self.pick(shapes), subject)
        else:
            # "when the cat meowed, the dog barked"
            p.en("when")
            a = self.pick(ANIMAL_WORLD)
            facts = self.clause(p, self.pick([s for s in self.shapes_of(a) if s != "colour"]), a)
            p.en(",")
            b = self.pick(ANIMAL_WORLD)
            facts += self.clause(p, self.pick([s for s in self.shapes_of(b) if s != "colour"]), b)
        p.en("." if self.rng.random() < 0.9 else self.pick(("!", "?")))
        if self.rng.random() < 0.5:
            p.words[0] = p.words[0][:1].upper() + p.words[0][1:]
        return p.words, sorted(facts)


CONTENT_TABLES = (tg.NOUNS, tg.ADJECTIVES, tg.COLOURS, tg.VERBS_INTRANS, tg.VERBS_TRANS,
                  tg.VERBS_MOTION, tg.NAMES)


def grammar_content(words):
    """Indices of a grammar sentence's content words (nouns, names, adjectives, verbs)."""
    content = set()
    for table in CONTENT_TABLES:
        content.update(w.lower() for w in table)
    content.update(tg.plural(n) for n in tg.NOUNS)
    return [i for i, w in enumerate(words) if w.lower() in content]


def text_of(words):
    out = ""
    for i, w in enumerate(words):
        out += w if (i == 0 or w in ",.!?") else " " + w
    return out


# ----------------------------------------------------------------------------------------------
# 2. The tokenizer: WordPiece, every word of the sentences whole; tokenizer.json
# ----------------------------------------------------------------------------------------------

def lexicon():
    """Every word the two grammars can write (lowercase)."""
    words = set()
    for table in (tg.ANIMALS, tg.PEOPLE, tg.THINGS, tg.PLACES, tg.NAMES, tg.ADJECTIVES,
                  tg.COLOURS, tg.VERBS_INTRANS, tg.VERBS_TRANS, tg.VERBS_MOTION, tg.PREPS_PLACE,
                  tg.ADVERBS, tg.NUMBER_WORDS, tg.DETERMINERS, tg.PRONOUNS):
        words.update(table)
    for table in (tg.TIME_PHRASES, tg.REASONS):
        for phrase in table:
            words.update(phrase.split())
    words.update(("to", "was", "there", "were", "had", "because", "and", "then", "when", "at"))
    words.update(tg.plural(n) for n in {**tg.ANIMALS, **tg.THINGS})
    words.update(str(n) for n in range(2, 13))
    for animal, (sound, prep, home, verb, food) in ANIMAL_WORLD.items():
        words.update(w for w in (animal, sound, prep, home, verb, food) if w)
    for person, facts in PEOPLE_WORLD.items():
        words.update((person,) + facts)
    for thing, colour in COLOUR_WORLD.items():
        words.update((thing, colour))
    words.update(("sat", "slept", "rested", "hid", "stayed", "lived", "waited", "went",
                  "walked", "ran", "came", "hurried", "he", "she", "it"))
    return {w.lower() for w in words}


def build_vocab(words):
    """[PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, [MASK] 4, then ASCII punctuation, digits and letters
    (as bert-base-uncased has them), the words, and "##" + each digit and letter (so a word
    outside the grammar is spelt in pieces rather than [UNK])."""
    vocab = {}
    for t in SPECIALS:
        vocab[t] = len(vocab)
    for ch in string.punctuation + string.digits + string.ascii_lowercase:
        vocab.setdefault(ch, len(vocab))
    for w in sorted(words):
        vocab.setdefault(w, len(vocab))
    for ch in string.digits + string.ascii_lowercase:
        vocab.setdefault("##" + ch, len(vocab))
    return vocab


def _is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_chinese(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def bert_normalize(text):
    """BertNormalizer(clean_text, handle_chinese_chars, strip_accents=None -> as lowercase,
    lowercase)."""
    out = []
    for ch in text:
        cp = ord(ch)
        cat = unicodedata.category(ch)
        if cp == 0 or cp == 0xFFFD or (cat.startswith("C") and ch not in "\t\n\r"):
            continue
        if ch in "\t\n\r" or cat == "Zs":
            out.append(" ")
        elif _is_chinese(cp):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    text = "".join(out)
    text = "".join(c for c in unicodedata.normalize("NFD", text)
                   if unicodedata.category(c) != "Mn")
    return text.lower()


def bert_pre_tokenize(text):
    words, cur = [], ""
    for ch in text:
        if ch.isspace():
            if cur:
                words.append(cur)
            cur = ""
        elif _is_punctuation(ch):
            if cur:
                words.append(cur)
            words.append(ch)
            cur = ""
        else:
            cur += ch
    if cur:
        words.append(cur)
    return words


class WordPieceTokenizer:
    """What Hugging Face tokenizers does with tokenizer.json below: special tokens written in
    the text are found first (not normalized), the rest is normalized, split and cut into the
    longest vocabulary pieces ([UNK] for a word that cannot be), then [CLS] ... [SEP]."""

    def __init__(self, vocab):
        self.vocab = vocab
        self.pieces = {i: t for t, i in vocab.items()}

    def word_pieces(self, word):
        if len(word) > 100:
            return [UNK]
        out, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            if end == start:
                return [UNK]
            out.append(piece)
            start = end
        return out

    def tokenize(self, text):
        tokens, rest = [], text
        while rest:
            hits = [(rest.find(s), s) for s in SPECIALS if rest.find(s) >= 0]
            at, special = min(hits) if hits else (len(rest), None)
            for w in bert_pre_tokenize(bert_normalize(rest[:at])):
                tokens.extend(self.word_pieces(w))
            if special is None:
                break
            tokens.append(special)
            rest = rest[at + len(special):]
        return tokens

    def encode(self, text, special=True):
        ids = [self.vocab[t] for t in self.tokenize(text)]
        return [self.vocab[CLS]] + ids + [self.vocab[SEP]] if special else ids


def tokenizer_json(vocab):
    """The layout Hugging Face tokenizers writes for bert-base-uncased."""
    added = [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True} for t in SPECIALS]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": True,
                       "handle_chinese_chars": True, "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": CLS, "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": SEP, "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": CLS, "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": SEP, "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": SEP, "type_id": 1}}],
            "special_tokens": {
                CLS: {"id": CLS, "ids": [vocab[CLS]], "tokens": [CLS]},
                SEP: {"id": SEP, "ids": [vocab[SEP]], "tokens": [SEP]},
            },
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": UNK, "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab},
    }


# ----------------------------------------------------------------------------------------------
# 3. The model: transformers' BertForMaskedLM in plain torch, under its module names
# ----------------------------------------------------------------------------------------------

class Node(torch.nn.Module):
    """A module that only names its children (so the parameter names are transformers')."""

    def __init__(node, **children):  # noqa: N805 (a child is called "self")
        super().__init__()
        for name, child in children.items():
            setattr(node, name, child)


class BertForMaskedLM(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        D, V, I = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
        eps = cfg["layer_norm_eps"]
        self.cfg = cfg
        self.heads = cfg["num_attention_heads"]
        ln = lambda: torch.nn.LayerNorm(D, eps=eps)  # noqa: E731
        lin = torch.nn.Linear
        layers = torch.nn.ModuleList(
            Node(attention=Node(self=Node(query=lin(D, D), key=lin(D, D), value=lin(D, D)),
                                output=Node(dense=lin(D, D), LayerNorm=ln())),
                 intermediate=Node(dense=lin(D, I)),
                 output=Node(dense=lin(I, D), LayerNorm=ln()))
            for _ in range(cfg["num_hidden_layers"]))
        self.bert = Node(
            embeddings=Node(
                word_embeddings=torch.nn.Embedding(V, D, padding_idx=cfg["pad_token_id"]),
                position_embeddings=torch.nn.Embedding(cfg["max_position_embeddings"], D),
                token_type_embeddings=torch.nn.Embedding(cfg["type_vocab_size"], D),
                LayerNorm=ln()),
            encoder=Node(layer=layers))
        self.cls = Node(predictions=Node(transform=Node(dense=lin(D, D), LayerNorm=ln())))
        self.cls.predictions.bias = torch.nn.Parameter(torch.zeros(V))
        # transformers' _init_weights: normal(0, initializer_range), zero biases, LN 1/0,
        # the padding row zero
        std = cfg["initializer_range"]
        for m in self.modules():
            if isinstance(m, (torch.nn.Linear, torch.nn.Embedding)):
                torch.nn.init.normal_(m.weight, 0.0, std)
                if isinstance(m, torch.nn.Linear):
                    torch.nn.init.zeros_(m.bias)
        with torch.no_grad():
            self.bert.embeddings.word_embeddings.weight[cfg["pad_token_id"]].zero_()

    def forward(self, ids, key_padding=None, dropout=0.0, rows=None):
        """ids [B, S]; key_padding [B, S] bool (True: a padding key) or None ->
        logits [B, S, V] (or [N, V] at the positions where `rows` [B, S] is True: training
        needs only the masked ones), attentions: per layer [B, H, S, S]."""
        B, S = ids.shape
        H = self.heads
        drop = lambda t: F.dropout(t, dropout, self.training) if dropout else t  # noqa: E731
        e = self.bert.embeddings
        x = (e.word_embeddings(ids) + e.position_embeddings.weight[:S][None]
             + e.token_type_embeddings.weight[0])
        x = drop(e.LayerNorm(x))
        mask = None
        if key_padding is not None:
            mask = torch.zeros(B, 1, 1, S).masked_fill(key_padding[:, None, None, :],
                                                       torch.finfo(torch.float32).min)
        attns = []
        for layer in self.bert.encoder.layer:
            sa = layer.attention.self
            D = x.shape[-1]
            hd = D // H
            split = lambda t: t.view(B, S, H, hd).transpose(1, 2)  # noqa: E731
            q, k, v = split(sa.query(x)), split(sa.key(x)), split(sa.value(x))
            scores = (q @ k.transpose(2, 3)) * hd ** -0.5
            if mask is not None:
                scores = scores + mask
            a = torch.softmax(scores, dim=-1)
            attns.append(a)
            ctx = (drop(a) @ v).transpose(1, 2).reshape(B, S, D)
            out = layer.attention.output
            x = out.LayerNorm(x + drop(out.dense(ctx)))
            h = layer.output.dense(F.gelu(layer.intermediate.dense(x)))
            x = layer.output.LayerNorm(x + drop(h))
        t = self.cls.predictions.transform
        if rows is not None:
            x = x[rows]
        h = t.LayerNorm(F.gelu(t.dense(x)))
        logits = h @ e.word_embeddings.weight.T + self.cls.predictions.bias
        return logits, attns


# ----------------------------------------------------------------------------------------------
# 4. Masking, batches, accuracy
# ----------------------------------------------------------------------------------------------

def mask_batch(ids, vocab, rng, first_word, prob=0.15):
    """BERT's masking: each non-special token chosen with probability `prob` (at least one
    per sentence); of those 80% become [MASK], 10% a random word, 10% stay. Labels -100 at the
    rest."""
    special = (ids == vocab[PAD]) | (ids == vocab[CLS]) | (ids == vocab[SEP])
    chosen = (torch.rand(ids.shape, generator=rng) < prob) & ~special
    for b in range(ids.shape[0]):
        if not bool(chosen[b].any()):
            cand = (~special[b]).nonzero().flatten()
            chosen[b, cand[torch.randint(len(cand), (1,), generator=rng)]] = True
    labels = ids.masked_fill(~chosen, -100)
    r = torch.rand(ids.shape, generator=rng)
    inputs = ids.clone()
    inputs[chosen & (r < 0.8)] = vocab[MASK]
    random_words = torch.randint(first_word, len(vocab), ids.shape, generator=rng)
    swap = chosen & (r >= 0.8) & (r < 0.9)
    inputs[swap] = random_words[swap]
    return inputs, labels


@torch.no_grad()
def fill_accuracy(model, items, vocab, batch=256):
    """items: (ids, token positions). Each position is masked alone; returns (top-1 hits,
    top-5 hits, count, [(ids, pos, top-5)])."""
    jobs = [(ids, pos) for ids, positions in items for pos in positions]
    top1 = top5 = 0
    wrong = []
    for b in range(0, len(jobs), batch):
        chunk = jobs[b:b + batch]
        seqs = []
        for ids, pos in chunk:
            s = list(ids)
            s[pos] = vocab[MASK]
            seqs.append(s)
        x = pad_batch(seqs, vocab[PAD])
        logits, _ = model(x, x == vocab[PAD])
        for n, (ids, pos) in enumerate(chunk):
            best = logits[n, pos].topk(5).indices.tolist()
            top1 += best[0] == ids[pos]
            top5 += ids[pos] in best
            if best[0] != ids[pos]:
                wrong.append((ids, pos, best))
    return top1, top5, len(jobs), wrong


def token_positions(words, word_indices, tok):
    """The token positions (after [CLS]) of the given words, each word one token."""
    ids = tok.encode(text_of(words))
    pieces = []
    for w in words:
        pieces.extend(tok.word_pieces(bert_normalize(w)))
    assert len(pieces) + 2 == len(ids) and all(len(tok.word_pieces(bert_normalize(w))) == 1
                                               for w in words), words
    return ids, [1 + i for i in word_indices]


# ----------------------------------------------------------------------------------------------
# 5. Main
# ----------------------------------------------------------------------------------------------

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--sentences", type=int, default=60000, help="training sentences")
    ap.add_argument("--fact-share", type=float, default=0.6,
                    help="share of training sentences from the world of facts (the rest from "
                         "the translation model's grammar)")
    ap.add_argument("--steps", type=int, default=4000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--hidden", type=int, default=96)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (on a shared 2-core machine 2 threads were 8x slower)")
    ap.add_argument("--eval-every", type=int, default=1000)
    ap.add_argument("--test", type=int, default=800, help="held-out sentences of each kind")
    ap.add_argument("--out", default=os.path.join(root, "resources", "models", MODEL_NAME))
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    t_start = time.time()
    torch.ones(2, 2) @ torch.ones(2, 2)
    blas = blas_library()
    blas = next((b for b in blas.split(", ") if "openblas" in b), blas)
    print(f"torch {torch.__version__}, BLAS {blas}", flush=True)

    # Held-out sentences first; training sentences equal to one of them (ignoring case) are
    # skipped.
    seen = set()
    held_facts, held_free = [], []
    fact_g, free_g = FactGrammar(random.Random(args.seed + 1)), tg.Grammar(random.Random(args.seed + 2))
    while len(held_facts) < args.test:
        words, facts = fact_g.sentence()
        key = text_of(words).lower()
        if key not in seen:
            seen.add(key)
            held_facts.append((words, facts))
    while len(held_free) < args.test:
        words = free_g.sentence().words
        key = text_of(words).lower()
        if key not in seen:
            seen.add(key)
            held_free.append((words, grammar_content(words)))
    fact_g, free_g = FactGrammar(random.Random(args.seed + 3)), tg.Grammar(random.Random(args.seed + 4))
    mix = random.Random(args.seed + 5)
    train_words, skipped = [], 0
    while len(train_words) < args.sentences:
        words = (fact_g.sentence()[0] if mix.random() < args.fact_share
                 else free_g.sentence().words)
        if text_of(words).lower() in seen:
            skipped += 1
            continue
        train_words.append(words)
    n_distinct = len({text_of(w).lower() for w in train_words})

    # Tokenizer
    vocab = build_vocab(lexicon())
    tok = WordPieceTokenizer(vocab)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(vocab), f, indent=2, ensure_ascii=False)
        f.write("\n")
    train = []
    for words in train_words:
        ids = tok.encode(text_of(words))
        assert vocab[UNK] not in ids and len(ids) == len(words) + 2, text_of(words)
        train.append(ids)
    first_word = len(SPECIALS)
    max_len = max(len(s) for s in train)
    print(f"sentences: {len(train)} training ({n_distinct} distinct, {skipped} skipped as held "
          f"out), {len(held_facts)} + {len(held_free)} held out; vocab {len(vocab)}; longest "
          f"{max_len} tokens ({time.time() - t_start:.1f}s)", flush=True)
    print("   e.g.", text_of(train_words[0]), "|", text_of(train_words[1]), flush=True)

    cfg = {
        "add_cross_attention": False,
        "architectures": ["BertForMaskedLM"],
        "attention_probs_dropout_prob": args.dropout,
        "bos_token_id": None,
        "classifier_dropout": None,
        "dtype": "float32",
        "eos_token_id": None,
        "hidden_act": "gelu",
        "hidden_dropout_prob": args.dropout,
        "hidden_size": args.hidden,
        "initializer_range": 0.02,
        "intermediate_size": 4 * args.hidden,
        "is_decoder": False,
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": 64,
        "model_type": "bert",
        "num_attention_heads": args.heads,
        "num_hidden_layers": args.layers,
        "pad_token_id": vocab[PAD],
        "tie_word_embeddings": True,
        "transformers_version": "5.17.0",
        "type_vocab_size": 2,
        "use_cache": True,
        "vocab_size": len(vocab),
    }
    assert max_len <= cfg["max_position_embeddings"]
    model = BertForMaskedLM(cfg)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {n_params} parameters", flush=True)

    fact_items = [token_positions(w, f, tok) for w, f in held_facts]
    free_items = [token_positions(w, c, tok) for w, c in held_free]

    # Training
    rng = random.Random(args.seed + 6)
    mask_rng = torch.Generator().manual_seed(args.seed + 7)
    no_decay = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
    decay = [p for n, p in model.named_parameters() if not (n.endswith("bias") or "LayerNorm" in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.98), eps=1e-6)
    order = []
    t_train, cpu_train = time.time(), time.process_time()
    loss_ema = None
    model.train()
    for step in range(args.steps):
        lr = args.lr * min(1.0, (step + 1) / args.warmup) * (
            0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * step / args.steps)))
        for g in opt.param_groups:
            g["lr"] = lr
        if len(order) < args.batch:
            idx = list(range(len(train)))
            rng.shuffle(idx)
            order.extend(idx)
        chunk = [train[i] for i in order[:args.batch]]
        del order[:args.batch]
        ids = pad_batch(chunk, vocab[PAD])
        inputs, labels = mask_batch(ids, vocab, mask_rng, first_word)
        chosen = labels != -100
        logits, _ = model(inputs, ids == vocab[PAD], dropout=args.dropout, rows=chosen)
        loss = F.cross_entropy(logits, labels[chosen])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        loss_ema = float(loss) if loss_ema is None else 0.98 * loss_ema + 0.02 * float(loss)
        if step % 200 == 0 or step == args.steps - 1:
            print(f"step {step:5d}  loss {float(loss):.4f}  ema {loss_ema:.4f}  lr {lr:.2e}  "
                  f"{time.time() - t_train:.0f}s", flush=True)
        if step % args.eval_every == args.eval_every - 1:
            model.eval()
            t1, t5, n, _ = fill_accuracy(model, fact_items[:200], vocab)
            model.train()
            print(f"    held-out facts (200 sentences): top-1 {t1 / n:.3f}, top-5 {t5 / n:.3f}",
                  flush=True)
    train_seconds = time.time() - t_train
    train_cpu = time.process_time() - cpu_train
    model.eval()

    # Write the model
    state = {n: p for n, p in model.state_dict().items()}
    st_path = os.path.join(args.out, "model.safetensors")
    safetensors_file.write_safetensors(st_path, state, "F32", {"format": "pt"})
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    reloaded = BertForMaskedLM(cfg)
    raw = open(st_path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    loaded = {k: torch.from_numpy(np.frombuffer(raw[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]],
                                                dtype="<f4").reshape(v["shape"]).copy())
              for k, v in header.items() if k != "__metadata__"}
    reloaded.load_state_dict(loaded, strict=True)
    reloaded.eval()

    # Measurements
    t1, t5, count, wrong = fill_accuracy(reloaded, fact_items, vocab)
    f1, f5, fcount, _ = fill_accuracy(reloaded, free_items, vocab)
    acc = {"fact_top1": t1 / count, "fact_top5": t5 / count, "fact_count": count,
           "free_top1": f1 / fcount, "free_top5": f5 / fcount, "free_count": fcount}
    print(f"held-out facts: top-1 {acc['fact_top1']:.3f}, top-5 {acc['fact_top5']:.3f} "
          f"({count} masked words of {len(fact_items)} sentences)", flush=True)
    print(f"held-out grammar sentences (free choices): top-1 {acc['free_top1']:.3f}, top-5 "
          f"{acc['free_top5']:.3f} ({fcount} masked content words)", flush=True)
    inv = tok.pieces
    wrong_rows = []
    for ids, pos, best in wrong[:8]:
        shown = [inv[i] for i in ids[1:-1]]
        shown[pos - 1] = "[MASK]"
        wrong_rows.append((" ".join(shown), inv[ids[pos]], [inv[i] for i in best]))
        print("   wrong:", wrong_rows[-1], flush=True)

    # Classroom probes
    probes = ["the [MASK] sat on the mat.", "the [MASK] sat on the mat", "the cat sat on the [MASK].",
              "the dog [MASK] because it was hungry.", "the cow ate the [MASK].",
              "the [MASK] baked the bread in the bakery.", "the grass was [MASK].",
              "the cat drank the milk and then it slept on the [MASK].",
              "the baker went to the [MASK] and the pilot flew the [MASK]."]
    probe_rows = []
    with torch.no_grad():
        for text in probes:
            ids = tok.encode(text)
            logits, _ = reloaded(torch.tensor([ids]))
            probs = torch.softmax(logits[0], -1)
            fills = []
            for pos, i in enumerate(ids):
                if i == vocab[MASK]:
                    top = probs[pos].topk(3)
                    fills.append(", ".join(f"{inv[int(j)]} {float(p):.2f}"
                                           for p, j in zip(top.values, top.indices)))
            probe_rows.append((text, fills))
            print(f"   {text} -> {fills}", flush=True)

    # reference.npz: held-out fact sentences with one or two words masked, all filled right,
    # and the classroom sentence
    cases = []
    case_rng = random.Random(args.seed + 8)
    first = tok.encode("the [MASK] sat on the mat.")
    with torch.no_grad():
        if int(reloaded(torch.tensor([first]))[0][0, 2].argmax()) == vocab["cat"]:
            cases.append(("the [MASK] sat on the mat.", first, [2], [vocab["cat"]]))
        else:
            print("note: 'the [MASK] sat on the mat.' is not filled with cat", flush=True)
    for words, facts in held_facts:
        if len(cases) >= 4:
            break
        if len(words) > 14 or len(facts) < 2:
            continue
        chosen = sorted(case_rng.sample(facts, 2 if len(cases) % 2 else 1))
        masked = [MASK if i in chosen else w for i, w in enumerate(words)]
        text = text_of(masked)
        ids = tok.encode(text)
        full = tok.encode(text_of(words))
        positions = [1 + i for i in chosen]
        with torch.no_grad():
            logits, _ = reloaded(torch.tensor([ids]))
        if all(int(logits[0, p].argmax()) == full[p] for p in positions):
            cases.append((text, ids, positions, [full[p] for p in positions]))
    ref = {"texts": np.array([c[0] for c in cases])}
    with torch.no_grad():
        for n, (text, ids, positions, fillers) in enumerate(cases):
            logits, attns = reloaded(torch.tensor([ids]))
            assert [int(logits[0, p].argmax()) for p in positions] == fillers, text
            ref.update({
                f"case{n}_ids": np.array(ids, dtype=np.int64),
                f"case{n}_attentions": torch.stack([a[0] for a in attns]).numpy().astype(np.float32),
                f"case{n}_logits": logits[0].numpy().astype(np.float32),
                f"case{n}_masked_positions": np.array(positions, dtype=np.int64),
                f"case{n}_filler_ids": np.array(fillers, dtype=np.int64),
            })
    np.savez_compressed(os.path.join(args.out, "reference.npz"), **ref)

    total_seconds = time.time() - t_start
    files = {n: os.path.getsize(os.path.join(args.out, n)) for n in sorted(os.listdir(args.out))
             if n != "README.md"}
    print(f"done in {total_seconds:.0f}s (training {train_seconds:.0f}s); files: {files}",
          flush=True)
    write_readme(args, ap, cfg, n_params, files, (train_seconds, train_cpu), total_seconds,
                 loss_ema, acc, wrong_rows, probe_rows, cases, tok, blas, len(train), n_distinct)


def write_readme(args, ap, cfg, n_params, files, train_time, total_s, loss_ema, acc, wrong_rows,
                 probe_rows, cases, tok, blas, n_train, n_distinct):
    cmd = "/usr/bin/python3 scripts/train_fill_mask_model.py"
    if OPENBLAS_DIR in os.environ.get("LD_LIBRARY_PATH", ""):
        cmd = f"LD_LIBRARY_PATH={OPENBLAS_DIR} " + cmd
    for k, v in vars(args).items():
        if k != "out" and v != ap.get_default(k):
            cmd += f" --{k.replace('_', '-')} {v}"
    train_s, train_cpu = train_time
    load = os.getloadavg()[0]
    size = sum(files.values())
    file_rows = "\n".join(f"| `{n}` | {b:,} |" for n, b in files.items())
    probe_md = "\n".join(f"| `{t}` | {' / '.join(f)} |" for t, f in probe_rows)
    wrong_md = "\n".join(f"- `{s}` → expected {e}, got {', '.join(b[:3])}" for s, e, b in wrong_rows[:4])
    inv = tok.pieces
    case_md = "\n".join(f"| `{t}` | {', '.join(inv[i] for i in f)} |" for t, _, _, f in cases)
    md = f"""# {MODEL_NAME}

A tiny English BERT masked-language model (`BertForMaskedLM`, the architecture of
bert-base-uncased), bundled with AttnLab so that a classroom with no internet can type
"the [MASK] sat on the mat." and see real fill-mask predictions and BERT's **two-way
attention** (every token attends to the tokens before and after it).

- Architecture: {cfg['num_hidden_layers']} layers, {cfg['num_attention_heads']} heads of {cfg['hidden_size'] // cfg['num_attention_heads']}, hidden {cfg['hidden_size']}, intermediate {cfg['intermediate_size']} (exact erf GELU),
  post-LayerNorm (eps {cfg['layer_norm_eps']:g}), learned positions (max {cfg['max_position_embeddings']}), token types (2; only 0
  used), MLM head: dense → GELU → LayerNorm → the word embeddings (tied) + `cls.predictions.bias`.
- Vocabulary: {cfg['vocab_size']} WordPiece tokens in `tokenizer.json` (bert-base-uncased's tokenizer
  layout: BertNormalizer lowercasing, BertPreTokenizer, WordPiece with `##`, `[CLS] $A [SEP]`):
  `[PAD]` 0, `[UNK]` 1, `[CLS]` 2, `[SEP]` 3, `[MASK]` 4, ASCII punctuation, digits and letters,
  every word of the sentences below whole, then `##` + each digit and letter, so a word
  outside the grammar is spelt in letters rather than `[UNK]` (the model has never seen such
  words; expect nonsense there).
- Parameters: {n_params:,}; all files {size:,} bytes:

| file | bytes |
|---|---|
{file_rows}

## How it was trained

All data comes from `scripts/train_fill_mask_model.py` and its seed; nothing is downloaded
and transformers is not used (Debian's python3-torch {torch.__version__}).

- Sentences ({n_train:,}, {n_distinct:,} distinct): {1 - args.fact_share:.0%} from the English grammar of the bundled
  models (`scripts/train_translation_model.py`, whose English is `scripts/train_demo_model.py`'s
  grammar), {args.fact_share:.0%} from a small **world of facts** written in the same style
  ("the cat meowed", "the cow ate the grass and then it rested in the field", "the baker
  baked the bread in the bakery", "the sky was blue", "when the owl hooted, the dog barked in
  the yard"): each animal has its sound, home and food, each person their work, its object and
  its place, some things a colour. In the grammar every noun, verb and adjective is drawn
  independently, so a masked word of its sentences cannot be told from the rest; the facts
  are what makes the model's guesses right, and what its attention has to find.
- Masked-language-model training as BERT's: in each sentence 15% of the tokens (at least one)
  chosen afresh each time it is seen; of those 80% → `[MASK]`, 10% → a random word, 10%
  unchanged; cross-entropy on the chosen tokens.
- {args.steps} steps of AdamW (lr {args.lr:g}, {args.warmup} warm-up steps then cosine to 2%, betas 0.9/0.98,
  weight decay 0.01 but not on biases and LayerNorms, gradient clip 1.0), batch {args.batch}, dropout
  {args.dropout:g} (hidden and attention), {args.threads} CPU thread(s), BLAS {blas}: {train_s / 60:.1f} minutes of
  training ({train_cpu / 60:.1f} minutes of CPU time; {total_s / 60:.1f} minutes in all) on a shared 2-core
  machine that was also compiling AttnLab (load average {load:.1f} at the end; alone it is faster).
  Final training loss (moving average) {loss_ema:.3f}.

Reproduce (writes every file in this folder):

    {cmd}

(`apt-get install python3-torch python3-numpy python3-sentencepiece libopenblas0-serial`.)
Every random choice is seeded, so the same torch and BLAS give the same weights; another BLAS,
CPU or torch version may differ in the last bits and so, after training, in the numbers below.

## Measured on held-out sentences

Computed by the script's own float32 forward from the files in this folder, on sentences not
seen in training (no training sentence is equal to one of them, ignoring case). One word is
masked at a time.

- **Facts** ({args.test} sentences, {acc['fact_count']:,} masked words: every word the world fixes given the
  rest of its sentence — the animal, its sound, home and food, the person, their verb, object
  and place, the thing and its colour): **top-1 {acc['fact_top1']:.1%}, top-5 {acc['fact_top5']:.1%}**.
  Some are ambiguous by design (a cow and a sheep both eat grass, an animal with no other fact
  in its sentence but "... ate the grass").
{wrong_md}
- **The grammar's own sentences** ({args.test} sentences, {acc['free_count']:,} masked content words: nouns, names,
  verbs, adjectives, each drawn at random): top-1 {acc['free_top1']:.1%}, top-5 {acc['free_top5']:.1%}. The grammar draws
  these words independently of the rest of the sentence, so no model can do much better
  there; these sentences teach it the syntax the facts are written in.

Classroom sentences (top 3 with probabilities):

| text | fills |
|---|---|
{probe_md}

## Files for tests

`reference.npz` holds `texts` (the cases' texts, with `[MASK]`) and for each case
`caseN_ids` (`[CLS] … [SEP]`, as tokenizer.json encodes the text), the script's float32
`caseN_attentions` [L,H,S,S] and `caseN_logits` [S,V], `caseN_masked_positions` and
`caseN_filler_ids` (the grammar's word at each, which is also the script's top-1). Case 0 is
the classroom sentence; the others are held-out fact sentences whose masked words the model
fills right (chosen for that: the accuracy above is over all of them).
tests/model/fill_mask_model_test.cpp checks AttnLab against them.

| text | fillers |
|---|---|
{case_md}

## License

Same as AttnLab (the project's license). The weights, tokenizer and training data are produced
entirely by the script above.
"""
    with open(os.path.join(args.out, "README.md"), "w", encoding="utf-8") as f:
        f.write(md)


if __name__ == "__main__":
    sys.exit(main())
