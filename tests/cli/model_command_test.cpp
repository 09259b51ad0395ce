// End-to-end tests of `attnlab model`: the built binary runs the committed tiny checkpoints
// (tests/model/fixtures, made by scripts/make_model_fixtures.py) and its .npz is compared with
// the float64 torch reference stored beside them, read back as an attention dump, and checked
// for its ids and tokens. Bad input exits 2 with one line and writes nothing.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "attnlab/io/dump.h"
#include "attnlab/io/npy.h"
#include "command_runner.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;

const std::string kIds = "3,17,5,39,0,22,8"; // the ids the fixtures' references ran on

std::string fixture(const std::string& name) {
    return std::string(ATTNLAB_SOURCE_DIR) + "/tests/model/fixtures/" + name;
}

using RunResult = test::CommandResult;

class ModelCommand : public test::CommandFolderTest {
protected:
    RunResult model(const std::vector<std::string>& args) const {
        return runIn(ATTNLAB_BINARY, "model", args);
    }

    /// Status 2, one line on stderr naming `culprit` (and `what`), the work folder unchanged.
    void expectRejected(const std::vector<std::string>& args, const std::string& culprit,
                        const std::string& what = "") const {
        const auto before = listing();
        const RunResult run = model(args);
        EXPECT_EQ(run.status, 2) << run.err;
        EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
        EXPECT_NE(run.err.find(culprit), std::string::npos) << run.err;
        if (!what.empty()) {
            EXPECT_NE(run.err.find(what), std::string::npos) << run.err;
        }
        EXPECT_EQ(listing(), before);
    }

    /// A copy of a fixture inside the work folder, to spoil.
    std::string copyFixture(const std::string& name) const {
        const fs::path target = m_root / "work" / name;
        fs::create_directories(target);
        for (const auto& entry : fs::directory_iterator(fixture(name)))
            fs::copy_file(entry.path(), target / entry.path().filename());
        return target.string();
    }
};

std::map<std::string, std::string> members(const std::string& path) {
    auto read = readNpzMembers(path);
    EXPECT_TRUE(read.ok()) << (read.ok() ? "" : read.error());
    return read.ok() ? *read : std::map<std::string, std::string>{};
}

NpyArray floats(const std::string& bytes, const std::string& name) {
    auto array = parseNpy(bytes, name);
    EXPECT_TRUE(array.ok()) << (array.ok() ? "" : array.error());
    return array.ok() ? *array : NpyArray{};
}

double maxDifference(const NpyArray& a, const NpyArray& b) {
    if (a.shape != b.shape) return INFINITY;
    double worst = 0;
    for (std::size_t i = 0; i < a.data.size(); ++i)
        worst = std::max(worst, std::abs(static_cast<double>(a.data[i]) - b.data[i]));
    return worst;
}

TEST_F(ModelCommand, WritesTheReferenceAttentionsLogitsAndQkv) {
    for (const std::string name :
         {"gpt2_lmhead_f32", "llama_gqa_llama3_bf16_sharded", "qwen3_qknorm", "mistral_window3"}) {
        const std::string out = file(name + ".npz");
        const RunResult run = model({"--model", fixture(name), "--ids", kIds, "--out", out,
                                     "--logits", "--qkv", "--threads", "2"});
        ASSERT_EQ(run.status, 0) << run.err;
        EXPECT_TRUE(run.err.empty()) << run.err;
        auto got = members(out);
        auto expected = members(fixture(name) + "/expected.npz");
        for (const std::string key : {"attentions", "logits", "q", "k", "v"}) {
            ASSERT_TRUE(got.count(key)) << name << " lacks " << key;
            EXPECT_LT(maxDifference(floats(got[key], key), floats(expected[key], key)), 2e-4)
                << name << " " << key;
        }
        // ids: int64, little-endian, the ids asked for (the same bytes numpy wrote).
        ASSERT_TRUE(got.count("ids"));
        EXPECT_NE(got["ids"].find("'descr': '<i8'"), std::string::npos);
        EXPECT_EQ(got["ids"].substr(got["ids"].size() - 56),
                  expected["ids"].substr(expected["ids"].size() - 56));
    }
}

