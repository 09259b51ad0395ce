// pytorch_model.bin read safely: checkpoints written by torch.save itself (Debian's
// python3-torch, scripts/make_torch_fixtures.py), in the zip format and the one before
// PyTorch 1.6, read equal, byte for byte, to their safetensors twins written from the same
// tensors; crafted archives (a GLOBAL os.system, a
// REDUCE of anything but the rebuilds, sizes past the end, a truncated zip) are refused with
// one message naming the problem.

#include "attnlab/model/torch_checkpoint.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "attnlab/model/model.h"
#include "checkpoint_builder.h"
#include "temp_dir.h"

namespace attnlab::model {
namespace {

namespace fs = std::filesystem;
using test::fixtureDir;
using test::fixtureIds;
using test::TempDir;

std::string torchFixture(const std::string& name) {
    return fixtureDir("torch/" + name);
}

/// Every tensor of `twin` is in `bin` with the same dtype, shape and bytes, and nothing more.
void expectSameTensors(const SafeTensors& bin, const SafeTensors& twin) {
    ASSERT_EQ(bin.entries().size(), twin.entries().size());
    for (const auto& [name, expected] : twin.entries()) {
        const TensorEntry* got = bin.find(name);
        ASSERT_NE(got, nullptr) << name;
        EXPECT_EQ(got->dtype, expected.dtype) << name;
        EXPECT_EQ(got->shape, expected.shape) << name;
        ASSERT_EQ(got->bytes, expected.bytes) << name;
        EXPECT_EQ(std::memcmp(bin.raw(*got), twin.raw(expected), expected.bytes), 0) << name;
    }
}

SafeTensors open(const std::string& path) {
    auto opened = SafeTensors::open(path);
    EXPECT_TRUE(opened.ok()) << opened.error();
    if (!opened.ok()) throw std::runtime_error(opened.error());
    return std::move(*opened);
}

std::string refusal(const std::string& path) {
    auto opened = SafeTensors::open(path);
    EXPECT_FALSE(opened.ok()) << path << " opened";
    return opened.ok() ? std::string() : opened.error();
}

class TorchTwins : public ::testing::TestWithParam<std::string> {};

TEST_P(TorchTwins, ReadEqualToTheirSafetensorsTwin) {
    const SafeTensors bin = open(torchFixture(GetParam() + ".bin"));
    const SafeTensors twin = open(torchFixture(GetParam() + ".safetensors"));
    expectSameTensors(bin, twin);
    EXPECT_EQ(bin.source(), torchFixture(GetParam() + ".bin"));
}

INSTANTIATE_TEST_SUITE_P(TorchSave, TorchTwins,
                         ::testing::Values("f32", "f16", "bf16", "tied", "views"));

/// The same state dicts saved in the format before PyTorch 1.6 (pickles, then the storages).
TEST_P(TorchTwins, LegacyFormatReadsEqualToTheSameTwin) {
    const SafeTensors bin = open(torchFixture(GetParam() + "_legacy.bin"));
    const SafeTensors twin = open(torchFixture(GetParam() + ".safetensors"));
    expectSameTensors(bin, twin);
}

TEST(TorchCheckpoint, DtypesAreTheStoragesTypes) {
    const SafeTensors f16 = open(torchFixture("f16.bin"));
    EXPECT_EQ(f16.find("embed.weight")->dtype, TensorDType::F16);
    EXPECT_EQ(f16.find("position_ids")->dtype, TensorDType::I64);
    EXPECT_EQ(open(torchFixture("bf16.bin")).find("norm.bias")->dtype, TensorDType::BF16);
    // Widened exactly as safetensors' F16 is.
    const SafeTensors twin = open(torchFixture("f16.safetensors"));
    std::vector<float> a, b;
    auto got = f16.floats(*f16.find("embed.weight"), a);
    auto expected = twin.floats(*twin.find("embed.weight"), b);
    ASSERT_TRUE(got.ok() && expected.ok());
    EXPECT_EQ(a, b);
}

TEST(TorchCheckpoint, ReadsTheArchiveAsPyTorch2LaysItOut) {
    // Prefix "archive", a byteorder record and .data/ records around f32.bin's own.
    expectSameTensors(open(torchFixture("f32_torch2_layout.bin")),
                      open(torchFixture("f32.safetensors")));
    const std::string big = refusal(torchFixture("refused/big_endian.bin"));
    EXPECT_NE(big.find("storages in byte order 'big'; AttnLab reads little-endian ones"),
              std::string::npos)
        << big;
}

TEST(TorchCheckpoint, TiedWeightsShareOneStorage) {
    for (const char* name : {"tied.bin", "tied_legacy.bin"}) {
        const SafeTensors bin = open(torchFixture(name));
        EXPECT_EQ(bin.raw(*bin.find("wte.weight")), bin.raw(*bin.find("lm_head.weight")))
            << name << ": two names for one tensor are one storage, read once";
    }
}

TEST(TorchCheckpoint, ContiguousViewsAreReadInPlaceStridedOnesCopied) {
    const SafeTensors bin = open(torchFixture("views.bin"));
    // "row" is base[3] and "tail" base.view(-1)[10:22]: both in the one storage of `base`.
    const unsigned char* row = bin.raw(*bin.find("row"));
    const unsigned char* tail = bin.raw(*bin.find("tail"));
    EXPECT_EQ(row - tail, (18 - 10) * 4) << "offsets into the same storage";
    EXPECT_EQ(bin.entries().size(), 5u);
}

TEST(TorchCheckpoint, ShardedIndexReadsEqualToItsTwin) {
    const SafeTensors bin = open(torchFixture("sharded"));
    expectSameTensors(bin, open(torchFixture("sharded.safetensors")));
    EXPECT_EQ(fs::path(bin.source()).filename(), "pytorch_model.bin.index.json");
}

TEST(TorchCheckpoint, AModelFromPytorchModelBinRunsAsItsSafetensors) {
    auto fromBin = loadModel(torchFixture("gpt2_bin"));
    ASSERT_TRUE(fromBin.ok()) << fromBin.error();
    auto fromSafetensors = loadModel(fixtureDir("hf/gpt2"));
    ASSERT_TRUE(fromSafetensors.ok()) << fromSafetensors.error();
    RunOptions options;
    options.logits = LogitRows::All;
    options.threads = 1;
    const std::vector<std::int64_t> ids = {3, 17, 200, 5, 64, 9};
    auto a = runModel(*fromBin, ids, options);
    auto b = runModel(*fromSafetensors, ids, options);
    ASSERT_TRUE(a.ok() && b.ok());
    // Every layer's q, k and v (what the attention maps are computed from) and the logits.
    ASSERT_EQ(a->k.size(), 2u);
    ASSERT_EQ(a->q.size(), b->q.size());
    for (std::size_t l = 0; l < a->k.size(); ++l) {
        EXPECT_EQ(a->q[l].tensor().data, b->q[l].tensor().data) << "layer " << l;
        EXPECT_EQ(a->k[l].tensor().data, b->k[l].tensor().data) << "layer " << l;
        EXPECT_EQ(a->v[l].tensor().data, b->v[l].tensor().data) << "layer " << l;
    }
    EXPECT_TRUE(a->logits == b->logits);
    EXPECT_GT(a->logits.size(), 0);
}

TEST(TorchCheckpoint, SafetensorsWinWhereAFolderHasBoth) {
    TempDir dir("attnlab_torch");
    fs::copy_file(torchFixture("f32.bin"), dir.file("pytorch_model.bin"));
    fs::copy_file(torchFixture("tied.safetensors"), dir.file("model.safetensors"));
    const SafeTensors both = open(dir.path().string());
    EXPECT_NE(both.find("wte.weight"), nullptr) << "model.safetensors was read";
    EXPECT_EQ(both.find("embed.weight"), nullptr) << "pytorch_model.bin was not";
    fs::remove(dir.file("model.safetensors"));
    EXPECT_NE(open(dir.path().string()).find("embed.weight"), nullptr);
}

TEST(TorchCheckpoint, MaliciousPicklesAreRefusedNamingWhat) {
    const std::string os = refusal(torchFixture("refused/os_system.bin"));
    EXPECT_NE(os.find("GLOBAL os.system is not allowed"), std::string::npos) << os;
    const std::string reduce = refusal(torchFixture("refused/reduce_storage.bin"));
    EXPECT_NE(reduce.find("REDUCE of torch.FloatStorage is not allowed"), std::string::npos)
        << reduce;
    const std::string inst = refusal(torchFixture("refused/inst.bin"));
    EXPECT_NE(inst.find("opcode INST (0x69) is not accepted"), std::string::npos) << inst;
}

TEST(TorchCheckpoint, SizesPastTheEndAreRefusedBeforeReading) {
    const std::string storage = refusal(torchFixture("refused/storage_past_end.bin"));
    EXPECT_NE(storage.find("storage 0 of 100 F32 elements needs 400 bytes but its file "
                           "archive/data/0 holds 24"),
              std::string::npos)
        << storage;
    const std::string view = refusal(torchFixture("refused/view_past_end.bin"));
    EXPECT_NE(view.find("reads element 9 of a storage of 6"), std::string::npos) << view;
}

TEST(TorchCheckpoint, BrokenArchivesAreRefusedWithOneMessage) {
    const std::string truncated = refusal(torchFixture("refused/truncated.bin"));
    EXPECT_NE(truncated.find("not a valid PyTorch checkpoint (zip archive)"), std::string::npos)
        << truncated;
    const std::string noPickle = refusal(torchFixture("refused/no_pickle.bin"));
    EXPECT_NE(noPickle.find("without PREFIX/data.pkl"), std::string::npos) << noPickle;
    const std::string legacy = refusal(torchFixture("refused/legacy_truncated.bin"));
    EXPECT_NE(legacy.find("elements runs past the end of the file"), std::string::npos)
        << legacy;
    for (const std::string& message : {truncated, noPickle, legacy})
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(TorchCheckpoint, AShardTheIndexNamesMustHoldItsTensors) {
    TempDir dir("attnlab_torch");
    fs::copy_file(torchFixture("sharded/pytorch_model-00001-of-00002.bin"),
                  dir.file("pytorch_model-00001-of-00002.bin"));
    std::ofstream(dir.file("pytorch_model.bin.index.json"))
        << R"({"weight_map": {"embed.weight": "pytorch_model-00001-of-00002.bin",
                              "missing.weight": "pytorch_model-00001-of-00002.bin"}})";
    const std::string message = refusal(dir.path().string());
    EXPECT_NE(message.find("does not hold tensor 'missing.weight'"), std::string::npos) << message;
    std::ofstream(dir.file("pytorch_model.bin.index.json"))
        << R"({"weight_map": {"embed.weight": "../elsewhere.bin"}})";
    EXPECT_NE(refusal(dir.path().string()).find("names a file outside the folder"),
              std::string::npos);
}

