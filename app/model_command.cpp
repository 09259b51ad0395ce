// `attnlab model`: runs a Hugging Face checkpoint (config.json + safetensors) on text or ids
// and writes every layer's attention (an attention dump), the ids and tokens, and on request
// the logits and q/k/v (a Q/K/V dump) to one .npz. DESIGN.md, "Real models", is the contract.
// Every problem with the input is one line on stderr and exit status 2, and nothing is
// written: the .npz goes to a temporary name and is renamed only when complete.

#include <charconv>
#include <filesystem>
#include <iostream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "attnlab/model/model.h"
#include "attnlab/model/run_npz.h"
#include "attnlab/model/tokenizer.h"
#include "cli_options.h"
#include "commands.h"

namespace attnlab::app {
namespace {

constexpr const char* kUsage =
    "usage: attnlab model --model DIR (--text \"...\" | --ids N,N,...) --out F.npz\n"
    "                     [--logits] [--qkv] [--threads N]\n"
    "\n"
    "DIR holds config.json, model.safetensors (or shards and model.safetensors.index.json)\n"
    "and, for --text, tokenizer.json. Architectures: gpt2, llama, qwen2, qwen3, mistral.\n"
    "\n"
    "F.npz holds attentions float32 [L, H, S, S] (an attention dump: render --dump and\n"
    "File > Open Attention Dump read it), ids int64 [S] and tokens [S]; with\n"
    "  --logits      logits float32 [S, V]\n"
    "  --qkv         q float32 [L, H, S, hd], k and v [L, Hkv, S, hd] (after q/k norm and RoPE)\n"
    "  --threads N   worker threads (default: all cores)\n"
    "\n"
    "Bad input exits with status 2 and one line on stderr; nothing is written then.\n";

constexpr OptionSpec kOptions[] = {
    {"model", true},   {"text", true}, {"ids", true},     {"out", true},
    {"logits", false}, {"qkv", false}, {"threads", true}, {"help", false},
};
constexpr std::string_view kEmptyAllowed[] = {"text", "ids"};

std::vector<std::int64_t> parseIds(const std::string& text) {
    std::vector<std::int64_t> ids;
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ',')) {
        const auto begin = item.find_first_not_of(' ');
        const auto end = item.find_last_not_of(' ');
        if (begin == std::string::npos) fail("--ids: empty entry in '" + text + "'");
        const std::string word = item.substr(begin, end - begin + 1);
        std::int64_t id = 0;
        const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), id);
        if (ec != std::errc() || ptr != word.data() + word.size())
            fail("--ids: '" + word + "' is not an integer");
        ids.push_back(id);
    }
    if (ids.empty()) fail("--ids: no token ids");
    return ids;
}

int run(int argc, char** argv) {
    const Arguments args = parseArguments(argc, argv, kOptions, "model", kEmptyAllowed);
    if (args.count("help")) {
        std::cout << kUsage;
        return 0;
    }
    const std::string dir = require(args, "model");
    const std::string out = require(args, "out");
    const auto text = get(args, "text");
    const auto idsText = get(args, "ids");
    if (text.has_value() == idsText.has_value()) fail("give exactly one of --text and --ids");
    model::RunOptions options;
    options.logits = args.count("logits") ? model::LogitRows::All : model::LogitRows::None;
    options.recordQkv = args.count("qkv") > 0;
    if (auto threads = get(args, "threads"))
        options.threads =
            static_cast<int>(std::min<Index>(parseAtLeast(*threads, "--threads", 1), 1024));
    std::vector<std::int64_t> ids;
    if (idsText) ids = parseIds(*idsText);

    // The tokenizer, when --text needs it or (for display) when the folder has one.
    namespace fs = std::filesystem;
    std::error_code ec;
    const std::string tokenizerPath = (fs::path(dir) / "tokenizer.json").string();
    std::optional<model::Tokenizer> tokenizer;
    if (fs::is_directory(dir, ec) && fs::exists(tokenizerPath, ec)) {
        auto loaded = model::Tokenizer::fromFile(tokenizerPath);
        if (!loaded) fail(loaded.error());
        tokenizer = std::move(*loaded);
    } else if (text && fs::is_directory(dir, ec)) {
        fail(tokenizerPath + ": missing; --text needs the model's tokenizer.json (or use --ids)");
    }

    auto loaded = model::loadModel(dir);
    if (!loaded) fail(loaded.error());
    const model::Model& net = *loaded;

    std::vector<std::string> tokens;
    if (text) {
        const model::Encoding encoding = tokenizer->encode(*text);
        ids = encoding.ids;
        tokens = encoding.display;
        if (ids.empty()) fail("--text: the tokenizer gives no tokens for this text");
    }
    if (auto problem = model::validateRun(net.config, ids, options))
        fail((idsText ? "--ids: " : "--text: ") + *problem);
    if (tokens.empty())
        for (std::int64_t id : ids)
            tokens.push_back(tokenizer ? tokenizer->displayToken(id) : std::to_string(id));

    auto result = model::runModel(net, ids, options);
    if (!result) fail(result.error());
    const model::RunNpzContents contents{args.count("logits") > 0, options.recordQkv};
    if (auto error = model::writeRunNpz(out, *result, tokens, contents)) fail(error->message);
    return 0;
}

} // namespace

int modelCommand(int argc, char** argv) {
    return runCommandBody("model", run, argc, argv, "not enough memory for this model and input");
}

} // namespace attnlab::app
