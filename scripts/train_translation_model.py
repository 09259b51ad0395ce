#!/usr/bin/env python3
"""Train AttnLab's bundled translation model: a tiny Marian encoder-decoder, English -> Chinese.

Everything comes from this file and a seed: a bilingual grammar (the English sentences of the
bundled decoder model's grammar, scripts/train_demo_model.py, each with its Chinese translation
and the known word alignment), two SentencePiece models trained on it, the model and its
training. No downloads and no transformers: Debian's python3-torch, python3-numpy and
python3-sentencepiece only (/usr/bin/python3: a python3 of its own, e.g. pyenv's, lacks them).

    apt-get install python3-torch python3-numpy python3-sentencepiece libopenblas0-serial
    LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-serial \
        /usr/bin/python3 scripts/train_translation_model.py   # writes resources/models/tiny-marian-en-zh/

Debian's torch calls the system BLAS (libblas.so.3); the reference BLAS it falls back to makes
training about six times slower, hence OpenBLAS (LD_LIBRARY_PATH picks it for this command
alone; installing libopenblas0-serial also makes it the system's choice unless an admin set
the alternative by hand). About 8 minutes on 2 shared cores.

Outputs (resources/models/tiny-marian-en-zh/)
  config.json           MarianConfig with the keys transformers 5 writes (MarianMTModel)
  model.safetensors     F32 tensors named as in transformers' MarianMTModel (model.shared.weight
                        tied to the output projection, final_logits_bias; positions are
                        sinusoidal and not stored)
  source.spm, target.spm   SentencePiece models (English BPE; Chinese BPE, one piece a word)
  vocab.json            the shared vocabulary (piece -> id) MarianTokenizer reads: </s> 0,
                        <unk> 1, the source then the target pieces, <pad> last
  tokenizer_config.json MarianTokenizer's settings
  reference.npz         held-out pairs: ids, the script's attentions and logits, alignments
  README.md             what it is, how it was trained, measured alignment and accuracy

The forward follows transformers' MarianMTModel (eager attention) step by step:
  x = shared[ids] * sqrt(d_model) (scale_embedding) + sinusoid[p]
      sinusoid[p, i] = sin(p / 10000^(2i/D)) for i < D/2, cos(p / 10000^(2(i-D/2)/D)) after
  encoder layer: x = LN(x + out(softmax(q k^T) v)),  q = (x Wq^T + bq) * head_dim^-0.5
                 x = LN(x + fc2(act(fc1(x))))
  decoder layer: causal self-attention, then cross-attention (q from the decoder, k and v from
                 the encoder's output), then the MLP, each followed by the residual sum and its
                 LayerNorm (post-LN: self_attn_layer_norm, encoder_attn_layer_norm,
                 final_layer_norm)
  logits = x @ shared^T + final_logits_bias
The decoder's input starts with decoder_start_token_id, which is the pad id (whose embedding
row is zero, as nn.Embedding's padding_idx keeps it).
"""

import argparse
import io
import json
import math
import os
import random
import sys
import time

import numpy as np
import sentencepiece as spm
import torch
import torch.nn.functional as F

import safetensors_file

MODEL_NAME = "tiny-marian-en-zh"
OPENBLAS_DIR = "/usr/lib/x86_64-linux-gnu/openblas-serial"
EOS, UNK, PAD = "</s>", "<unk>", "<pad>"

# ----------------------------------------------------------------------------------------------
# 1. The bilingual lexicon: the English words of scripts/train_demo_model.py's grammar with
#    their Chinese (and, for nouns, the measure word a number or "a" needs)
# ----------------------------------------------------------------------------------------------

ANIMALS = {
    "cat": ("猫", "只"), "dog": ("狗", "只"), "bird": ("鸟", "只"), "fox": ("狐狸", "只"),
    "mouse": ("老鼠", "只"), "horse": ("马", "匹"), "cow": ("牛", "头"), "sheep": ("羊", "只"),
    "duck": ("鸭子", "只"), "fish": ("鱼", "条"), "rabbit": ("兔子", "只"),
    "frog": ("青蛙", "只"), "bear": ("熊", "只"), "lion": ("狮子", "只"),
    "tiger": ("老虎", "只"), "wolf": ("狼", "只"), "owl": ("猫头鹰", "只"),
    "goat": ("山羊", "只"), "pig": ("猪", "头"), "hen": ("母鸡", "只"), "bee": ("蜜蜂", "只"),
    "ant": ("蚂蚁", "只"), "snake": ("蛇", "条"), "monkey": ("猴子", "只"),
}
PEOPLE = {
    "man": ("男人", "个"), "woman": ("女人", "个"), "boy": ("男孩", "个"),
    "girl": ("女孩", "个"), "child": ("孩子", "个"), "teacher": ("老师", "位"),
    "student": ("学生", "个"), "farmer": ("农民", "个"), "doctor": ("医生", "位"),
    "baker": ("面包师", "个"), "king": ("国王", "个"), "queen": ("王后", "个"),
    "friend": ("朋友", "个"), "mother": ("妈妈", "个"), "father": ("爸爸", "个"),
    "sister": ("姐姐", "个"), "brother": ("哥哥", "个"), "driver": ("司机", "个"),
    "cook": ("厨师", "个"), "nurse": ("护士", "个"), "pilot": ("飞行员", "个"),
}
THINGS = {
    "mat": ("垫子", "张"), "chair": ("椅子", "把"), "table": ("桌子", "张"), "bed": ("床", "张"),
    "box": ("盒子", "个"), "ball": ("球", "个"), "hat": ("帽子", "顶"), "book": ("书", "本"),
    "cup": ("杯子", "个"), "door": ("门", "扇"), "window": ("窗户", "扇"), "tree": ("树", "棵"),
    "rock": ("岩石", "块"), "house": ("房子", "座"), "car": ("汽车", "辆"), "boat": ("船", "条"),
    "train": ("火车", "列"), "road": ("路", "条"), "river": ("河", "条"), "hill": ("小山", "座"),
    "garden": ("花园", "个"), "park": ("公园", "个"), "field": ("田野", "片"),
    "floor": ("地板", "块"), "wall": ("墙", "面"), "roof": ("屋顶", "个"), "bag": ("包", "个"),
    "bottle": ("瓶子", "个"), "lamp": ("灯", "盏"), "apple": ("苹果", "个"),
    "bone": ("骨头", "根"), "cake": ("蛋糕", "块"), "bread": ("面包", "块"),
    "letter": ("信", "封"), "key": ("钥匙", "把"), "clock": ("钟", "个"), "shoe": ("鞋", "只"),
    "coat": ("外套", "件"), "stone": ("石头", "块"), "flower": ("花", "朵"),
    "bridge": ("桥", "座"),
}
PLACES = {
    "park": ("公园", "个"), "garden": ("花园", "个"), "kitchen": ("厨房", "个"),
    "school": ("学校", "所"), "forest": ("森林", "片"), "city": ("城市", "座"),
    "village": ("村子", "个"), "market": ("市场", "个"), "farm": ("农场", "个"),
    "beach": ("海滩", "片"), "library": ("图书馆", "个"), "room": ("房间", "个"),
    "station": ("车站", "个"), "field": ("田野", "片"), "house": ("房子", "座"),
    "yard": ("院子", "个"),
}
NOUNS = {**ANIMALS, **PEOPLE, **THINGS, **PLACES}
NAMES = {
    "Alice": "爱丽丝", "Bob": "鲍勃", "Mary": "玛丽", "John": "约翰", "Anna": "安娜",
    "Tom": "汤姆", "Emma": "艾玛", "Sam": "山姆", "Lucy": "露西", "Max": "马克斯",
    "Sara": "萨拉", "Paul": "保罗", "Nina": "妮娜", "Leo": "利奥", "Kate": "凯特", "Ben": "本",
}
# Adjectives: before a noun (a one-character one directly, "大猫"; a longer one with 的,
# "快乐的猫"; "old" is 老 for the living and 旧 for things), and after "was" (很 + the
# predicate form; a colour: 是 ... 的).
ADJECTIVES = {
    "big": ("大", "很大"), "small": ("小", "很小"), "little": ("小", "很小"),
    "old": (("老", "旧"), "很老"), "young": ("年轻的", "很年轻"), "red": ("红", "是红色的"),
    "blue": ("蓝", "是蓝色的"), "green": ("绿", "是绿色的"), "brown": ("棕色的", "是棕色的"),
    "black": ("黑", "是黑色的"), "white": ("白", "是白色的"), "happy": ("快乐的", "很高兴"),
    "sad": ("伤心的", "很伤心"), "tired": ("疲倦的", "很累"), "hungry": ("饥饿的", "很饿"),
    "quick": ("敏捷的", "很快"), "lazy": ("懒惰的", "很懒"), "quiet": ("安静的", "很安静"),
    "loud": ("吵闹的", "很吵"), "warm": ("温暖的", "很暖和"), "cold": ("冰冷的", "很冷"),
    "soft": ("柔软的", "很软"), "hard": ("坚硬的", "很硬"), "kind": ("善良的", "很善良"),
    "clever": ("聪明的", "很聪明"), "funny": ("有趣的", "很有趣"),
    "brave": ("勇敢的", "很勇敢"), "busy": ("忙碌的", "很忙"), "new": ("新", "很新"),
    "long": ("长长的", "很长"), "short": ("短短的", "很短"), "dark": ("黑暗的", "很暗"),
    "bright": ("明亮的", "很亮"), "wet": ("湿的", "很湿"), "dry": ("干的", "很干"),
    "heavy": ("沉重的", "很重"),
}
COLOURS = {"red": "红", "blue": "蓝", "green": "绿", "yellow": "黄", "black": "黑",
           "white": "白", "brown": "棕色的", "pink": "粉红色的"}