// --stats reports the times and the peak memory against the checkpoint's size on stderr,
// after the archive is written, and changes nothing else.
TEST_F(ModelCommand, StatsReportThePeakMemoryAgainstTheCheckpoint) {
    const std::string name = "llama_gqa_llama3_bf16_sharded";
    const std::string out = file("stats.npz");
    const RunResult run = model({"--model", fixture(name), "--ids", kIds, "--out", out, "--stats"});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_NE(run.err.find("peak RSS"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("x the checkpoint's"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("forward"), std::string::npos) << run.err;
    EXPECT_TRUE(run.out.empty()) << run.out;
    EXPECT_TRUE(members(out).count("attentions"));
}

/// The int64 values of an .npz member, as "a,b,c".
std::string idList(const std::string& bytes) {
    auto header = parseNpyHeader(bytes, "ids");
    EXPECT_TRUE(header.ok() && header->descr == "<i8");
    if (!header.ok()) return "";
    std::string list;
    for (Index i = 0; i < header->count; ++i) {
        std::int64_t id = 0;
        std::memcpy(&id, bytes.data() + header->dataOffset + 8 * i, 8);
        list += (i ? "," : "") + std::to_string(id);
    }
    return list;
}

TEST_F(ModelCommand, TranslationModelsWriteTransformersThreeAttentions) {
    // Checkpoints saved by transformers 5.17 with what it computed (fixtures/hf/README.md).
    for (const std::string name : {"hf/bart", "hf/marian", "hf/t5"}) {
        auto reference = members(fixture(name) + "/reference.npz");
        const std::string out = file("translation.npz");
        const RunResult run =
            model({"--model", fixture(name), "--ids", idList(reference["ids"]), "--target-ids",
                   idList(reference["decoder_ids"]), "--out", out, "--logits"});
        ASSERT_EQ(run.status, 0) << run.err;
        auto got = members(out);
        for (const std::string key :
             {"encoder_attentions", "decoder_attentions", "cross_attentions", "logits"}) {
            ASSERT_TRUE(got.count(key)) << name << " lacks " << key;
            EXPECT_LT(maxDifference(floats(got[key], key), floats(reference[key], key)), 1e-4)
                << name << " " << key;
        }
        EXPECT_EQ(idList(got["ids"]), idList(reference["ids"]));
        EXPECT_EQ(idList(got["decoder_ids"]), idList(reference["decoder_ids"]));

        // Each attention opens as a dump; cross-attention's queries are the target's tokens.
        auto cross = loadAttentionDump(out);
        ASSERT_TRUE(cross.ok()) << cross.error();
        EXPECT_EQ(cross->kind, "cross");
        const auto targetLength = static_cast<Index>(floats(got["logits"], "logits").shape[0]);
        EXPECT_EQ(cross->sq, targetLength);
        EXPECT_EQ(cross->queryTokens(0).size(), static_cast<std::size_t>(targetLength));
        EXPECT_EQ(cross->keyTokens(0).size(), static_cast<std::size_t>(cross->sk));
        auto encoder = loadAttentionDump(out, "", "encoder");
        ASSERT_TRUE(encoder.ok());
        EXPECT_EQ(encoder->sq, cross->sk);
        EXPECT_FALSE(loadAttentionDump(out, "", "sideways").ok());
    }
}

TEST_F(ModelCommand, TranslateDecodesTheArgmaxOfEachStep) {
    const RunResult decoded = model({"--model", fixture("hf/bart"), "--ids", "5,17,33,8,2",
                                     "--translate", "--max-tokens", "6", "--json"});
    ASSERT_EQ(decoded.status, 0) << decoded.err;
    const auto report = nlohmann::json::parse(decoded.out);
    const auto generated = report.at("generated").get<std::vector<std::int64_t>>();
    ASSERT_FALSE(generated.empty());
    EXPECT_EQ(report.at("steps").size(), generated.size());
    // A full run on start + the tokens before the last gives the same argmax in every row.
    std::string target = "2"; // BART's decoder_start_token_id
    for (std::size_t i = 0; i + 1 < generated.size(); ++i)
        target += "," + std::to_string(generated[i]);
    const std::string out = file("decoded.npz");
    ASSERT_EQ(model({"--model", fixture("hf/bart"), "--ids", "5,17,33,8,2", "--target-ids", target,
                     "--out", out, "--logits"})
                  .status,
              0);
    const NpyArray logits = floats(members(out)["logits"], "logits");
    ASSERT_EQ(logits.shape[0], static_cast<Index>(generated.size()));
    for (Index row = 0; row < logits.shape[0]; ++row) {
        const auto begin = logits.data.begin() + row * logits.shape[1];
        const auto best = std::max_element(begin, begin + logits.shape[1]) - begin;
        EXPECT_EQ(best, generated[static_cast<std::size_t>(row)]) << "row " << row;
    }
}

/// The values of a version 1 .npy of little-endian int64s.
std::vector<std::int64_t> int64sOf(const std::string& npy) {
    EXPECT_NE(npy.find("'<i8'"), std::string::npos);
    const std::size_t data =
        10 + static_cast<unsigned char>(npy[8]) + 256 * static_cast<unsigned char>(npy[9]);
    std::vector<std::int64_t> values((npy.size() - data) / 8);
    std::memcpy(values.data(), npy.data() + data, values.size() * 8);
    return values;
}

/// The CRC-32 of PNG chunks (ISO 3309), for a header written by hand.
std::uint32_t crc32(const std::string& bytes) {
    std::uint32_t crc = 0xffffffffu;
    for (const unsigned char b : bytes) {
        crc ^= b;
        for (int k = 0; k < 8; ++k)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return crc ^ 0xffffffffu;
}

std::string bigEndian(std::uint32_t v) {
    return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
}

/// A chunk: its length, its type and data, and their CRC.
std::string pngChunk(const std::string& typeAndData) {
    return bigEndian(static_cast<std::uint32_t>(typeAndData.size() - 4)) + typeAndData +
           bigEndian(crc32(typeAndData));
}

/// A PNG whose header claims width x height, with a few bytes of image data.
std::string pngHeaderOnly(std::uint32_t width, std::uint32_t height) {
    const std::string ihdr = "IHDR" + bigEndian(width) + bigEndian(height) +
                             std::string("\x08\x02\x00\x00\x00", 5); // 8-bit RGB
    return std::string("\x89PNG\r\n\x1a\n", 8) + pngChunk(ihdr) +
           pngChunk("IDAT" + std::string("\x78\x9c\x03\x00\x00\x00\x00\x01", 8)) + pngChunk("IEND");
}

// The image classifier end to end: the PNG decoded by Qt, resized as Pillow resizes it, run,
// against the float64 torch forward on Pillow's and numpy's pixel values (fixtures/vit,
// scripts/make_vision_fixtures.py). A build without Qt reads no images and says so.
TEST_F(ModelCommand, AnImageClassifierReadsAnImageAsTheReferenceDoes) {
    const std::string out = file("vit.npz");
    const RunResult run = model({"--model", fixture("vit"), "--image", fixture("vit/image.png"),
                                 "--out", out, "--logits", "--json", "--top-k", "3"});
    if (run.err.find("built without Qt") != std::string::npos) {
        EXPECT_EQ(run.status, 2);
        EXPECT_FALSE(fs::exists(out));
        return;
    }
    ASSERT_EQ(run.status, 0) << run.err;
    auto got = members(out);
    auto expected = members(fixture("vit/processed.npz"));
    EXPECT_LT(maxDifference(floats(got["attentions"], "attentions"),
                            floats(expected["image_attentions"], "image_attentions")),
              1e-5);
    EXPECT_LT(maxDifference(floats(got["logits"], "logits"),
                            floats(expected["image_logits"], "image_logits")),
              1e-5);
    const std::vector<std::int64_t> cells = int64sOf(got["patch_grid"]);
    ASSERT_EQ(cells.size(), 16u);
    for (std::size_t i = 0; i < cells.size(); ++i)
        EXPECT_EQ(cells[i], static_cast<std::int64_t>(i + 1)); // after the class token
    const auto report = nlohmann::json::parse(run.out);
    EXPECT_EQ(report["patch_grid"], nlohmann::json({4, 4}));
    EXPECT_EQ(report["tokens"], 17);
    ASSERT_EQ(report["labels"].size(), 3u);
    double total = 0;
    for (std::size_t i = 0; i < 3; ++i) {
        total += report["labels"][i]["probability"].get<double>();
        if (i > 0) {
            EXPECT_GE(report["labels"][i - 1]["probability"].get<double>(),
                      report["labels"][i]["probability"].get<double>());
        }
    }
    EXPECT_NEAR(total, 1.0, 1e-12);
    // The most likely label is the reference logits' argmax.
    const NpyArray logits = floats(expected["image_logits"], "image_logits");
    const auto best =
        std::max_element(logits.data.begin(), logits.data.end()) - logits.data.begin();
    EXPECT_EQ(report["labels"][0]["id"], best);
}

// DINOv2 and CLIP's image tower end to end on the same PNG, each through its own processor
// (BiT's and CLIP's shortest edge and crop): DINOv2's positions interpolated to the crop's grid
// and its classes; CLIP, a model without classes, writes its image embedding and refuses
// --logits (fixtures/*/on_image.npz, the float64 torch forwards on Pillow's pixels).
TEST_F(ModelCommand, DinoV2AndClipReadAnImageAsTheReferenceDoes) {
    for (const auto& [name, key] :
         {std::pair{"dinov2", "logits"}, std::pair{"clip_vision", "image_embeds"},
          std::pair{"clip", "image_embeds"}}) {
        SCOPED_TRACE(name);
        const std::string out = file(std::string(name) + ".npz");
        std::vector<std::string> args = {
            "--model", fixture(name), "--image", fixture("vit/image.png"), "--out", out, "--json"};
        if (std::string(key) == "logits") args.push_back("--logits");
        const RunResult run = model(args);
        if (run.err.find("built without Qt") != std::string::npos) return;
        ASSERT_EQ(run.status, 0) << run.err;
        auto got = members(out);
        auto expected = members(fixture(std::string(name) + "/on_image.npz"));
        EXPECT_LT(maxDifference(floats(got["attentions"], "attentions"),
                                floats(expected["attentions"], "attentions")),
                  1e-5);
        EXPECT_LT(maxDifference(floats(got[key], key), floats(expected[key], key)), 1e-5);
        const auto report = nlohmann::json::parse(run.out);
        EXPECT_EQ(report["patch_grid"], nlohmann::json({4, 4})); // DINOv2's table is 5 x 5
        EXPECT_EQ(report["labels"].size(), std::string(key) == "logits" ? 3u : 0u);
    }
    expectRejected({"--model", fixture("clip_vision"), "--image", fixture("vit/image.png"), "--out",
                    file("c.npz"), "--logits"},
                   "--logits: ", "has no classifier");
}

TEST_F(ModelCommand, AnImageClassifierRefusesWhatItCannotReadWithoutWriting) {
    const std::string out = file("v.npz");
    expectRejected({"--model", fixture("vit"), "--ids", "0,1", "--out", out},
                   "--ids: ", "is an image model (ViT): it reads an image (--image FILE)");
    expectRejected({"--model", fixture("vit"), "--text", "a cat", "--out", out}, "--text: ");
    expectRejected({"--model", fixture("vit"), "--out", out}, "give --image FILE");
    expectRejected({"--model", fixture("hf/gpt2"), "--ids", "1,2", "--image",
                    fixture("vit/image.png"), "--out", out},
                   "--image: ", "reads text");
    // A file that is not an image, a header claiming 20 000 x 20 000 pixels, no processor.
    const std::string notImage = file("not.png");
    std::ofstream(notImage) << "not an image";
    expectRejected({"--model", fixture("vit"), "--image", notImage, "--out", out}, "not.png");
    const std::string huge = file("huge.png");
    std::ofstream(huge, std::ios::binary) << pngHeaderOnly(20000, 20000);
    const RunResult big = model({"--model", fixture("vit"), "--image", huge, "--out", out});
    EXPECT_EQ(big.status, 2) << big.err;
    EXPECT_EQ(std::count(big.err.begin(), big.err.end(), '\n'), 1) << big.err;
    if (big.err.find("built without Qt") == std::string::npos) {
        EXPECT_NE(big.err.find("the image is 20000 x 20000 pixels"), std::string::npos) << big.err;
    }
    const std::string cut = file("cut.png");
    const std::string whole = test::readWholeFile(fixture("vit/image.png"));
    std::ofstream(cut, std::ios::binary) << whole.substr(0, whole.size() / 2);
    expectRejected({"--model", fixture("vit"), "--image", cut, "--out", out}, "cut.png");
    const std::string noProcessor = copyFixture("vit");
    fs::remove(fs::path(noProcessor) / "preprocessor_config.json");
    expectRejected({"--model", noProcessor, "--image", fixture("vit/image.png"), "--out", out},
                   "preprocessor_config.json: missing");
    EXPECT_FALSE(fs::exists(out));
}

TEST_F(ModelCommand, TranslationRefusesBadInputWithoutWriting) {
    const std::string out = file("t.npz");
    expectRejected({"--model", fixture("hf/marian"), "--ids", "5,6", "--out", out},
                   "encoder-decoder", "--target-ids");
    expectRejected({"--model", fixture("hf/marian"), "--ids", "5,6", "--target-ids", "255,300",
                    "--out", out},
                   "--target-ids", "outside the vocabulary");
    expectRejected({"--model", fixture("hf/llama_gqa"), "--ids", "5,6", "--translate"},
                   "--translate", "not an encoder-decoder");
    expectRejected({"--model", fixture("hf/t5"), "--ids", "5,6", "--target-ids", "0", "--roles"},
                   "--roles");
    const std::string noStart = copyFixture("hf/marian");
    std::string config = test::readWholeFile(noStart + "/config.json");
    const std::string key = "\"decoder_start_token_id\": 255,";
    ASSERT_NE(config.find(key), std::string::npos);
    config.erase(config.find(key), key.size());
    std::ofstream(noStart + "/config.json", std::ios::trunc) << config;
    expectRejected({"--model", noStart, "--ids", "5,6", "--translate"}, "config.json",
                   "decoder_start_token_id");
}

TEST_F(ModelCommand, OutputIsAnAttentionDumpWithTokens) {
    const std::string out = file("dump.npz");
    ASSERT_EQ(model({"--model", fixture("qwen2_bias_tied"), "--ids", kIds, "--out", out}).status,
              0);
    auto got = members(out);
    EXPECT_EQ(got.count("logits"), 0u) << "logits only with --logits";
    EXPECT_EQ(got.count("q"), 0u) << "q/k/v only with --qkv";
    auto dump = loadAttentionDump(out);
    ASSERT_TRUE(dump.ok()) << dump.error();
    EXPECT_EQ(dump->layers, 2);
    EXPECT_EQ(dump->heads, 4);
    EXPECT_EQ(dump->sq, 7);
    EXPECT_TRUE(dump->warnings.empty()) << "every row is a distribution";
    // No tokenizer in the folder: the tokens are the ids as text.
    EXPECT_EQ(dump->tokens, (std::vector<std::string>{"3", "17", "5", "39", "0", "22", "8"}));
}

TEST_F(ModelCommand, TextRunsThroughTheFoldersTokenizer) {
    // A tiny BPE tokenizer.json beside the gpt2 fixture: "the cat sat" -> the | c at | s at.
    const std::string dir = copyFixture("gpt2_lmhead_f32");
    std::ofstream(dir + "/tokenizer.json") << R"({"version": "1.0", "added_tokens": [],
        "normalizer": null, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": null,
        "decoder": null, "model": {"type": "BPE", "dropout": null, "unk_token": null,
        "continuing_subword_prefix": null, "end_of_word_suffix": null, "fuse_unk": false,
        "byte_fallback": false,
        "vocab": {"t": 0, "h": 1, "e": 2, "c": 3, "a": 4, "s": 5, "th": 6, "the": 7, "at": 8},
        "merges": ["t h", "th e", "a t"]}})";
    const std::string text = file("text.npz");
    const std::string ids = file("ids.npz");
    const RunResult byText = model({"--model", dir, "--text", "the cat sat", "--out", text});
    ASSERT_EQ(byText.status, 0) << byText.err;
    ASSERT_EQ(model({"--model", dir, "--ids", "7,3,8,5,8", "--out", ids}).status, 0);
    auto fromText = loadAttentionDump(text);
    auto fromIds = loadAttentionDump(ids);
    ASSERT_TRUE(fromText.ok() && fromIds.ok());
    EXPECT_EQ(fromText->tokens, (std::vector<std::string>{"the", "c", "at", "s", "at"}));
    EXPECT_EQ(fromIds->tokens, fromText->tokens) << "--ids shows the tokenizer's tokens too";
    EXPECT_EQ(fromText->weights, fromIds->weights);
    EXPECT_EQ(members(text)["ids"], members(ids)["ids"]);
}

TEST_F(ModelCommand, RejectsBadIdsWithoutWriting) {
    const std::string dir = fixture("gpt2_base_f16"); // vocab 40, 12 positions
    const std::string out = file("o.npz");
    expectRejected({"--model", dir, "--ids", "", "--out", out}, "--ids", "no token ids");
    expectRejected({"--model", dir, "--ids", "1,40", "--out", out}, "--ids", "token id 40");
    expectRejected({"--model", dir, "--ids", "1,x", "--out", out}, "--ids", "'x'");
    expectRejected({"--model", dir, "--ids", "1,1,1,1,1,1,1,1,1,1,1,1,1", "--out", out}, "--ids",
                   "13 tokens are more than the model's 12 positions");
    expectRejected({"--model", dir, "--text", "the cat", "--out", out}, "tokenizer.json",
                   "missing");
    expectRejected({"--model", dir, "--text", "a", "--ids", "1", "--out", out}, "--text");
    expectRejected({"--model", dir, "--ids", "1"}, "--out");
}

// --heads writes just the chosen heads' maps, in the order given, with their (layer, head):
// the same bytes as those heads of the full record.
TEST_F(ModelCommand, ChosenHeadsAreTheFullRecordsBytes) {
    const std::string dir = fixture("llama_gqa_llama3_bf16_sharded");
    const std::string full = file("full.npz");
    const std::string some = file("some.npz");
    ASSERT_EQ(model({"--model", dir, "--ids", kIds, "--out", full, "--threads", "1"}).status, 0);
    const RunResult run = model({"--model", dir, "--ids", kIds, "--out", some, "--heads",
                                 "1:3,0:0,1:1", "--threads", "3"});
    ASSERT_EQ(run.status, 0) << run.err;
    auto record = members(full);
    auto chosen = members(some);
    EXPECT_FALSE(record.count("attention_heads"));
    const NpyArray all = floats(record["attentions"], "full");
    const NpyArray maps = floats(chosen["attentions"], "chosen");
    ASSERT_EQ(all.shape.size(), 4u);
    const Index heads = all.shape[1];
    const Index s = all.shape[2];
    ASSERT_EQ(maps.shape, (std::vector<Index>{3, s, s}));
    const std::vector<std::pair<Index, Index>> asked{{1, 3}, {0, 0}, {1, 1}};
    for (std::size_t n = 0; n < asked.size(); ++n) {
        const auto [layer, head] = asked[n];
        EXPECT_EQ(std::memcmp(maps.data.data() + n * s * s,
                              all.data.data() + (layer * heads + head) * s * s,
                              static_cast<std::size_t>(s * s) * sizeof(float)),
                  0)
            << layer << ":" << head;
    }
    // attention_heads: int64 [3, 2], the pairs as asked.
    ASSERT_TRUE(chosen.count("attention_heads"));
    const std::string& pairs = chosen["attention_heads"];
    EXPECT_NE(pairs.find("'descr': '<i8'"), std::string::npos);
    EXPECT_NE(pairs.find("'shape': (3, 2)"), std::string::npos);
    std::vector<std::int64_t> values(6);
    std::memcpy(values.data(), pairs.data() + pairs.size() - 48, 48);
    EXPECT_EQ(values, (std::vector<std::int64_t>{1, 3, 0, 0, 1, 1}));
}

TEST_F(ModelCommand, BadHeadsExitTwoWithOneLineAndWriteNothing) {
    const std::string dir = fixture("llama_gqa_llama3_bf16_sharded"); // 2 layers x 4 heads
    const std::string out = file("o.npz");
    expectRejected({"--model", dir, "--ids", kIds, "--out", out, "--heads", "2:0"}, "--heads",
                   "outside the model's 2 layers x 4 heads");
    expectRejected({"--model", dir, "--ids", kIds, "--out", out, "--heads", "0:4"}, "--heads",
                   "outside");
    expectRejected({"--model", dir, "--ids", kIds, "--out", out, "--heads", "0:1,1:0,0:1"},
                   "--heads", "0:1 is named twice");
    expectRejected({"--model", dir, "--ids", kIds, "--out", out, "--heads", "0-1"}, "--heads",
                   "is not LAYER:HEAD");
    expectRejected({"--model", dir, "--ids", kIds, "--out", out, "--heads", "a:1"}, "--heads");
    expectRejected({"--model", dir, "--ids", kIds, "--out", out, "--heads", "0:-1"}, "--heads");
    expectRejected({"--model", dir, "--ids", kIds, "--heads", "0:1", "--roles"}, "--heads",
                   "needs --out");
}

// A full record past 2 GiB is refused before anything runs, naming its size and --heads.
TEST_F(ModelCommand, AFullRecordPastTheLimitIsRefusedNamingItsBytes) {
    const std::string dir = copyFixture("qwen3_qknorm"); // 2 layers x 4 heads, RoPE
    nlohmann::json config;
    std::ifstream(dir + "/config.json") >> config;
    config["max_position_embeddings"] = 20000;
    std::ofstream(dir + "/config.json") << config.dump();
    std::string ids;
    for (int i = 0; i < 9000; ++i)
        ids += (i ? "," : "") + std::to_string(i % 7);
    const std::string out = file("big.npz");
    // 2 x 4 x 9000^2 x 4 bytes = 2.6 GB.
    expectRejected({"--model", dir, "--ids", ids, "--out", out}, "2.6 GB",
                   "choose heads with --heads");
    // The same text runs for what needs no record (the refusal is the record's, not the
    // text's).
    const RunResult run = model({"--model", dir, "--ids", ids, "--top-k", "1", "--threads", "2"});
    EXPECT_EQ(run.status, 0) << run.err;
}

TEST_F(ModelCommand, RejectsBadCheckpointsWithoutWriting) {
    const std::string out = file("o.npz");
    expectRejected({"--model", file("absent"), "--ids", "1", "--out", out}, "absent",
                   "not a folder");

    const std::string truncated = copyFixture("gpt2_lmhead_f32");
    const std::string bytes = test::readWholeFile(truncated + "/model.safetensors");
    std::ofstream(truncated + "/model.safetensors", std::ios::binary | std::ios::trunc)
        << bytes.substr(0, bytes.size() / 2);
    expectRejected({"--model", truncated, "--ids", "1", "--out", out}, "model.safetensors",
                   "past the end");

    const std::string header = copyFixture("qwen3_qknorm");
    std::string spoiled = test::readWholeFile(header + "/model.safetensors");
    const std::uint64_t huge = spoiled.size();
    std::memcpy(spoiled.data(), &huge, 8);
    std::ofstream(header + "/model.safetensors", std::ios::binary | std::ios::trunc) << spoiled;
    expectRejected({"--model", header, "--ids", "1", "--out", out}, "model.safetensors",
                   "header length");

    const std::string arch = copyFixture("mistral_window3");
    std::ofstream(arch + "/config.json", std::ios::trunc)
        << R"({"model_type": "albert", "vocab_size": 40})";
    expectRejected({"--model", arch, "--ids", "1", "--out", out}, "config.json",
                   "model_type 'albert' is not supported");

    // A config key nobody understands, an unknown rope_type, a family's tensor missing.
    const std::string unknownKey = copyFixture("hf/qwen3_qknorm");
    std::string config = test::readWholeFile(unknownKey + "/config.json");
    config.insert(config.find('{') + 1, "\"attn_temperature_tuning\": true, ");
    std::ofstream(unknownKey + "/config.json", std::ios::trunc) << config;
    expectRejected({"--model", unknownKey, "--ids", "1", "--out", out}, "config.json",
                   "'attn_temperature_tuning'");

    const std::string rope = copyFixture("hf/llama_gqa");
    config = test::readWholeFile(rope + "/config.json");
    const std::string defaultType = "\"rope_type\": \"default\"";
    ASSERT_NE(config.find(defaultType), std::string::npos);
    config.replace(config.find(defaultType), defaultType.size(), "\"rope_type\": \"mrope\"");
    std::ofstream(rope + "/config.json", std::ios::trunc) << config;
    expectRejected({"--model", rope, "--ids", "1", "--out", out}, "config.json",
                   "rope_type 'mrope' is not supported");

    const std::string missing = copyFixture("hf/olmo2");
    std::string image = test::readWholeFile(missing + "/model.safetensors");
    const std::string name = "model.layers.1.self_attn.k_norm.weight";
    ASSERT_NE(image.find(name), std::string::npos);
    image.replace(image.find(name), name.size(), "model.layers.1.self_attn.k_nrom.weight");
    std::ofstream(missing + "/model.safetensors", std::ios::binary | std::ios::trunc) << image;
    expectRejected({"--model", missing, "--ids", "1", "--out", out}, name, "is missing");

    const std::string tokenizer = copyFixture("llama_mqa_linear_tied");
    std::ofstream(tokenizer + "/tokenizer.json") << "{\"model\": ";
    expectRejected({"--model", tokenizer, "--text", "hi", "--out", out}, "tokenizer.json");
}

} // namespace
} // namespace attnlab