// ---- the pickle reader on its own, on bytes written here -----------------------------------

std::string fromHex(const std::string& hex) {
    std::string bytes;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    return bytes;
}

std::string pickleError(const std::string& bytes) {
    auto read = readTorchPickle(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                                "p.pkl");
    EXPECT_FALSE(read.ok());
    return read.ok() ? std::string() : read.error();
}

TEST(TorchPickle, ReadsWhatTorchSaveWrites) {
    // data.pkl of torch.save({"w": torch.zeros(2, 3)}) by PyTorch 1.13 (Debian's python3-torch).
    const std::string pickle = fromHex(
        "80027d7100580100000077710163746f7263682e5f7574696c730a5f72656275696c645f74656e736f725f7632"
        "0a71022828580700000073746f72616765710363746f7263680a466c6f617453746f726167650a710458010000"
        "00307105580300000063707571064b06747107514b004b024b038671084b034b018671098963636f6c6c656374"
        "696f6e730a4f726465726564446963740a710a2952710b74710c52710d732e");
    auto read = readTorchPickle(reinterpret_cast<const unsigned char*>(pickle.data()),
                                pickle.size(), "p.pkl");
    ASSERT_TRUE(read.ok()) << read.error();
    ASSERT_EQ(read->size(), 1u);
    const TorchTensorRecord& w = read->front();
    EXPECT_EQ(w.name, "w");
    EXPECT_EQ(w.storageKey, "0");
    EXPECT_EQ(w.dtype, TensorDType::F32);
    EXPECT_EQ(w.storageElements, 6u);
    EXPECT_EQ(w.offset, 0u);
    EXPECT_EQ(w.shape, (std::vector<std::int64_t>{2, 3}));
    EXPECT_EQ(w.strides, (std::vector<std::int64_t>{3, 1}));
}