# Intransitive verbs: the verb before which a place phrase stands ("在公园里跑"), and for
# verbs of posture the form that takes the place phrase after it ("坐在垫子上").
VERBS_INTRANS = {
    "sat": ("坐", "坐"), "slept": ("睡觉", "睡"), "ran": ("跑", None), "jumped": ("跳", None),
    "walked": ("散步", None), "played": ("玩", None), "waited": ("等", None),
    "stood": ("站", "站"), "danced": ("跳舞", None), "sang": ("唱歌", None),
    "laughed": ("笑", None), "cried": ("哭", None), "smiled": ("微笑", None),
    "rested": ("休息", None), "swam": ("游泳", None), "hid": ("躲", "躲"),
    "stayed": ("待", "待"),
}
# Transitive verbs: the Chinese verb and whether the past takes 了 ("看见了狗").
VERBS_TRANS = {
    "saw": ("看见", True), "liked": ("喜欢", False), "found": ("找到", True),
    "ate": ("吃", True), "took": ("拿走", True), "held": ("拿着", False),
    "pushed": ("推", True), "pulled": ("拉", True), "watched": ("看着", False),
    "chased": ("追", True), "carried": ("带着", False), "opened": ("打开", True),
    "closed": ("关上", True), "painted": ("画", True), "cleaned": ("打扫", True),
    "built": ("建造", True), "dropped": ("扔下", True), "wanted": ("想要", False),
    "loved": ("爱", False), "visited": ("拜访", True), "followed": ("跟着", False),
}
# Verbs of motion "to the PLACE": the verb and whether "to" becomes 到 ("跑到了公园"; "went
# to" is just 去了).
VERBS_MOTION = {
    "went": ("去", False), "ran": ("跑", True), "walked": ("走", True), "came": ("来", True),
    "drove": ("开车", True), "flew": ("飞", True), "moved": ("搬", True),
    "hurried": ("赶", True),
}
# "PREP the NOUN" -> 在 NOUN + the word after it that says where.
PREPS_PLACE = {"on": "上", "in": "里", "under": "下", "near": "附近", "behind": "后面",
               "beside": "旁边", "above": "上方", "below": "下方", "by": "边", "inside": "里面"}
# Adverbs: the Chinese, and whether it is a time word (after the subject) or stands just
# before the verb.
ADVERBS = {
    "quickly": ("很快地", False), "slowly": ("慢慢地", False), "quietly": ("静静地", False),
    "happily": ("开心地", False), "sadly": ("伤心地", False), "again": ("又", False),
    "soon": ("很快就", False), "today": ("今天", True), "yesterday": ("昨天", True),
    "often": ("经常", False),
}
# Time phrases (they move from the end of the English clause to just after the Chinese
# subject): each Chinese part with the indices of the English words it translates.
TIME_PHRASES = {
    "in the morning": [("早上", (0, 2))], "at night": [("晚上", (0, 1))],
    "after lunch": [("午饭", (1,)), ("后", (0,))], "before dinner": [("晚饭", (1,)), ("前", (0,))],
    "every day": [("每", (0,)), ("天", (1,))], "on monday": [("星期一", (0, 1))],
    "last week": [("上个", (0,)), ("星期", (1,))], "all day": [("整", (0,)), ("天", (1,))],
    "in the evening": [("傍晚", (0, 2))], "at noon": [("中午", (0, 1))],
}
NUMBER_WORDS = {"two": "两", "three": "三", "four": "四", "five": "五", "six": "六",
                "seven": "七", "eight": "八", "nine": "九", "ten": "十"}
# Reasons after "because": each Chinese part with the English words it translates.
REASONS = {
    "it was tired": [("它", (0,)), ("很", (1,)), ("累", (2,))],
    "it was hungry": [("它", (0,)), ("很", (1,)), ("饿", (2,))],
    "it was cold": [("天", (0,)), ("很", (1,)), ("冷", (2,))],
    "it was late": [("天", (0,)), ("很", (1,)), ("晚", (2,)), ("了", (1,))],
    "the sun was warm": [("阳光", (1,)), ("很", (2,)), ("温暖", (3,))],
    "the door was open": [("门", (1,)), ("开着", (3,))],
    "the road was long": [("路", (1,)), ("很", (2,)), ("长", (3,))],
    "it was raining": [("天", (0,)), ("在", (1,)), ("下雨", (2,))],
    "they were happy": [("他们", (0,)), ("很", (1,)), ("高兴", (2,))],
    "she was busy": [("她", (0,)), ("很", (1,)), ("忙", (2,))],
    "he was late": [("他", (0,)), ("迟到了", (2,))],
    "the food was good": [("饭菜", (1,)), ("很", (2,)), ("好吃", (3,))],
}
# Determiners: "the" is not translated; a number-like one needs the noun's measure word.
DETERMINERS = {"the": ("", False), "a": ("一", True), "an": ("一", True), "one": ("一", True),
               "this": ("这", True), "that": ("那", True), "my": ("我的", False),
               "your": ("你的", False), "his": ("他的", False), "her": ("她的", False),
               "our": ("我们的", False), "their": ("他们的", False)}
PRONOUNS = {"it": "它", "he": "他", "she": "她"}
END_MARKS = {".": "。", "!": "！", "?": "？"}


def plural(noun):
    irregular = {"fish": "fish", "sheep": "sheep", "mouse": "mice", "wolf": "wolves"}
    if noun in irregular:
        return irregular[noun]
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


# ----------------------------------------------------------------------------------------------
# 2. The bilingual grammar: sentence pairs with their word alignment
# ----------------------------------------------------------------------------------------------

