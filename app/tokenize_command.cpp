// `attnlab tokenize`: the tokens of one or more texts under a Hugging Face tokenizer.json, a
// SentencePiece .model file or a Marian folder, one JSON object per text and per line. The ids
// are those of Hugging Face `tokenizer.encode(text)` (special tokens added unless
// --no-special), SentencePieceProcessor.encode(text) or MarianTokenizer; "tokens" are the
// tokens as people read them (byte-level markers undone: "Ġcat" -> " cat"), "pieces" the raw
// vocabulary strings. Bad input: one line on stderr, exit status 2, nothing on stdout.

#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/base/check.h"
#include "attnlab/tokenizer/tokenizer.h"
#include "cli_options.h"
#include "commands.h"

namespace attnlab::app {
namespace {

constexpr const char* kUsage =
    "usage: attnlab tokenize --tokenizer FILE|DIR --text \"...\" [--text \"...\" ...] "
    "[--no-special] [--target]\n"
    "\n"
    "Prints one JSON object per --text, one per line, in the order given:\n"
    "  {\"ids\": [...], \"tokens\": [...], \"pieces\": [...]}\n"
    "ids are Hugging Face tokenizer.encode(text) (SentencePieceProcessor.encode(text) for a\n"
    ".model file); tokens are the tokens as read (\"Ġcat\" shows as \" cat\", \"▁cat\" as\n"
    "\" cat\", \"<0x0A>\" as a newline; a byte that is only part of a character shows as\n"
    "\"<0xE6>\"); pieces are the raw vocabulary strings.\n"
    "\n"
    "  --tokenizer FILE|DIR   tokenizer.json, a SentencePiece model (.model, .spm), or a model\n"
    "                         folder holding tokenizer.json or Marian's source.spm,\n"
    "                         target.spm and vocab.json\n"
    "  --text TEXT            a text to tokenize; repeat for more (may be empty)\n"
    "  --no-special           do not add the template's special tokens (e.g. Llama 2's <s>,\n"
    "                         Marian's </s>); special tokens written in the text are still\n"
    "                         recognized. A .model file adds none either way\n"
    "  --target               a Marian folder's target side (target.spm) instead of its source\n"
    "  --help                 show this text\n"
    "\n"
    "Bad input exits with status 2 and one line on stderr.\n";

constexpr OptionSpec kOptions[] = {
    {"tokenizer", true},
    {"no-special", false},
    {"target", false},
    {"help", false},
};

/// Takes every --text out of argv (the shared parser allows an option once); the rest is
/// parsed as usual.
std::vector<std::string> extractTexts(int argc, char** argv, std::vector<char*>& rest) {
    std::vector<std::string> texts;
    for (int i = 0; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg.rfind("--text=", 0) == 0) {
            texts.emplace_back(arg.substr(7));
        } else if (arg == "--text") {
            if (i + 1 >= argc) fail("--text needs a value");
            const std::string_view next = argv[i + 1];
            for (const OptionSpec& option : kOptions)
                if (next.size() > 2 && next.substr(0, 2) == "--" && next.substr(2) == option.name)
                    fail("--text needs a value");
            texts.emplace_back(next);
            ++i;
        } else {
            rest.push_back(argv[i]);
        }
    }
    return texts;
}

int run(int argc, char** argv) {
    std::vector<char*> rest;
    const std::vector<std::string> texts = extractTexts(argc, argv, rest);
    const Arguments args =
        parseArguments(static_cast<int>(rest.size()), rest.data(), kOptions, "tokenize");
    if (args.count("help")) {
        std::cout << kUsage;
        return 0;
    }
    const std::string path = require(args, "tokenizer");
    if (texts.empty()) fail("missing required option --text");
    const bool addSpecial = args.count("no-special") == 0;

    const Result<model::Tokenizer> tokenizer =
        args.count("target") ? model::Tokenizer::fromFolder(path, model::TokenizerSide::Target)
                             : model::Tokenizer::fromFile(path);
    if (!tokenizer) fail(tokenizer.error());

    std::string output;
    for (const std::string& text : texts) {
        const model::Encoding encoding = tokenizer->encode(text, addSpecial);
        const nlohmann::json line = {
            {"ids", encoding.ids}, {"tokens", encoding.display}, {"pieces", encoding.tokens}};
        output += line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        output += '\n';
    }
    std::cout << output << std::flush;
    return 0;
}

} // namespace

int tokenizeCommand(int argc, char** argv) {
    return runCommandBody("tokenize", run, argc, argv);
}

} // namespace attnlab::app
