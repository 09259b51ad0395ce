// The bundled translation model (resources/models/tiny-marian-en-zh, trained by
// scripts/train_translation_model.py) against the script that trained it: its reference.npz
// holds held-out English->Chinese pairs as ids, the script's own float32 forward (encoder,
// decoder and cross attentions, logits) and the grammar's word alignment. AttnLab must give
// the same forward, and greedy decoding must give the Chinese of each pair. The ids come from
// the npz, not from the tokenizer files (source.spm, target.spm, vocab.json).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "attnlab/io/npy.h"
#include "attnlab/model/attention_maps.h"
#include "attnlab/model/model.h"
#include "attnlab/model/text_run.h"
#include "reference_npz.h"

namespace attnlab::model {
namespace {

namespace fs = std::filesystem;
using test::int64s;
using test::relativeDifference;
using test::worstDifference;

fs::path modelDir() {
    return fs::path(ATTNLAB_SOURCE_DIR) / "resources/models/tiny-marian-en-zh";
}

/// One held-out pair of reference.npz.
struct Case {
    std::vector<std::int64_t> source;  ///< English ids, ending with </s>
    std::vector<std::int64_t> decoder; ///< the decoder's input: start token + target[:-1]
    std::vector<std::int64_t> target;  ///< Chinese ids, ending with </s>
    NpyArray encoderAttentions, decoderAttentions, crossAttentions, logits, alignment;
};

struct Reference {
    std::vector<Case> cases;
    std::vector<std::int64_t> bestHead; ///< [layer, head] of the best alignment head
};

Reference readReference() {
    const std::string path = (modelDir() / "reference.npz").string();
    auto members = readNpzMembers(path);
    if (!members.ok()) throw std::runtime_error(members.error());
    auto floats = [&](const std::string& key) {
        auto array = parseNpy(members->at(key), path + "[" + key + "]");
        if (!array.ok()) throw std::runtime_error(array.error());
        return std::move(*array);
    };
    Reference reference;
    for (int n = 0; members->count("case" + std::to_string(n) + "_source_ids"); ++n) {
        const std::string p = "case" + std::to_string(n) + "_";
        Case c;
        c.source = int64s(members->at(p + "source_ids"), path + "[" + p + "source_ids]");
        c.decoder = int64s(members->at(p + "decoder_ids"), path + "[" + p + "decoder_ids]");
        c.target = int64s(members->at(p + "target_ids"), path + "[" + p + "target_ids]");
        c.encoderAttentions = floats(p + "encoder_attentions");
        c.decoderAttentions = floats(p + "decoder_attentions");
        c.crossAttentions = floats(p + "cross_attentions");
        c.logits = floats(p + "logits");
        c.alignment = floats(p + "alignment");
        reference.cases.push_back(std::move(c));
    }
    reference.bestHead = int64s(members->at("best_alignment_head"), path);
    return reference;
}

Model load() {
    auto model = loadModel(modelDir().string());
    if (!model.ok()) throw std::runtime_error(model.error());
    return std::move(*model);
}

TEST(TranslationModel, IsAMarianEncoderDecoderThatStartsWithPad) {
    const Model model = load();
    EXPECT_EQ(model.config.kind, ModelKind::EncoderDecoder);
    std::ifstream in(modelDir() / "config.json");
    const auto config = nlohmann::json::parse(in);
    EXPECT_EQ(config.at("model_type"), "marian");
    EXPECT_EQ(config.at("decoder_start_token_id"), config.at("pad_token_id"));
    const Reference reference = readReference();
    ASSERT_GE(reference.cases.size(), 3u);
    for (const Case& c : reference.cases) {
        ASSERT_FALSE(c.decoder.empty());
        EXPECT_EQ(c.decoder.front(), config.at("decoder_start_token_id").get<std::int64_t>());
        EXPECT_EQ(c.source.back(), config.at("eos_token_id").get<std::int64_t>());
        EXPECT_EQ(c.target.back(), config.at("eos_token_id").get<std::int64_t>());
    }
}

TEST(TranslationModel, GivesTheTrainingScriptsAttentionsAndLogits) {
    const Model model = load();
    const Reference reference = readReference();
    RunOptions options;
    options.logits = LogitRows::All;
    options.threads = 2;
    for (std::size_t n = 0; n < reference.cases.size(); ++n) {
        const Case& c = reference.cases[n];
        auto run = runTranslation(model, c.source, c.decoder, options);
        ASSERT_TRUE(run.ok()) << run.error();
        EXPECT_LT(worstDifference(attentionRecord(model, *run, AttentionOf::Encoder), c.encoderAttentions), 1e-5)
            << "case " << n;
        EXPECT_LT(worstDifference(attentionRecord(model, *run), c.decoderAttentions), 1e-5) << "case " << n;
        EXPECT_LT(worstDifference(attentionRecord(model, *run, AttentionOf::Cross), c.crossAttentions), 1e-5) << "case " << n;
        EXPECT_LT(relativeDifference(run->logits, c.logits), 1e-5) << "case " << n;
    }
}

TEST(TranslationModel, GreedyDecodingGivesTheHeldOutTranslations) {
    // Argmax of the last logits row, appended, until </s>; each step extends the previous run.
    const Model model = load();
    const Reference reference = readReference();
    RunOptions options;
    options.logits = LogitRows::Last;
    options.threads = 2;
    const std::int64_t eos = reference.cases.front().target.back();
    for (std::size_t n = 0; n < reference.cases.size(); ++n) {
        const Case& c = reference.cases[n];
        std::vector<std::int64_t> target{c.decoder.front()};
        std::optional<ModelRun> previous;
        for (std::size_t step = 0; step < 3 * c.target.size() && target.back() != eos; ++step) {
            auto run =
                runTranslation(model, c.source, target, options, previous ? &*previous : nullptr);
            ASSERT_TRUE(run.ok()) << run.error();
            if (previous) {
                EXPECT_TRUE(run->extended) << "case " << n << ", step " << step;
                EXPECT_EQ(run->reusedPositions, static_cast<Index>(target.size() - 1));
            }
            Index next = 0;
            run->logits.row(run->logits.rows() - 1).maxCoeff(&next);
            target.push_back(next);
            previous = std::move(*run);
        }
        const std::vector<std::int64_t> translated(target.begin() + 1, target.end());
        EXPECT_EQ(translated, c.target) << "case " << n;
    }
}

TEST(TranslationModel, ATextRunTranslatesTheTextAndReusesWhatItShares) {
    // The one entry the window and the command line run a text through: an encoder-decoder's
    // text is the source, translated greedily into the held-out Chinese.
    const Model model = load();
    const Reference reference = readReference();
    const std::int64_t eos = reference.cases.front().target.back();
    TextRunOptions options;
    options.run.logits = textLogits(model.config);
    options.run.threads = 2;
    options.decoding.maxTokens = 64;
    std::optional<TextRun> previous;
    for (const Case& c : reference.cases) {
        auto text = runText(model, c.source, options, previous ? &previous->run : nullptr);
        ASSERT_TRUE(text.ok()) << text.error();
        EXPECT_EQ(text->generated, c.target);
        EXPECT_EQ(text->generated.back(), eos);
        EXPECT_EQ(text->steps.size(), text->generated.size());
        EXPECT_EQ(text->run.sourceIds, c.source);
        previous = std::move(*text);
    }
    // The same text again: the encoder and every decoder step it shares are reused.
    auto again = runText(model, reference.cases.back().source, options, &previous->run);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->generated, previous->generated);
    EXPECT_TRUE(again->run.extended);
}

TEST(TranslationModel, ItsAlignmentHeadLooksAtTheWordBeingTranslated) {
    // The head the script found best: for each Chinese token that translates an English word,
    // the cross-attention row of the step that predicts it peaks on that word, for most tokens.
    const Model model = load();
    const Reference reference = readReference();
    ASSERT_EQ(reference.bestHead.size(), 2u);
    const Index layer = reference.bestHead[0], head = reference.bestHead[1];
    int aligned = 0, hits = 0;
    for (const Case& c : reference.cases) {
        auto run = runTranslation(model, c.source, c.decoder, {});
        ASSERT_TRUE(run.ok()) << run.error();
        const Tensor4 cross = attentionRecord(model, *run, AttentionOf::Cross)[static_cast<std::size_t>(layer)];
        const Index rows = static_cast<Index>(c.decoder.size());
        const Index cols = static_cast<Index>(c.source.size());
        ASSERT_EQ(c.alignment.shape, (std::vector<Index>{rows, cols}));
        for (Index j = 0; j < rows; ++j) {
            const float* alignRow = c.alignment.data.data() + j * cols;
            if (std::none_of(alignRow, alignRow + cols, [](float v) { return v > 0; })) continue;
            Index best = 0;
            for (Index s = 1; s < cols; ++s)
                if (cross(0, head, j, s) > cross(0, head, j, best)) best = s;
            ++aligned;
            hits += alignRow[best] > 0;
        }
    }
    ASSERT_GT(aligned, 10);
    EXPECT_GE(hits, 0.75 * aligned) << hits << " of " << aligned << " tokens";
}

} // namespace
} // namespace attnlab::model