class Pair:
    """An English sentence as words (punctuation is a word of its own, written without the
    space before it) and its Chinese as parts, each part the words it translates (indices
    into the English words; empty for a part that translates no word)."""

    def __init__(self):
        self.words = []
        self.parts = []

    def en(self, *words):
        """Appends English words; returns the index of the first."""
        first = len(self.words)
        self.words.extend(words)
        return first

    def english(self):
        out = ""
        for i, w in enumerate(self.words):
            out += w if (i == 0 or w in ",.!?") else " " + w
        return out

    def word_spans(self):
        """[start, end) character offsets of each word in english()."""
        spans, at = [], 0
        for i, w in enumerate(self.words):
            if i and w not in ",.!?":
                at += 1
            spans.append((at, at + len(w)))
            at += len(w)
        return spans

    def chinese(self):
        return "".join(text for text, _ in self.parts)

    def char_alignment(self):
        """For each Chinese character, the sorted English word indices it translates."""
        out = []
        for text, words in self.parts:
            out.extend([sorted(set(words))] * len(text))
        return out


def zh(text, *words):
    return [(text, tuple(words))] if text else []


class Grammar:
    """The English sentences of scripts/train_demo_model.py's grammar (most of its shapes and
    its words), each generated together with its Chinese translation."""

    def __init__(self, rng):
        self.rng = rng

    def pick(self, xs):
        return self.rng.choice(sorted(xs) if isinstance(xs, (dict, set)) else xs)

    def noun_phrase(self, p, pool=None, adj_p=0.35, names=True):
        """Appends an English noun phrase; returns its Chinese parts."""
        if pool is None:
            if names and self.rng.random() < 0.12:
                name = self.pick(NAMES)
                return zh(NAMES[name], p.en(name))
            pool = self.pick((ANIMALS, ANIMALS, PEOPLE, THINGS))
        noun = self.pick(pool)
        det = self.pick(("the", "the", "the", "a", "a", "my", "your", "his", "her", "this",
                         "that", "our", "their", "one"))
        adj = self.pick(ADJECTIVES) if self.rng.random() < adj_p else None
        if det == "a" and (adj or noun)[0] in "aeiou":
            det = "an"
        i_det = p.en(det)
        i_adj = p.en(adj) if adj else None
        i_noun = p.en(noun)
        word, measure = NOUNS[noun]
        det_zh, counted = DETERMINERS[det]
        parts = zh(det_zh, i_det)
        if counted:
            parts += zh(measure, i_det, i_noun)
        if adj:
            attr = ADJECTIVES[adj][0]
            if isinstance(attr, tuple):
                attr = attr[1] if noun in THINGS or noun in PLACES else attr[0]
            parts += zh(attr, i_adj)
        return parts + zh(word, i_noun)

    def place(self, p, bare=False):
        """Appends "PREP NP"; returns 在 NP + where (bare: without 在)."""
        prep = self.pick(PREPS_PLACE)
        i_prep = p.en(prep)
        np_ = self.noun_phrase(p, pool=self.pick((THINGS, PLACES)), names=False)
        return ([] if bare else zh("在", i_prep)) + np_ + zh(PREPS_PLACE[prep], i_prep)

    def modifiers(self, p, adverb_p=0.15, time_p=0.12, adverbs=None):
        """Appends an optional adverb and time phrase at the end of an English clause; returns
        (time parts after the subject, adverb parts before the verb)."""
        times, before_verb = [], []
        if self.rng.random() < adverb_p:
            adv = self.pick(adverbs if adverbs is not None else ADVERBS)
            text, is_time = ADVERBS[adv]
            (times if is_time else before_verb).extend(zh(text, p.en(adv)))
        if self.rng.random() < time_p:
            phrase = self.pick(TIME_PHRASES)
            first = p.en(*phrase.split())
            for text, idx in TIME_PHRASES[phrase]:
                times.extend(zh(text, *(first + i for i in idx)))
        return times, before_verb

    def subject(self, p):
        if self.rng.random() < 0.15:  # "Alice saw a big dog in the park."
            name = self.pick(NAMES)
            return zh(NAMES[name], p.en(name))
        return self.noun_phrase(p, pool=self.pick((ANIMALS, PEOPLE)), names=False)

    def clause(self, p):
        """Appends an English clause; returns its Chinese parts."""
        r = self.rng.random()
        if not 0.75 <= r < 0.82:  # all but "there were ..." start with a subject
            subj = self.subject(p)
        if r < 0.30:
            verb = self.pick(VERBS_INTRANS)
            i_verb = p.en(verb)
            before, after = VERBS_INTRANS[verb]
            where = self.place(p)
            times, adv = self.modifiers(p)
            if after:
                return subj + times + adv + zh(after, i_verb) + where
            return subj + times + where + adv + zh(before, i_verb)
        if r < 0.55 or 0.82 <= r < 0.90:
            verb = self.pick(VERBS_TRANS)
            i_verb = p.en(verb)
            obj = self.noun_phrase(p)
            where = self.place(p) if r >= 0.82 else []
            times, adv = self.modifiers(p)
            text, le = VERBS_TRANS[verb]
            return (subj + times + where + adv + zh(text, i_verb) + zh("了" if le else "", i_verb)
                    + obj)
        if r < 0.65:
            verb = self.pick(VERBS_MOTION)
            i_verb = p.en(verb)
            i_to = p.en("to")
            p.en("the")  # "the" is not translated
            place = self.pick(PLACES)
            i_place = p.en(place)
            times, adv = self.modifiers(p)
            text, dao = VERBS_MOTION[verb]
            return (subj + times + adv + zh(text, i_verb) + zh("到" if dao else "", i_to)
                    + zh("了", i_verb) + zh(PLACES[place][0], i_place))
        if r < 0.75:
            i_was = p.en("was")
            adj = self.pick(ADJECTIVES)
            i_adj = p.en(adj)
            times, _ = self.modifiers(p, adverbs=("today", "yesterday"))
            pred = ADJECTIVES[adj][1]
            if pred.startswith("是"):
                return subj + times + zh("是", i_was) + zh(pred[1:], i_adj)
            return subj + times + zh("很", i_was) + zh(pred[1:], i_adj)
        if r < 0.82:
            i_there = p.en("there", "were")
            n = self.rng.randint(2, 12)
            if self.rng.random() < 0.5:
                num = str(n)
                num_zh = num
            else:
                num = self.pick(NUMBER_WORDS)
                num_zh = NUMBER_WORDS[num]
            i_num = p.en(num)
            noun = self.pick({**ANIMALS, **THINGS})
            i_noun = p.en(plural(noun))
            where = self.place(p, bare=True)
            times, _ = self.modifiers(p, adverbs=("today", "yesterday"))
            word, measure = NOUNS[noun]
            return (times + where + zh("有", i_there, i_there + 1) + zh(num_zh, i_num)
                    + zh(measure, i_num, i_noun) + zh(word, i_noun))
        # "SUBJ had a COLOUR THING"
        i_had = p.en("had")
        i_a = p.en("a")
        colour = self.pick(COLOURS)
        i_colour = p.en(colour)
        thing = self.pick(THINGS)
        i_thing = p.en(thing)
        times, _ = self.modifiers(p, adverbs=("today", "yesterday"))
        word, measure = THINGS[thing]
        return (subj + times + zh("有", i_had) + zh("一", i_a) + zh(measure, i_a, i_thing)
                + zh(COLOURS[colour], i_colour) + zh(word, i_thing))

    def intransitive(self, p, subj):
        verb = self.pick(VERBS_INTRANS)
        i_verb = p.en(verb)
        before, after = VERBS_INTRANS[verb]
        where = self.place(p)
        if after:
            return subj + zh(after, i_verb) + where
        return subj + where + zh(before, i_verb)

    def transitive(self, p, subj):
        verb = self.pick(VERBS_TRANS)
        i_verb = p.en(verb)
        obj = self.noun_phrase(p)
        text, le = VERBS_TRANS[verb]
        return subj + zh(text, i_verb) + zh("了" if le else "", i_verb) + obj

    def sentence(self):
        """A Pair: one English sentence and its Chinese."""
        p = Pair()
        r = self.rng.random()
        if r < 0.45:
            parts = self.clause(p)
        elif r < 0.60:
            parts = self.clause(p)
            i_because = p.en("because")
            reason = self.pick(REASONS)
            first = p.en(*reason.split())
            parts = parts + zh("，") + zh("因为", i_because)
            for text, idx in REASONS[reason]:
                parts += zh(text, *(first + i for i in idx))
        elif r < 0.70:
            first = self.clause(p)
            i_and = p.en("and")
            parts = first + zh("，", i_and) + self.clause(p)
        elif r < 0.78:
            i_when = p.en("when")
            first = self.clause(p)
            i_comma = p.en(",")
            parts = (zh("当", i_when) + first + zh("的时候", i_when) + zh("，", i_comma)
                     + self.clause(p))
        elif r < 0.86:
            # a pronoun that refers back to the subject
            noun = self.pick({**ANIMALS, **PEOPLE})
            pron = "it" if noun in ANIMALS else self.pick(("he", "she"))
            p.en("the")  # "the" is not translated
            subj = zh(NOUNS[noun][0], p.en(noun))
            parts = self.transitive(p, subj)
            i_and = p.en("and", "then")
            parts += zh("，", i_and) + zh("然后", i_and, i_and + 1)
            parts += self.intransitive(p, zh(PRONOUNS[pron], p.en(pron)))
        elif r < 0.93:
            name = self.pick(NAMES)
            parts = self.transitive(p, zh(NAMES[name], p.en(name)))
            parts += zh("。", p.en("."))
            parts += self.intransitive(p, zh(NAMES[name], p.en(name)))
        else:
            p.en("the")  # "the" is not translated
            noun = self.pick(ANIMALS)
            parts = self.intransitive(p, zh(ANIMALS[noun][0], p.en(noun)))
        end = "." if self.rng.random() < 0.9 else self.pick(("!", "?"))
        parts += zh(END_MARKS[end], p.en(end))
        p.parts = parts
        if self.rng.random() < 0.5:
            p.words[0] = p.words[0][:1].upper() + p.words[0][1:]
        return p