TEST(TorchPickle, RefusesWhatIsNotAStateDict) {
    EXPECT_NE(pickleError(std::string("\x80\x02}q\x00", 5)).find("truncated"), std::string::npos);
    EXPECT_NE(pickleError("cbuiltins\neval\n.").find("GLOBAL builtins.eval is not allowed"),
              std::string::npos);
    EXPECT_NE(pickleError(std::string("\x80\x02\x93.", 4)).find("STACK_GLOBAL (0x93)"),
              std::string::npos);
    EXPECT_NE(pickleError(std::string("\x80\x02]q\x00.", 6)).find("holds a list, not a state dict"),
              std::string::npos);
    EXPECT_NE(pickleError(std::string("\x80\x02}.", 4)).find("holds no tensor"), std::string::npos);
    EXPECT_NE(pickleError(std::string("\x80\x02h\x05.", 5)).find("GET of memo 5, never PUT"),
              std::string::npos);
    EXPECT_NE(pickleError(std::string("\x80\x02s.", 4)).find("too few values"), std::string::npos);
    EXPECT_NE(pickleError(std::string("\x80\x02t.", 4)).find("TUPLE without a MARK"),
              std::string::npos);
    // torch.save's pickle above with its key "w" made empty (X, length 0): no name to load.
    EXPECT_NE(
        pickleError(
            fromHex(
                "80027d710058000000007101"
                "63746f7263682e5f7574696c730a5f72656275696c645f74656e736f725f7632"
                "0a71022828580700000073746f72616765710363746f7263680a466c6f617453746f726167650a71"
                "045801000000307105580300000063707571064b06747107514b004b024b038671084b034b01867109"
                "8963636f6c6c656374696f6e730a4f726465726564446963740a710a2952710b74710c52710d732e"))
            .find("a state dict key that is empty"),
        std::string::npos);
    // A persistent id that is not a storage: nothing else is loaded.
    EXPECT_NE(pickleError(std::string("\x80\x02X\x03\x00\x00\x00"
                                      "abcQ.",
                                      12))
                  .find("persistent id that is not ('storage'"),
              std::string::npos);
}

} // namespace
} // namespace attnlab::model
