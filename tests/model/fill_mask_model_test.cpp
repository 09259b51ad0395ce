// The bundled fill-mask model (resources/models/tiny-bert-en, trained by
// scripts/train_fill_mask_model.py) against the script that trained it: its reference.npz
// holds held-out sentences with words masked, as text and as ids, the script's own float32
// forward (attentions, logits) and the grammar's word at each masked position. AttnLab must
// give the same forward, fill each mask with that word, and tokenize each text to those ids.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "attnlab/io/npy.h"
#include "attnlab/model/attention_maps.h"
#include "attnlab/model/model.h"
#include "attnlab/tokenizer/tokenizer.h"
#include "reference_npz.h"

namespace attnlab::model {
namespace {

namespace fs = std::filesystem;
using test::int64s;
using test::relativeDifference;
using test::worstDifference;

fs::path modelDir() { return fs::path(ATTNLAB_SOURCE_DIR) / "resources/models/tiny-bert-en"; }

/// One masked sentence of reference.npz.
struct Case {
    std::string text;               ///< with [MASK] written in it
    std::vector<std::int64_t> ids;  ///< [CLS] ... [SEP], as tokenizer.json encodes the text
    std::vector<std::int64_t> masked;  ///< positions of [MASK] in ids
    std::vector<std::int64_t> fillers; ///< the grammar's word at each, the script's top-1
    NpyArray attentions, logits;       ///< [L, H, S, S], [S, V]
};

std::vector<Case> readReference() {
    const std::string path = (modelDir() / "reference.npz").string();
    auto members = readNpzMembers(path);
    if (!members.ok()) throw std::runtime_error(members.error());
    auto floats = [&](const std::string& key) {
        auto array = parseNpy(members->at(key), path + "[" + key + "]");
        if (!array.ok()) throw std::runtime_error(array.error());
        return std::move(*array);
    };
    auto texts = parseNpyStrings(members->at("texts"), path + "[texts]");
    if (!texts.ok()) throw std::runtime_error(texts.error());
    std::vector<Case> cases;
    for (std::size_t n = 0; n < texts->values.size(); ++n) {
        const std::string p = "case" + std::to_string(n) + "_";
        auto ints = [&](const std::string& key) {
            return int64s(members->at(p + key), path + "[" + p + key + "]");
        };
        Case c;
        c.text = texts->values[n];
        c.ids = ints("ids");
        c.masked = ints("masked_positions");
        c.fillers = ints("filler_ids");
        c.attentions = floats(p + "attentions");
        c.logits = floats(p + "logits");
        cases.push_back(std::move(c));
    }
    return cases;
}

Model load() {
    auto model = loadModel(modelDir().string());
    if (!model.ok()) throw std::runtime_error(model.error());
    return std::move(*model);
}

std::int64_t tokenId(const Tokenizer& tokenizer, const std::string& token) {
    const auto id = tokenizer.tokenToId(token);
    if (!id) throw std::runtime_error("tokenizer.json lacks " + token);
    return *id;
}

TEST(FillMaskModel, IsABertEncoderWithMaskedSentences) {
    const Model model = load();
    EXPECT_EQ(model.config.kind, ModelKind::Encoder);
    std::ifstream in(modelDir() / "config.json");
    const auto config = nlohmann::json::parse(in);
    EXPECT_EQ(config.at("model_type"), "bert");
    EXPECT_EQ(config.at("architectures"), nlohmann::json::array({"BertForMaskedLM"}));
    auto tokenizer = Tokenizer::fromFile((modelDir() / "tokenizer.json").string());
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
    const std::int64_t cls = tokenId(*tokenizer, "[CLS]"), sep = tokenId(*tokenizer, "[SEP]");
    const std::int64_t mask = tokenId(*tokenizer, "[MASK]");
    const std::vector<Case> cases = readReference();
    ASSERT_GE(cases.size(), 3u);
    for (const Case& c : cases) {
        ASSERT_GE(c.ids.size(), 3u);
        EXPECT_EQ(c.ids.front(), cls) << c.text;
        EXPECT_EQ(c.ids.back(), sep) << c.text;
        ASSERT_FALSE(c.masked.empty()) << c.text;
        ASSERT_EQ(c.masked.size(), c.fillers.size()) << c.text;
        for (std::int64_t position : c.masked) {
            ASSERT_LT(position, static_cast<std::int64_t>(c.ids.size()));
            EXPECT_EQ(c.ids[static_cast<std::size_t>(position)], mask) << c.text;
        }
    }
}

TEST(FillMaskModel, TokenizerGivesTheReferenceIds) {
    auto tokenizer = Tokenizer::fromFile((modelDir() / "tokenizer.json").string());
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
    for (const Case& c : readReference())
        EXPECT_EQ(tokenizer->encode(c.text).ids, c.ids) << c.text;
}

TEST(FillMaskModel, GivesTheTrainingScriptsAttentionsAndLogits) {
    const Model model = load();
    RunOptions options;
    options.logits = LogitRows::All;
    options.threads = 2;
    for (const Case& c : readReference()) {
        auto run = runModel(model, c.ids, options);
        ASSERT_TRUE(run.ok()) << run.error();
        EXPECT_LT(worstDifference(attentionRecord(model, *run), c.attentions), 1e-5) << c.text;
        EXPECT_LT(relativeDifference(run->logits, c.logits), 1e-5) << c.text;
    }
}

TEST(FillMaskModel, FillsEachMaskWithTheGrammarsWord) {
    const Model model = load();
    auto tokenizer = Tokenizer::fromFile((modelDir() / "tokenizer.json").string());
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.error();
    RunOptions options;
    options.logits = LogitRows::All;
    for (const Case& c : readReference()) {
        auto run = runModel(model, c.ids, options);
        ASSERT_TRUE(run.ok()) << run.error();
        for (std::size_t m = 0; m < c.masked.size(); ++m) {
            Index best = 0;
            run->logits.row(static_cast<Index>(c.masked[m])).maxCoeff(&best);
            EXPECT_EQ(best, c.fillers[m])
                << c.text << ": mask " << m << " filled with "
                << tokenizer->idToToken(best).value_or("?") << ", expected "
                << tokenizer->idToToken(c.fillers[m]).value_or("?");
        }
    }
}

TEST(FillMaskModel, AttentionIsTwoWay) {
    // Unlike a decoder's causal attention, BERT's rows also weigh the tokens after the query:
    // the first [MASK] of each case gives some weight to later tokens in every layer.
    const Model model = load();
    for (const Case& c : readReference()) {
        auto run = runModel(model, c.ids, {});
        ASSERT_TRUE(run.ok()) << run.error();
        const Index query = static_cast<Index>(c.masked.front());
        const Index size = static_cast<Index>(c.ids.size());
        const auto maps = attentionRecord(model, *run);
        for (std::size_t layer = 0; layer < maps.size(); ++layer) {
            const Tensor4& weights = maps[layer];
            double later = 0;
            for (Index head = 0; head < weights.heads; ++head)
                for (Index key = query + 1; key < size; ++key)
                    later += weights(0, head, query, key);
            EXPECT_GT(later, 0.01) << c.text << ", layer " << layer;
        }
    }
}

} // namespace
} // namespace attnlab::model