def grammar_size():
    """What the grammar is made of, for the README."""
    words = set()
    for table in (ANIMALS, PEOPLE, THINGS, PLACES, NAMES, ADJECTIVES, COLOURS, VERBS_INTRANS,
                  VERBS_TRANS, VERBS_MOTION, PREPS_PLACE, ADVERBS, NUMBER_WORDS, DETERMINERS,
                  PRONOUNS):
        words.update(table)
    for table in (TIME_PHRASES, REASONS):
        for phrase in table:
            words.update(phrase.split())
    words.update(("to", "was", "there", "were", "had", "because", "and", "then", "when"))
    words.update(plural(n) for n in {**ANIMALS, **THINGS})
    return {"english_words": len(words), "nouns": len(NOUNS), "names": len(NAMES),
            "adjectives": len(ADJECTIVES), "verbs": len(VERBS_INTRANS) + len(VERBS_TRANS)
            + len(VERBS_MOTION), "clause_shapes": 7, "sentence_shapes": 7}


# ----------------------------------------------------------------------------------------------
# 3. Tokenizers: two SentencePiece models and MarianTokenizer's shared vocab.json
# ----------------------------------------------------------------------------------------------

def train_spm(lines, path, vocab_size, chinese, characters=False):
    """Trains a SentencePiece model on lines and writes it to path. The lines are given as an
    iterator, so no temporary file name is recorded in the model and the bytes are
    reproducible."""
    model = io.BytesIO()
    options = dict(sentence_iterator=iter(lines), model_writer=model, vocab_size=vocab_size,
                   character_coverage=1.0, hard_vocab_limit=False, num_threads=1,
                   input_sentence_size=0, shuffle_input_sentence=False, seed_sentencepiece_size=100000,
                   minloglevel=2)
    if chinese and characters:
        # One piece a character (--chinese-pieces characters).
        options.update(model_type="unigram", max_sentencepiece_length=1, add_dummy_prefix=False,
                       normalization_rule_name="identity")
    elif chinese:
        # BPE trained on the grammar's Chinese words (one a line), so that every word is one
        # piece (垫子, 快乐的, 因为) and pieces seldom cross words; any other character is a
        # piece of its own. No leading "▁" (Chinese has no spaces), full-width punctuation kept
        # (no NFKC).
        options.update(model_type="bpe", add_dummy_prefix=False,
                       normalization_rule_name="identity")
    else:
        # BPE: enough merges make every word of the grammar one piece but for plurals
        # ("▁bottle" "s"); a unigram model of this size splits frequent words ("▁be" "ca" "use").
        options.update(model_type="bpe", normalization_rule_name="nmt_nfkc")
    spm.SentencePieceTrainer.train(**options)
    with open(path, "wb") as f:
        f.write(model.getvalue())


class MarianTokenizer:
    """What transformers' MarianTokenizer does with these files: the source (or target) spm's
    pieces looked up in vocab.json (<unk> when absent), then </s>."""

    def __init__(self, source_model, target_model, vocab):
        self.source = spm.SentencePieceProcessor(model_file=source_model)
        self.target = spm.SentencePieceProcessor(model_file=target_model)
        self.vocab = vocab
        self.pieces = {i: p for p, i in vocab.items()}
        self.eos, self.unk, self.pad = vocab[EOS], vocab[UNK], vocab[PAD]

    def encode(self, text, target=False):
        pieces = (self.target if target else self.source).encode(text, out_type=str)
        return [self.vocab.get(p, self.unk) for p in pieces] + [self.eos], pieces

    def decode(self, ids):
        return "".join(self.pieces[i] for i in ids if i not in (self.eos, self.pad)).replace(
            "\u2581", " ").strip()


def build_vocab(source_model, target_model):
    vocab = {EOS: 0, UNK: 1}
    for model in (source_model, target_model):
        sp = spm.SentencePieceProcessor(model_file=model)
        for i in range(sp.get_piece_size()):
            if sp.is_control(i) or sp.is_unknown(i):
                continue
            vocab.setdefault(sp.id_to_piece(i), len(vocab))
    vocab[PAD] = len(vocab)
    return vocab


def source_word_of_pieces(pair, pieces):
    """For each source piece, the index of the English word it is part of (None for </s>).
    Pieces are matched to the text by their characters; "▁" is the space before a word."""
    text = pair.english()
    spans = pair.word_spans()
    owner = [None] * len(text)
    for w, (a, b) in enumerate(spans):
        for c in range(a, b):
            owner[c] = w
    out, at = [], 0
    for piece in pieces:
        chars = piece.replace("\u2581", " ")
        if at == 0 and chars.startswith(" "):
            chars = chars[1:]  # the dummy prefix
        words = set()
        for ch in chars:
            if at < len(text) and text[at] == ch:
                if owner[at] is not None:
                    words.add(owner[at])
                at += 1
            elif ch == " ":
                continue
            else:
                raise ValueError(f"piece {piece!r} does not match {text!r} at {at}")
        if not words and not chars.strip() and at < len(text):
            words.add(owner[at])  # a lone "▁": the space before the next word
        if len(words) != 1:
            raise ValueError(f"piece {piece!r} of {text!r} spans words {sorted(words)}")
        out.append(words.pop())
    if at != len(text):
        raise ValueError(f"pieces {pieces} do not cover {text!r}")
    return out + [None]


