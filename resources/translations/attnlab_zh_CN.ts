<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>ModelDocument</name>
    <message>
        <source>Switch off a head</source>
        <translation>关闭一个头</translation>
    </message>
    <message>
        <source>Switch heads back on</source>
        <translation>重新打开各头</translation>
    </message>
    <message>
        <source>%1: not a folder (a model is a folder with config.json, *.safetensors, tokenizer.json)</source>
        <translation>%1：不是文件夹（模型是包含 config.json、*.safetensors 和 tokenizer.json 的文件夹）</translation>
    </message>
    <message>
        <source>Edit the model&apos;s text</source>
        <translation>编辑模型的文本</translation>
    </message>
    <message>
        <source>Append a token</source>
        <translation>追加一个词元</translation>
    </message>
    <message>
        <source>Show the model</source>
        <translation>显示模型</translation>
    </message>
    <message>
        <source>The model did not open: %1</source>
        <translation>模型未能打开：%1</translation>
    </message>
    <message>
        <source>%1 is an image model (%2) without %3: add the checkpoint&apos;s %3 to this folder (it says how images are resized and normalised).</source>
        <translation>%1 是一个图像模型（%2），但缺少 %3：请把该检查点的 %3 放进这个文件夹（它说明图像如何缩放和归一化）。</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <source>QKV projection</source>
        <translation>QKV 投影</translation>
    </message>
    <message>
        <source>softmax attention</source>
        <translation>softmax 注意力</translation>
    </message>
    <message>
        <source>sliding window</source>
        <translation>滑动窗口</translation>
    </message>
    <message>
        <source>linear attention</source>
        <translation>线性注意力</translation>
    </message>
    <message>
        <source>FlashAttention</source>
        <translation>FlashAttention</translation>
    </message>
    <message>
        <source>KV-cache decode step</source>
        <translation>键值缓存解码步</translation>
    </message>
    <message>
        <source>Open Attention &amp;Dump…</source>
        <translation>打开注意力转储(&amp;D)…</translation>
    </message>
    <message>
        <source>Open attention dump</source>
        <translation>打开注意力转储</translation>
    </message>
    <message>
        <source>Attention dumps (*.npz *.npy)</source>
        <translation>注意力转储 (*.npz *.npy)</translation>
    </message>
    <message>
        <source>Batch entry</source>
        <translation>批次条目</translation>
    </message>
    <message>
        <source>The dump holds %1 sequences; show which (0..%2)?</source>
        <translation>该转储包含 %1 个序列；显示哪一个（0..%2）？</translation>
    </message>
    <message>
        <source>Attention weights of a real model: .npy or .npz of shape [S,S], [H,S,S], [L,H,S,S] or [B,L,H,S,S]</source>
        <translation>真实模型的注意力权重：形状为 [S,S]、[H,S,S]、[L,H,S,S] 或 [B,L,H,S,S] 的 .npy 或 .npz</translation>
    </message>
    <message>
        <source>Open &amp;Q/K/V Dump…</source>
        <translation>打开 &amp;Q/K/V 转储…</translation>
    </message>
    <message>
        <source>Open Q/K/V dump</source>
        <translation>打开 Q/K/V 转储</translation>
    </message>
    <message>
        <source>Q/K/V dumps (*.npz)</source>
        <translation>Q/K/V 转储 (*.npz)</translation>
    </message>
    <message>
        <source>Q, K, V of a real model (.npz with q, k, v): re-run any layer under another variant, mask or GQA sharing</source>
        <translation>真实模型的 Q、K、V（含 q、k、v 的 .npz）：用另一种变体、掩码或 GQA 共享重新计算任意一层</translation>
    </message>
    <message>
        <source>Open Second Dump for Difference…</source>
        <translation>打开第二个转储以求差…</translation>
    </message>
    <message>
        <source>Open second attention dump</source>
        <translation>打开第二个注意力转储</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source> Batch </source>
        <translation> 批次 </translation>
    </message>
    <message>
        <source>Which sequence of a batched [B, L, H, S, S] dump</source>
        <translation>批量 [B, L, H, S, S] 转储中的哪个序列</translation>
    </message>
    <message>
        <source> Layer </source>
        <translation> 层 </translation>
    </message>
    <message>
        <source>The layer the heatmap, heads, entropy and statistics show</source>
        <translation>热力图、各头、熵和统计所显示的层</translation>
    </message>
    <message>
        <source> Re-run as </source>
        <translation> 重新计算为 </translation>
    </message>
    <message>
        <source>no mask</source>
        <translation>无掩码</translation>
    </message>
    <message>
        <source>causal</source>
        <translation>因果</translation>
    </message>
    <message>
        <source>window</source>
        <translation>窗口</translation>
    </message>
    <message>
        <source>causal window</source>
        <translation>因果窗口</translation>
    </message>
    <message>
        <source>W=</source>
        <translation>W=</translation>
    </message>
    <message>
        <source>kv heads </source>
        <translation>键值头 </translation>
    </message>
    <message>
        <source>GQA sharing: fewer kv heads mean-pool K and V in groups</source>
        <translation>GQA 共享：键值头更少时，K 和 V 按组取平均</translation>
    </message>
    <message>
        <source> %1 </source>
        <translation> %1 </translation>
    </message>
    <message>
        <source> No model dump </source>
        <translation> 没有模型转储 </translation>
    </message>
    <message>
        <source>window %1</source>
        <translation>宽度 %1 的窗口</translation>
    </message>
    <message>
        <source>padding (first %1 keys)</source>
        <translation>填充（前 %1 个键有效）</translation>
    </message>
    <message>
        <source>custom</source>
        <translation>自定义</translation>
    </message>
    <message>
        <source>%1 mask</source>
        <translation>%1掩码</translation>
    </message>
    <message>
        <source>identity projections</source>
        <translation>恒等投影</translation>
    </message>
    <message>
        <source>random projections (seed %1)</source>
        <translation>随机投影（种子 %1）</translation>
    </message>
    <message>
        <source>head %1 of %2</source>
        <translation>第 %1 个头（共 %2 个）</translation>
    </message>
    <message>
        <source>Cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <source>token</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>One column (3.3 in)</source>
        <translation>单栏（3.3 英寸）</translation>
    </message>
    <message>
        <source>Two columns (6.9 in)</source>
        <translation>双栏（6.9 英寸）</translation>
    </message>
    <message>
        <source>Slide 16:9 (13.33 × 7.5 in)</source>
        <translation>幻灯片 16:9（13.33 × 7.5 英寸）</translation>
    </message>
    <message>
        <source>Poster panel (16 × 12 in)</source>
        <translation>海报面板（16 × 12 英寸）</translation>
    </message>
    <message>
        <source>CSV data (*.csv);;NumPy data (*.npy);;JSON data (*.json)</source>
        <translation>CSV 数据 (*.csv);;NumPy 数据 (*.npy);;JSON 数据 (*.json)</translation>
    </message>
    <message>
        <source>%1: unknown data file type (use .csv, .npy or .json)</source>
        <translation>%1：未知的数据文件类型（请用 .csv、.npy 或 .json）</translation>
    </message>
    <message>
        <source>PNG image (*.png);;SVG vector (*.svg);;PDF document (*.pdf);;CSV data (*.csv);;NumPy data (*.npy);;JSON data (*.json)</source>
        <translation>PNG 图像 (*.png);;SVG 矢量图 (*.svg);;PDF 文档 (*.pdf);;CSV 数据 (*.csv);;NumPy 数据 (*.npy);;JSON 数据 (*.json)</translation>
    </message>
    <message>
        <source>%1: unknown file type (use .png, .svg, .pdf, .csv, .npy or .json)</source>
        <translation>%1：未知的文件类型（请用 .png、.svg、.pdf、.csv、.npy 或 .json）</translation>
    </message>
    <message>
        <source>%1: the figure size must be positive</source>
        <translation>%1：图的尺寸必须为正</translation>
    </message>
    <message>
        <source>Cannot write %1</source>
        <translation>无法写入 %1</translation>
    </message>
    <message>
        <source>AttnLab figure</source>
        <translation>AttnLab 图</translation>
    </message>
    <message>
        <source>keys</source>
        <translation>键</translation>
    </message>
    <message>
        <source>queries</source>
        <translation>查询</translation>
    </message>
    <message>
        <source>%1: the view &apos;%2&apos; has no steps</source>
        <translation>%1：视图“%2”没有步骤</translation>
    </message>
    <message>
        <source>Cannot create the folder %1</source>
        <translation>无法创建文件夹 %1</translation>
    </message>
    <message>
        <source>%1 B</source>
        <translation>%1 B</translation>
    </message>
    <message>
        <source>%1 KiB</source>
        <translation>%1 KiB</translation>
    </message>
    <message>
        <source>%1 MiB</source>
        <translation>%1 MiB</translation>
    </message>
    <message>
        <source>%1 GiB</source>
        <translation>%1 GiB</translation>
    </message>
    <message>
        <source>Switch the &amp;Focused Head Off or On</source>
        <translation>关闭或打开当前头(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;All Heads On</source>
        <translation>打开所有头(&amp;A)</translation>
    </message>
    <message>
        <source>Layer %1 (%2 off)</source>
        <translation>第 %1 层（%2 个关闭）</translation>
    </message>
    <message>
        <source>Layer %1</source>
        <translation>第 %1 层</translation>
    </message>
    <message>
        <source>Head %1 off</source>
        <translation>头 %1 已关闭</translation>
    </message>
    <message>
        <source>no weights: identity projections</source>
        <translation>无权重：恒等投影</translation>
    </message>
    <message>
        <source>untrained: random projections</source>
        <translation>未训练：随机投影</translation>
    </message>
    <message>
        <source>trained model: %1</source>
        <translation>已训练模型：%1</translation>
    </message>
    <message>
        <source>model dump: %1</source>
        <translation>模型转储：%1</translation>
    </message>
    <message>
        <source>Open &amp;Model…</source>
        <translation>打开模型(&amp;M)…</translation>
    </message>
    <message>
        <source>Open Recent Mo&amp;del</source>
        <translation>最近打开的模型(&amp;D)</translation>
    </message>
    <message>
        <source>Close Model</source>
        <translation>关闭模型</translation>
    </message>
    <message>
        <source>Back to the lab&apos;s own random projections</source>
        <translation>回到实验室自己的随机投影</translation>
    </message>
    <message>
        <source>Trained model: %1 (induction heads)</source>
        <translation>已训练模型：%1（归纳头）</translation>
    </message>
    <message>
        <source>The bundled model was not found beside the program</source>
        <translation>在程序旁边找不到自带的模型</translation>
    </message>
    <message>
        <source>A 3-layer Llama trained by scripts/train_demo_model.py: layer 0 head 1 attends to the previous token, layer 1 head 1 is an induction head</source>
        <translation>由 scripts/train_demo_model.py 训练的 3 层 Llama：第 0 层头 1 关注前一个词元，第 1 层头 1 是归纳头</translation>
    </message>
    <message>
        <source>Real model</source>
        <translation>真实模型</translation>
    </message>
    <message>
        <source>Show Model</source>
        <translation>显示模型</translation>
    </message>
    <message>
        <source>The views show the lab session; show the real model again</source>
        <translation>视图显示的是实验会话；再次显示真实模型</translation>
    </message>
    <message>
        <source>Heads Off</source>
        <translation>关闭头</translation>
    </message>
    <message>
        <source>Switch heads off (their output is zeroed) and watch the next token and later layers change; each change is one undo step</source>
        <translation>关闭一些头（其输出置零），观察下一个词元和后续各层如何变化；每次改动是一个撤销步骤</translation>
    </message>
    <message>
        <source>— %1 tokens, %2 ms </source>
        <translation>— %1 个词元，%2 毫秒 </translation>
    </message>
    <message>
        <source>— %1 heads off </source>
        <translation>— 关闭 %1 个头 </translation>
    </message>
    <message>
        <source>The views show a trained model&apos;s own q, k, v and attention</source>
        <translation>视图显示已训练模型自己的 q、k、v 和注意力</translation>
    </message>
    <message>
        <source>The lab&apos;s own seeded random projections: the patterns are arithmetic, not learned meaning. Open a model (File &gt; Open Model or Examples) to see trained attention.</source>
        <translation>实验室自己的带种子随机投影：这些模式只是算术结果，不是学到的含义。打开一个模型（文件 &gt; 打开模型 或 示例）查看训练后的注意力。</translation>
    </message>
    <message>
        <source>Attention or Q/K/V read from a dump file</source>
        <translation>从转储文件读取的注意力或 Q/K/V</translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation>正在加载模型…</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Open Model</source>
        <translation>打开模型</translation>
    </message>
    <message>
        <source> (kv heads: %1)</source>
        <translation>（键值头：%1）</translation>
    </message>
    <message>
        <source>Open a model first.</source>
        <translation>请先打开一个模型。</translation>
    </message>
    <message>
        <source>Induction probe: %1</source>
        <translation>归纳探针：%1</translation>
    </message>
    <message>
        <source>session</source>
        <translation>会话</translation>
    </message>
    <message>
        <source>%1, layer %2</source>
        <translation>%1，第 %2 层</translation>
    </message>
    <message>
        <source>%1, batch %2</source>
        <translation>%1，批次 %2</translation>
    </message>
    <message>
        <source>%1, head %2</source>
        <translation>%1，第 %2 个头</translation>
    </message>
    <message>
        <source>the %1 view has no numbers to export now</source>
        <translation>%1 视图现在没有可导出的数值</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>query</source>
        <translation>查询</translation>
    </message>
    <message>
        <source>“%1”</source>
        <translation>“%1”</translation>
    </message>
    <message>
        <source> — raw token “%1”</source>
        <translation> — 原始词元 “%1”</translation>
    </message>
    <message>
        <source>, id %1</source>
        <translation>，id %1</translation>
    </message>
    <message>
        <source>%1, cross-attention</source>
        <translation>%1，交叉注意力</translation>
    </message>
    <message>
        <source>%1, encoder self-attention</source>
        <translation>%1，编码器自注意力</translation>
    </message>
    <message>
        <source>%1, decoder self-attention</source>
        <translation>%1，解码器自注意力</translation>
    </message>
    <message>
        <source>cross-attention (target reads source)</source>
        <translation>交叉注意力（目标语言读取源语言）</translation>
    </message>
    <message>
        <source>encoder self-attention (source)</source>
        <translation>编码器自注意力（源语言）</translation>
    </message>
    <message>
        <source>decoder self-attention (target)</source>
        <translation>解码器自注意力（目标语言）</translation>
    </message>
    <message>
        <source>Which attention of the translation model the views show: cross-attention&apos;s queries come from the target, its keys and values from the source</source>
        <translation>视图显示翻译模型的哪一种注意力：交叉注意力的查询来自目标语言，键和值来自源语言</translation>
    </message>
    <message>
        <source>Trained model: %1 (English → Chinese, cross-attention)</source>
        <translation>训练过的模型：%1（英译中，交叉注意力）</translation>
    </message>
    <message>
        <source>Trained model: %1 (BERT: fill in [MASK], two-way attention)</source>
        <translation>已训练模型：%1（BERT：填写 [MASK]，双向注意力）</translation>
    </message>
    <message>
        <source>softmax</source>
        <translation>softmax</translation>
    </message>
    <message>
        <source>flash</source>
        <translation>FlashAttention</translation>
    </message>
    <message>
        <source>linear</source>
        <translation>线性注意力</translation>
    </message>
    <message>
        <source>additive</source>
        <translation>加性注意力</translation>
    </message>
    <message>
        <source>Running %p%</source>
        <translation>运行中 %p%</translation>
    </message>
    <message>
        <source>The model runs on the text; the views keep the previous run until it is done</source>
        <translation>模型正在这段文本上运行；完成前各视图保留上一次的结果</translation>
    </message>
    <message>
        <source>Stop Run</source>
        <translation>停止运行</translation>
    </message>
    <message>
        <source>Stop the model&apos;s run: the views keep the previous run and the text stays as typed</source>
        <translation>停止模型的运行：各视图保留上一次的结果，文本保持输入的样子</translation>
    </message>
    <message>
        <source>Computing layer %1… the views show it when it is ready</source>
        <translation>正在计算第 %1 层……算好后各视图即显示它</translation>
    </message>
    <message>
        <source>causal window of 1 key</source>
        <translation>因果窗口（1 个键）</translation>
    </message>
    <message>
        <source>causal window of %1 keys</source>
        <translation>因果窗口（%1 个键）</translation>
    </message>
    <message>
        <source>checkpoint: %1</source>
        <translation>检查点：%1</translation>
    </message>
    <message>
        <source>The views show this checkpoint&apos;s own q, k, v and attention</source>
        <translation>视图显示这个检查点自己的 q、k、v 和注意力</translation>
    </message>
    <message>
        <source>&lt;b&gt;What this model knows.&lt;/b&gt; It learned only from short made-up sentences about a small world: each animal&apos;s sound, home and food, each person&apos;s work and place, the colours of a few things. Sentences that work: “the [MASK] sat on the mat.”, “the cow ate the [MASK].”, “the grass was [MASK].”, “the dog [MASK] because it was hungry.” Outside these words and facts its guesses are nonsense, however sure they look.</source>
        <translation>&lt;b&gt;这个模型知道什么。&lt;/b&gt;它只从一些关于一个小世界的简短人造句子中学习：每种动物的叫声、住处和食物，每个人的工作和地点，几样东西的颜色。能用的句子：“the [MASK] sat on the mat.”、“the cow ate the [MASK].”、“the grass was [MASK].”、“the dog [MASK] because it was hungry.”。超出这些词和事实，它的猜测就是胡猜，不管看起来多有把握。</translation>
    </message>
    <message>
        <source>A small Marian encoder-decoder trained on a made-up grammar of about 330 English words: type English, read the Chinese and the cross-attention that wrote it</source>
        <translation>一个小型 Marian 编码器–解码器，只在约 330 个英文词的人造语法上训练：输入英文，看它写出的中文和写出每个词时的交叉注意力</translation>
    </message>
    <message>
        <source>A 3-layer BERT trained on short made-up sentences about animals and people: type a sentence with [MASK] and see what fills it, and how the mask reads both sides</source>
        <translation>一个 3 层 BERT，只在关于动物和人的简短人造句子上训练：输入一个带 [MASK] 的句子，看它填进什么词，以及掩码位置如何读取两侧的词</translation>
    </message>
    <message>
        <source>&lt;b&gt;What this model knows.&lt;/b&gt; It learned English → Chinese only from a small made-up grammar: about 330 words (animals, people, things, places, 16 names such as Nina and Ben, verbs in the past tense such as sat, saw, loved) in short sentences ending in a full stop, joined by “and”, “because” or “when”. Sentences that work: “the cat sat on the mat.”, “the dog chased a ball in the park.”, “Nina carried Ben.”, “the girl was happy because the sun was warm.” Other words (I, love, weather) and other kinds of sentence give a confident but wrong translation.</source>
        <translation>&lt;b&gt;这个模型知道什么。&lt;/b&gt;它只从一个小小的人造语法中学会英译中：约 330 个词（动物、人、物品、地点，Nina、Ben 等 16 个人名，sat、saw、loved 等过去时动词），组成以句号结尾的短句，用“and”“because”或“when”连接。能用的句子：“the cat sat on the mat.”、“the dog chased a ball in the park.”、“Nina carried Ben.”、“the girl was happy because the sun was warm.”。其他词（I、love、weather）和其他句式会得到看似有把握、其实错误的翻译。</translation>
    </message>
    <message>
        <source>A bundled model, one from the Hugging Face cache, or a checkpoint folder (%1): type text and every view shows the real model</source>
        <translation>随附的模型、Hugging Face 缓存中的模型或检查点文件夹（%1）：输入文本，每个视图都显示真实模型</translation>
    </message>
    <message>
        <source>Open &amp;Image…</source>
        <translation>打开图像(&amp;I)…</translation>
    </message>
    <message>
        <source>Open an Image for %1</source>
        <translation>为 %1 打开图像</translation>
    </message>
    <message>
        <source>Trained model: %1 (ViT: where the class token looks)</source>
        <translation>训练好的模型：%1（ViT：分类词元看向哪里）</translation>
    </message>
    <message>
        <source>A 4-layer vision transformer trained on made-up pictures of one shape each: it names the shape, and the Image tab shows which patches it read</source>
        <translation>一个 4 层的视觉 Transformer，用每张只有一个形状的生成图片训练：它说出形状的名字，“图像”页显示它读了哪些图块</translation>
    </message>
    <message>
        <source>A %1</source>
        <translation>一个%1</translation>
    </message>
    <message>
        <source>Images (%1);;All files (*)</source>
        <translation>图像 (%1);;所有文件 (*)</translation>
    </message>
    <message>
        <source>An image for the open image model (PNG, JPEG): the Image tab shows where it looks. Or drop one on the window.</source>
        <translation>给已打开的图像模型一张图像（PNG、JPEG）：“图像”页显示它看向哪里。也可以把图像拖到窗口上。</translation>
    </message>
    <message>
        <source>%1 tokens are too many to show a head&apos;s attention here (%2 GB a map); `attnlab model --heads` writes chosen heads</source>
        <translation>%1 个词元太多，这里无法显示一个头的注意力（每张图 %2 GB）；`attnlab model --heads` 可写出选定的头</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::AggregateView</name>
    <message>
        <source>Mean over heads (current layer)</source>
        <translation>各头平均（当前层）</translation>
    </message>
    <message>
        <source>Mean over layers (focused head)</source>
        <translation>各层平均（当前头）</translation>
    </message>
    <message>
        <source>Mean over layers and heads</source>
        <translation>各层与各头平均</translation>
    </message>
    <message>
        <source>Attention rollout through the current layer</source>
        <translation>到当前层为止的注意力 rollout</translation>
    </message>
    <message>
        <source>Rollout (Abnar &amp; Zuidema 2020): A_l = rownorm(½ mean_h W + ½ I), R_l = A_l R_(l-1): how much each input token flows into each position, counting the residual path.</source>
        <translation>Rollout（Abnar &amp; Zuidema 2020）：A_l = rownorm(½ mean_h W + ½ I)，R_l = A_l R_(l-1)：计入残差路径后，每个输入词元流入每个位置的多少。</translation>
    </message>
    <message>
        <source>Aggregates — open a model dump (File › Open Attention Dump…)</source>
        <translation>汇总 — 请先打开模型转储（文件 › 打开注意力转储…）</translation>
    </message>
    <message>
        <source>weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>%1 — layer %2, mean over %3 heads</source>
        <translation>%1 — 第 %2 层，%3 个头的平均</translation>
    </message>
    <message>
        <source>%1 — head %2, mean over %3 layers</source>
        <translation>%1 — 第 %2 个头，%3 层的平均</translation>
    </message>
    <message>
        <source>%1 — mean over %2 layers × %3 heads</source>
        <translation>%1 — %2 层 × %3 个头的平均</translation>
    </message>
    <message>
        <source>Rollout needs square attention (Sq = Sk); this dump is %1 × %2</source>
        <translation>Rollout 需要方形注意力矩阵（Sq = Sk）；此转储为 %1 × %2</translation>
    </message>
    <message>
        <source>%1 — attention rollout through layer %2</source>
        <translation>%1 — 到第 %2 层的注意力 rollout</translation>
    </message>
    <message>
        <source>rollout</source>
        <translation>rollout</translation>
    </message>
    <message>
        <source>Aggregates</source>
        <translation>汇总</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::AttributionView</name>
    <message>
        <source>head (the last column: the layer&apos;s MLP)</source>
        <translation>头（最后一列：该层的 MLP）</translation>
    </message>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Direct logit attribution: the last position&apos;s final residual is a sum of the embedding, each head&apos;s output and each MLP&apos;s; read through the final norm (its scale frozen) and the predicted token&apos;s unembedding, the terms add up to its logit. Double-click a head to open its attention map on the last row.</source>
        <translation>直接 logit 归因：最后一个位置的最终残差是嵌入、每个头的输出和每个 MLP 的输出之和；经过最终归一化（缩放固定）和预测词元的反嵌入读出，这些项加起来就是它的 logit。双击一个头，打开它在最后一行的注意力图。</translation>
    </message>
    <message>
        <source>layer %1, head %2: %3</source>
        <translation>第 %1 层，第 %2 个头：%3</translation>
    </message>
    <message>
        <source>layer %1, MLP: %2</source>
        <translation>第 %1 层，MLP：%2</translation>
    </message>
    <message>
        <source>Direct logit attribution does not add up for this model: %1</source>
        <translation>这个模型的直接 logit 归因无法加总：%1</translation>
    </message>
    <message>
        <source>MLP</source>
        <translation>MLP</translation>
    </message>
    <message>
        <source>contribution to the logit</source>
        <translation>对 logit 的贡献</translation>
    </message>
    <message>
        <source>Open a model (File &gt; Open Model, or File &gt; Examples) and type a text: each head&apos;s share of the next token appears here.</source>
        <translation>打开一个模型（文件 &gt; 打开模型，或 文件 &gt; 示例）并输入文本：每个头对下一个词元的贡献会显示在这里。</translation>
    </message>
    <message>
        <source>Attribution: waiting for the first run</source>
        <translation>归因：等待第一次运行</translation>
    </message>
    <message>
        <source>Attribution: %1</source>
        <translation>归因：%1</translation>
    </message>
    <message>
        <source>Direct logit attribution to “%1” at the last position: heads %2 + MLPs %3 + embedding %4 + biases %5 = logit %6</source>
        <translation>最后一个位置对“%1”的直接 logit 归因：各头 %2 + 各 MLP %3 + 嵌入 %4 + 偏置 %5 = logit %6</translation>
    </message>
    <message>
        <source>Attribution: open a model and type a text</source>
        <translation>归因：请打开模型并输入文本</translation>
    </message>
    <message>
        <source>Attribution</source>
        <translation>归因</translation>
    </message>
    <message>
        <source>Attribution: computing on the new text</source>
        <translation>归因：正在为新文本计算</translation>
    </message>
    <message>
        <source>the model&apos;s prediction</source>
        <translation>模型的预测</translation>
    </message>
    <message>
        <source>The token whose logit is split: a word the model reads as one token (with its leading space where the tokenizer has one, &quot; Mary&quot;), or a token id. Empty: the token the model predicts.</source>
        <translation>要拆分其 logit 的词元：模型读作一个词元的词（分词器带前导空格时要保留，如“ Mary”），或词元编号。留空：模型预测的词元。</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>A second token: the logit difference target − contrast is split instead (&quot; Mary&quot; against &quot; John&quot;). Empty: the target&apos;s logit alone.</source>
        <translation>第二个词元：改为拆分 logit 差 目标 − 对照（“ Mary”对“ John”）。留空：只拆分目标的 logit。</translation>
    </message>
    <message>
        <source>&amp;Target</source>
        <translation>目标(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;Contrast</source>
        <translation>对照(&amp;C)</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>目标</translation>
    </message>
    <message>
        <source>Contrast</source>
        <translation>对照</translation>
    </message>
    <message>
        <source>Direct logit attribution to “%1” against “%7” at the last position: heads %2 + MLPs %3 + embedding %4 + biases %5 = logit difference %6</source>
        <translation>最后一个位置对“%1”相对“%7”的直接 logit 归因：各头 %2 + 各 MLP %3 + 嵌入 %4 + 偏置 %5 = logit 差 %6</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::ColorRangeDialog</name>
    <message>
        <source>Chosen Colour Range</source>
        <translation>自选颜色范围</translation>
    </message>
    <message>
        <source>The weights from the low end to the high end span the colour map; weights outside take its end colours. A long text&apos;s weights are near 1/S: at 1000 tokens, try 0 to 0.01.</source>
        <translation>从下限到上限的权重铺满整个色图；范围外的权重取两端的颜色。长文本的权重接近 1/S：1000 个词元时可试 0 到 0.01。</translation>
    </message>
    <message>
        <source>Low end:</source>
        <translation>下限：</translation>
    </message>
    <message>
        <source>High end:</source>
        <translation>上限：</translation>
    </message>
    <message>
        <source>The low end must be less than the high end.</source>
        <translation>下限必须小于上限。</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::CompareView</name>
    <message>
        <source>Compare A (the session) with B =</source>
        <translation>比较 A（当前会话）与 B =</translation>
    </message>
    <message>
        <source>The one change that turns configuration A into B.</source>
        <translation>把配置 A 变成 B 的那一处改动。</translation>
    </message>
    <message>
        <source>%1 is not a lab session: B is the session with one change.</source>
        <translation>%1 不是实验会话：B 是改动一处后的会话。</translation>
    </message>
    <message>
        <source>A: %1</source>
        <translation>A：%1</translation>
    </message>
    <message>
        <source>session</source>
        <translation>会话</translation>
    </message>
    <message>
        <source>B: %1 (not computed yet)</source>
        <translation>B：%1（尚未计算）</translation>
    </message>
    <message>
        <source>B: %1</source>
        <translation>B：%1</translation>
    </message>
    <message>
        <source>B − A</source>
        <translation>B − A</translation>
    </message>
    <message>
        <source>A: %1; B: %2</source>
        <translation>A：%1；B：%2</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>比较</translation>
    </message>
    <message>
        <source>A and B: %1</source>
        <translation>A 与 B：%1</translation>
    </message>
    <message>
        <source>B is not computed yet: nothing to compare</source>
        <translation>B 尚未计算：没有可比较的内容</translation>
    </message>
    <message>
        <source>B − A = 0 everywhere: A and B are the same</source>
        <translation>B − A 处处为 0：A 和 B 相同</translation>
    </message>
    <message>
        <source>a typical row’s largest weight is %1</source>
        <translation>典型行的最大权重为 %1</translation>
    </message>
    <message>
        <source>a typical row’s largest |B − A| is %1 on a ±%2 scale</source>
        <translation>典型行的最大 |B − A| 为 %1，色标为 ±%2</translation>
    </message>
    <message>
        <source>Nearly one colour: %1. &lt;a href=&quot;row&quot;&gt;Colour each row over its own largest&lt;/a&gt;, or choose “log scale” under Colours.</source>
        <translation>几乎只有一种颜色：%1。&lt;a href=&quot;row&quot;&gt;按各行自身最大值着色&lt;/a&gt;，或在配色中选“对数刻度”。</translation>
    </message>
    <message>
        <source>; </source>
        <translation>；</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::ComplexityView</name>
    <message>
        <source>sequence length S</source>
        <translation>序列长度 S</translation>
    </message>
    <message>
        <source>FLOPs</source>
        <translation>浮点运算次数 (FLOPs)</translation>
    </message>
    <message>
        <source>working memory (bytes)</source>
        <translation>工作内存（字节）</translation>
    </message>
    <message>
        <source>How the cost of each stage grows with the sequence length. Softmax attention grows as S² in time and memory; FlashAttention keeps the S² time but needs only O(S) memory; sliding-window and linear attention grow as S.</source>
        <translation>各阶段的代价如何随序列长度增长。softmax 注意力的时间和内存都按 S² 增长；FlashAttention 时间仍为 S²，但内存只需 O(S)；滑动窗口注意力和线性注意力按 S 增长。</translation>
    </message>
    <message>
        <source>Complexity</source>
        <translation>复杂度</translation>
    </message>
    <message>
        <source>Cost vs sequence length (d_model %1, heads %2, kv heads %3, window %4, flash blocks %5×%6); this session: S = %7</source>
        <translation>代价与序列长度（d_model %1，%2 个头，%3 个键值头，窗口 %4，flash 分块 %5×%6）；本会话：S = %7</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::DifferenceView</name>
    <message>
        <source>Open second dump…</source>
        <translation>打开第二个转储…</translation>
    </message>
    <message>
        <source>two heads of the current layer</source>
        <translation>当前层的两个头</translation>
    </message>
    <message>
        <source>two layers of the focused head</source>
        <translation>当前头的两层</translation>
    </message>
    <message>
        <source>two dumps, current layer and head</source>
        <translation>两个转储，当前层和头</translation>
    </message>
    <message>
        <source>A = </source>
        <translation>A = </translation>
    </message>
    <message>
        <source>B = </source>
        <translation>B = </translation>
    </message>
    <message>
        <source>B − A between</source>
        <translation>B − A，比较</translation>
    </message>
    <message>
        <source>Open second attention dump</source>
        <translation>打开第二个注意力转储</translation>
    </message>
    <message>
        <source>Attention dumps (*.npz *.npy)</source>
        <translation>注意力转储 (*.npz *.npy)</translation>
    </message>
    <message>
        <source>weight B − A</source>
        <translation>权重 B − A</translation>
    </message>
    <message>
        <source>Dump difference — open a model dump first</source>
        <translation>转储差异 — 请先打开模型转储</translation>
    </message>
    <message>
        <source>Layer %1: head %2 − head %3</source>
        <translation>第 %1 层：头 %2 − 头 %3</translation>
    </message>
    <message>
        <source>Head %1: layer %2 − layer %3</source>
        <translation>第 %1 个头：层 %2 − 层 %3</translation>
    </message>
    <message>
        <source>Open a second dump of the same shape to compare (button above)</source>
        <translation>打开一个形状相同的第二个转储进行比较（上方按钮）</translation>
    </message>
    <message>
        <source>Layer %1, head %2: %3 − %4</source>
        <translation>第 %1 层，第 %2 个头：%3 − %4</translation>
    </message>
    <message>
        <source>Dump difference</source>
        <translation>转储差异</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::Document</name>
    <message>
        <source>The computation failed for an unknown reason.</source>
        <translation>计算因未知原因失败。</translation>
    </message>
    <message>
        <source>nothing</source>
        <translation>不变</translation>
    </message>
    <message>
        <source>causal mask</source>
        <translation>因果掩码</translation>
    </message>
    <message>
        <source>linear attention</source>
        <translation>线性注意力</translation>
    </message>
    <message>
        <source>GQA (half the kv heads)</source>
        <translation>GQA（键值头减半）</translation>
    </message>
    <message>
        <source>MQA (one kv head)</source>
        <translation>MQA（一个键值头）</translation>
    </message>
    <message>
        <source>RoPE positions</source>
        <translation>RoPE 位置</translation>
    </message>
    <message>
        <source>another session</source>
        <translation>另一个会话</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::DropoutBox</name>
    <message>
        <source>Dropout</source>
        <translation>Dropout（随机失活）</translation>
    </message>
    <message>
        <source>Eval</source>
        <translation>评估</translation>
    </message>
    <message>
        <source>Evaluation: no weight is dropped; the attention is exactly the one without dropout.</source>
        <translation>评估模式：不丢弃任何权重；注意力与没有 dropout 时完全相同。</translation>
    </message>
    <message>
        <source>Train</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Training: each weight is zeroed with probability p and the others are divided by 1 − p, so rows no longer sum to 1.</source>
        <translation>训练模式：每个权重以概率 p 置零，其余除以 1 − p，因此每行之和不再是 1。</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>模式</translation>
    </message>
    <message>
        <source>The dropout rate p: the chance that a weight is zeroed in train mode (0 ≤ p &lt; 1).</source>
        <translation>dropout 比率 p：训练模式下一个权重被置零的概率（0 ≤ p &lt; 1）。</translation>
    </message>
    <message>
        <source>Rate p</source>
        <translation>比率 p</translation>
    </message>
    <message>
        <source>Seed of the drop pattern: whether a cell drops depends only on the seed, the head, the query and the key.</source>
        <translation>丢弃模式的种子：一个单元格是否被丢弃只取决于种子、头、查询和键。</translation>
    </message>
    <message>
        <source>Drop seed</source>
        <translation>丢弃种子</translation>
    </message>
    <message>
        <source>Dropout: train mode</source>
        <translation>Dropout：训练模式</translation>
    </message>
    <message>
        <source>Dropout: eval mode</source>
        <translation>Dropout：评估模式</translation>
    </message>
    <message>
        <source>Change dropout rate</source>
        <translation>修改 dropout 比率</translation>
    </message>
    <message>
        <source>Change drop seed</source>
        <translation>修改丢弃种子</translation>
    </message>
    <message>
        <source>Eval: nothing dropped, rows sum to 1.</source>
        <translation>评估：没有丢弃，每行之和为 1。</translation>
    </message>
    <message>
        <source>Linear attention forms no weights to drop: shown as eval.</source>
        <translation>线性注意力不形成可丢弃的权重：按评估模式显示。</translation>
    </message>
    <message>
        <source>Train: about %1% of the weights dropped, the rest × %2.</source>
        <translation>训练：约 %1% 的权重被丢弃，其余 × %2。</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::DumpDocument</name>
    <message>
        <source>%1: batch %2 is outside 0..%3</source>
        <translation>%1：批次 %2 超出 0..%3</translation>
    </message>
    <message>
        <source>Open a dump first; the second dump is compared with it.</source>
        <translation>请先打开一个转储；第二个转储将与它比较。</translation>
    </message>
    <message>
        <source>%1: shape [%2, %3, %4, %5] differs from the open dump&apos;s [%6, %7, %8, %9]</source>
        <translation>%1：形状 [%2, %3, %4, %5] 与已打开转储的 [%6, %7, %8, %9] 不同</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::EntropyView</name>
    <message>
        <source>Entropy per query (nats)</source>
        <translation>每个查询的熵（奈特）</translation>
    </message>
    <message>
        <source>query</source>
        <translation>查询</translation>
    </message>
    <message>
        <source>entropy (nats)</source>
        <translation>熵（奈特）</translation>
    </message>
    <message>
        <source>entropy</source>
        <translation>注意力熵</translation>
    </message>
    <message>
        <source>log(allowed keys): uniform attention</source>
        <translation>log(允许的键数)：均匀注意力</translation>
    </message>
    <message>
        <source>head</source>
        <translation>头</translation>
    </message>
    <message>
        <source>mean entropy</source>
        <translation>平均熵</translation>
    </message>
    <message>
        <source>Bars: how spread each query&apos;s attention is. Line: the most it can be (uniform over the allowed keys). Click a bar to select the query; click a head on the right to focus it.</source>
        <translation>柱：每个查询的注意力有多分散。线：它的上限（在允许的键上均匀分布）。点击柱选择该查询；点击右侧的头以聚焦它。</translation>
    </message>
    <message>
        <source>Entropy per query, head %1 (nats)</source>
        <translation>每个查询的熵，头 %1（奈特）</translation>
    </message>
    <message>
        <source>log_allowed</source>
        <translation>log_allowed</translation>
    </message>
    <message>
        <source>normalized_entropy</source>
        <translation>normalized_entropy</translation>
    </message>
    <message>
        <source>Entropy</source>
        <translation>熵</translation>
    </message>
    <message>
        <source>log(allowed keys)</source>
        <translation>log(允许的键数)</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::FillMaskView</name>
    <message>
        <source>Which [MASK] of the text to fill, when it has several</source>
        <translation>文本中有多个 [MASK] 时，填写哪一个</translation>
    </message>
    <message>
        <source>Mask</source>
        <translation>掩码</translation>
    </message>
    <message>
        <source>filler (the masked-LM head&apos;s top %1)</source>
        <translation>填充词（掩码语言模型头的前 %1 个）</translation>
    </message>
    <message>
        <source>probability</source>
        <translation>概率</translation>
    </message>
    <message>
        <source>token (key)</source>
        <translation>词元（键）</translation>
    </message>
    <message>
        <source>mask&apos;s weight</source>
        <translation>掩码权重</translation>
    </message>
    <message>
        <source>before the mask</source>
        <translation>掩码之前</translation>
    </message>
    <message>
        <source>after the mask</source>
        <translation>掩码之后</translation>
    </message>
    <message>
        <source>the mask itself</source>
        <translation>掩码自身</translation>
    </message>
    <message>
        <source>An encoder reads the whole sentence at once: the [MASK] position attends to the words on both sides (a decoder&apos;s causal mask would hide the right side), and the masked-LM head turns its last hidden state into a word.</source>
        <translation>编码器一次读入整句话：[MASK] 位置关注两侧的词（解码器的因果掩码会遮住右侧），掩码语言模型头再把它最后的隐藏状态变成一个词。</translation>
    </message>
    <message>
        <source>Filling a [MASK] needs an encoder with its masked-LM head (BERT; File &gt; Examples &gt; tiny-bert-en).</source>
        <translation>填写 [MASK] 需要带掩码语言模型头的编码器（BERT；文件 &gt; 示例 &gt; tiny-bert-en）。</translation>
    </message>
    <message>
        <source>position %1</source>
        <translation>位置 %1</translation>
    </message>
    <message>
        <source>Open an encoder (File &gt; Examples &gt; tiny-bert-en) and type a sentence with [MASK] in it.</source>
        <translation>打开一个编码器（文件 &gt; 示例 &gt; tiny-bert-en），输入一个带 [MASK] 的句子。</translation>
    </message>
    <message>
        <source>Fill mask: waiting for the first run</source>
        <translation>填写掩码：等待第一次运行</translation>
    </message>
    <message>
        <source>Type [MASK] in the text where a word should be filled in.</source>
        <translation>在文本中需要填词的地方输入 [MASK]。</translation>
    </message>
    <message>
        <source>[MASK] at position %1 is most likely “%2” (%3); layer %4, head %5 reads %6 before it and %7 after it</source>
        <translation>位置 %1 的 [MASK] 最可能是“%2”（%3）；第 %4 层第 %5 个头读取它之前的 %6、之后的 %7</translation>
    </message>
    <message>
        <source>Fill mask</source>
        <translation>填写掩码</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::FlashStepperView</name>
    <message>
        <source>Process the next tile</source>
        <translation>处理下一个分块</translation>
    </message>
    <message>
        <source>q block</source>
        <translation>查询分块</translation>
    </message>
    <message>
        <source>Query rows per tile (Br)</source>
        <translation>每个分块的查询行数 (Br)</translation>
    </message>
    <message>
        <source>kv block</source>
        <translation>键值分块</translation>
    </message>
    <message>
        <source>Key/value columns per tile (Bc)</source>
        <translation>每个分块的键/值列数 (Bc)</translation>
    </message>
    <message>
        <source>key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>query</source>
        <translation>查询</translation>
    </message>
    <message>
        <source>running max m</source>
        <translation>运行最大值 m</translation>
    </message>
    <message>
        <source>running sum l</source>
        <translation>运行和 l</translation>
    </message>
    <message>
        <source>max |O − O_std|</source>
        <translation>max |O − O_std|</translation>
    </message>
    <message>
        <source>FlashAttention never holds the whole score matrix: it visits one tile at a time and keeps, per query row, the running max m, the running sum l and an un-normalised output, rescaling them by exp(m_old − m_new) whenever the max grows.</source>
        <translation>FlashAttention 从不保存整个分数矩阵：它一次访问一个分块，并为每个查询行保留运行最大值 m、运行和 l 以及未归一化的输出；每当最大值增大时，就用 exp(m_old − m_new) 重新缩放它们（在线 softmax）。</translation>
    </message>
    <message>
        <source>Change the query block size</source>
        <translation>修改查询分块大小</translation>
    </message>
    <message>
        <source>Change the key/value block size</source>
        <translation>修改键/值分块大小</translation>
    </message>
    <message>
        <source>%1 holds attention weights only: there are no Q and K to cut into tiles.</source>
        <translation>%1 只包含注意力权重：没有可切成分块的 Q 和 K。</translation>
    </message>
    <message>
        <source>row %1 (%2)</source>
        <translation>第 %1 行（%2）</translation>
    </message>
    <message>
        <source>The variant is %1; the stepper shows softmax FlashAttention on the same Q, K, V.</source>
        <translation>当前变体是 %1；步进器在相同的 Q、K、V 上显示 softmax FlashAttention。</translation>
    </message>
    <message>
        <source>FlashAttention steps: no experiment yet</source>
        <translation>FlashAttention 步骤：尚无计算结果</translation>
    </message>
    <message>
        <source>FlashAttention steps: %1</source>
        <translation>FlashAttention 步骤：%1</translation>
    </message>
    <message>
        <source>computing the walk…</source>
        <translation>正在计算步骤…</translation>
    </message>
    <message>
        <source>nothing to step</source>
        <translation>没有可执行的步骤</translation>
    </message>
    <message>
        <source>FlashAttention steps</source>
        <translation>FlashAttention 步骤</translation>
    </message>
    <message>
        <source>the FlashAttention walk of this head is not ready yet</source>
        <translation>该头的 FlashAttention 分块遍历尚未就绪</translation>
    </message>
    <message>
        <source>O / l
so far</source>
        <translation>目前的
O / l</translation>
    </message>
    <message>
        <source>standard
output</source>
        <translation>标准
输出</translation>
    </message>
    <message>
        <source>rescale factor</source>
        <translation>缩放因子</translation>
    </message>
    <message>
        <source>done</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>current</source>
        <translation>当前</translation>
    </message>
    <message>
        <source>skipped: fully masked</source>
        <translation>跳过：完全被掩码</translation>
    </message>
    <message>
        <source>still to come</source>
        <translation>尚未处理</translation>
    </message>
    <message>
        <source>row %1</source>
        <translation>第 %1 行</translation>
    </message>
    <message>
        <source>row %1 “%2”</source>
        <translation>第 %1 行“%2”</translation>
    </message>
    <message>
        <source>Before the first tile every row starts with m = −∞, l = 0 and O = 0. The first tile is queries %1 × keys %2.</source>
        <translation>处理第一个分块之前，每一行都从 m = −∞、l = 0、O = 0 开始。第一个分块是查询 %1 × 键 %2。</translation>
    </message>
    <message>
        <source>Tile %1 of %2 (queries %3 × keys %4)</source>
        <translation>第 %1 个分块（共 %2 个；查询 %3 × 键 %4）</translation>
    </message>
    <message>
        <source>the masks together hide every key in it from these queries</source>
        <translation>几个掩码合起来对这些查询遮住了其中所有的键</translation>
    </message>
    <message>
        <source>the causal mask hides every key in it (each key comes after every query of the tile)</source>
        <translation>因果掩码遮住了其中所有的键（每个键都位于该分块所有查询之后）</translation>
    </message>
    <message>
        <source>every key in it is outside the sliding window (%1 each side)</source>
        <translation>其中所有的键都在滑动窗口（每侧 %1）之外</translation>
    </message>
    <message>
        <source>the padding mask hides every key in it (valid length %1)</source>
        <translation>填充掩码遮住了其中所有的键（有效长度 %1）</translation>
    </message>
    <message>
        <source>the custom mask hides every key in it</source>
        <translation>自定义掩码遮住了其中所有的键</translation>
    </message>
    <message>
        <source>%1 is skipped: %2, so no score is computed and m, l and O stay as they were.</source>
        <translation>%1被跳过：%2，因此不计算任何分数，m、l 和 O 保持不变。</translation>
    </message>
    <message>
        <source>the mask hides every key of this tile from %1, so its m = %2 and l = %3 stay as they were</source>
        <translation>掩码对%1遮住了本分块所有的键，所以它的 m = %2 和 l = %3 保持不变</translation>
    </message>
    <message>
        <source>the mask hides every key of this tile from %1, which has seen no key yet (m = −∞, l = 0)</source>
        <translation>掩码对%1遮住了本分块所有的键，它还没有见过任何键（m = −∞，l = 0）</translation>
    </message>
    <message>
        <source>%1 sees its first keys: m = %2, its largest score here, and l = Σ e^(s − m) = %3</source>
        <translation>%1第一次见到键：m = %2（它在这里的最大分数），l = Σ e^(s − m) = %3</translation>
    </message>
    <message>
        <source>%1: the max rose from %2 to %3, so the row’s sum and output are rescaled by e^(%2 − %3) = %4; l = %4 × %5 + this tile’s Σ e^(s − m) = %6</source>
        <translation>%1：最大值从 %2 升到 %3，所以这一行的和与输出都乘以 e^(%2 − %3) = %4；l = %4 × %5 + 本分块的 Σ e^(s − m) = %6</translation>
    </message>
    <message>
        <source>%1: the max stays %2 (no score in this tile is larger), so nothing is rescaled (e⁰ = %3); l = %4 + this tile’s Σ e^(s − m) = %5</source>
        <translation>%1：最大值仍是 %2（本分块没有更大的分数），所以无需重新缩放（e⁰ = %3）；l = %4 + 本分块的 Σ e^(s − m) = %5</translation>
    </message>
    <message>
        <source>%1, %2.</source>
        <translation>%1，%2。</translation>
    </message>
    <message>
        <source>The max rose in %1 of the tile’s %2 rows.</source>
        <translation>该分块的 %2 行中有 %1 行的最大值上升。</translation>
    </message>
    <message>
        <source>%1 does not touch %2, which has seen no key yet (m = −∞, l = 0).</source>
        <translation>%1不涉及%2，它还没有见过任何键（m = −∞，l = 0）。</translation>
    </message>
    <message>
        <source>%1 does not touch %2, which keeps m = %3 and l = %4 from step %5.</source>
        <translation>%1不涉及%2，它保持第 %5 步得到的 m = %3 和 l = %4。</translation>
    </message>
    <message>
        <source>%1.</source>
        <translation>%1。</translation>
    </message>
    <message>
        <source>All tiles done: O / l is standard attention (max error %1).</source>
        <translation>所有分块都已处理：O / l 就是标准注意力的输出（最大误差 %1）。</translation>
    </message>
    <message>
        <source>Train-mode dropout (p = %1) is on: this walk is the eval recurrence. Dropout zeroes cells of P before P V, which changes O but not m or l.</source>
        <translation>训练模式的 dropout（p = %1）已开启：这里逐步演示的是评估模式的递推。Dropout 在计算 P V 之前把 P 的部分元素置零，这会改变 O，但不改变 m 和 l。</translation>
    </message>
    <message>
        <source>every other row</source>
        <translation>其他各行</translation>
    </message>
    <message>
        <source>the tile’s other rows</source>
        <translation>该分块的其他行</translation>
    </message>
    <message>
        <source>FlashAttention, head %1: step %2 of %3 · tiles computed %4, skipped %5 · max error now %6</source>
        <translation>FlashAttention，头 %1：第 %2 步（共 %3 步）· 已计算分块 %4，跳过 %5 · 当前最大误差 %6</translation>
    </message>
    <message>
        <source>Head %1 · tiles computed %2, skipped %3 · max error now %4</source>
        <translation>头 %1 · 已计算分块 %2，跳过 %3 · 当前最大误差 %4</translation>
    </message>
    <message>
        <source>score tile %1×%2 = %3 (with its Q, K, V tiles %4) vs the full %5×%6 score matrix %7</source>
        <translation>分数分块 %1×%2 = %3（连同其 Q、K、V 分块 %4），完整 %5×%6 分数矩阵为 %7</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>every key in it is outside the causal window of 1 key</source>
        <translation>其中所有的键都在因果窗口（1 个键）之外</translation>
    </message>
    <message>
        <source>every key in it is outside the causal window of %1 keys</source>
        <translation>其中所有的键都在因果窗口（%1 个键）之外</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::HeadRolesView</name>
    <message>
        <source> tokens</source>
        <translation> 个词元</translation>
    </message>
    <message>
        <source>Length of the random sequence the probe repeats.</source>
        <translation>探针重复的随机序列的长度。</translation>
    </message>
    <message>
        <source>The probe&apos;s random draw; the same seed gives the same tokens as `attnlab model --roles --probe N --seed S`.</source>
        <translation>探针的随机抽取；相同的种子给出与 `attnlab model --roles --probe N --seed S` 相同的词元。</translation>
    </message>
    <message>
        <source>Run probe</source>
        <translation>运行探针</translation>
    </message>
    <message>
        <source>Run the model on BOS + random tokens + the same tokens again, and rank the heads by how much the repeat attends to the token that followed its first occurrence (induction).</source>
        <translation>在 BOS + 随机词元 + 同样的词元上运行模型，并按重复部分对其首次出现后那个词元的关注程度（归纳）给各头排序。</translation>
    </message>
    <message>
        <source>Show text</source>
        <translation>显示文本</translation>
    </message>
    <message>
        <source>Back to the scores on the text you typed.</source>
        <translation>回到你输入的文本上的得分。</translation>
    </message>
    <message>
        <source>Restore all heads</source>
        <translation>恢复所有头</translation>
    </message>
    <message>
        <source>Switch every ablated head back on.</source>
        <translation>重新打开每个被消融的头。</translation>
    </message>
    <message>
        <source>Probe</source>
        <translation>探针</translation>
    </message>
    <message>
        <source>seed</source>
        <translation>种子</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>head</source>
        <translation>头</translation>
    </message>
    <message>
        <source>previous-token</source>
        <translation>前一词元</translation>
    </message>
    <message>
        <source>induction</source>
        <translation>归纳</translation>
    </message>
    <message>
        <source>first-token</source>
        <translation>首词元</translation>
    </message>
    <message>
        <source>self</source>
        <translation>自身</translation>
    </message>
    <message>
        <source>distance</source>
        <translation>距离</translation>
    </message>
    <message>
        <source>Checked: the head is switched off (its output zeroed) in every run.</source>
        <translation>勾选：该头在每次运行中都被关闭（输出置零）。</translation>
    </message>
    <message>
        <source>Mean weight a query puts on the token just before it.</source>
        <translation>查询放在紧邻其前一个词元上的平均权重。</translation>
    </message>
    <message>
        <source>Mean weight a repeated token puts on the token that followed its earlier occurrence (—: the text repeats no token).</source>
        <translation>重复词元放在其先前出现之后那个词元上的平均权重（—：文本中没有重复的词元）。</translation>
    </message>
    <message>
        <source>Mean weight on the first token (an attention sink).</source>
        <translation>放在第一个词元上的平均权重（注意力汇聚）。</translation>
    </message>
    <message>
        <source>Mean weight a query puts on itself.</source>
        <translation>查询放在自身上的平均权重。</translation>
    </message>
    <message>
        <source>Mean of Σ w |i − j|: how far back the head looks, in tokens.</source>
        <translation>Σ w |i − j| 的平均：该头向前看多远（以词元计）。</translation>
    </message>
    <message>
        <source>Click a column header to sort; tick a head to switch it off; double-click a row to show that head.</source>
        <translation>点击列标题排序；勾选一个头将其关闭；双击一行显示该头。</translation>
    </message>
    <message>
        <source>Open a model: File ▸ Open Model… — head roles are measured on a real model&apos;s attention.</source>
        <translation>请打开模型：文件 ▸ 打开模型… — 头的角色是在真实模型的注意力上测量的。</translation>
    </message>
    <message>
        <source>Type some text, or run the induction probe.</source>
        <translation>输入一些文本，或运行归纳探针。</translation>
    </message>
    <message>
        <source>%1, induction probe: %2 random tokens repeated twice (seed %3).</source>
        <translation>%1，归纳探针：%2 个随机词元重复两次（种子 %3）。</translation>
    </message>
    <message>
        <source>Best previous-token head: L%1 H%2 (%3).</source>
        <translation>最佳前一词元头：L%1 H%2（%3）。</translation>
    </message>
    <message>
        <source>Best induction head: L%1 H%2 (%3).</source>
        <translation>最佳归纳头：L%1 H%2（%3）。</translation>
    </message>
    <message>
        <source>No token repeats, so no induction score: run the probe.</source>
        <translation>没有重复的词元，因此没有归纳得分：请运行探针。</translation>
    </message>
    <message>
        <source>Switch layer %1 head %2 off</source>
        <translation>关闭第 %1 层头 %2</translation>
    </message>
    <message>
        <source>Switch layer %1 head %2 back on</source>
        <translation>重新打开第 %1 层头 %2</translation>
    </message>
    <message>
        <source>Show layer %1 head %2</source>
        <translation>显示第 %1 层头 %2</translation>
    </message>
    <message>
        <source>ablated</source>
        <translation>已消融</translation>
    </message>
    <message>
        <source>L%1 H%2</source>
        <translation>L%1 H%2</translation>
    </message>
    <message>
        <source>Head roles</source>
        <translation>头的角色</translation>
    </message>
    <message>
        <source>%1, on your text (1 token).</source>
        <translation>%1，基于你的文本（1 个词元）。</translation>
    </message>
    <message>
        <source>%1, on your text (%2 tokens).</source>
        <translation>%1，基于你的文本（%2 个词元）。</translation>
    </message>
    <message>
        <source>1 head switched off.</source>
        <translation>已关闭 1 个头。</translation>
    </message>
    <message>
        <source>%1 heads switched off.</source>
        <translation>已关闭 %1 个头。</translation>
    </message>
    <message>
        <source>Cancel probe</source>
        <translation>取消探针</translation>
    </message>
    <message>
        <source>Stop the probe running on the model.</source>
        <translation>停止正在模型上运行的探针。</translation>
    </message>
    <message>
        <source>Measuring every head on the text…</source>
        <translation>正在逐个头测量这段文本上的角色…</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::HeadStatsView</name>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>head</source>
        <translation>头</translation>
    </message>
    <message>
        <source>entropy (nats)</source>
        <translation>熵（奈特）</translation>
    </message>
    <message>
        <source>distance (tokens)</source>
        <translation>距离（词元）</translation>
    </message>
    <message>
        <source>first-token mass</source>
        <translation>首词元权重和</translation>
    </message>
    <message>
        <source>Click a column header to sort; double-click a row to open the head. Entropy: -Σ w log w per query, averaged; distance: Σ w |i - j|; first-token mass: w_i0 (attention sinks).</source>
        <translation>点击列标题排序；双击一行打开该头。熵：每个查询的 -Σ w log w 的平均；距离：Σ w |i - j|；首词元权重：w_i0（注意力汇聚）。</translation>
    </message>
    <message>
        <source>L%1 H%2</source>
        <translation>L%1 H%2</translation>
    </message>
    <message>
        <source>Head statistics</source>
        <translation>头统计</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::HeadsGridView</name>
    <message>
        <source>Every head&apos;s weights; frames of one colour share keys and values (a kv group). Click a head to focus it, double-click to open it in the heatmap.</source>
        <translation>每个头的注意力权重；同色边框的头共享键和值（一个键值组）。点击一个头以聚焦，双击在热力图中打开。</translation>
    </message>
    <message>
        <source>%1 heads, %2 kv heads (%3)</source>
        <translation>%1 个头，%2 个键值头（%3）</translation>
    </message>
    <message>
        <source>MHA</source>
        <translation>多头注意力 MHA</translation>
    </message>
    <message>
        <source>MQA</source>
        <translation>多查询注意力 MQA</translation>
    </message>
    <message>
        <source>GQA</source>
        <translation>分组查询注意力 GQA</translation>
    </message>
    <message>
        <source>%1 heads of %2 (key/value sharing not recorded in the dump)</source>
        <translation>%1 个头，来自 %2（转储中未记录键/值共享）</translation>
    </message>
    <message>
        <source>head %1</source>
        <translation>头 %1</translation>
    </message>
    <message>
        <source>head %1 · kv %2</source>
        <translation>头 %1 · 键值 %2</translation>
    </message>
    <message>
        <source>Heads</source>
        <translation>各头</translation>
    </message>
    <message>
        <source>key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>query</source>
        <translation>查询</translation>
    </message>
    <message>
        <source>weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>each cell: the largest weight of %1 × %2 positions</source>
        <translation>每格：%1 × %2 个位置中最大的权重</translation>
    </message>
    <message>
        <source>largest weight %1: nearly one colour on 0 to 1</source>
        <translation>最大权重 %1：在 0 到 1 的色标上几乎只有一种颜色</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::HeatmapView</name>
    <message>
        <source>Heatmap</source>
        <translation>热力图</translation>
    </message>
    <message>
        <source>Heatmap (B)</source>
        <translation>热力图 (B)</translation>
    </message>
    <message>
        <source>Difference B − A</source>
        <translation>差异 B − A</translation>
    </message>
    <message>
        <source>weight B − A</source>
        <translation>权重 B − A</translation>
    </message>
    <message>
        <source>q·k</source>
        <translation>q·k</translation>
    </message>
    <message>
        <source>scaled score</source>
        <translation>缩放分数</translation>
    </message>
    <message>
        <source>allowed</source>
        <translation>允许</translation>
    </message>
    <message>
        <source>output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>dimension</source>
        <translation>维度</translation>
    </message>
    <message>
        <source>keys</source>
        <translation>键</translation>
    </message>
    <message>
        <source>queries</source>
        <translation>查询</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>%1 (raw token %2)</source>
        <translation>%1（原始词元 %2）</translation>
    </message>
    <message>
        <source>%1 → %2
%3 = %4</source>
        <translation>%1 → %2
%3 = %4</translation>
    </message>
    <message>
        <source>query “%1” (row %2) → key “%3” (column %4), head %5</source>
        <translation>查询“%1”（第 %2 行）→ 键“%3”（第 %4 列），头 %5</translation>
    </message>
    <message>
        <source>q·k = %1</source>
        <translation>q·k = %1</translation>
    </message>
    <message>
        <source>weight = %1</source>
        <translation>权重 = %1</translation>
    </message>
    <message>
        <source>× scale %1 ÷ temperature %2 = s = %3</source>
        <translation>× 缩放 %1 ÷ 温度 %2 = s = %3</translation>
    </message>
    <message>
        <source>× scale %1 = s = %2</source>
        <translation>× 缩放 %1 = s = %2</translation>
    </message>
    <message>
        <source>masked: yes → weight 0 (excluded from the softmax)</source>
        <translation>被掩码：是 → 权重 0（不参与 softmax）</translation>
    </message>
    <message>
        <source>masked: no</source>
        <translation>被掩码：否</translation>
    </message>
    <message>
        <source>%1 attention: weight = %2 (not a softmax of s)</source>
        <translation>%1注意力：权重 = %2（不是 s 的 softmax）</translation>
    </message>
    <message>
        <source>exp(s − max) = exp(%1 − %2) = %3</source>
        <translation>exp(s − max) = exp(%1 − %2) = %3</translation>
    </message>
    <message>
        <source>÷ row sum %1 = weight %2</source>
        <translation>÷ 行和 %1 = 权重 %2</translation>
    </message>
    <message>
        <source>(stored weight %1)</source>
        <translation>（存储的权重 %1）</translation>
    </message>
    <message>
        <source>Toggle mask cell</source>
        <translation>切换掩码单元格</translation>
    </message>
    <message>
        <source>dropout (train mode): dropped → weight 0</source>
        <translation>dropout（训练模式）：已丢弃 → 权重 0</translation>
    </message>
    <message>
        <source>dropout (train mode): kept → × 1/(1 − p) = %1 = %2</source>
        <translation>dropout（训练模式）：保留 → × 1/(1 − p) = %1 = %2</translation>
    </message>
    <message>
        <source>weight after dropout</source>
        <translation>dropout 之后的权重</translation>
    </message>
    <message>
        <source>keys   ○ dropped by dropout (train, p = %1)   × masked</source>
        <translation>键   ○ 被 dropout 丢弃（训练，p = %1）   × 被掩码</translation>
    </message>
    <message>
        <source> (data range)</source>
        <translation>（数据范围）</translation>
    </message>
    <message>
        <source> ÷ row max</source>
        <translation> ÷ 行最大值</translation>
    </message>
    <message>
        <source> (log₁₀)</source>
        <translation>（log₁₀）</translation>
    </message>
    <message>
        <source>Hover a cell to see its computation; click a row to select its query; wheel zooms, drag pans. Click the heatmap, then + and − zoom, 0 or Home shows it all.</source>
        <translation>悬停在单元格上查看其计算过程；点击一行选择其查询；滚轮缩放，拖动平移。点击热力图后，按 + 和 − 缩放，按 0 或 Home 显示全部。</translation>
    </message>
    <message>
        <source>The whole matrix; the rectangle is the part shown. Click or drag to move there.</source>
        <translation>整个矩阵；方框是当前显示的部分。点击或拖动可移到那里。</translation>
    </message>
    <message>
        <source>Overview: click or drag to go there</source>
        <translation>全图：点击或拖动可移到那里</translation>
    </message>
    <message>
        <source>a typical row’s largest weight is %1 — Colours: “per row” or “log scale” shows the pattern</source>
        <translation>典型行最大权重 %1——选“按行”或“对数刻度”看规律</translation>
    </message>
    <message>
        <source>%1 %2–%3 of %4</source>
        <translation>%1 %2–%3（共 %4）</translation>
    </message>
    <message>
        <source>Click to colour each row over its own largest weight.</source>
        <translation>点击：每行按本行最大权重着色。</translation>
    </message>
    <message>
        <source> ÷ row’s largest |B − A|</source>
        <translation> ÷ 行最大 |B − A|</translation>
    </message>
    <message>
        <source> (log scale, sign kept)</source>
        <translation>（对数刻度，保留正负号）</translation>
    </message>
    <message>
        <source> (%1 to %2)</source>
        <translation>（%1 到 %2）</translation>
    </message>
    <message>
        <source>above the colour range (%1 to %2): drawn in its top colour</source>
        <translation>高于颜色范围（%1 到 %2）：画成最上端的颜色</translation>
    </message>
    <message>
        <source>below the colour range (%1 to %2): drawn in its bottom colour</source>
        <translation>低于颜色范围（%1 到 %2）：画成最下端的颜色</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::HubDownloadDialog</name>
    <message>
        <source>Download from the Hugging Face Hub</source>
        <translation>从 Hugging Face Hub 下载</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Only the files AttnLab reads: the config, the tokenizer and the weights. A file already in the cache is linked, not fetched again.</source>
        <translation>只下载 AttnLab 读取的文件：配置、分词器和权重。缓存里已有的文件直接链接，不再重新下载。</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>Stops a download at once; what arrived stays in the cache and the next download resumes there. Closes the dialog otherwise.</source>
        <translation>立即停止下载；已收到的部分留在缓存中，下次下载从那里继续。未在下载时关闭对话框。</translation>
    </message>
    <message>
        <source>&apos;%1&apos; is not a Hub id (ORG/NAME or NAME, with @REVISION if you want one).</source>
        <translation>“%1”不是 Hub 模型 id（ORG/NAME 或 NAME，需要时加 @REVISION）。</translation>
    </message>
    <message>
        <source>%1 at revision %2, from %3 into %4</source>
        <translation>%1，版本 %2，从 %3 下载到 %4</translation>
    </message>
    <message>
        <source>Asking %1 which files %2 has…</source>
        <translation>正在向 %1 查询 %2 有哪些文件…</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>正在开始…</translation>
    </message>
    <message>
        <source>%1 (file %2 of %3): %4 of %5</source>
        <translation>%1（第 %2 个文件，共 %3 个）：%4 / %5</translation>
    </message>
    <message>
        <source>, %1/s</source>
        <translation>，%1/秒</translation>
    </message>
    <message>
        <source>, %1 left</source>
        <translation>，还需 %1</translation>
    </message>
    <message>
        <source>done</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>downloading…</source>
        <translation>正在下载…</translation>
    </message>
    <message>
        <source>%1 at revision %2 (commit %3), from %4 into %5</source>
        <translation>%1，版本 %2（提交 %3），从 %4 下载到 %5</translation>
    </message>
    <message>
        <source>in the cache</source>
        <translation>已在缓存中</translation>
    </message>
    <message>
        <source>to download</source>
        <translation>待下载</translation>
    </message>
    <message>
        <source>%1 files, %2 in all; %3 to download.</source>
        <translation>%1 个文件，共 %2；需下载 %3。</translation>
    </message>
    <message>
        <source>Every file is in the cache already: Download opens it.</source>
        <translation>所有文件都已在缓存中：点“下载”即可打开。</translation>
    </message>
    <message>
        <source>Download fetches %1; Cancel closes.</source>
        <translation>“下载”将获取 %1；“取消”关闭对话框。</translation>
    </message>
    <message>
        <source>Stopped. What arrived is kept in the cache; Resume goes on from there, Cancel closes.</source>
        <translation>已停止。已收到的部分保留在缓存中；“继续”从那里接着下载，“取消”关闭对话框。</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Could not download: %1</source>
        <translation>无法下载：%1</translation>
    </message>
    <message>
        <source>Try Again</source>
        <translation>重试</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::ImageAttentionView</name>
    <message>
        <source>patch r%1c%2: %3 %; click to see where it looks</source>
        <translation>图块 r%1c%2：%3 %；点击查看它看向哪里</translation>
    </message>
    <message>
        <source>Focused head</source>
        <translation>当前头</translation>
    </message>
    <message>
        <source>Mean of heads</source>
        <translation>头的平均</translation>
    </message>
    <message>
        <source>Rollout</source>
        <translation>展开（rollout）</translation>
    </message>
    <message>
        <source>Focused head: one head of the shown layer. Mean of heads: the layer&apos;s heads averaged. Rollout: attention followed down through every layer up to the shown one, the residual counted as half of each step (Abnar &amp; Zuidema 2020).</source>
        <translation>当前头：所显示层的一个头。头的平均：这一层所有头取平均。展开（rollout）：沿注意力一路追到所显示的层为止的每一层，残差在每一步算一半（Abnar 与 Zuidema 2020）。</translation>
    </message>
    <message>
        <source>How strongly the attention covers the picture</source>
        <translation>注意力叠加层盖住图片的程度</translation>
    </message>
    <message>
        <source>Show</source>
        <translation>显示</translation>
    </message>
    <message>
        <source>Overlay</source>
        <translation>叠加</translation>
    </message>
    <message>
        <source>Click a patch to see where it looks; outside the image: [CLS].</source>
        <translation>点一个图块，看它看向哪里；点图片外面：[CLS]。</translation>
    </message>
    <message>
        <source>%1 is reading the image...</source>
        <translation>%1 正在读取图像…</translation>
    </message>
    <message>
        <source>layer %1, head %2</source>
        <translation>第 %1 层，第 %2 个头</translation>
    </message>
    <message>
        <source>layer %1, mean of %2 heads</source>
        <translation>第 %1 层，%2 个头的平均</translation>
    </message>
    <message>
        <source>rollout through layers 0-%1</source>
        <translation>第 0–%1 层的展开（rollout）</translation>
    </message>
    <message>
        <source>%1 on %2, %3: where %4 looks</source>
        <translation>%1 看 %2，%3：%4 看向哪里</translation>
    </message>
    <message>
        <source>%1 x %1 pixels, %2 x %2 patches of %3</source>
        <translation>%1 × %1 像素，%2 × %2 个 %3 像素的图块</translation>
    </message>
    <message>
        <source>The model says</source>
        <translation>模型的判断</translation>
    </message>
    <message>
        <source>Image</source>
        <translation>图像</translation>
    </message>
    <message>
        <source>Open an image for %1: File &gt; Open Image... (Ctrl+I), an example under File &gt; Examples, or drop a PNG or JPEG on the window.</source>
        <translation>为 %1 打开一张图像：文件 &gt; 打开图像…（Ctrl+I），文件 &gt; 示例 里的例子，或把 PNG、JPEG 拖到窗口上。</translation>
    </message>
    <message>
        <source>No classes: this checkpoint has no classifier. It gives the image&apos;s embedding (%1 values), which `attnlab model --image` writes.</source>
        <translation>没有类别：这个检查点没有分类器。它给出图像的嵌入向量（%1 个值），`attnlab model --image` 会把它写出。</translation>
    </message>
    <message>
        <source>%1 reads text; the Image tab shows an image model&apos;s attention on its image: open one with File &gt; Open Model (the bundled tiny-vit-shapes, or a ViT).</source>
        <translation>%1 读的是文本；“图像”页显示图像模型在图像上的注意力：用 文件 &gt; 打开模型 打开一个（附带的 tiny-vit-shapes，或一个 ViT）。</translation>
    </message>
    <message>
        <source>The Image tab shows an image model&apos;s attention on its image. Open one: File &gt; Examples &gt; tiny-vit-shapes, or File &gt; Open Model for a ViT checkpoint.</source>
        <translation>“图像”页显示图像模型在图像上的注意力。打开一个：文件 &gt; 示例 &gt; tiny-vit-shapes，或用 文件 &gt; 打开模型 打开一个 ViT 检查点。</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::InputsPanel</name>
    <message>
        <source>Tokens</source>
        <translation>词元序列</translation>
    </message>
    <message>
        <source>The text whose tokens attend to each other (the queries).</source>
        <translation>其词元彼此关注的文本（查询）。</translation>
    </message>
    <message>
        <source>type a sentence</source>
        <translation>输入一个句子</translation>
    </message>
    <message>
        <source>&amp;Text</source>
        <translation>文本(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;Cross-attention</source>
        <translation>交叉注意力(&amp;C)</translation>
    </message>
    <message>
        <source>Queries from the text, keys and values from a second source text.</source>
        <translation>查询来自该文本，键和值来自第二段源文本。</translation>
    </message>
    <message>
        <source>Source text: the keys and values of cross-attention.</source>
        <translation>源文本：交叉注意力的键和值。</translation>
    </message>
    <message>
        <source>&amp;Source</source>
        <translation>源文本(&amp;S)</translation>
    </message>
    <message>
        <source>whitespace</source>
        <translation>按空格</translation>
    </message>
    <message>
        <source>character</source>
        <translation>按字符</translation>
    </message>
    <message>
        <source>How the text is split into tokens.</source>
        <translation>文本如何切分为词元。</translation>
    </message>
    <message>
        <source>To&amp;kenizer</source>
        <translation>分词器(&amp;K)</translation>
    </message>
    <message>
        <source>The query tokens; click one to select it in every view.</source>
        <translation>查询词元；点击一个即可在所有视图中选中它。</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Embedding width d_model; heads must divide it.</source>
        <translation>嵌入维度 d_model；头数必须能整除它。</translation>
    </message>
    <message>
        <source>&amp;d_model</source>
        <translation>&amp;d_model</translation>
    </message>
    <message>
        <source>Number of query heads H.</source>
        <translation>查询头的个数 H。</translation>
    </message>
    <message>
        <source>&amp;Heads</source>
        <translation>头数(&amp;H)</translation>
    </message>
    <message>
        <source>Key/value heads: equal to heads is MHA, fewer is GQA, one is MQA. Must divide heads.</source>
        <translation>键值头：与头数相等为多头注意力 (MHA)，更少为分组查询注意力 (GQA)，一个为多查询注意力 (MQA)。必须能整除头数。</translation>
    </message>
    <message>
        <source>&amp;KV heads</source>
        <translation>键值头(&amp;K)</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>sinusoidal</source>
        <translation>正弦</translation>
    </message>
    <message>
        <source>RoPE interleaved</source>
        <translation>RoPE 交错</translation>
    </message>
    <message>
        <source>RoPE half</source>
        <translation>RoPE 对半</translation>
    </message>
    <message>
        <source>Positional encoding added to (sinusoidal) or rotating (RoPE) the queries and keys.</source>
        <translation>位置编码：加到查询和键上（正弦），或旋转它们（旋转位置编码 RoPE）。</translation>
    </message>
    <message>
        <source>&amp;Positions</source>
        <translation>位置编码(&amp;P)</translation>
    </message>
    <message>
        <source>Seed of the embeddings and projection matrices.</source>
        <translation>嵌入和投影矩阵的随机种子。</translation>
    </message>
    <message>
        <source>S&amp;eed</source>
        <translation>种子(&amp;E)</translation>
    </message>
    <message>
        <source>Scale</source>
        <translation>缩放</translation>
    </message>
    <message>
        <source>Multiplies the logits; the centre tick is the default 1/↭. Each tick doubles or halves it.</source>
        <translation>与 logits 相乘；中间刻度是默认的 1/↭。每个刻度使其加倍或减半。</translation>
    </message>
    <message>
        <source>⅛×</source>
        <translation>⅛×</translation>
    </message>
    <message>
        <source>1/↭</source>
        <translation>1/↭</translation>
    </message>
    <message>
        <source>The default scale of scaled dot-product attention.</source>
        <translation>缩放点积注意力的默认缩放。</translation>
    </message>
    <message>
        <source>8×</source>
        <translation>8×</translation>
    </message>
    <message>
        <source>&amp;Temperature</source>
        <translation>温度(&amp;T)</translation>
    </message>
    <message>
        <source>The logits are divided by it: high is flatter, low is sharper.</source>
        <translation>logits 除以它：高则更平，低则更尖锐。</translation>
    </message>
    <message>
        <source>Variant</source>
        <translation>变体</translation>
    </message>
    <message>
        <source>softmax (single head)</source>
        <translation>softmax（单头）</translation>
    </message>
    <message>
        <source>multi-head</source>
        <translation>多头注意力</translation>
    </message>
    <message>
        <source>cross-attention</source>
        <translation>交叉注意力</translation>
    </message>
    <message>
        <source>grouped-query (GQA)</source>
        <translation>分组查询注意力 (GQA)</translation>
    </message>
    <message>
        <source>multi-query (MQA)</source>
        <translation>多查询注意力 (MQA)</translation>
    </message>
    <message>
        <source>sliding window</source>
        <translation>滑动窗口</translation>
    </message>
    <message>
        <source>linear</source>
        <translation>线性</translation>
    </message>
    <message>
        <source>additive</source>
        <translation>加性</translation>
    </message>
    <message>
        <source>flash (tiled)</source>
        <translation>flash（分块）</translation>
    </message>
    <message>
        <source>KV cache decoding</source>
        <translation>键值缓存解码</translation>
    </message>
    <message>
        <source>The attention variant; picking one sets the settings it needs.</source>
        <translation>注意力变体；选择一个会设置它所需的参数。</translation>
    </message>
    <message>
        <source>Masks (combined)</source>
        <translation>掩码（组合）</translation>
    </message>
    <message>
        <source>C&amp;ausal</source>
        <translation>因果掩码(&amp;A)</translation>
    </message>
    <message>
        <source>A query sees only itself and earlier keys.</source>
        <translation>查询只能看到自身和更早的键。</translation>
    </message>
    <message>
        <source>Keys at or after the valid length are padding and masked.</source>
        <translation>位于有效长度及之后的键是填充，被掩码。</translation>
    </message>
    <message>
        <source>Number of real (non-padding) keys.</source>
        <translation>真实（非填充）键的个数。</translation>
    </message>
    <message>
        <source>&amp;Window, W</source>
        <translation>窗口(&amp;W)，W</translation>
    </message>
    <message>
        <source>A query sees keys within W positions on either side.</source>
        <translation>查询能看到两侧 W 个位置以内的键。</translation>
    </message>
    <message>
        <source>Window half-width W (0 or more).</source>
        <translation>窗口半宽 W（0 或更大）。</translation>
    </message>
    <message>
        <source>Causal wi&amp;ndow, W</source>
        <translation>因果窗口(&amp;N)，W</translation>
    </message>
    <message>
        <source>A query sees itself and the W keys before it.</source>
        <translation>查询能看到自身及其之前的 W 个键。</translation>
    </message>
    <message>
        <source>How many earlier keys the causal window keeps (0 or more).</source>
        <translation>因果窗口保留多少个更早的键（0 或更多）。</translation>
    </message>
    <message>
        <source>A hand-made mask: show the mask in the heatmap and click cells to toggle them.</source>
        <translation>手工掩码：在热力图中显示掩码，点击单元格切换。</translation>
    </message>
    <message>
        <source>What is wrong with the settings; the last good result stays on screen until it is fixed.</source>
        <translation>设置有什么问题；在修正之前，屏幕上保留上一次正确的结果。</translation>
    </message>
    <message>
        <source>Edit text</source>
        <translation>编辑文本</translation>
    </message>
    <message>
        <source>Edit source</source>
        <translation>编辑源文本</translation>
    </message>
    <message>
        <source>Cross-attention on</source>
        <translation>打开交叉注意力</translation>
    </message>
    <message>
        <source>Cross-attention off</source>
        <translation>关闭交叉注意力</translation>
    </message>
    <message>
        <source>Change tokenizer</source>
        <translation>修改分词器</translation>
    </message>
    <message>
        <source>Change d_model</source>
        <translation>修改 d_model</translation>
    </message>
    <message>
        <source>Change heads</source>
        <translation>修改头数</translation>
    </message>
    <message>
        <source>Change KV heads</source>
        <translation>修改键值头数</translation>
    </message>
    <message>
        <source>Change seed</source>
        <translation>修改种子</translation>
    </message>
    <message>
        <source>Change positions</source>
        <translation>修改位置编码</translation>
    </message>
    <message>
        <source>Identity projections</source>
        <translation>恒等投影</translation>
    </message>
    <message>
        <source>Change temperature</source>
        <translation>修改温度</translation>
    </message>
    <message>
        <source>Variant: %1</source>
        <translation>变体：%1</translation>
    </message>
    <message>
        <source>Change scale</source>
        <translation>修改缩放</translation>
    </message>
    <message>
        <source>The window W must be 0 or more (it is %1).</source>
        <translation>窗口 W 必须为 0 或更大（当前为 %1）。</translation>
    </message>
    <message>
        <source>Change mask</source>
        <translation>修改掩码</translation>
    </message>
    <message>
        <source>scale %1 (1/√%2 = %3)</source>
        <translation>缩放 %1（1/√%2 = %3）</translation>
    </message>
    <message>
        <source>query %1: “%2”</source>
        <translation>查询 %1：“%2”</translation>
    </message>
    <message>
        <source>Showing %1. The inputs below are the lab session&apos;s: editing one goes back to it.</source>
        <translation>正在显示 %1。下面的输入属于实验会话：编辑任意一项即回到会话。</translation>
    </message>
    <message>
        <source>Showing the model %1. The text runs the model; the other inputs are the lab session&apos;s: editing one goes back to it.</source>
        <translation>正在显示模型 %1。文本驱动模型运行；其他输入属于实验会话：编辑其中任意一项即回到会话。</translation>
    </message>
    <message>
        <source>&amp;Identity projections</source>
        <translation>恒等投影(&amp;I)</translation>
    </message>
    <message>
        <source>Q = K = V = X: skip the learned projections, as the tutorials do.</source>
        <translation>Q = K = V = X：像教程那样跳过可学习的投影。</translation>
    </message>
    <message>
        <source>Pa&amp;dding, length</source>
        <translation>填充，有效长度(&amp;D)</translation>
    </message>
    <message>
        <source>C&amp;ustom mask</source>
        <translation>自定义掩码(&amp;U)</translation>
    </message>
    <message>
        <source>%1 (the model&apos;s)</source>
        <translation>模型自带的 %1</translation>
    </message>
    <message>
        <source>The model %1 splits the text with its own %2 tokenizer (%3). Whitespace and character splitting are the lab&apos;s, for its random projections.</source>
        <translation>模型 %1 用它自带的 %2 分词器（%3）切分文本。按空格和按字符切分属于实验的随机投影。</translation>
    </message>
    <message>
        <source>“%1” (unknown token)</source>
        <translation>“%1”（未知词元）</translation>
    </message>
    <message>
        <source>“%1” (spelt %2)</source>
        <translation>“%1”（拆成 %2）</translation>
    </message>
    <message>
        <source>&lt;b&gt;Not in the model&apos;s vocabulary:&lt;/b&gt; %1. It never saw these words, so what it does with them is a guess.</source>
        <translation>&lt;b&gt;不在模型的词表中：&lt;/b&gt;%1。模型从没见过这些词，它对这些词的处理只是猜测。</translation>
    </message>
    <message>
        <source>Showing the model %1. The text is translated as &lt;b&gt;%2&lt;/b&gt;</source>
        <translation>正在显示模型 %1。文本被翻译为：&lt;b&gt;%2&lt;/b&gt;</translation>
    </message>
    <message>
        <source>The translation stopped after %1 tokens, the most written here: the end of the text is not translated. Shorten the text to translate all of it.</source>
        <translation>翻译写到 %1 个词元就停止了（这里最多写这么多）：文本的末尾没有被翻译。缩短文本才能全部翻译。</translation>
    </message>
    <message>
        <source>%1 %2 %</source>
        <translation>%1 %2 %</translation>
    </message>
    <message>
        <source>How sure the model was of each word it wrote: %1</source>
        <translation>模型对写出的每个词有多大把握：%1</translation>
    </message>
    <message>
        <source>Each row of the cross-attention is the step that wrote that word, reading the source words (keys and values).</source>
        <translation>交叉注意力的每一行是写出那个词的一步，它读取源语言的词（键和值）。</translation>
    </message>
    <message>
        <source>, </source>
        <comment>between the items of a list</comment>
        <translation>、</translation>
    </message>
    <message>
        <source>image patches (the model&apos;s)</source>
        <translation>图像图块（模型自带）</translation>
    </message>
    <message>
        <source>%1 cuts its image into patches; each patch is a token, after the class token [CLS].</source>
        <translation>%1 把图像切成图块；每个图块是一个词元，排在分类词元 [CLS] 之后。</translation>
    </message>
    <message>
        <source>open an image: File &gt; Open Image (Ctrl+I)</source>
        <translation>打开一张图像：文件 &gt; 打开图像（Ctrl+I）</translation>
    </message>
    <message>
        <source>Showing the model %1. The image runs the model (File &gt; Open Image, Ctrl+I); its tokens are [CLS] and the patches, row by row. The other inputs are the lab session&apos;s: editing one goes back to it.</source>
        <translation>正在显示模型 %1。图像驱动模型运行（文件 &gt; 打开图像，Ctrl+I）；它的词元是 [CLS] 和逐行排列的图块。其他输入属于实验会话：编辑其中任意一项即回到会话。</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::KvCacheView</name>
    <message>
        <source>Decode the next token</source>
        <translation>解码下一个词元</translation>
    </message>
    <message>
        <source>Use a KV cache</source>
        <translation>使用键值缓存</translation>
    </message>
    <message>
        <source>Run the session as a prefill of half the tokens, then decode the rest one at a time</source>
        <translation>先预填充一半词元，然后逐个解码其余词元</translation>
    </message>
    <message>
        <source>key (cache position)</source>
        <translation>键（缓存位置）</translation>
    </message>
    <message>
        <source>query</source>
        <translation>查询</translation>
    </message>
    <message>
        <source>K cache (dim)</source>
        <translation>K 缓存（维度）</translation>
    </message>
    <message>
        <source>cache row</source>
        <translation>缓存行</translation>
    </message>
    <message>
        <source>key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>step (0 = prefill)</source>
        <translation>步（0 = 预填充）</translation>
    </message>
    <message>
        <source>cache bytes</source>
        <translation>缓存字节数</translation>
    </message>
    <message>
        <source>MHA</source>
        <translation>多头注意力 MHA</translation>
    </message>
    <message>
        <source>GQA</source>
        <translation>分组查询注意力 GQA</translation>
    </message>
    <message>
        <source>MQA</source>
        <translation>多查询注意力 MQA</translation>
    </message>
    <message>
        <source>With a KV cache each new token computes only its own query row; the keys and values of earlier tokens are read from the cache, which grows by one row per step. Grouped-query and multi-query attention shrink the cache by sharing key/value heads.</source>
        <translation>使用键值缓存时，每个新词元只计算自己的查询行；之前词元的键和值从缓存中读取，缓存每步增加一行。分组查询注意力和多查询注意力通过共享键/值头来缩小缓存。</translation>
    </message>
    <message>
        <source>%1 was not decoded token by token: the KV-cache steps need a lab session.</source>
        <translation>%1 不是逐个词元解码的：键值缓存步骤需要实验会话。</translation>
    </message>
    <message>
        <source>MHA (%1 kv heads)</source>
        <translation>MHA（%1 个键值头）</translation>
    </message>
    <message>
        <source>GQA (%1 kv heads)</source>
        <translation>GQA（%1 个键值头）</translation>
    </message>
    <message>
        <source>MQA (%1 kv head)</source>
        <translation>MQA（%1 个键值头）</translation>
    </message>
    <message>
        <source>KV cache: no experiment yet</source>
        <translation>键值缓存：尚无计算结果</translation>
    </message>
    <message>
        <source>KV cache is off: set a prefill (Inputs panel, or --kv-cache-prefill N) to step through decoding</source>
        <translation>键值缓存未开启：设置预填充（输入面板，或 --kv-cache-prefill N）以逐步查看解码</translation>
    </message>
    <message>
        <source>prefill of %1 rows</source>
        <translation>预填充 %1 行</translation>
    </message>
    <message>
        <source>decode row %1 (%2)</source>
        <translation>解码第 %1 行（%2）</translation>
    </message>
    <message>
        <source>KV cache, head %1: step %2 of %3, %4; cache %5 rows = %6</source>
        <translation>键值缓存，头 %1：第 %2 步（共 %3 步），%4；缓存 %5 行 = %6</translation>
    </message>
    <message>
        <source>prefill</source>
        <translation>预填充</translation>
    </message>
    <message>
        <source>decode %1</source>
        <translation>解码 %1</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>键值缓存</translation>
    </message>
    <message>
        <source>new row’s weight</source>
        <translation>新行的权重</translation>
    </message>
    <message>
        <source>this session</source>
        <translation>当前会话</translation>
    </message>
    <message>
        <source>this model</source>
        <translation>当前模型</translation>
    </message>
    <message>
        <source>this dump</source>
        <translation>当前转储</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::LensDocument</name>
    <message>
        <source>Logit lens: %1</source>
        <translation>logit 透镜：%1</translation>
    </message>
    <message>
        <source>Attribution: %1</source>
        <translation>归因：%1</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::LessonPanel</name>
    <message>
        <source>Cannot open the lesson %1: %2</source>
        <translation>无法打开课程 %1：%2</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>%1, step %2</source>
        <translation>%1，第 %2 步</translation>
    </message>
    <message>
        <source>lesson</source>
        <translation>课程</translation>
    </message>
    <message>
        <source>%1: the model folder %2 was not found beside the lesson nor in AttnLab&apos;s resources folder</source>
        <translation>%1：在课程旁边和 AttnLab 的资源文件夹中都找不到模型文件夹 %2</translation>
    </message>
    <message>
        <source>Lesson step %1: %2</source>
        <translation>课程第 %1 步：%2</translation>
    </message>
    <message>
        <source>Close the lesson</source>
        <translation>关闭课程</translation>
    </message>
    <message>
        <source>◂ Back</source>
        <translation>◂ 上一步</translation>
    </message>
    <message>
        <source>The previous step (PageUp, ←)</source>
        <translation>上一步（PageUp，←）</translation>
    </message>
    <message>
        <source>Next ▸</source>
        <translation>下一步 ▸</translation>
    </message>
    <message>
        <source>The next step (PageDown, →); reveals the answer first</source>
        <translation>下一步（PageDown，→）；先揭示答案</translation>
    </message>
    <message>
        <source>Reveal the answer</source>
        <translation>揭示答案</translation>
    </message>
    <message>
        <source>Lesson</source>
        <translation>课程</translation>
    </message>
    <message>
        <source>No lesson open</source>
        <translation>没有打开课程</translation>
    </message>
    <message>
        <source>File ▸ Lessons</source>
        <translation>文件 ▸ 课程</translation>
    </message>
    <message>
        <source>&lt;p&gt;Choose a lesson in &lt;b&gt;File ▸ Lessons&lt;/b&gt;, or open your own with &lt;b&gt;Open Lesson…&lt;/b&gt;.&lt;/p&gt;&lt;p&gt;PageUp and PageDown (what presentation clickers send) and the arrow keys step through it.&lt;/p&gt;</source>
        <translation>&lt;p&gt;在&lt;b&gt;文件 ▸ 课程&lt;/b&gt;中选择一个课程，或用&lt;b&gt;打开课程…&lt;/b&gt;打开你自己的课程。&lt;/p&gt;&lt;p&gt;PageUp 和 PageDown（演示翻页器发送的按键）以及方向键可逐步浏览。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>%1 — step %2 / %3</source>
        <translation>%1 — 第 %2 / %3 步</translation>
    </message>
    <message>
        <source>Question:</source>
        <translation>问题：</translation>
    </message>
    <message>
        <source>Answer:</source>
        <translation>答案：</translation>
    </message>
    <message>
        <source>&amp;Lessons</source>
        <translation>课程(&amp;L)</translation>
    </message>
    <message numerus="yes">
        <source>%n step(s)</source>
        <translation>
            <numerusform>%n 步</numerusform>
        </translation>
    </message>
    <message>
        <source>Open &amp;Lesson…</source>
        <translation>打开课程(&amp;L)…</translation>
    </message>
    <message>
        <source>Open lesson</source>
        <translation>打开课程</translation>
    </message>
    <message>
        <source>AttnLab lessons (*.json)</source>
        <translation>AttnLab 课程 (*.json)</translation>
    </message>
    <message>
        <source>&amp;Close Lesson</source>
        <translation>关闭课程(&amp;C)</translation>
    </message>
    <message>
        <source>%1: the image %2 was not found beside the lesson nor in AttnLab&apos;s resources folder</source>
        <translation>%1：在课程旁边和 AttnLab 的资源文件夹中都找不到图像 %2</translation>
    </message>
    <message>
        <source>No lesson is open</source>
        <translation>没有打开的课程</translation>
    </message>
    <message>
        <source>%1 has no step %2 (it has %3)</source>
        <translation>%1 没有第 %2 步（共 %3 步）</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::LinesView</name>
    <message>
        <source>Each line joins a query (left) to a key (right); its thickness and opacity are the attention weight. Hover a token to see only its lines.</source>
        <translation>每条线把一个查询（左）连到一个键（右）；线的粗细和不透明度就是注意力权重。悬停在词元上只看它的线。</translation>
    </message>
    <message>
        <source>Lines: no attention to show</source>
        <translation>连线：没有可显示的注意力</translation>
    </message>
    <message>
        <source>Attention of head %1: query (left) → key (right)</source>
        <translation>头 %1 的注意力：查询（左）→ 键（右）</translation>
    </message>
    <message>
        <source>, only %1 “%2”</source>
        <translation>，只显示%1“%2”</translation>
    </message>
    <message>
        <source>query</source>
        <translation>查询</translation>
    </message>
    <message>
        <source>key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>Lines</source>
        <translation>连线</translation>
    </message>
    <message>
        <source>query %1</source>
        <translation>查询 %1</translation>
    </message>
    <message>
        <source>key %1</source>
        <translation>键 %1</translation>
    </message>
    <message>
        <source>queries %1–%2 and keys %3–%4 of %5 × %6: select a query to move the window</source>
        <translation>查询 %1–%2 与键 %3–%4（共 %5 × %6）：选择一个查询可移动这个窗口</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::LogitLensView</name>
    <message>
        <source>position (the token read there)</source>
        <translation>位置（该处读入的词元）</translation>
    </message>
    <message>
        <source>residual after</source>
        <translation>残差取自</translation>
    </message>
    <message>
        <source>The logit lens: the residual stream after the embedding and after each layer, read through the model&apos;s final norm and unembedding as if it were the last layer. Each cell is the token that layer would predict next there.</source>
        <translation>logit 透镜：嵌入之后和每一层之后的残差流，像最后一层一样经过模型的最终归一化和反嵌入读出。每个格子是该层在这里会预测的下一个词元。</translation>
    </message>
    <message>
        <source>The logit lens reads a model that runs one sequence; an encoder-decoder&apos;s decoder reads its source too.</source>
        <translation>logit 透镜读取只运行一个序列的模型；编码器–解码器的解码器还要读取源句子。</translation>
    </message>
    <message>
        <source>%1, position %2 (%3):</source>
        <translation>%1，位置 %2（%3）：</translation>
    </message>
    <message>
        <source>embedding</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <source>layer %1</source>
        <translation>第 %1 层</translation>
    </message>
    <message>
        <source>probability of the top token</source>
        <translation>最可能词元的概率</translation>
    </message>
    <message>
        <source>Open a model (File &gt; Open Model, or File &gt; Examples) and type a text: each layer&apos;s guess at the next token appears here.</source>
        <translation>打开一个模型（文件 &gt; 打开模型，或 文件 &gt; 示例）并输入文本：每一层对下一个词元的猜测会显示在这里。</translation>
    </message>
    <message>
        <source>Logit lens: %1</source>
        <translation>logit 透镜：%1</translation>
    </message>
    <message>
        <source>Logit lens of %1: the next token each layer would predict at each position (its probability as colour; hover for the top %2)</source>
        <translation>%1 的 logit 透镜：每一层在每个位置会预测的下一个词元（颜色表示其概率；悬停查看前 %2 个）</translation>
    </message>
    <message>
        <source>Logit lens: open a model and type a text</source>
        <translation>logit 透镜：请打开模型并输入文本</translation>
    </message>
    <message>
        <source>Logit lens</source>
        <translation>logit 透镜</translation>
    </message>
    <message>
        <source>Logit lens: computing on the new text</source>
        <translation>logit 透镜：正在为新文本计算</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::MainWindow</name>
    <message>
        <source>The cat sat on the mat: full vs causal</source>
        <translation>猫坐在垫子上：完整注意力与因果掩码</translation>
    </message>
    <message>
        <source>Padding with a valid length</source>
        <translation>填充与有效长度</translation>
    </message>
    <message>
        <source>Cross-attention: translation</source>
        <translation>交叉注意力：翻译</translation>
    </message>
    <message>
        <source>MHA vs GQA vs MQA</source>
        <translation>MHA、GQA 与 MQA</translation>
    </message>
    <message>
        <source>Sliding window</source>
        <translation>滑动窗口注意力</translation>
    </message>
    <message>
        <source>Linear vs softmax</source>
        <translation>线性注意力与 softmax</translation>
    </message>
    <message>
        <source>RoPE: relative positions</source>
        <translation>RoPE：相对位置</translation>
    </message>
    <message>
        <source>weights</source>
        <translation>注意力权重</translation>
    </message>
    <message>
        <source>raw scores q·k</source>
        <translation>原始分数 q·k</translation>
    </message>
    <message>
        <source>scaled scores</source>
        <translation>缩放后的分数</translation>
    </message>
    <message>
        <source>mask</source>
        <translation>掩码</translation>
    </message>
    <message>
        <source>output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Q</source>
        <translation>Q</translation>
    </message>
    <message>
        <source>K</source>
        <translation>K</translation>
    </message>
    <message>
        <source>V</source>
        <translation>V</translation>
    </message>
    <message>
        <source>%1 (Ctrl+%2)</source>
        <translation>%1 (Ctrl+%2)</translation>
    </message>
    <message>
        <source>Inputs</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>The current problem; the last good result stays on screen.</source>
        <translation>当前的问题；屏幕上保留上一次正确的结果。</translation>
    </message>
    <message>
        <source>Time the core took for the last result.</source>
        <translation>核心计算上一次结果所用的时间。</translation>
    </message>
    <message>
        <source>Computing in the background; the previous result stays shown.</source>
        <translation>正在后台计算；仍显示之前的结果。</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;New</source>
        <translation>新建(&amp;N)</translation>
    </message>
    <message>
        <source>Start again from the default session</source>
        <translation>从默认会话重新开始</translation>
    </message>
    <message>
        <source>&amp;Open…</source>
        <translation>打开(&amp;O)…</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>E&amp;xamples</source>
        <translation>示例(&amp;X)</translation>
    </message>
    <message>
        <source>Open the bundled lesson “%1”</source>
        <translation>打开自带的课程“%1”</translation>
    </message>
    <message>
        <source>&amp;Save</source>
        <translation>保存(&amp;S)</translation>
    </message>
    <message>
        <source>Save &amp;As…</source>
        <translation>另存为(&amp;A)…</translation>
    </message>
    <message>
        <source>&amp;Export Figure…</source>
        <translation>导出图(&amp;E)…</translation>
    </message>
    <message>
        <source>&amp;Copy Figure</source>
        <translation>复制图(&amp;C)</translation>
    </message>
    <message>
        <source>Export All &amp;Steps…</source>
        <translation>导出所有步骤(&amp;S)…</translation>
    </message>
    <message>
        <source>Export all steps works on the FlashAttention and KV-cache views</source>
        <translation>“导出所有步骤”用于 FlashAttention 和键值缓存视图</translation>
    </message>
    <message>
        <source>Export every step of %1</source>
        <translation>导出 %1 的每一步</translation>
    </message>
    <message>
        <source>PDF, one page per step (*.pdf);;PNG frames in a new folder (*)</source>
        <translation>PDF，每步一页 (*.pdf);;新文件夹中的 PNG 帧 (*)</translation>
    </message>
    <message>
        <source>Exported every step to %1</source>
        <translation>已将每一步导出到 %1</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Undo</source>
        <translation>撤销(&amp;U)</translation>
    </message>
    <message>
        <source>&amp;Redo</source>
        <translation>重做(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Theme</source>
        <translation>主题(&amp;T)</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>浅色主题</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>深色主题</translation>
    </message>
    <message>
        <source>Projector</source>
        <translation>投影仪主题</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Presentation Mode</source>
        <translation>演示模式(&amp;P)</translation>
    </message>
    <message>
        <source>Full screen with the inputs panel hidden (F11)</source>
        <translation>全屏并隐藏输入面板 (F11)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About AttnLab</source>
        <translation>关于 AttnLab(&amp;A)</translation>
    </message>
    <message>
        <source>About AttnLab</source>
        <translation>关于 AttnLab</translation>
    </message>
    <message>
        <source>Display</source>
        <translation>显示</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>撤销</translation>
    </message>
    <message>
        <source>Redo</source>
        <translation>重做</translation>
    </message>
    <message>
        <source>Undo: %1</source>
        <translation>撤销：%1</translation>
    </message>
    <message>
        <source>Nothing to undo</source>
        <translation>没有可撤销的操作</translation>
    </message>
    <message>
        <source>Redo: %1</source>
        <translation>重做：%1</translation>
    </message>
    <message>
        <source>Nothing to redo</source>
        <translation>没有可重做的操作</translation>
    </message>
    <message>
        <source> Show </source>
        <translation> 显示 </translation>
    </message>
    <message>
        <source>What the heatmap shows: weights, raw or scaled scores, the mask, the output, or Q/K/V of the focused head.</source>
        <translation>热力图显示的内容：当前头的注意力权重、原始或缩放后的分数、掩码、输出或 Q/K/V。</translation>
    </message>
    <message>
        <source> Head </source>
        <translation> 头 </translation>
    </message>
    <message>
        <source>The focused head (heatmap, entropy, statistics).</source>
        <translation>当前聚焦的头（热力图、熵、统计）。</translation>
    </message>
    <message>
        <source> Colours </source>
        <translation> 配色 </translation>
    </message>
    <message>
        <source>Colormap of the weights; signed values always use the diverging map.</source>
        <translation>注意力权重的配色；有正负的值总是使用发散配色。</translation>
    </message>
    <message>
        <source> Theme </source>
        <translation> 主题 </translation>
    </message>
    <message>
        <source>light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <source>dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <source>projector</source>
        <translation>投影仪</translation>
    </message>
    <message>
        <source>Light, dark, or projector (large fonts, thick lines).</source>
        <translation>浅色、深色或投影仪（大字体、粗线条）。</translation>
    </message>
    <message>
        <source>Values</source>
        <translation>数值</translation>
    </message>
    <message>
        <source>Write each cell&apos;s value in it (sequences of at most 24 tokens).</source>
        <translation>在每个单元格中写出其数值（最多 24 个词元的序列）。</translation>
    </message>
    <message>
        <source>&lt;b&gt;AttnLab&lt;/b&gt; %1&lt;br&gt;A lab for attention mechanisms: type tokens, pick a variant and a mask, watch the weights.</source>
        <translation>&lt;b&gt;AttnLab&lt;/b&gt; %1&lt;br&gt;注意力机制实验室：输入词元，选择变体和掩码，观察注意力权重。</translation>
    </message>
    <message>
        <source>This view does not apply: %1</source>
        <translation>此视图不适用：%1</translation>
    </message>
    <message>
        <source>Out of date: the figure shows the last settings that worked. %1</source>
        <translation>已过期：图中显示的是上一次有效的设置。%1</translation>
    </message>
    <message>
        <source>No problems.</source>
        <translation>没有问题。</translation>
    </message>
    <message>
        <source>untitled</source>
        <translation>未命名</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>%1[*] — AttnLab</source>
        <translation>%1[*] — AttnLab</translation>
    </message>
    <message>
        <source>Cannot open the example %1</source>
        <translation>无法打开示例 %1</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Open session</source>
        <translation>打开会话</translation>
    </message>
    <message>
        <source>AttnLab sessions (*.json)</source>
        <translation>AttnLab 会话 (*.json)</translation>
    </message>
    <message>
        <source>Save session</source>
        <translation>保存会话</translation>
    </message>
    <message>
        <source>Export %1</source>
        <translation>导出 %1</translation>
    </message>
    <message>
        <source>Export PNG</source>
        <translation>导出 PNG</translation>
    </message>
    <message>
        <source>Scale factor (2 = twice the pixels):</source>
        <translation>缩放倍数（2 = 两倍像素）：</translation>
    </message>
    <message>
        <source>Exported %1</source>
        <translation>已导出 %1</translation>
    </message>
    <message>
        <source>Figure copied to the clipboard</source>
        <translation>图已复制到剪贴板</translation>
    </message>
    <message>
        <source>Unsaved changes</source>
        <translation>未保存的更改</translation>
    </message>
    <message>
        <source>Save the changes to this session first?</source>
        <translation>先保存对此会话的更改吗？</translation>
    </message>
    <message>
        <source>Export &amp;Data…</source>
        <translation>导出数据(&amp;D)…</translation>
    </message>
    <message>
        <source>Export the data of %1</source>
        <translation>导出 %1 的数据</translation>
    </message>
    <message>
        <source>As on screen (%1 × %2)</source>
        <translation>与屏幕相同（%1 × %2）</translation>
    </message>
    <message>
        <source>Figure size</source>
        <translation>图的尺寸</translation>
    </message>
    <message>
        <source>Size of the figure:</source>
        <translation>图的尺寸：</translation>
    </message>
    <message>
        <source>%1 (%2)
%3: %4</source>
        <translation>%1（%2）
%3：%4</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>No view is shown</source>
        <translation>没有显示任何视图</translation>
    </message>
    <message>
        <source>Write the numbers this view draws (CSV, NumPy or JSON)</source>
        <translation>写出该视图所绘制的数值（CSV、NumPy 或 JSON）</translation>
    </message>
    <message>
        <source>&amp;Next View</source>
        <translation>下一个视图(&amp;N)</translation>
    </message>
    <message>
        <source>The next view, into the next group at a group&apos;s end (Ctrl+PgDown, Ctrl+Tab)</source>
        <translation>下一个视图，到一组的末尾时进入下一组（Ctrl+PgDown、Ctrl+Tab）</translation>
    </message>
    <message>
        <source>P&amp;revious View</source>
        <translation>上一个视图(&amp;R)</translation>
    </message>
    <message>
        <source>The previous view (Ctrl+PgUp, Ctrl+Shift+Tab)</source>
        <translation>上一个视图（Ctrl+PgUp、Ctrl+Shift+Tab）</translation>
    </message>
    <message>
        <source>S=%1×%2, H=%3</source>
        <translation>S=%1×%2，H=%3</translation>
    </message>
    <message>
        <source>%1 — %2 ms</source>
        <translation>%1 — %2 毫秒</translation>
    </message>
    <message>
        <source>grayscale</source>
        <translation>灰度</translation>
    </message>
    <message>
        <source>print</source>
        <translation>打印</translation>
    </message>
    <message>
        <source>diverging</source>
        <translation>发散</translation>
    </message>
    <message>
        <source>&amp;Undo %1</source>
        <translation>撤销“%1”(&amp;U)</translation>
    </message>
    <message>
        <source>&amp;Redo %1</source>
        <translation>重做“%1”(&amp;R)</translation>
    </message>
    <message>
        <source>0 to 1</source>
        <translation>0 到 1</translation>
    </message>
    <message>
        <source>data range</source>
        <translation>数据范围</translation>
    </message>
    <message>
        <source>per row</source>
        <translation>按行</translation>
    </message>
    <message>
        <source>log scale</source>
        <translation>对数刻度</translation>
    </message>
    <message>
        <source>chosen range…</source>
        <translation>自选范围…</translation>
    </message>
    <message>
        <source>Colour the weights from a low to a high end you choose (e.g. 0 to 0.01 for a long text); the colour bar says which.</source>
        <translation>按你选定的下限到上限给权重上色（长文本可用 0 到 0.01）；色条会标明范围。</translation>
    </message>
    <message>
        <source>How weights map to colours: 0 to 1; the smallest to the largest shown; each row over its own largest; log10; or a range you choose. A long text&apos;s weights are all near 1/S: per row, log or a chosen range shows them.</source>
        <translation>权重如何映射为颜色：0 到 1；从显示的最小值到最大值；每行除以该行最大值；取 log10；或自选范围。长文本的权重都接近 1/S：用“按行”、“对数刻度”或自选范围才看得出来。</translation>
    </message>
    <message>
        <source>The model did not open</source>
        <translation>模型未能打开</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::ModelDocument</name>
    <message>
        <source>Loading the model was cancelled; the previous state is kept.</source>
        <translation>已取消加载模型；保留之前的状态。</translation>
    </message>
    <message>
        <source>The text is %1 tokens; %2 reads at most %3. Shorten it to run the model.</source>
        <translation>文本有 %1 个词元，%2 最多读 %3 个。请缩短文本再运行模型。</translation>
    </message>
    <message>
        <source>The run was stopped; the views show the text&apos;s previous run.</source>
        <translation>运行已停止；各视图显示的是上一次运行的结果。</translation>
    </message>
    <message>
        <source>Close the model, keep its text</source>
        <translation>关闭模型，保留它的文本</translation>
    </message>
    <message>
        <source>%1 has no %2, so the window cannot turn text into tokens. Add the checkpoint&apos;s %2 to this folder, or run it on token ids without one: %3</source>
        <translation>%1 中没有 %2，窗口无法把文本切分成词元。请把该检查点的 %2 放进这个文件夹，或者不用它、以词元 id 运行：%3</translation>
    </message>
    <message>
        <source>no model</source>
        <translation>没有模型</translation>
    </message>
    <message>
        <source>%1: the image is empty</source>
        <translation>%1：图像是空的</translation>
    </message>
    <message>
        <source>Open the image %1</source>
        <translation>打开图像 %1</translation>
    </message>
    <message>
        <source>Open an image model first (File &gt; Open Model): %1 reads text.</source>
        <translation>请先打开一个图像模型（文件 &gt; 打开模型）：%1 读的是文本。</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::ModelView</name>
    <message>
        <source>Every layer (rows) and head (columns) of the model dump, each scaled to its own maximum. Click one to open it in the heatmap.</source>
        <translation>模型转储的每一层（行）和每个头（列），各自按自己的最大值缩放。点击一个在热力图中打开。</translation>
    </message>
    <message>
        <source>No model dump open.
File › Open Attention Dump… or Open Q/K/V Dump… shows every layer and head of a real model here.</source>
        <translation>没有打开模型转储。
文件 › 打开注意力转储… 或打开 Q/K/V 转储… 会在这里显示真实模型的每一层和每个头。</translation>
    </message>
    <message>
        <source>%1 — %2 layers × %3 heads, S = %4</source>
        <translation>%1 — %2 层 × %3 个头，S = %4</translation>
    </message>
    <message>
        <source>, batch %1 of %2</source>
        <translation>，批次 %1（共 %2）</translation>
    </message>
    <message>
        <source>L%1</source>
        <translation>L%1</translation>
    </message>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>head</source>
        <translation>头</translation>
    </message>
    <message>
        <source>mean entropy</source>
        <translation>平均熵</translation>
    </message>
    <message>
        <source>mean distance</source>
        <translation>平均距离</translation>
    </message>
    <message>
        <source>first-token mass</source>
        <translation>首词元权重和</translation>
    </message>
    <message>
        <source>L%1 H%2</source>
        <translation>L%1 H%2</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source> — computing every head&apos;s map…</source>
        <translation> — 正在计算每个头的注意力图…</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::NamedToken</name>
    <message>
        <source>%1: &quot;%2&quot; is not an id, and the model has no tokenizer.json to read it as text.</source>
        <translation>%1：&quot;%2&quot; 不是编号，而模型没有 tokenizer.json，无法把它当作文本读取。</translation>
    </message>
    <message>
        <source>%1: &quot;%2&quot; is %3 tokens (%4), not one. Type it as the model reads it, with its leading space: &quot; dog&quot;.</source>
        <translation>%1：&quot;%2&quot; 是 %3 个词元（%4），不是一个。请按模型读到的样子输入，连同前导空格：&quot; dog&quot;。</translation>
    </message>
    <message>
        <source>%1: token %2 is not in the vocabulary (ids 0 to %3).</source>
        <translation>%1：词元 %2 不在词表中（编号 0 到 %3）。</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::NextTokenView</name>
    <message>
        <source>0 (greedy)</source>
        <translation>0（贪心）</translation>
    </message>
    <message>
        <source>Divides the logits before the softmax: below 1 sharpens the distribution, above 1 flattens it; 0 always takes the most likely token.</source>
        <translation>在 softmax 之前除以 logits：小于 1 使分布更尖锐，大于 1 使其更平；0 总是取最可能的词元。</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Keep only the k most likely tokens (off: keep all).</source>
        <translation>只保留最可能的 k 个词元（关闭：全部保留）。</translation>
    </message>
    <message>
        <source>Nucleus: of those, keep the fewest most likely tokens whose probability adds up to at least p (1: keep all).</source>
        <translation>核采样：在这些词元中，保留概率之和至少为 p 的最少的最可能词元（1：全部保留）。</translation>
    </message>
    <message>
        <source>Sample</source>
        <translation>采样</translation>
    </message>
    <message>
        <source>Choose a token at random with the probabilities shown.</source>
        <translation>按显示的概率随机选择一个词元。</translation>
    </message>
    <message>
        <source>Append</source>
        <translation>追加</translation>
    </message>
    <message>
        <source>Append the chosen token to the text (Ctrl+Return); the model continues from its KV cache.</source>
        <translation>把选中的词元追加到文本（Ctrl+Return）；模型从其键值缓存继续。</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>probability after temperature, top-k, top-p</source>
        <translation>经温度、top-k、top-p 处理后的概率</translation>
    </message>
    <message>
        <source>chosen token</source>
        <translation>选中的词元</translation>
    </message>
    <message>
        <source>model&apos;s own probability (T = 1, no cut)</source>
        <translation>模型自身的概率（T = 1，不截断）</translation>
    </message>
    <message>
        <source>probability</source>
        <translation>概率</translation>
    </message>
    <message>
        <source>Click a bar to choose that token; Up/Down move the choice.</source>
        <translation>点击柱选择该词元；上/下键移动选择。</translation>
    </message>
    <message>
        <source>Open a model: File ▸ Open Model… — the next-token view shows what a real model predicts after your text.</source>
        <translation>请打开模型：文件 ▸ 打开模型… — 下一词元视图显示真实模型在你的文本之后预测什么。</translation>
    </message>
    <message>
        <source>Type some text: the model predicts what comes next.</source>
        <translation>输入一些文本：模型预测接下来是什么。</translation>
    </message>
    <message>
        <source>The model&apos;s logits are not finite here.</source>
        <translation>这里模型的 logits 不是有限值。</translation>
    </message>
    <message>
        <source>greedy (temperature 0)</source>
        <translation>贪心（温度 0）</translation>
    </message>
    <message>
        <source>temperature %1, top-k %2, top-p %3</source>
        <translation>温度 %1，top-k %2，top-p %3</translation>
    </message>
    <message>
        <source>%1 more tokens kept, %2 of the probability together.</source>
        <translation>另外保留了 %1 个词元，合计概率 %2。</translation>
    </message>
    <message>
        <source>Chosen: %1 (id %2).</source>
        <translation>已选：%1（id %2）。</translation>
    </message>
    <message>
        <source>id</source>
        <translation>id</translation>
    </message>
    <message>
        <source>model_probability</source>
        <translation>model_probability</translation>
    </message>
    <message>
        <source>Next token</source>
        <translation>下一个词元</translation>
    </message>
    <message>
        <source>model&apos;s own, with every head on</source>
        <translation>模型自身的概率（所有头打开）</translation>
    </message>
    <message>
        <source>Next token after “%1”</source>
        <translation>“%1”之后的下一个词元</translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <translation>%1 · %2</translation>
    </message>
    <message>
        <source> — 1 head switched off</source>
        <translation> — 已关闭 1 个头</translation>
    </message>
    <message>
        <source> — %1 heads switched off</source>
        <translation> — 已关闭 %1 个头</translation>
    </message>
    <message>
        <source>every_head_on_probability</source>
        <translation>every_head_on_probability</translation>
    </message>
    <message>
        <source>An encoder reads the whole text at once and predicts no next token: type [MASK] in the text and see the Fill mask tab.</source>
        <translation>编码器一次读入整段文本，不预测下一个词元：在文本中输入 [MASK]，然后看“填写掩码”标签页。</translation>
    </message>
    <message>
        <source>A translation model&apos;s next token is its decoder&apos;s next word of the translation, given the whole source: see the Translation tab, where it writes the translation word by word.</source>
        <translation>翻译模型的下一个词元，是解码器在读完整个源句之后写出的译文的下一个词：请看“翻译”标签页，它在那里一个词一个词地写出译文。</translation>
    </message>
    <message>
        <source>A translation model&apos;s next token is its decoder&apos;s next word of the translation, given the whole source. It wrote “%1” and ended it with &lt;/s&gt;: see the Translation tab to watch it write word by word.</source>
        <translation>翻译模型的下一个词元，是解码器在读完整个源句之后写出的译文的下一个词。它写出了“%1”，并以 &lt;/s&gt; 结束：请看“翻译”标签页，看它一个词一个词地写出来。</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::OpenModelDialog</name>
    <message>
        <source>Open Model</source>
        <translation>打开模型</translation>
    </message>
    <message>
        <source>Filter by name or model type</source>
        <translation>按名称或模型类型筛选</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Revision</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Model type</source>
        <translation>模型类型</translation>
    </message>
    <message>
        <source>Runs</source>
        <translation>能否运行</translation>
    </message>
    <message>
        <source>Bundled with AttnLab</source>
        <translation>AttnLab 随附</translation>
    </message>
    <message>
        <source>Hugging Face cache</source>
        <translation>Hugging Face 缓存</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>Choose Folder…</source>
        <translation>选择文件夹…</translation>
    </message>
    <message>
        <source>Any folder with config.json and its weights (*.safetensors or pytorch_model.bin), and tokenizer.json</source>
        <translation>任何包含 config.json、权重（*.safetensors 或 pytorch_model.bin）和 tokenizer.json 的文件夹</translation>
    </message>
    <message>
        <source>Open a model folder (config.json, *.safetensors, tokenizer.json)</source>
        <translation>打开模型文件夹（config.json、*.safetensors、tokenizer.json）</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>能</translation>
    </message>
    <message>
        <source>no: %1</source>
        <translation>不能：%1</translation>
    </message>
    <message>
        <source>AttnLab does not run this model: %1</source>
        <translation>AttnLab 无法运行此模型：%1</translation>
    </message>
    <message>
        <source>No models in the Hugging Face cache at %1. Type a Hub id below to download one (AttnLab runs %2), or choose a folder.</source>
        <translation>Hugging Face 缓存 %1 中没有模型。在下方输入 Hub 模型 id 即可下载（AttnLab 能运行 %2），或选择一个文件夹。</translation>
    </message>
    <message>
        <source>Hugging Face cache: %1 (the models AttnLab, transformers and huggingface-cli downloaded; set HF_HUB_CACHE or HF_HOME to read another).</source>
        <translation>Hugging Face 缓存：%1（AttnLab、transformers 和 huggingface-cli 下载的模型；设置 HF_HUB_CACHE 或 HF_HOME 可读取其他位置）。</translation>
    </message>
    <message>
        <source>Download from the &amp;Hub:</source>
        <translation>从 Hub 下载(&amp;H)：</translation>
    </message>
    <message>
        <source>ORG/NAME, e.g. openai-community/gpt2</source>
        <translation>ORG/NAME，例如 openai-community/gpt2</translation>
    </message>
    <message>
        <source>Download…</source>
        <translation>下载…</translation>
    </message>
    <message>
        <source>HF_HUB_OFFLINE is set: AttnLab reads the cache only</source>
        <translation>已设置 HF_HUB_OFFLINE：AttnLab 只读取缓存</translation>
    </message>
    <message>
        <source>Ask %1 for this model&apos;s files, then download them into the cache</source>
        <translation>向 %1 查询该模型的文件，然后下载到缓存中</translation>
    </message>
    <message>
        <source>Type a Hub id: ORG/NAME, or NAME, with @REVISION for a branch, tag or commit</source>
        <translation>输入 Hub 模型 id：ORG/NAME 或 NAME，可加 @REVISION 指定分支、标签或提交</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::OutputProjectionView</name>
    <message>
        <source>Multi-head attention&apos;s last step: the heads&apos; outputs side by side, multiplied by the output projection Wᴼ.</source>
        <translation>多头注意力的最后一步：各头的输出并排拼接，再乘以输出投影 Wᴼ。</translation>
    </message>
    <message>
        <source>The output projection belongs to a lab session: this source holds no Wᴼ.</source>
        <translation>输出投影属于实验会话：此来源没有 Wᴼ。</translation>
    </message>
    <message>
        <source>queries</source>
        <translation>查询</translation>
    </message>
    <message>
        <source>head outputs, in head order</source>
        <translation>各头的输出，按头的顺序</translation>
    </message>
    <message>
        <source>d_model</source>
        <translation>d_model</translation>
    </message>
    <message>
        <source>Output Wᴼ</source>
        <translation>输出 Wᴼ</translation>
    </message>
    <message>
        <source>× Wᴼ = I (identity projections)
%1</source>
        <translation>× Wᴼ = I（恒等投影）
%1</translation>
    </message>
    <message>
        <source>= z
[S, d_model] = %1</source>
        <translation>= z
[S, d_model] = %1</translation>
    </message>
    <message>
        <source>z = Concat(z₀ … z%1) Wᴼ: %2 heads × d_v %3 = h·d_v %4 → d_model %5</source>
        <translation>z = Concat(z₀ … z%1) Wᴼ：%2 个头 × d_v %3 = h·d_v %4 → d_model %5</translation>
    </message>
    <message>
        <source>Concat(heads)
[S, h·d_v] = %1</source>
        <translation>Concat(各头)
[S, h·d_v] = %1</translation>
    </message>
    <message>
        <source>× Wᴼ
[h·d_v, d_model] = %1</source>
        <translation>× Wᴼ
[h·d_v, d_model] = %1</translation>
    </message>
    <message>
        <source>h·d_v</source>
        <translation>h·d_v</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::PatchingDocument</name>
    <message>
        <source>Both texts make the model predict the same token: type tokens A and B whose difference the corruption changes.</source>
        <translation>两段文本让模型预测出同一个词元：请输入词元 A 和 B，使它们的差会随破坏而改变。</translation>
    </message>
    <message>
        <source>The clean and corrupted texts give the same logit difference: there is nothing to restore (change the corruption or the tokens).</source>
        <translation>干净文本和被破坏文本给出相同的 logit 差：没有可以恢复的东西（请修改破坏方式或词元）。</translation>
    </message>
    <message>
        <source>Edit corrupted text</source>
        <translation>编辑被破坏的文本</translation>
    </message>
    <message>
        <source>Edit patching metric</source>
        <translation>编辑修补度量</translation>
    </message>
    <message>
        <source>Change what is patched</source>
        <translation>更改修补对象</translation>
    </message>
    <message>
        <source>Open a model (File &gt; Open Model, or File &gt; Examples) and type a text.</source>
        <translation>打开一个模型（文件 &gt; 打开模型，或 文件 &gt; 示例）并输入文本。</translation>
    </message>
    <message>
        <source>Activation patching here reads a decoder&apos;s prediction at the last position; this model is not a decoder.</source>
        <translation>这里的激活修补读取解码器在最后一个位置的预测；这个模型不是解码器。</translation>
    </message>
    <message>
        <source>Type a text: it is the clean prompt.</source>
        <translation>请输入文本：它就是干净的提示。</translation>
    </message>
    <message>
        <source>Type a corrupted text: as many tokens as the clean one, with the words that matter changed.</source>
        <translation>请输入被破坏的文本：词元数与干净文本相同，只改动关键的词。</translation>
    </message>
    <message>
        <source>The clean text is %1 tokens and the corrupted one %2: patching needs the same number of tokens.</source>
        <translation>干净文本有 %1 个词元，被破坏文本有 %2 个：修补需要两者的词元数相同。</translation>
    </message>
    <message>
        <source>A and B are the same token: their difference is always 0.</source>
        <translation>A 和 B 是同一个词元：它们的差总是 0。</translation>
    </message>
    <message>
        <source>Cancelled: the previous result stays on screen.</source>
        <translation>已取消：屏幕上保留上一次的结果。</translation>
    </message>
    <message>
        <source>Metric token</source>
        <translation>指标词元</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::PatchingView</name>
    <message>
        <source>Corrupted text:</source>
        <translation>被破坏的文本：</translation>
    </message>
    <message>
        <source>the text with the words that matter changed, as many tokens</source>
        <translation>改动了关键词的文本，词元数相同</translation>
    </message>
    <message>
        <source>The corrupted prompt. The clean prompt is the model&apos;s text (the inputs panel); both must be the same number of tokens.</source>
        <translation>被破坏的提示。干净的提示是模型的文本（输入面板）；两者的词元数必须相同。</translation>
    </message>
    <message>
        <source>A token as the model reads it, with its leading space (“ dog”), or its id. Empty: the clean run&apos;s prediction (A) or the corrupted run&apos;s (B).</source>
        <translation>按模型读到的样子输入一个词元，带上前面的空格（“ dog”），或输入它的编号。留空：干净运行的预测（A）或被破坏运行的预测（B）。</translation>
    </message>
    <message>
        <source>Logit difference A</source>
        <translation>logit 差 A</translation>
    </message>
    <message>
        <source>heads&apos; outputs</source>
        <translation>各个头的输出</translation>
    </message>
    <message>
        <source>residual stream</source>
        <translation>残差流</translation>
    </message>
    <message>
        <source>What each patched run takes from the clean run: one head&apos;s output (layers × heads), or the residual stream entering one layer at one position (layers × positions).</source>
        <translation>每次修补运行从干净运行中取来什么：一个头的输出（层 × 头），或进入某一层某个位置的残差流（层 × 位置）。</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Patch again (after a cancel)</source>
        <translation>重新修补（取消之后）</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Activation patching: the corrupted prompt runs again with one piece of the clean run put in (a head&apos;s output, or the residual stream at one layer and position). Each cell: (patched − corrupted) / (clean − corrupted) of the logit difference A − B at the last position; 0 changes nothing, 1 restores the clean run. Double-click a head to open its attention map.</source>
        <translation>激活修补：把干净运行中的一部分（一个头的输出，或某一层某个位置的残差流）放入被破坏的提示，再运行一次。每个格子是最后一个位置上 logit 差 A − B 的 (修补后 − 被破坏) / (干净 − 被破坏)；0 表示没有改变，1 表示恢复了干净运行。双击一个头可打开它的注意力图。</translation>
    </message>
    <message>
        <source>Activation patching here reads a decoder&apos;s prediction at the last position; this model is not a decoder.</source>
        <translation>这里的激活修补读取解码器在最后一个位置的预测；这个模型不是解码器。</translation>
    </message>
    <message>
        <source>patched run %1 of %2</source>
        <translation>修补运行 %1 / %2</translation>
    </message>
    <message>
        <source>%1 patched runs in %2 s</source>
        <translation>修补 %1 次，%2 秒</translation>
    </message>
    <message>
        <source>layer %1, head %2: %3 of the clean difference restored</source>
        <translation>第 %1 层，第 %2 个头：恢复了干净差值的 %3</translation>
    </message>
    <message>
        <source>%1, position %2 (%3): %4 of the clean difference restored</source>
        <translation>%1，位置 %2（%3）：恢复了干净差值的 %4</translation>
    </message>
    <message>
        <source>into layer %1</source>
        <translation>进入第 %1 层</translation>
    </message>
    <message>
        <source>output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>restored: 0 corrupted, 1 clean</source>
        <translation>恢复：0 被破坏，1 干净</translation>
    </message>
    <message>
        <source>position (clean token / corrupted token)</source>
        <translation>位置（干净词元 / 被破坏词元）</translation>
    </message>
    <message>
        <source>Open a model (File &gt; Open Model, or File &gt; Examples), type a text and a corrupted text: which heads carry the difference appears here.</source>
        <translation>打开一个模型（文件 &gt; 打开模型，或 文件 &gt; 示例），输入文本和被破坏的文本：哪些头携带了差异会显示在这里。</translation>
    </message>
    <message>
        <source>Patching: running (progress above)</source>
        <translation>修补：正在运行（进度见上方）</translation>
    </message>
    <message>
        <source>Patching: %1</source>
        <translation>修补：%1</translation>
    </message>
    <message>
        <source>Activation patching of %1, %2: logit(“%3”) − logit(“%4”) at the last position is %5 on the clean text and %6 on the corrupted one; each cell is the share restored by taking that piece from the clean run</source>
        <translation>%1 的激活修补，%2：最后一个位置的 logit(“%3”) − logit(“%4”) 在干净文本上为 %5，在被破坏文本上为 %6；每个格子是从干净运行取来这一部分后恢复的比例</translation>
    </message>
    <message>
        <source>each head&apos;s output</source>
        <translation>各个头的输出</translation>
    </message>
    <message>
        <source>the residual stream</source>
        <translation>残差流</translation>
    </message>
    <message>
        <source>Patching: open a model, type a text and a corrupted text</source>
        <translation>修补：请打开模型，输入文本和被破坏的文本</translation>
    </message>
    <message>
        <source>Patch</source>
        <translation>修补</translation>
    </message>
    <message>
        <source>clean prediction</source>
        <translation>干净运行的预测</translation>
    </message>
    <message>
        <source>corrupted prediction</source>
        <translation>被破坏运行的预测</translation>
    </message>
    <message>
        <source>%1 patched runs in %2 ms</source>
        <translation>修补 %1 次，%2 毫秒</translation>
    </message>
    <message>
        <source>head</source>
        <translation>头</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::RopeView</name>
    <message>
        <source>RoPE rotates each pair of a query and of a key by an angle proportional to its position, with one frequency per pair. The dot product then depends only on the difference of the positions.</source>
        <translation>旋转位置编码 (RoPE) 把查询和键的每一对分量旋转一个与位置成正比的角度，每一对有自己的频率。于是点积只取决于位置之差。</translation>
    </message>
    <message>
        <source>%1 holds attention weights only: there are no q and k vectors to rotate.</source>
        <translation>%1 只包含注意力权重：没有可旋转的 q 和 k 向量。</translation>
    </message>
    <message>
        <source>RoPE needs an even head dimension (it is %1)</source>
        <translation>RoPE 需要偶数的头维度（当前为 %1）</translation>
    </message>
    <message>
        <source>RoPE: no tokens to show</source>
        <translation>RoPE：没有可显示的词元</translation>
    </message>
    <message>
        <source>RoPE, head %1: query %2 “%3” at position %4, key %5 “%6” at position %7
%8%9</source>
        <translation>RoPE，头 %1：查询 %2“%3”位于位置 %4，键 %5“%6”位于位置 %7
%8%9</translation>
    </message>
    <message>
        <source>half pairing (i, i + D/2)</source>
        <translation>对半配对 (i, i + D/2)</translation>
    </message>
    <message>
        <source>interleaved pairing (2i, 2i + 1)</source>
        <translation>交错配对 (2i, 2i + 1)</translation>
    </message>
    <message>
        <source>; RoPE is off in this session: showing what it would do</source>
        <translation>；本会话未开启 RoPE：显示开启后的效果</translation>
    </message>
    <message>
        <source>qₘ · kₙ</source>
        <translation>qₘ · kₙ</translation>
    </message>
    <message>
        <source>key at position %1</source>
        <translation>位于位置 %1 的键</translation>
    </message>
    <message>
        <source>other pairing (%1), key at 0</source>
        <translation>另一种配对（%1），键位于 0</translation>
    </message>
    <message>
        <source>half</source>
        <translation>对半</translation>
    </message>
    <message>
        <source>interleaved</source>
        <translation>交错</translation>
    </message>
    <message>
        <source>RoPE</source>
        <translation>旋转位置编码</translation>
    </message>
    <message>
        <source>pair %1: θ = %2
mθ = %3</source>
        <translation>第 %1 对：θ = %2
mθ = %3</translation>
    </message>
    <message>
        <source>m − n (query minus key position)</source>
        <translation>m − n（查询位置减键位置）</translation>
    </message>
    <message>
        <source>arrows: dotted = before rotation, solid = after; blue = query, orange = key; arcs = the angles mθ and nθ turned through; grey circle = the unit circle (equal axes); dash-dot line = this pair&apos;s distance</source>
        <translation>箭头：虚线 = 旋转前，实线 = 旋转后；蓝色 = 查询，橙色 = 键；弧线 = 转过的角度 mθ 和 nθ；灰色圆 = 单位圆（两轴等比例）；点划线 = 这一对的距离</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::Shapes</name>
    <message>
        <source>circle</source>
        <translation>圆形</translation>
    </message>
    <message>
        <source>square</source>
        <translation>正方形</translation>
    </message>
    <message>
        <source>triangle</source>
        <translation>三角形</translation>
    </message>
    <message>
        <source>cross</source>
        <translation>十字</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::StatisticsView</name>
    <message>
        <source>Seed 002&apos;s pattern analysis of the focused head.</source>
        <translation>按种子教程 002 对当前头做的注意力模式分析。</translation>
    </message>
    <message>
        <source>query</source>
        <translation>查询</translation>
    </message>
    <message>
        <source>entropy</source>
        <translation>注意力熵</translation>
    </message>
    <message>
        <source>weight (allowed cells)</source>
        <translation>注意力权重（允许的单元格）</translation>
    </message>
    <message>
        <source>cells</source>
        <translation>单元格数</translation>
    </message>
    <message>
        <source>Histogram of the allowed attention weights of the focused head.</source>
        <translation>当前头中允许的注意力权重的直方图。</translation>
    </message>
    <message>
        <source>No result yet.</source>
        <translation>尚无结果。</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <source>Head %1: diagonal mean %2, off-diagonal mean %3</source>
        <translation>头 %1：对角线平均 %2，非对角线平均 %3</translation>
    </message>
    <message>
        <source>most_attended</source>
        <translation>most_attended</translation>
    </message>
    <message>
        <source>most_attended_weight</source>
        <translation>most_attended_weight</translation>
    </message>
    <message>
        <source>mean_distance</source>
        <translation>mean_distance</translation>
    </message>
    <message>
        <source>first_token_weight</source>
        <translation>first_token_weight</translation>
    </message>
    <message>
        <source>Statistics</source>
        <translation>统计</translation>
    </message>
    <message>
        <source>&lt;br&gt;&lt;b&gt;Train mode, dropout p = %1:&lt;/b&gt; rows no longer sum to 1 (row sums %2 … %3); dropped weights are 0, the others × 1/(1 − p) = %4, so each row sums to 1 only on average. Entropy and the histogram are of these weights.</source>
        <translation>&lt;br&gt;&lt;b&gt;训练模式，dropout p = %1：&lt;/b&gt;每行之和不再是 1（行和 %2 … %3）；被丢弃的权重为 0，其余 × 1/(1 − p) = %4，因此每行之和只是平均为 1。熵和直方图基于这些权重。</translation>
    </message>
    <message>
        <source>Per query, as seed 002 analyses it: the key it attends to most other than itself and that weight, its weight on itself, whether that is larger, how spread and how far its attention reaches. Click a row to select it.</source>
        <translation>按种子教程 002 的分析，每个查询：除自身外最关注的键及其权重、对自身的权重、后者是否更大、注意力的分散程度和距离。点击一行即可选中该查询。</translation>
    </message>
    <message>
        <source>&lt;b&gt;Head %1.&lt;/b&gt; Diagonal (self) mean &lt;b&gt;%2&lt;/b&gt; vs off-diagonal mean &lt;b&gt;%3&lt;/b&gt; (ratio %4): %5. Mean entropy %6 nats. %7 empty rows.</source>
        <translation>&lt;b&gt;头 %1。&lt;/b&gt;对角线（自注意力）均值 &lt;b&gt;%2&lt;/b&gt;，非对角线均值 &lt;b&gt;%3&lt;/b&gt;（比值 %4）：%5。平均熵 %6 奈特。%7 个空行。</translation>
    </message>
    <message>
        <source>it mostly attends to itself</source>
        <translation>主要关注自己</translation>
    </message>
    <message>
        <source>it mostly attends to other tokens</source>
        <translation>主要关注其他词元</translation>
    </message>
    <message>
        <source>most attended
(not at its position)</source>
        <translation>最关注
（不含其位置上的键）</translation>
    </message>
    <message>
        <source>most attended
(not itself)</source>
        <translation>最关注
（不含自己）</translation>
    </message>
    <message>
        <source>its
weight</source>
        <translation>其
权重</translation>
    </message>
    <message>
        <source>weight at its
position</source>
        <translation>其位置上
的权重</translation>
    </message>
    <message>
        <source>self
weight</source>
        <translation>自注意力
权重</translation>
    </message>
    <message>
        <source>mostly
itself?</source>
        <translation>主要关注
自己？</translation>
    </message>
    <message>
        <source>mean
distance</source>
        <translation>平均
距离</translation>
    </message>
    <message>
        <source>first-token
weight</source>
        <translation>首词元
权重</translation>
    </message>
    <message>
        <source>The key the query attends to most, leaving out the key at the query&apos;s own position (cross-attention has no “itself”)</source>
        <translation>查询最关注的键，不计查询自身位置上的键（交叉注意力没有“自己”）</translation>
    </message>
    <message>
        <source>The key the query attends to most excluding itself, as seed 002 finds it (its own weight is in the self weight column)</source>
        <translation>查询除自己以外最关注的键，与种子教程 002 的求法相同（对自己的权重见“自注意力权重”一列）</translation>
    </message>
    <message>
        <source>The weight on that most-attended key</source>
        <translation>最关注的键上的权重</translation>
    </message>
    <message>
        <source>The query&apos;s weight on itself: the diagonal of the weights</source>
        <translation>查询对自己的权重：注意力权重矩阵的对角线</translation>
    </message>
    <message>
        <source>Entropy of the query&apos;s weights, in nats</source>
        <translation>查询权重的熵，单位为奈特</translation>
    </message>
    <message>
        <source>Weighted mean of |query position − key position|</source>
        <translation>|查询位置 − 键位置| 的加权平均</translation>
    </message>
    <message>
        <source>The weight on the first token</source>
        <translation>第一个词元上的权重</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>Yes when the self weight is larger than the most-attended weight (seed 002 asks whether a token mainly attends to itself)</source>
        <translation>自注意力权重大于最关注键的权重时为“是”（种子教程 002 的“是否主要关注自己”）</translation>
    </message>
    <message>
        <source>it attends to itself more than to the average other key, yet most of its weight goes to other tokens</source>
        <translation>它给自己的权重高于给一般其他键的，但大部分权重仍落在其他词元上</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::StepControls</name>
    <message>
        <source>◂ Back</source>
        <translation>◂ 上一步</translation>
    </message>
    <message>
        <source>Go back one step</source>
        <translation>后退一步</translation>
    </message>
    <message>
        <source>Step ▸</source>
        <translation>单步 ▸</translation>
    </message>
    <message>
        <source>Play</source>
        <translation>播放</translation>
    </message>
    <message>
        <source>Step through automatically</source>
        <translation>自动逐步播放</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Stop playing</source>
        <translation>停止播放</translation>
    </message>
    <message>
        <source>Steps done</source>
        <translation>已完成的步数</translation>
    </message>
    <message>
        <source>%1 / %2</source>
        <translation>%1 / %2</translation>
    </message>
    <message>
        <source>/s</source>
        <translation>/秒</translation>
    </message>
    <message>
        <source>Playing speed, in steps per second</source>
        <translation>播放速度，每秒步数</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::TranslationView</name>
    <message>
        <source>Write the next word</source>
        <translation>写出下一个词</translation>
    </message>
    <message>
        <source>Mean of heads</source>
        <translation>各头平均</translation>
    </message>
    <message>
        <source>Draw the mean of the layer&apos;s heads instead of the focused head</source>
        <translation>画出这一层所有头的平均，而不是当前选中的头</translation>
    </message>
    <message>
        <source>source token (key, value)</source>
        <translation>源词元（键、值）</translation>
    </message>
    <message>
        <source>word written (query)</source>
        <translation>写出的词（查询）</translation>
    </message>
    <message>
        <source>weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>Cross-attention while the model translates: each word the decoder writes is a query; the keys and values are the encoder&apos;s source tokens. The row of the newest word shows which source words it reads.</source>
        <translation>模型翻译时的交叉注意力：解码器写出的每个词是一个查询；键和值是编码器的源词元。最新一个词的那一行显示它在读哪些源词。</translation>
    </message>
    <message>
        <source>The translation view needs a translation model (an encoder-decoder such as File &gt; Examples &gt; tiny-marian-en-zh).</source>
        <translation>翻译视图需要一个翻译模型（编码器–解码器，例如 文件 &gt; 示例 &gt; tiny-marian-en-zh）。</translation>
    </message>
    <message>
        <source>Translation: waiting for the first run</source>
        <translation>翻译：等待第一次运行</translation>
    </message>
    <message>
        <source>decoder layer %1, mean of heads</source>
        <translation>解码器第 %1 层，各头平均</translation>
    </message>
    <message>
        <source>decoder layer %1, head %2</source>
        <translation>解码器第 %1 层，第 %2 个头</translation>
    </message>
    <message>
        <source>“%1” reads “%2” (%3)</source>
        <translation>“%1”读的是“%2”（%3）</translation>
    </message>
    <message>
        <source>Cross-attention, %1: word %2 of %3, %4</source>
        <translation>交叉注意力，%1：第 %2 / %3 个词，%4</translation>
    </message>
    <message>
        <source>Translation</source>
        <translation>翻译</translation>
    </message>
    <message>
        <source>Open a translation model (File &gt; Examples &gt; tiny-marian-en-zh), type English and watch it write Chinese word by word.</source>
        <translation>打开一个翻译模型（文件 &gt; 示例 &gt; tiny-marian-en-zh），输入英文，看它一个词一个词地写出中文。</translation>
    </message>
    <message>
        <source>Translation: the text is %1 tokens; %2 reads at most %3. Shorten it to translate.</source>
        <translation>翻译：文本有 %1 个词元，%2 最多读 %3 个。请缩短文本再翻译。</translation>
    </message>
    <message>
        <source>Translation: type a sentence in Text and the model writes its translation here, one word at a time.</source>
        <translation>翻译：在“文本”框中输入一个句子，模型会在这里一个词一个词地写出译文。</translation>
    </message>
    <message>
        <source>its probability %1 %</source>
        <translation>概率 %1 %</translation>
    </message>
    <message>
        <source>(stopped after %1 tokens: the rest of the text is not translated)</source>
        <translation>（写到 %1 个词元就停止了：文本其余部分没有翻译）</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::View</name>
    <message>
        <source>%1 is an image model: it reads an image, not text, so it has no next token, no text to translate and no token to predict. See the Image tab.</source>
        <translation>%1 是一个图像模型：它读的是图像，不是文本，所以没有下一个词元、没有要翻译的文本，也没有要预测的词元。请看“图像”页。</translation>
    </message>
</context>
<context>
    <name>attnlab::ui::ViewGroups</name>
    <message>
        <source>Attention</source>
        <translation>注意力</translation>
    </message>
    <message>
        <source>The attention weights, read several ways</source>
        <translation>注意力权重的几种读法</translation>
    </message>
    <message>
        <source>Step through</source>
        <translation>逐步演示</translation>
    </message>
    <message>
        <source>The computation around the weights, one step at a time</source>
        <translation>权重前后的计算，一步一步地演示</translation>
    </message>
    <message>
        <source>Real model</source>
        <translation>真实模型</translation>
    </message>
    <message>
        <source>A real model&apos;s attention: open a model or an attention dump (File menu)</source>
        <translation>真实模型的注意力：先打开一个模型或注意力转储（文件菜单）</translation>
    </message>
    <message>
        <source>Probe the model</source>
        <translation>探查模型</translation>
    </message>
    <message>
        <source>What an open model predicts, and which heads produce it: open a model (File menu)</source>
        <translation>打开的模型预测什么，又是哪些头产生了它：请打开一个模型（文件菜单）</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>A lab for attention</source>
        <translation>注意力实验室</translation>
    </message>
    <message>
        <source>Session file to open.</source>
        <translation>要打开的会话文件。</translation>
    </message>
    <message>
        <source>Save a PNG of each view into DIR, then exit.</source>
        <translation>把每个视图的 PNG 保存到 DIR，然后退出。</translation>
    </message>
    <message>
        <source>light, dark or projector</source>
        <translation>light、dark 或 projector</translation>
    </message>
    <message>
        <source>Open a bundled example by file name.</source>
        <translation>按文件名打开自带的示例。</translation>
    </message>
    <message>
        <source>en or zh_CN (default: the saved choice, else the system&apos;s language).</source>
        <translation>en 或 zh_CN（默认：保存的选择，否则为系统语言）。</translation>
    </message>
    <message>
        <source>Open a model folder (config.json, *.safetensors, tokenizer.json) and show it.</source>
        <translation>打开一个模型文件夹（config.json、*.safetensors、tokenizer.json）并显示它。</translation>
    </message>
    <message>
        <source>The text to run.</source>
        <translation>要运行的文本。</translation>
    </message>
    <message>
        <source>Edit text</source>
        <translation>编辑文本</translation>
    </message>
    <message>
        <source>The window&apos;s size, WxH.</source>
        <translation>窗口大小，宽x高。</translation>
    </message>
    <message>
        <source>Open a lesson file (or a bundled lesson&apos;s name, e.g. 16_translation) at its first step.</source>
        <translation>打开一个课程文件（或自带课程的名字，例如 16_translation），从第一步开始。</translation>
    </message>
    <message>
        <source>The image an image model (--model) reads.</source>
        <translation>图像模型（--model）读取的图像。</translation>
    </message>
</context>
</TS>