class Example:
    """A pair in ids with its alignment: for target token j (a Chinese piece or </s>), the
    source positions of the words its characters translate (empty: none, or </s>)."""

    def __init__(self, pair, tok):
        self.pair = pair
        self.english, self.chinese = pair.english(), pair.chinese()
        self.source, src_pieces = tok.encode(self.english)
        self.target, tgt_pieces = tok.encode(self.chinese, target=True)
        if "".join(tgt_pieces) != self.chinese:
            raise ValueError(f"{self.chinese!r}: target pieces {tgt_pieces} do not spell it")
        self.target_pieces = tgt_pieces
        word_of = source_word_of_pieces(pair, src_pieces)
        positions = {}
        for s, w in enumerate(word_of):
            positions.setdefault(w, []).append(s)
        char_words = pair.char_alignment()
        self.alignment, at = [], 0
        for piece in tgt_pieces:
            words = {w for c in range(at, at + len(piece)) for w in char_words[c]}
            self.alignment.append(sorted(s for w in words for s in positions[w]))
            at += len(piece)
        self.alignment.append([])


# ----------------------------------------------------------------------------------------------
# 4. The model: transformers' MarianMTModel in plain torch
# ----------------------------------------------------------------------------------------------

def sinusoidal_positions(n_pos, dim):
    """MarianSinusoidalPositionalEmbedding's table, computed in float64 then stored as float32:
    the sines of the even-index angles in the first half, the cosines of the odd in the second."""
    enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)]
                    for pos in range(n_pos)])
    out = torch.zeros(n_pos, dim)
    sentinel = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    out[:, 0:sentinel] = torch.FloatTensor(np.sin(enc[:, 0::2]))
    out[:, sentinel:] = torch.FloatTensor(np.cos(enc[:, 1::2]))
    return out


class Attention(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        self.scaling = self.head_dim ** -0.5
        self.q_proj = torch.nn.Linear(d, d)
        self.k_proj = torch.nn.Linear(d, d)
        self.v_proj = torch.nn.Linear(d, d)
        self.out_proj = torch.nn.Linear(d, d)

    def forward(self, x, kv, mask):
        """x [B, Sq, D], kv [B, Sk, D], mask additive [B or 1, 1, Sq or 1, Sk] or None ->
        output [B, Sq, D], weights [B, H, Sq, Sk]."""
        B, Sq, D = x.shape
        Sk = kv.shape[1]
        q = (self.q_proj(x) * self.scaling).view(B, Sq, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(kv).view(B, Sk, self.heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(kv).view(B, Sk, self.heads, self.head_dim).transpose(1, 2)
        scores = q @ k.transpose(2, 3)
        if mask is not None:
            scores = scores + mask
        w = torch.softmax(scores, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(B, Sq, D)
        return self.out_proj(out), w


class Layer(torch.nn.Module):
    def __init__(self, d, heads, ffn, cross, activation, dropout):
        super().__init__()
        self.self_attn = Attention(d, heads)
        self.self_attn_layer_norm = torch.nn.LayerNorm(d)
        if cross:
            self.encoder_attn = Attention(d, heads)
            self.encoder_attn_layer_norm = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, ffn)
        self.fc2 = torch.nn.Linear(ffn, d)
        self.final_layer_norm = torch.nn.LayerNorm(d)
        self.act = {"swish": F.silu, "silu": F.silu, "gelu": F.gelu}[activation]
        self.dropout = dropout

    def forward(self, x, self_mask, memory=None, cross_mask=None):
        drop = lambda t: F.dropout(t, self.dropout, self.training)  # noqa: E731
        h, self_w = self.self_attn(x, x, self_mask)
        x = self.self_attn_layer_norm(x + drop(h))
        cross_w = None
        if memory is not None:
            h, cross_w = self.encoder_attn(x, memory, cross_mask)
            x = self.encoder_attn_layer_norm(x + drop(h))
        h = self.fc2(self.act(self.fc1(x)))
        x = self.final_layer_norm(x + drop(h))
        return x, self_w, cross_w


class Marian(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        D, V = cfg["d_model"], cfg["vocab_size"]
        self.cfg = cfg
        self.pad = cfg["pad_token_id"]
        self.shared = torch.nn.Parameter(torch.randn(V, D) * D ** -0.5)
        with torch.no_grad():
            self.shared[self.pad].zero_()  # nn.Embedding(padding_idx=pad) keeps this row zero
        self.shared.register_hook(self._no_pad_gradient)
        self.final_logits_bias = torch.nn.Parameter(torch.zeros(1, V))
        make = lambda cross: Layer(D, cfg["encoder_attention_heads"], cfg["encoder_ffn_dim"],  # noqa: E731
                                   cross, cfg["activation_function"], cfg["dropout"])
        self.encoder_layers = torch.nn.ModuleList(make(False) for _ in range(cfg["encoder_layers"]))
        self.decoder_layers = torch.nn.ModuleList(make(True) for _ in range(cfg["decoder_layers"]))
        self.register_buffer("positions", sinusoidal_positions(cfg["max_position_embeddings"], D),
                             persistent=False)
        self.embed_scale = math.sqrt(D) if cfg["scale_embedding"] else 1.0

    def _no_pad_gradient(self, grad):
        grad = grad.clone()
        grad[self.pad] = 0
        return grad

    def embed(self, ids):
        return self.shared[ids] * self.embed_scale + self.positions[: ids.shape[1]]

    def encode(self, src, src_mask=None):
        x = F.dropout(self.embed(src), self.cfg["dropout"], self.training)
        attns = []
        for layer in self.encoder_layers:
            x, w, _ = layer(x, src_mask)
            attns.append(w)
        return x, attns

    def decode(self, tgt, memory, src_mask=None):
        S = tgt.shape[1]
        causal = torch.full((S, S), float("-inf")).triu(1)[None, None]
        x = F.dropout(self.embed(tgt), self.cfg["dropout"], self.training)
        self_attns, cross_attns = [], []
        for layer in self.decoder_layers:
            x, w, c = layer(x, causal, memory, src_mask)
            self_attns.append(w)
            cross_attns.append(c)
        logits = x @ self.shared.T + self.final_logits_bias
        return logits, self_attns, cross_attns

    def forward(self, src, tgt, src_mask=None):
        memory, enc = self.encode(src, src_mask)
        logits, dec, cross = self.decode(tgt, memory, src_mask)
        return logits, enc, dec, cross

    def hf_state(self):
        """Tensors under transformers' MarianMTModel names ([out, in] for projections)."""
        out = {"model.shared.weight": self.shared, "final_logits_bias": self.final_logits_bias}
        for stack, layers in (("encoder", self.encoder_layers), ("decoder", self.decoder_layers)):
            for i, layer in enumerate(layers):
                for name, t in layer.named_parameters():
                    out[f"model.{stack}.layers.{i}.{name}"] = t
        return out


def key_mask(ids, pad):
    """Additive [B, 1, 1, S] mask: -inf on padding keys."""
    return torch.zeros(ids.shape, dtype=torch.float32).masked_fill(ids == pad, float("-inf"))[:, None, None]


# ----------------------------------------------------------------------------------------------
# 5. safetensors: written and read back through safetensors_file.py (main, below)
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------------
# 6. Batches, greedy decoding, alignment scores
# ----------------------------------------------------------------------------------------------

def pad_batch(seqs, pad):
    width = max(len(s) for s in seqs)
    return torch.tensor([s + [pad] * (width - len(s)) for s in seqs], dtype=torch.int64)


def make_batch(examples, pad, start):
    src = pad_batch([e.source for e in examples], pad)
    labels = pad_batch([e.target for e in examples], pad)
    dec_in = torch.cat([torch.full((len(examples), 1), start), labels[:, :-1]], dim=1)
    labels = labels.masked_fill(labels == pad, -100)
    return src, dec_in, labels


@torch.no_grad()
def greedy(model, examples, pad, start, eos, max_len=64, batch=128):
    """Greedy translations (argmax of the last logits row, appended, until </s>), as ids
    ending with </s>."""
    out = []
    for b in range(0, len(examples), batch):
        chunk = examples[b:b + batch]
        src = pad_batch([e.source for e in chunk], pad)
        mask = key_mask(src, pad)
        memory, _ = model.encode(src, mask)
        tgt = torch.full((len(chunk), 1), start)
        done = torch.zeros(len(chunk), dtype=torch.bool)
        for _ in range(max_len):
            logits, _, _ = model.decode(tgt, memory, mask)
            nxt = logits[:, -1].argmax(-1)
            nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
            tgt = torch.cat([tgt, nxt[:, None]], dim=1)
            done |= nxt == eos
            if bool(done.all()):
                break
        for row in tgt[:, 1:].tolist():
            ids = []
            for i in row:
                ids.append(i)
                if i == eos:
                    break
            out.append(ids)
    return out


@torch.no_grad()
def alignment_hits(model, examples, pad, start, batch=128):
    """Teacher-forced cross-attention against the known alignment. For each target token j
    with aligned source tokens, row j of the cross-attention (the step that predicts token j,
    whose input is token j-1) is scored: hit when its argmax over the source is one of the
    aligned tokens. Returns (hits per [L, H], hits of the last layer's mean over heads,
    hits per [L, H] of row j+1 (the step whose input is token j), count)."""
    L = model.cfg["decoder_layers"]
    H = model.cfg["decoder_attention_heads"]
    hits = torch.zeros(L, H)
    hits_input = torch.zeros(L, H)
    mean_hits = 0
    count = 0
    for b in range(0, len(examples), batch):
        chunk = examples[b:b + batch]
        src, dec_in, _ = make_batch(chunk, pad, start)
        mask = key_mask(src, pad)
        _, _, _, cross = model(src, dec_in, mask)
        cross = torch.stack(cross, dim=1)            # [B, L, H, St, Ss]
        arg = cross.argmax(-1)                        # [B, L, H, St]
        arg_mean = cross[:, -1].mean(1).argmax(-1)    # [B, St]
        for n, e in enumerate(chunk):
            T = len(e.target)
            for j, aligned in enumerate(e.alignment):
                if not aligned:
                    continue
                aligned_t = torch.tensor(aligned)
                hits += (arg[n, :, :, j, None] == aligned_t).any(-1).float()
                if j + 1 < T:
                    hits_input += (arg[n, :, :, j + 1, None] == aligned_t).any(-1).float()
                mean_hits += int(int(arg_mean[n, j]) in aligned)
                count += 1
    return hits, mean_hits, hits_input, count


# ----------------------------------------------------------------------------------------------
# 7. Main
# ----------------------------------------------------------------------------------------------

def blas_library():
    """The BLAS this process loaded (torch's Debian build calls the system libblas.so.3)."""
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line.lower()}
    except OSError:
        return "unknown"
    return ", ".join(sorted(os.path.basename(l) for l in libs if "/" in l)) or "none"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--pairs", type=int, default=60000, help="training sentence pairs")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--label-smoothing", type=float, default=0.1)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--ffn", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--activation", default="swish", choices=("swish", "gelu"))
    ap.add_argument("--source-vocab", type=int, default=700,
                    help="the English SentencePiece model's vocabulary size (a soft limit)")
    ap.add_argument("--chinese-pieces", default="words", choices=("words", "characters"),
                    help="target.spm: every word of the grammar one piece, or one piece a "
                         "character (the best head then aligns below 80%%: the second character "
                         "of a word is predicted from the first while the head moves on)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--eval-every", type=int, default=500, help="dev scores every so many steps")
    ap.add_argument("--dev", type=int, default=300, help="held-out pairs that choose the best head")
    ap.add_argument("--test", type=int, default=600, help="held-out pairs the scores are measured on")
    ap.add_argument("--out", default=os.path.join(root, "resources", "models", MODEL_NAME))
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    t_start = time.time()
    torch.ones(2, 2) @ torch.ones(2, 2)
    blas = blas_library()
    blas = next((b for b in blas.split(", ") if "openblas" in b), blas)
    print(f"torch {torch.__version__}, BLAS {blas}", flush=True)
    if "openblas" not in blas:
        print("note: torch is using the reference BLAS, which makes training about six times "
              f"slower; run with LD_LIBRARY_PATH={OPENBLAS_DIR} (apt-get install "
              "libopenblas0-serial)", flush=True)

    # Held-out pairs first; training pairs whose English (ignoring case) is held out are skipped.
    held_grammar = Grammar(random.Random(args.seed + 1))
    held, seen = [], set()
    while len(held) < args.dev + args.test:
        p = held_grammar.sentence()
        key = p.english().lower()
        if key not in seen:
            seen.add(key)
            held.append(p)
    train_grammar = Grammar(random.Random(args.seed + 2))
    train_pairs, translations = [], {}
    while len(train_pairs) < args.pairs:
        p = train_grammar.sentence()
        key = p.english().lower()
        if key in seen:
            continue
        zh_text = p.chinese()
        if translations.setdefault(p.english(), zh_text) != zh_text:
            raise AssertionError(f"two translations of {p.english()!r}")
        train_pairs.append(p)
    print(f"grammar: {len(train_pairs)} training pairs ({len(translations)} distinct), "
          f"{len(held)} held out ({time.time() - t_start:.1f}s)", flush=True)

    # Tokenizers
    os.makedirs(args.out, exist_ok=True)
    src_model, tgt_model = os.path.join(args.out, "source.spm"), os.path.join(args.out, "target.spm")
    train_spm([p.english() for p in train_pairs], src_model, args.source_vocab, chinese=False)
    chars = {c for p in train_pairs for c in p.chinese()}
    words = [text for p in train_pairs for text, _ in p.parts]
    if args.chinese_pieces == "characters":
        train_spm([p.chinese() for p in train_pairs], tgt_model, len(chars) + 3, chinese=True,
                  characters=True)
    else:
        train_spm(words, tgt_model, len(chars) + len(set(words)) + 3, chinese=True)
    vocab = build_vocab(src_model, tgt_model)
    with open(os.path.join(args.out, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False, indent=1)
        f.write("\n")
    tok = MarianTokenizer(src_model, tgt_model, vocab)
    pad, eos = tok.pad, tok.eos
    train = [Example(p, tok) for p in train_pairs]
    dev = [Example(p, tok) for p in held[:args.dev]]
    test = [Example(p, tok) for p in held[args.dev:]]
    unk_rate = sum(e.source.count(tok.unk) + e.target.count(tok.unk) for e in train)
    assert unk_rate == 0, f"{unk_rate} <unk> in the training pairs"
    print(f"tokenizers: vocab {len(vocab)} ({time.time() - t_start:.1f}s); "
          f"'{train[0].english}' -> {tok.source.encode(train[0].english, out_type=str)}",
          flush=True)

    cfg = {
        "activation_dropout": 0.0,
        "activation_function": args.activation,
        "architectures": ["MarianMTModel"],
        "attention_dropout": 0.0,
        "bos_token_id": None,
        "d_model": args.d_model,
        "decoder_attention_heads": args.heads,
        "decoder_ffn_dim": args.ffn,
        "decoder_layerdrop": 0.0,
        "decoder_layers": args.layers,
        "decoder_start_token_id": pad,
        "decoder_vocab_size": len(vocab),
        "dropout": args.dropout,
        "dtype": "float32",
        "encoder_attention_heads": args.heads,
        "encoder_ffn_dim": args.ffn,
        "encoder_layerdrop": 0.0,
        "encoder_layers": args.layers,
        "eos_token_id": eos,
        "forced_eos_token_id": eos,
        "init_std": 0.02,
        "is_decoder": False,
        "is_encoder_decoder": True,
        "max_position_embeddings": 256,
        "model_type": "marian",
        "pad_token_id": pad,
        "scale_embedding": True,
        "share_encoder_decoder_embeddings": True,
        "tie_word_embeddings": True,
        "use_cache": True,
        "vocab_size": len(vocab),
    }
    model = Marian(cfg)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {n_params} parameters", flush=True)

    # Training
    rng = random.Random(args.seed + 3)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98), weight_decay=0.01)
    order = []
    t_train, cpu_train = time.time(), time.process_time()
    loss_ema = None
    model.train()
    for step in range(args.steps):
        lr = args.lr * min(1.0, (step + 1) / args.warmup) * (
            0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * step / args.steps)))
        for g in opt.param_groups:
            g["lr"] = lr
        if len(order) < args.batch:
            idx = list(range(len(train)))
            rng.shuffle(idx)
            order.extend(idx)
        chunk = [train[i] for i in order[:args.batch]]
        del order[:args.batch]
        src, dec_in, labels = make_batch(chunk, pad, pad)
        logits, _, _, _ = model(src, dec_in, key_mask(src, pad))
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                               ignore_index=-100, label_smoothing=args.label_smoothing)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        loss_ema = float(loss) if loss_ema is None else 0.98 * loss_ema + 0.02 * float(loss)
        if step % 100 == 0 or step == args.steps - 1:
            print(f"step {step:5d}  loss {float(loss):.4f}  ema {loss_ema:.4f}  lr {lr:.2e}  "
                  f"{time.time() - t_train:.0f}s ({time.process_time() - cpu_train:.0f}s CPU)",
                  flush=True)
        if step % args.eval_every == args.eval_every - 1:
            model.eval()
            hits, mean_hits, _, count = alignment_hits(model, dev[:100], pad, pad)
            outputs = greedy(model, dev[:100], pad, pad, eos)
            model.train()
            k = int(hits.argmax())
            exact = sum(o == e.target for o, e in zip(outputs, dev)) / len(outputs)
            print(f"    dev: alignment best L{k // hits.shape[1]}H{k % hits.shape[1]} "
                  f"{float(hits.max()) / count:.3f}, last-layer mean {mean_hits / count:.3f}; "
                  f"exact translations {exact:.2f}", flush=True)
    train_seconds = time.time() - t_train
    train_cpu = time.process_time() - cpu_train
    model.eval()

    # Write the model folder, then read it back for every measurement
    st_path = os.path.join(args.out, "model.safetensors")
    safetensors_file.write_safetensors(st_path, model.hf_state(), "F32", {"format": "pt"})
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    tok_cfg = {"tokenizer_class": "MarianTokenizer", "source_lang": "en", "target_lang": "zh",
               "separate_vocabs": False, "eos_token": EOS, "unk_token": UNK, "pad_token": PAD,
               "model_max_length": 256, "sp_model_kwargs": {}}
    with open(os.path.join(args.out, "tokenizer_config.json"), "w") as f:
        json.dump(tok_cfg, f, indent=2)
        f.write("\n")

    reloaded = Marian(cfg)
    tensors, _meta = safetensors_file.read_safetensors(st_path)
    with torch.no_grad():
        for name, param in reloaded.hf_state().items():
            param.copy_(tensors.pop(name))
    assert not tensors, f"unexpected tensors {sorted(tensors)}"
    reloaded.eval()

    # Measurements on held-out pairs
    hits, _, _, dev_count = alignment_hits(reloaded, dev, pad, pad)
    H = cfg["decoder_attention_heads"]
    k = int(hits.argmax())
    best_layer, best_head = k // H, k % H
    t_hits, t_mean_hits, t_hits_input, t_count = alignment_hits(reloaded, test, pad, pad)
    align = {"best_layer": best_layer, "best_head": best_head,
             "dev_best": float(hits[best_layer, best_head]) / dev_count,
             "best": float(t_hits[best_layer, best_head]) / t_count,
             "best_on_test": float(t_hits.max()) / t_count,
             "layer_mean": t_mean_hits / t_count,
             "input_row_best": float(t_hits_input.max()) / t_count,
             "per_head": (t_hits / t_count).tolist(), "count": t_count}
    outputs = greedy(reloaded, test, pad, pad, eos)
    exact = sum(o == e.target for o, e in zip(outputs, test)) / len(test)
    print(f"held-out alignment (best head L{best_layer}H{best_head}, chosen on {len(dev)} dev "
          f"pairs): {align['best']:.3f}; last-layer head mean {align['layer_mean']:.3f}; "
          f"{t_count} target tokens of {len(test)} pairs", flush=True)
    print(f"held-out exact-match translations: {exact:.3f}", flush=True)
    wrong = [(e.english, e.chinese, tok.decode(o)) for o, e in zip(outputs, test) if o != e.target]
    for w in wrong[:10]:
        print("   wrong:", w, flush=True)

    # reference.npz: a few held-out pairs with the script's own forward
    ref = {}
    cases = [e for e in test if len(e.source) <= 12][:3]  # short ones keep the file small
    with torch.no_grad():
        for n, e in enumerate(cases):
            src = torch.tensor([e.source])
            dec_in = torch.tensor([[pad] + e.target[:-1]])
            logits, enc, dec, cross = reloaded(src, dec_in)
            stack = lambda ws: torch.stack([w[0] for w in ws]).numpy().astype(np.float32)  # noqa: E731
            mask = np.zeros((len(e.target), len(e.source)), dtype=np.float32)
            for j, aligned in enumerate(e.alignment):
                mask[j, aligned] = 1
            ref.update({
                f"case{n}_source_ids": np.array(e.source, dtype=np.int64),
                f"case{n}_decoder_ids": np.array([pad] + e.target[:-1], dtype=np.int64),
                f"case{n}_target_ids": np.array(e.target, dtype=np.int64),
                f"case{n}_encoder_attentions": stack(enc),
                f"case{n}_decoder_attentions": stack(dec),
                f"case{n}_cross_attentions": stack(cross),
                f"case{n}_logits": logits[0].numpy().astype(np.float32),
                f"case{n}_alignment": mask,
            })
    ref["best_alignment_head"] = np.array([best_layer, best_head], dtype=np.int64)
    np.savez_compressed(os.path.join(args.out, "reference.npz"), **ref)

    total_seconds = time.time() - t_start
    files = {n: os.path.getsize(os.path.join(args.out, n)) for n in sorted(os.listdir(args.out))
             if n != "README.md"}
    print(f"done in {total_seconds:.0f}s (training {train_seconds:.0f}s); files: {files}",
          flush=True)
    write_readme(args, ap, cfg, n_params, files, (train_seconds, train_cpu), total_seconds, loss_ema, align,
                 exact, len(test), len(dev), cases, tok, len(translations), wrong, blas,
                 (len(set(words)), len(chars)))


def fmt_matrix(m):
    rows = ["| layer | " + " | ".join(f"head {h}" for h in range(len(m[0]))) + " |",
            "|---" * (len(m[0]) + 1) + "|"]
    for l, row in enumerate(m):
        rows.append(f"| {l} | " + " | ".join(f"{v:.3f}" for v in row) + " |")
    return "\n".join(rows)


def write_readme(args, ap, cfg, n_params, files, train_time, total_s, loss_ema, align, exact,
                 n_test, n_dev, cases, tok, n_distinct, wrong, blas, zh_size):
    cmd = "/usr/bin/python3 scripts/train_translation_model.py"
    if OPENBLAS_DIR in os.environ.get("LD_LIBRARY_PATH", ""):
        cmd = f"LD_LIBRARY_PATH={OPENBLAS_DIR} " + cmd
    for k, v in vars(args).items():
        if k != "out" and v != ap.get_default(k):
            cmd += f" --{k.replace('_', '-')} {v}"
    train_s, train_cpu = train_time
    n_zh_words, n_zh_chars = zh_size
    size = sum(os.path.getsize(os.path.join(args.out, n)) for n in os.listdir(args.out)
               if n != "README.md")
    gs = grammar_size()
    examples = "\n".join(
        f"| {e.english} | {e.chinese} | {' '.join(tok.source.encode(e.english, out_type=str))} "
        f"| {' '.join(e.target_pieces)} |" for e in cases)
    file_rows = "\n".join(f"| `{n}` | {b:,} |" for n, b in files.items())
    wrong_rows = "\n".join(f"- {en} → expected {zh_}, got {got}" for en, zh_, got in wrong[:3])
    md = f"""# {MODEL_NAME}

A tiny English→Chinese translation model in Marian's architecture (`MarianMTModel`, the
architecture of Helsinki-NLP's opus-mt models), bundled with AttnLab so that a classroom
with no internet sees real **cross-attention**: the decoder's queries come from the Chinese
being written, the keys and values from the English source, and its heads learn which
English word each Chinese word translates.

- Architecture: encoder–decoder, {cfg['encoder_layers']} encoder and {cfg['decoder_layers']} decoder layers, {cfg['encoder_attention_heads']} heads of {cfg['d_model'] // cfg['encoder_attention_heads']}, d_model
  {cfg['d_model']}, feed-forward {cfg['encoder_ffn_dim']} ({cfg['activation_function']}), post-LayerNorm, sinusoidal positions (not
  stored), embeddings shared by both stacks and the output and scaled by sqrt(d_model),
  `final_logits_bias`. Decoding starts with `<pad>` (id {cfg['decoder_start_token_id']}, the decoder start token).
- Vocabulary: {cfg['vocab_size']} ids in `vocab.json` — `</s>` {tok.eos}, `<unk>` {tok.unk}, the English
  pieces of `source.spm` (SentencePiece BPE, nmt_nfkc: every word of the grammar is one
  piece but for plurals, `▁bottle` `s`), then the Chinese pieces of `target.spm`
  (SentencePiece BPE trained on the grammar's Chinese words, no normalization: every word is
  one piece, 垫子, 快乐的, 因为, and any other character one piece of its own), `<pad>`
  {tok.pad}. Encode as
  transformers' `MarianTokenizer` does: the spm's pieces looked up in `vocab.json`, then `</s>`.
- Parameters: {n_params:,}; all files {size:,} bytes:

| file | bytes |
|---|---|
{file_rows}

## How it was trained

All data comes from `scripts/train_translation_model.py` and its seed; nothing is downloaded
and transformers is not used (Debian's python3-torch {torch.__version__}, python3-sentencepiece
{spm.__version__}).

- Data: a bilingual grammar — the English of the bundled decoder model's grammar
  ({gs['english_words']} English words: {gs['nouns']} nouns, {gs['names']} names, {gs['adjectives']} adjectives, {gs['verbs']} verbs;
  {gs['clause_shapes']} clause shapes joined in {gs['sentence_shapes']} sentence shapes: "because", "and", "when …,", "and then"
  with a pronoun, a name that recurs) with its Chinese translation ({n_zh_words} Chinese words
  of {n_zh_chars} characters) and the word alignment that produced it. Chinese word order
  differs where it should: time phrases and most place
  phrases move before the verb ("… in the park at night" → "晚上在公园里…"), "on the mat"
  → "在垫子上" (在 … 上 around the noun, both aligned to "on"), "there were five cats on
  the mat" → "垫子上有五只猫", "when A, B" → "当A的时候，B"; adjectives come before
  the noun in both (a one-character one directly, "大猫", a longer one with 的,
  "快乐的猫"); numbers and "a" take the noun's measure word (一只猫, 三本书), aligned
  to both the number and the noun.
- {args.pairs:,} training pairs ({n_distinct:,} distinct); {n_dev} dev and {n_test} test pairs held out
  (no training pair has the same English, ignoring case).
- {args.steps} steps of AdamW (lr {args.lr:g}, {args.warmup} warm-up steps then cosine to 5%,
  betas 0.9/0.98, weight decay 0.01, gradient clip 1.0), batch {args.batch}, label smoothing
  {args.label_smoothing:g}, dropout {args.dropout:g}, {args.threads} CPU thread(s), BLAS {blas}: {train_s / 60:.1f} minutes
  of training ({train_cpu / 60:.1f} minutes of CPU time; {total_s / 60:.1f} minutes in all) on a shared
  2-core machine. Final training loss (moving average, with label smoothing) {loss_ema:.3f}.

Reproduce (writes every file in this folder):

    {cmd}

(`apt-get install python3-torch python3-numpy python3-sentencepiece libopenblas0-serial`;
without OpenBLAS torch uses the reference BLAS, about six times slower.) Every random choice
is seeded and training runs on {args.threads} thread(s), so the same torch and BLAS give the same
weights; another BLAS, CPU or torch version may differ in the last bits and so, after
training, in the numbers below.

## Measured on held-out sentences

Computed by the script's own float32 forward from the files in this folder, on {n_test} test
pairs not seen in training.

- **Cross-attention alignment.** For each Chinese token that translates a word (those that
  do not, such as the comma before 因为, and `</s>` are skipped: {align['count']:,} tokens), take the
  cross-attention row of the decoder step that *predicts* it (its input is the previous
  token) and see whether its argmax over the source falls on a piece of one of the English
  words the grammar aligns its characters to.
  - Best head, chosen on the {n_dev} dev pairs: **decoder layer {align['best_layer']}, head {align['best_head']}: {align['best']:.1%}**
    of the test tokens (the best head on the test pairs themselves: {align['best_on_test']:.1%}).
  - Mean over the heads of the last decoder layer: **{align['layer_mean']:.1%}**.
  - The rows one step later (the step whose input is the token) align less well: best
    head {align['input_row_best']:.1%}.
  - Chinese words are single pieces on purpose: with one piece a character
    (`--chinese-pieces characters`) the best head scores below 80% (78.7% for the default
    seed), since the second character of a word (子 of 垫子) is predicted from the first
    while the head has already moved on to the next English word.
- **Translation accuracy.** Greedy decoding (argmax of the last logits row, until `</s>`)
  gives exactly the grammar's Chinese for **{exact:.1%}** of the test pairs.
{wrong_rows}

Alignment hits per decoder head on the test pairs:

{fmt_matrix(align['per_head'])}

## Files for tests

`reference.npz` holds {len(cases)} test pairs (`caseN_source_ids`, `caseN_decoder_ids` starting with the
decoder start token, `caseN_target_ids` ending with `</s>`), the script's float32
`caseN_encoder_attentions` [L,H,Ss,Ss], `caseN_decoder_attentions` [L,H,St,St],
`caseN_cross_attentions` [L,H,St,Ss] and `caseN_logits` [St,V], the alignment
`caseN_alignment` [St,Ss] (1 where target token j translates source token s) and
`best_alignment_head` [layer, head]. tests/model/translation_model_test.cpp checks AttnLab
against them.

| English | Chinese | source pieces | target pieces |
|---|---|---|---|
{examples}

## 中文简介

这是随 AttnLab 附带的一个很小的英译中翻译模型（Marian 编码器–解码器，与 Helsinki-NLP 的
opus-mt 模型同一架构），由 `scripts/train_translation_model.py` 在一个自动生成的双语语法上训练，
不需要联网。解码器的 Query 来自正在生成的中文，Key 和 Value 来自英文源句，所以交叉注意力
显示每个中文词在"看"哪个英文词。在 {n_test} 个训练中没见过的句子上：最好的注意力头（解码器第
{align['best_layer']} 层第 {align['best_head']} 个头）的交叉注意力最大值落在正确对齐的英文词上的比例为 {align['best']:.1%}，
最后一层各头平均后为 {align['layer_mean']:.1%}；贪心解码的整句翻译正确率为 {exact:.1%}。

## License

Same as AttnLab (the project's license). The weights, tokenizers and training data are produced
entirely by the script above.
"""
    with open(os.path.join(args.out, "README.md"), "w", encoding="utf-8") as f:
        f.write(md)


if __name__ == "__main__":
    sys.exit(main())
