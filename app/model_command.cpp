// `attnlab model`: runs a Hugging Face checkpoint (config.json + safetensors) on text or ids
// and writes every layer's attention (an attention dump), the ids and tokens, and on request
// the logits and q/k/v (a Q/K/V dump) to one .npz. docs/models.md is the contract.
// With --roles it prints every head's role scores (head_roles.h), on the text or on the
// standard induction probe (--probe N); with --top-k/--temperature/--top-p the next-token
// distribution (sampling.h); --ablate switches heads off for all of it.
// Every problem with the input is one line on stderr and exit status 2, and nothing is
// written: the .npz goes to a temporary name and is renamed only when complete, and stdout
// is printed only after everything has been computed and written.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <new>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "attnlab/io/npy.h"
#include "attnlab/model/attention_maps.h"
#include "attnlab/model/head_roles.h"
#include "attnlab/model/hub_cache.h"
#include "attnlab/model/image_attention.h"
#include "attnlab/model/image_processor.h"
#include "attnlab/model/lens.h"
#include "attnlab/model/model.h"
#include "attnlab/model/run_npz.h"
#include "attnlab/model/sampling.h"
#include "attnlab/model/text_run.h"
#include "attnlab/model/translate.h"
#include "attnlab/tokenizer/tokenizer.h"
#include "cli_options.h"
#include "commands.h"
#include "image_file.h"

namespace attnlab::app {
namespace {

constexpr const char* kUsage =
    "usage: attnlab model --model DIR (--text \"...\" | --ids N,N,... | --probe N [--seed S])\n"
    "                     [--out F.npz [--logits] [--qkv] [--heads L:H,...]]\n"
    "                     [--roles [--sort SCORE]]\n"
    "                     [--top-k K] [--temperature T] [--top-p P] [--ablate L:H,...]\n"
    "                     [--json] [--threads N] [--stats]\n"
    "       attnlab model --model DIR (--ids SRC | --text \"...\")\n"
    "                     (--target-ids TGT | --target-text \"...\" | --translate)\n"
    "                     [--out F.npz [--logits]] [--max-tokens N] [--top-k K ...] [--json]\n"
    "       attnlab model --model DIR (--text \"...\" | --ids N,N,...)\n"
    "                     [--logit-lens [--top-k K]] [--attribution [TOKEN][,CONTRAST]]\n"
    "                     [--patch CORRUPTED --metric logit-diff:A,B] [--out F.npz]\n"
    "                     [--ablate L:H,...] [--json] [--threads N]\n"
    "       attnlab model --architectures\n"
    "       attnlab model --list\n"
    "\n"
    "DIR holds config.json, model.safetensors (or shards and model.safetensors.index.json,\n"
    "or pytorch_model.bin) and, for --text, tokenizer.json; or DIR is a Hub id ORG/NAME[@REV]\n"
    "in the Hugging Face cache, which --list prints (docs/models.md). --architectures prints\n"
    "the table of what AttnLab runs (Markdown, as docs/models.md has it). config.json's\n"
    "model_type is one of:\n"
    "%ARCHITECTURES%"
    "\n"
    "F.npz holds attentions float32 [L, H, S, S] (an attention dump: render --dump and\n"
    "File > Open Attention Dump read it), ids int64 [S] and tokens [S]; with\n"
    "  --logits      logits float32 [S, V]\n"
    "  --qkv         q float32 [L, H, S, hd], k and v [L, Hkv, S, hd] (after q/k norm and RoPE)\n"
    "  --heads L:H,.. just these heads' maps: attentions [n, S, S] and attention_heads int64\n"
    "                [n, 2] (layer, head), the same bytes as those heads of the full record.\n"
    "                Without it, a full record of more than 2 GiB (L x H x S x S x 4 bytes) is\n"
    "                refused: maps are computed from the run's q and k as the file is written,\n"
    "                so --heads makes a long text cost what its heads cost\n"
    "  --threads N   worker threads (default: all cores)\n"
    "  --stats       print on stderr the load, forward and write times and the process's\n"
    "                peak memory (resident set) against the checkpoint's size\n"
    "\n"
    "Head roles and next tokens (printed on stdout; --out is then optional):\n"
    "  --roles         per layer and head: previous-token, induction, first-token (sink) and\n"
    "                  self mass, and mean attention distance in tokens\n"
    "  --probe N       run the standard induction probe instead of a text: BOS (when the\n"
    "                  config names one) + N random tokens + the same N again\n"
    "  --seed S        the probe's draw (default 0)\n"
    "  --sort SCORE    order of the table: layer (default; induction with --probe),\n"
    "                  previous-token, induction, first-token, self, distance\n"
    "  --top-k K       print the next tokens after the last position: the K most likely\n"
    "                  (default 10; 0 = no cut), under --temperature T (default 1, 0 =\n"
    "                  greedy) and --top-p P (nucleus, default 1)\n"
    "  --ablate L:H,.. switch heads off (zero their output) for everything above\n"
    "  --json          print one JSON object instead of tables\n"
    "\n"
    "Where the prediction comes from (printed, and written to F.npz with --out):\n"
    "  --logit-lens    the residual stream after the embedding and after every layer through\n"
    "                  the final norm and the unembedding: next-token probabilities per layer\n"
    "                  and position. Prints the top token of each cell (the K most likely with\n"
    "                  --top-k K). F.npz: logit_lens float32 [L+1, S, V], or with --top-k\n"
    "                  logit_lens_top_ids int64 and logit_lens_top_probs float32 [L+1, S, K]\n"
    "  --attribution [TOKEN][,CONTRAST]\n"
    "                  direct logit attribution at the last position: each head's and each\n"
    "                  MLP's share of the logit of TOKEN (default: the model's prediction), or\n"
    "                  of logit(TOKEN) - logit(CONTRAST), read through the final norm with the\n"
    "                  final residual's scale frozen (as TransformerLens does), so the terms add\n"
    "                  up to the logit. F.npz: attribution_heads [L, H], attribution_mlp [L],\n"
    "                  attribution_embed, attribution_bias (output biases, final norm and lm\n"
    "                  head biases), attribution_logit [1] (float32), attribution_tokens\n"
    "                  int64 [1 or 2]. Post-LN models and soft-capped logits are refused: the\n"
    "                  terms would not add up.\n"
    "  --patch CORRUPTED --metric logit-diff:A,B\n"
    "                  activation patching: run CORRUPTED (a text with --text, ids with --ids;\n"
    "                  as many tokens as the clean prompt) with one head's output, or the\n"
    "                  residual entering one layer at one position, taken from the clean run;\n"
    "                  prints (patched - corrupted) / (clean - corrupted) of logit(A) -\n"
    "                  logit(B) at the last position: 1 restores the clean difference. F.npz:\n"
    "                  patch_heads [L, H], patch_residual [L+1, S] (row L: before the final\n"
    "                  norm), patch_clean, patch_corrupted [1] (float32), corrupted_ids int64 [S]\n"
    "  TOKEN, CONTRAST, A and B are ids or texts of exactly one token (e.g. \" Mary\").\n"
    "\n"
    "Encoder-decoders (BART, Marian, T5): the source is --ids or --text, the target the\n"
    "decoder's input as given (--target-ids, starting with the decoder start token) or\n"
    "--target-text (the start token, then its tokens). F.npz then holds\n"
    "encoder_attentions [L, H, Ss, Ss], decoder_attentions [L, H, St, St],\n"
    "cross_attentions [L, H, St, Ss] (queries: target, keys: source), ids and tokens\n"
    "(source), decoder_ids and decoder_tokens (target), and with --logits logits [St, V].\n"
    "  --translate       decode from the start token until </s> or --max-tokens N (default\n"
    "                    64): greedy, or sampled under --top-k/--top-p/--temperature with\n"
    "                    --seed S; prints each step, the source token its cross-attention\n"
    "                    reads most (last layer, mean of the heads), and the translation;\n"
    "                    --out writes the run whose rows produced the translation\n"
    "An encoder (BERT) runs --ids/--text like a decoder; its logits are the masked-LM head's.\n"
    "\n"
    "Image classifiers (ViT) read an image instead of text:\n"
    "  --image FILE      a PNG or JPEG, made into pixel values as the model's\n"
    "                    preprocessor_config.json says (Pillow's resize, rescale, normalise).\n"
    "                    F.npz holds attentions float32 [L, H, T, T] (T: the class token, then\n"
    "                    the patches row by row), tokens [T] (\"[CLS]\", \"r0c0\", ...),\n"
    "                    patch_grid int64 [rows, cols] (each patch's position in T), and with\n"
    "                    --logits logits float32 [labels]; --json prints the top --top-k labels\n"
    "\n"
    "Bad input exits with status 2 and one line on stderr; nothing is written then.\n";

constexpr OptionSpec kOptions[] = {
    {"model", true},  {"text", true},    {"ids", true},   {"out", true},         {"logits", false},
    {"qkv", false},   {"threads", true}, {"help", false}, {"roles", false},      {"probe", true},
    {"seed", true},   {"sort", true},    {"top-k", true}, {"temperature", true}, {"top-p", true},
    {"ablate", true}, {"json", false}, {"architectures", false}, {"target-ids", true},
    {"target-text", true}, {"translate", false}, {"max-tokens", true}, {"stats", false},
    {"logit-lens", false}, {"attribution", true, true}, {"patch", true}, {"metric", true},
    {"heads", true}, {"list", false}, {"image", true},
};

/// A full record (every layer's and head's map) larger than this is refused: --heads asks for
/// what is wanted instead.
constexpr double kMaxFullRecordBytes = 2147483648.0; // 2 GiB

/// The usage text with the table's families, one per line.
std::string usage() {
    std::string families;
    for (const model::Architecture& a : model::architectures())
        families += "  " + std::string(a.modelType) +
                    std::string(a.modelType.size() < 12 ? 12 - a.modelType.size() : 1, ' ') +
                    std::string(a.displayName) + ": " + std::string(a.examples) + "\n";
    std::string text = kUsage;
    const std::string marker = "%ARCHITECTURES%";
    text.replace(text.find(marker), marker.size(), families);
    return text;
}
constexpr std::string_view kEmptyAllowed[] = {"text", "ids", "target-text", "attribution"};

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

/// OPTION's L:H,L:H,... as (layer, head) pairs in the order given, with the item each came
/// from; `example` shows the form in the message for a malformed item.
std::vector<std::pair<std::pair<Index, Index>, std::string>>
parseHeadList(const std::string& text, const std::string& option, const std::string& example) {
    std::vector<std::pair<std::pair<Index, Index>, std::string>> heads;
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ',')) {
        const auto colon = item.find(':');
        if (colon == std::string::npos)
            fail(option + ": '" + item + "' is not LAYER:HEAD (e.g. " + example + ")");
        heads.push_back({{parseAtLeast(item.substr(0, colon), option + " layer", 0),
                          parseAtLeast(item.substr(colon + 1), option + " head", 0)},
                         item});
    }
    if (heads.empty()) fail(option + ": no heads (give LAYER:HEAD,...)");
    return heads;
}

/// --ablate L:H,L:H,... as (layer, head) pairs; the model checks the ranges.
std::set<std::pair<Index, Index>> parseAblation(const std::string& text) {
    std::set<std::pair<Index, Index>> heads;
    for (const auto& [at, item] : parseHeadList(text, "--ablate", "1:0"))
        heads.insert(at);
    return heads;
}

/// --heads L:H,L:H,... as (layer, head) pairs in the order given, each within the model and
/// named once.
std::vector<std::pair<Index, Index>> parseHeads(const std::string& text,
                                                const model::ModelConfig& config) {
    std::vector<std::pair<Index, Index>> heads;
    std::set<std::pair<Index, Index>> seen;
    for (const auto& [at, item] : parseHeadList(text, "--heads", "7:3")) {
        if (at.first >= config.layers || at.second >= config.heads)
            fail("--heads: " + item + " is outside the model's " + std::to_string(config.layers) +
                 " layers x " + std::to_string(config.heads) + " heads");
        if (!seen.insert(at).second) fail("--heads: " + item + " is named twice");
        heads.push_back(at);
    }
    return heads;
}

/// "8.6 GB" style.
std::string gigabytes(double bytes) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f GB", bytes / 1e9);
    return buffer;
}

struct SortChoice {
    const char* name;
    std::optional<model::RoleScore> score; ///< nullopt: layer-major
};
constexpr SortChoice kSorts[] = {
    {"layer", std::nullopt},
    {"previous-token", model::RoleScore::PreviousToken},
    {"induction", model::RoleScore::Induction},
    {"first-token", model::RoleScore::FirstToken},
    {"self", model::RoleScore::Self},
    {"distance", model::RoleScore::MeanDistance},
};

SortChoice parseSort(const std::string& text) {
    std::string names;
    for (const SortChoice& choice : kSorts) {
        if (text == choice.name) return choice;
        names += (names.empty() ? "" : ", ") + std::string(choice.name);
    }
    fail("--sort: unknown score '" + text + "' (" + names + ")");
}

std::string fixed(double value, int decimals) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

/// A token's text on one line: JSON-quoted, so newlines and quotes show as escapes.
std::string quoted(const std::string& text) {
    return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// The model folder's tokenizer (tokenizer.json, or Marian's source.spm / target.spm with
/// vocab.json), when it has one; `need` names the option that requires it.
std::optional<model::Tokenizer> folderTokenizer(const std::string& dir, const char* need,
                                                model::TokenizerSide side = model::TokenizerSide::Source) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return std::nullopt;
    const std::string tokenizerPath = (fs::path(dir) / "tokenizer.json").string();
    if (fs::exists(tokenizerPath, ec) || fs::exists(fs::path(dir) / "source.spm", ec) ||
        fs::exists(fs::path(dir) / "vocab.json", ec)) {
        auto loaded = model::Tokenizer::fromFolder(dir, side);
        if (!loaded) fail(loaded.error());
        return std::move(*loaded);
    }
    if (need)
        fail(tokenizerPath + ": missing; " + need + " needs the model's tokenizer.json (or use ids)");
    return std::nullopt;
}

std::vector<std::string> displayTokens(const std::optional<model::Tokenizer>& tokenizer,
                                       std::span<const std::int64_t> ids) {
    std::vector<std::string> tokens;
    for (std::int64_t id : ids)
        tokens.push_back(tokenizer ? tokenizer->displayToken(id) : std::to_string(id));
    return tokens;
}

/// An encoder-decoder: one run on a source and a target, or --translate's decoding.
int runTranslationCommand(const Arguments& args, const std::string& dir) {
    const auto out = get(args, "out");
    const auto text = get(args, "text");
    const auto idsText = get(args, "ids");
    const auto targetIds = get(args, "target-ids");
    const auto targetText = get(args, "target-text");
    const bool translate = args.count("translate") > 0;
    if (int(text.has_value()) + int(idsText.has_value()) != 1 || args.count("probe"))
        fail("an encoder-decoder's source is --ids or --text");
    if (int(targetIds.has_value()) + int(targetText.has_value()) + int(translate) != 1)
        fail("give exactly one of --target-ids, --target-text and --translate");
    for (const char* option : {"roles", "qkv", "sort", "heads"})
        if (args.count(option))
            fail(std::string("--") + option + " runs decoder-only models, not encoder-decoders");
    if (!out && !translate) fail("nothing to do: give --out F.npz or --translate");
    if (args.count("logits") && !out) fail("--logits needs --out F.npz");
    if (args.count("max-tokens") && !translate) fail("--max-tokens needs --translate");
    if (args.count("seed") && !translate) fail("--seed needs --translate (or --probe)");
    const bool sampled = args.count("top-k") || args.count("temperature") || args.count("top-p");
    if (sampled && !translate) fail("--top-k/--top-p/--temperature need --translate here");
    model::SamplingOptions sampling;
    sampling.temperature = sampled ? 1.0 : 0.0; // greedy unless a control is given
    if (auto v = get(args, "top-k")) sampling.topK = parseAtLeast(*v, "--top-k", 0);
    if (auto v = get(args, "temperature")) sampling.temperature = parseReal(*v, "--temperature");
    if (auto v = get(args, "top-p")) sampling.topP = parseReal(*v, "--top-p");
    if (auto problem = model::validateSampling(sampling)) fail("--" + problem->message);
    const Index maxTokens =
        args.count("max-tokens") ? std::min<Index>(parseAtLeast(*get(args, "max-tokens"),
                                                                "--max-tokens", 1),
                                                   4096)
                                 : 64;
    const std::uint64_t seed =
        args.count("seed")
            ? static_cast<std::uint64_t>(parseAtLeast(*get(args, "seed"), "--seed", 0))
            : 0;
    model::RunOptions options;
    options.logits = args.count("logits") ? model::LogitRows::All : model::LogitRows::Last;
    if (auto v = get(args, "ablate")) options.ablatedHeads = parseAblation(*v);
    if (auto threads = get(args, "threads"))
        options.threads =
            static_cast<int>(std::min<Index>(parseAtLeast(*threads, "--threads", 1), 1024));

    const std::optional<model::Tokenizer> tokenizer = folderTokenizer(dir, text ? "--text" : nullptr);
    const std::optional<model::Tokenizer> targetTokenizer = folderTokenizer(
        dir, targetText ? "--target-text" : nullptr, model::TokenizerSide::Target);
    auto loaded = model::loadModel(dir);
    if (!loaded) fail(loaded.error());
    const model::Model& net = *loaded;
    const std::int64_t start = *net.config.decoderStartTokenId;

    std::vector<std::int64_t> source = idsText ? parseIds(*idsText) : tokenizer->encode(*text).ids;
    if (source.empty()) fail("--text: the tokenizer gives no tokens for this text");
    std::vector<std::int64_t> target{start};
    if (targetIds) target = parseIds(*targetIds);
    if (targetText) {
        // shift_tokens_right of the labels: the start token, then the text's tokens without
        // the closing </s>.
        std::vector<std::int64_t> labels = targetTokenizer->encode(*targetText).ids;
        if (!labels.empty() && net.config.eosTokenId && labels.back() == *net.config.eosTokenId)
            labels.pop_back();
        target.insert(target.end(), labels.begin(), labels.end());
    }
    if (auto problem = model::validateRun(net.config, source, {}))
        fail((idsText ? "--ids: " : "--text: ") + problem->message);
    if (auto problem = model::validateRun(net.config, target, options))
        fail(std::string(problem->message.rfind("ablated head", 0) == 0 ? "--ablate: "
                         : targetIds                                    ? "--target-ids: "
                                                                        : "--target-text: ") +
             problem->message);

    nlohmann::json steps = nlohmann::json::array();
    std::ostringstream table;
    std::vector<std::int64_t> generated;
    std::optional<model::ModelRun> run;
    if (translate) {
        model::TranslateOptions decoding;
        decoding.maxTokens = maxTokens;
        decoding.sampling = sampling;
        decoding.seed = seed;
        auto translation = model::runText(net, source, model::TextRunOptions{options, decoding});
        if (!translation) fail(translation.error());
        generated = translation->generated;
        table << "step      id  probability  reads  token\n";
        for (std::size_t step = 0; step < translation->steps.size(); ++step) {
            const model::TranslationStep& s = translation->steps[step];
            const std::int64_t readId = source[static_cast<std::size_t>(s.reads)];
            const std::string piece =
                targetTokenizer ? targetTokenizer->displayToken(s.id) : std::to_string(s.id);
            const std::string read = tokenizer ? tokenizer->displayToken(readId) : std::to_string(readId);
            steps.push_back({{"step", step}, {"id", s.id}, {"token", piece},
                             {"probability", s.probability}, {"reads", s.reads},
                             {"reads_token", read}});
            char line[64];
            std::snprintf(line, sizeof line, "%4zu  %6lld  %11s  %5lld  ", step,
                          static_cast<long long>(s.id), fixed(s.probability, 4).c_str(),
                          static_cast<long long>(s.reads));
            table << line << quoted(piece) << " <- " << quoted(read) << "\n";
        }
        run = std::move(translation->run);
        const std::string translated =
            targetTokenizer ? targetTokenizer->decode(generated, true) : std::string();
        table << "translation: "
              << (targetTokenizer ? translated : "(no tokenizer.json: ids above)")
              << "\n";
        steps = {{"source", source}, {"steps", steps}, {"generated", generated},
                 {"translation", translated}};
    } else {
        auto result = model::runTranslation(net, source, target, options);
        if (!result) fail(result.error());
        run = std::move(*result);
    }
    if (out)
        if (auto error = model::writeTranslationNpz(*out, net, *run, displayTokens(tokenizer, source),
                                                    displayTokens(targetTokenizer, run->ids),
                                                    args.count("logits") > 0, options.threads))
            fail(error->message);
    if (translate)
        std::cout << (args.count("json") ? steps.dump(-1, ' ', false,
                                                      nlohmann::json::error_handler_t::replace) +
                                               "\n"
                                         : table.str());
    return 0;
}

/// A token named on the command line (model::namedToken), the option's name before its error.
std::int64_t parseToken(const std::string& text, const std::optional<model::Tokenizer>& tokenizer,
                        const model::ModelConfig& config, const std::string& option) {
    auto id = model::namedToken(text, tokenizer ? &*tokenizer : nullptr, config);
    if (!id) fail(option + ": " + id.error());
    return *id;
}

/// Two tokens A,B split at the last comma (so a text token may itself hold a comma).
std::pair<std::string, std::string> splitPair(const std::string& text, const std::string& option) {
    const auto comma = text.rfind(',');
    if (comma == std::string::npos) fail(option + ": '" + text + "' is not A,B");
    return {text.substr(0, comma), text.substr(comma + 1)};
}

std::string floatsMember(const std::vector<Index>& shape, const double* values, Index count) {
    NpyArray array;
    array.shape = shape;
    array.data.assign(values, values + count);
    return encodeNpy(array, DType::Float32);
}

std::string scalarMember(double value) {
    return floatsMember({1}, &value, 1);
}

/// `model --image`: an image model (ViT, DeiT, DINOv2, CLIP) on one image: its attention over the
/// class token and the patches, and its classes or (without a classifier) its embedding.
int runImageCommand(const Arguments& args, const std::string& dir,
                    const model::ModelConfig& configRead) {
    const std::string name = std::string(configRead.arch().displayName);
    for (const char* option : {"text", "ids", "probe", "roles", "qkv", "heads", "logit-lens",
                               "attribution", "patch", "metric", "ablate", "temperature", "top-p"})
        if (args.count(option))
            fail(std::string("--") + option + ": " + dir + " is an image model (" + name +
                 "): it reads an image (--image FILE)");
    const auto imagePath = get(args, "image");
    if (!imagePath)
        fail(dir + " is an image model (" + name + "): give --image FILE (PNG or JPEG)");
    const auto out = get(args, "out");
    const bool json = args.count("json") > 0;
    if (!out && !json) fail("nothing to do: give --out F.npz or --json");
    if (!out && args.count("logits")) fail("--logits needs --out F.npz");
    Index topK = 5;
    if (auto v = get(args, "top-k")) topK = parseAtLeast(*v, "--top-k", 1);
    model::RunOptions options;
    if (auto threads = get(args, "threads"))
        options.threads =
            static_cast<int>(std::min<Index>(parseAtLeast(*threads, "--threads", 1), 1024));

    auto processor = model::readModelImageProcessor(dir, configRead);
    if (!processor) fail(processor.error());
    auto image = readRgbImage(*imagePath);
    if (!image) fail(image.error());
    auto pixels = model::processImage(image->rgb, image->width, image->height, *processor);
    if (!pixels) fail(*imagePath + ": " + pixels.error());
    auto loaded = model::loadModel(dir);
    if (!loaded) fail(loaded.error());
    // The loaded model's config: it knows whether the checkpoint has a classifier, and
    // DINOv2's image size is its processor's.
    const model::ModelConfig& config = loaded->config;
    if (args.count("logits") && !loaded->classifies())
        fail("--logits: " + dir + " (" + name +
             ") has no classifier: it gives the image's embedding, which --out writes as "
             "image_embeds");
    auto run = model::runImage(*loaded, *pixels, options);
    if (!run) fail(run.error());

    const Index grid = config.patchGrid();
    const Index tokens = config.maxPositions; // the leading tokens and the patches
    if (out) {
        std::map<std::string, std::string> members;
        const auto record =
            model::attentionRecord(*loaded, *run, model::AttentionOf::Self, options.threads);
        NpyArray attentions;
        attentions.shape = {config.layers, config.heads, tokens, tokens};
        for (const Tensor4& layer : record)
            attentions.data.insert(attentions.data.end(), layer.data.begin(), layer.data.end());
        members["attentions"] = encodeNpy(attentions, DType::Float32);
        std::vector<Index> grids;
        for (Index r = 0; r < grid; ++r)
            for (Index c = 0; c < grid; ++c)
                grids.push_back(model::tokenOfPatch(config, r, c));
        members["tokens"] = encodeNpyUnicode(model::imageTokenNames(config));
        members["patch_grid"] = encodeNpyInt64({grid, grid}, grids);
        if (args.count("logits")) {
            NpyArray logits;
            logits.shape = {config.vocab};
            logits.data.assign(run->logits.data(), run->logits.data() + config.vocab);
            members["logits"] = encodeNpy(logits, DType::Float32);
        }
        if (!loaded->classifies()) {
            NpyArray embedding;
            embedding.shape = {run->imageEmbedding.cols()};
            embedding.data.assign(run->imageEmbedding.data(),
                                  run->imageEmbedding.data() + run->imageEmbedding.size());
            members["image_embeds"] = encodeNpy(embedding, DType::Float32);
        }
        if (auto written = writeNpzMembers(*out, members)) fail(written->message);
    }
    if (json) {
        nlohmann::json labels = nlohmann::json::array();
        for (const model::LabelProbability& best : model::topLabels(config, run->logits, topK))
            labels.push_back(
                {{"id", best.id}, {"label", best.label}, {"probability", best.probability}});
        nlohmann::json summary{{"image", *imagePath},
                               {"patch_grid", {grid, grid}},
                               {"tokens", tokens},
                               {"labels", labels}};
        if (!loaded->classifies()) summary["embedding_size"] = run->imageEmbedding.cols();
        std::cout << summary.dump() << '\n';
    }
    return 0;
}

/// `model --logit-lens / --attribution / --patch`: where the prediction comes from (lens.h).
int runLensCommand(const Arguments& args, const std::string& dir) {
    const auto out = get(args, "out");
    const auto text = get(args, "text");
    const auto idsText = get(args, "ids");
    if (int(text.has_value()) + int(idsText.has_value()) != 1 || args.count("probe"))
        fail("--logit-lens, --attribution and --patch run on --text or --ids");
    for (const char* option :
         {"roles", "qkv", "logits", "sort", "temperature", "top-p", "seed", "stats", "heads"})
        if (args.count(option))
            fail(std::string("--") + option +
                 " does not combine with --logit-lens, --attribution or --patch");
    const bool lensAsked = args.count("logit-lens") > 0;
    const auto attributionText = get(args, "attribution");
    const auto corruptedText = get(args, "patch");
    const auto metricText = get(args, "metric");
    if (args.count("top-k") && !lensAsked) fail("--top-k here needs --logit-lens");
    if (corruptedText && !metricText) fail("--patch needs --metric logit-diff:A,B");
    if (metricText && !corruptedText) fail("--metric needs --patch CORRUPTED");
    const Index topK = args.count("top-k") ? parseAtLeast(*get(args, "top-k"), "--top-k", 1) : 0;
    model::RunOptions options;
    if (auto v = get(args, "ablate")) options.ablatedHeads = parseAblation(*v);
    if (auto threads = get(args, "threads"))
        options.threads =
            static_cast<int>(std::min<Index>(parseAtLeast(*threads, "--threads", 1), 1024));
    std::string metricTokens;
    if (metricText) {
        const std::string prefix = "logit-diff:";
        if (metricText->rfind(prefix, 0) != 0)
            fail("--metric: '" + *metricText + "' is not logit-diff:A,B");
        metricTokens = metricText->substr(prefix.size());
    }

    const std::optional<model::Tokenizer> tokenizer =
        folderTokenizer(dir, text ? "--text" : nullptr);
    auto loaded = model::loadModel(dir);
    if (!loaded) fail(loaded.error());
    const model::Model& net = *loaded;
    const model::ModelConfig& c = net.config;

    std::vector<std::int64_t> ids = idsText ? parseIds(*idsText) : tokenizer->encode(*text).ids;
    if (ids.empty()) fail("--text: the tokenizer gives no tokens for this text");
    if (auto problem = model::validateRun(c, ids, options))
        fail(std::string(problem->message.rfind("ablated head", 0) == 0 ? "--ablate: "
                         : idsText                                      ? "--ids: "
                                                                        : "--text: ") +
             problem->message);
    const std::vector<std::string> tokens = displayTokens(tokenizer, ids);
    auto tokenText = [&](std::int64_t id) {
        return tokenizer ? tokenizer->displayToken(id) : std::to_string(id);
    };

    // Every input is checked before the first long computation.
    model::AttributionOptions attributionOptions;
    if (attributionText) {
        const auto comma = attributionText->rfind(',');
        const std::string target = attributionText->substr(0, comma);
        if (!target.empty())
            attributionOptions.target = parseToken(target, tokenizer, c, "--attribution");
        if (comma != std::string::npos)
            attributionOptions.contrast = parseToken(attributionText->substr(comma + 1),
                                                     tokenizer, c, "--attribution");
        if (auto refusal = model::attributionRefusal(net))
            fail("--attribution: " + refusal->message);
    }
    model::PatchingOptions patching;
    std::vector<std::int64_t> corrupted;
    if (corruptedText) {
        const auto [a, b] = splitPair(metricTokens, "--metric");
        patching.metric = {parseToken(a, tokenizer, c, "--metric"),
                           parseToken(b, tokenizer, c, "--metric")};
        if (idsText) {
            corrupted = parseIds(*corruptedText);
        } else {
            corrupted = tokenizer->encode(*corruptedText).ids;
        }
        if (auto problem = model::validatePatching(c, ids, corrupted, patching.metric))
            fail((problem->message.find("metric") != std::string::npos ? "--metric: "
                                                                       : "--patch: ") +
                 problem->message);
        if (auto problem = model::validateRun(c, corrupted, options))
            fail("--patch: " + problem->message);
    }

    std::map<std::string, std::string> members;
    members["ids"] = encodeNpyInt64({static_cast<Index>(ids.size())}, ids);
    members["tokens"] = encodeNpyUnicode(tokens);
    nlohmann::json report = {{"ids", ids}, {"tokens", tokens}};
    std::ostringstream table;
    const Index L = c.layers, S = static_cast<Index>(ids.size());
    auto rowName = [](Index row) {
        return row == 0 ? std::string("embed") : std::to_string(row - 1);
    };

    if (lensAsked) {
        auto lens = model::logitLens(net, ids, options);
        if (!lens) fail(lens.error());
        const Index shown = topK > 0 ? std::min<Index>(topK, c.vocab) : 1;
        std::vector<std::int64_t> topIds;
        std::vector<double> topProbs, all;
        nlohmann::json rows = nlohmann::json::array();
        table << "logit lens: the most likely next token after each layer (embed: before layer 0)\n"
              << "layer    pos  input            next\n";
        for (Index row = 0; row <= L; ++row) {
            const Matrix p = model::probabilities(lens->logits[static_cast<std::size_t>(row)]);
            if (out && topK == 0) all.insert(all.end(), p.data(), p.data() + p.size());
            nlohmann::json positions = nlohmann::json::array();
            for (Index i = 0; i < S; ++i) {
                const auto top = model::topTokens(p.row(i), shown);
                nlohmann::json cell = nlohmann::json::array();
                std::string line;
                for (const model::RankedToken& t : top) {
                    topIds.push_back(t.id);
                    topProbs.push_back(t.probability);
                    cell.push_back(
                        {{"id", t.id}, {"token", tokenText(t.id)}, {"probability", t.probability}});
                    line += (line.empty() ? "" : ", ") + quoted(tokenText(t.id)) + " " +
                            fixed(t.probability, 3);
                }
                positions.push_back(cell);
                char head[64];
                std::snprintf(head, sizeof head, "%-5s  %4lld  ", rowName(row).c_str(),
                              static_cast<long long>(i));
                std::string input = quoted(tokens[static_cast<std::size_t>(i)]);
                input.resize(std::max<std::size_t>(input.size(), 15), ' ');
                table << head << input << "  " << line << "\n";
            }
            rows.push_back({{"layer", rowName(row)}, {"positions", positions}});
        }
        report["logit_lens"] = {{"top_k", shown}, {"rows", rows}};
        if (topK > 0) {
            members["logit_lens_top_ids"] = encodeNpyInt64({L + 1, S, shown}, topIds);
            members["logit_lens_top_probs"] = floatsMember({L + 1, S, shown}, topProbs.data(),
                                                           static_cast<Index>(topProbs.size()));
        } else if (out) {
            members["logit_lens"] =
                floatsMember({L + 1, S, c.vocab}, all.data(), static_cast<Index>(all.size()));
        }
    }
    if (attributionText) {
        auto parts = model::directLogitAttribution(net, ids, attributionOptions, options);
        if (!parts) fail("--attribution: " + parts.error());
        const std::string what =
            "logit(" + quoted(tokenText(parts->target)) + ")" +
            (parts->contrast ? " - logit(" + quoted(tokenText(*parts->contrast)) + ")" : "");
        table << (lensAsked ? "\n" : "") << "direct logit attribution of " << what
              << " at the last position (final norm's scale frozen at "
              << fixed(parts->finalScale, 4) << ")\n"
              << "logit " << fixed(parts->logit, 4) << " = embed " << fixed(parts->embedding, 4)
              << " + biases " << fixed(parts->bias, 4) << " + heads "
              << fixed(parts->heads.sum(), 4) << " + MLPs " << fixed(parts->mlp.sum(), 4) << "\n"
              << "layer      mlp  heads 0..\n";
        nlohmann::json heads = nlohmann::json::array();
        for (Index l = 0; l < L; ++l) {
            char head[48];
            std::snprintf(head, sizeof head, "%5lld  %7s ", static_cast<long long>(l),
                          fixed(parts->mlp(l), 3).c_str());
            table << head;
            std::vector<double> row;
            for (Index h = 0; h < c.heads; ++h) {
                row.push_back(parts->heads(l, h));
                table << " " << fixed(parts->heads(l, h), 3);
            }
            table << "\n";
            heads.push_back(row);
        }
        std::vector<std::int64_t> pair{parts->target};
        if (parts->contrast) pair.push_back(*parts->contrast);
        report["attribution"] = {
            {"target", parts->target},
            {"target_token", tokenText(parts->target)},
            {"contrast",
             parts->contrast ? nlohmann::json(*parts->contrast) : nlohmann::json(nullptr)},
            {"logit", parts->logit},
            {"total", parts->total()},
            {"embedding", parts->embedding},
            {"bias", parts->bias},
            {"final_scale", parts->finalScale},
            {"heads", heads},
            {"mlp", std::vector<double>(parts->mlp.data(), parts->mlp.data() + L)}};
        const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rowMajor =
            parts->heads;
        members["attribution_heads"] = floatsMember({L, c.heads}, rowMajor.data(), rowMajor.size());
        members["attribution_mlp"] = floatsMember({L}, parts->mlp.data(), L);
        members["attribution_embed"] = scalarMember(parts->embedding);
        members["attribution_bias"] = scalarMember(parts->bias);
        members["attribution_logit"] = scalarMember(parts->logit);
        members["attribution_tokens"] = encodeNpyInt64({static_cast<Index>(pair.size())}, pair);
    }
    if (corruptedText) {
        const auto started = std::chrono::steady_clock::now();
        auto patched = model::activationPatching(net, ids, corrupted, patching, options);
        if (!patched) fail("--patch: " + patched.error());
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        table << (lensAsked || attributionText ? "\n" : "")
              << "activation patching, clean into corrupted: (patched - corrupted) / (clean - "
                 "corrupted) of logit("
              << quoted(tokenText(patching.metric.a)) << ") - logit("
              << quoted(tokenText(patching.metric.b)) << ")\n"
              << "clean " << fixed(patched->clean, 4) << ", corrupted "
              << fixed(patched->corrupted, 4) << "; " << patched->runs << " patched runs in "
              << fixed(seconds, 2) << " s, " << patched->reusedPositions
              << " positions read from the cache of the shared prefix\n"
              << "heads (layer x head)\n";
        nlohmann::json heads = nlohmann::json::array(), residual = nlohmann::json::array();
        for (Index l = 0; l < L; ++l) {
            std::vector<double> row(static_cast<std::size_t>(c.heads));
            table << std::string(5 - std::min<std::size_t>(5, std::to_string(l).size()), ' ') << l
                  << " ";
            for (Index h = 0; h < c.heads; ++h) {
                row[static_cast<std::size_t>(h)] = patched->heads(l, h);
                table << " " << fixed(patched->heads(l, h), 3);
            }
            table << "\n";
            heads.push_back(row);
        }
        table << "residual entering each layer (rows; " << L << ": the output) x position\n";
        for (Index l = 0; l <= L; ++l) {
            std::vector<double> row(static_cast<std::size_t>(S));
            table << std::string(5 - std::min<std::size_t>(5, std::to_string(l).size()), ' ') << l
                  << " ";
            for (Index i = 0; i < S; ++i) {
                row[static_cast<std::size_t>(i)] = patched->residual(l, i);
                table << " " << fixed(patched->residual(l, i), 3);
            }
            table << "\n";
            residual.push_back(row);
        }
        report["patch"] = {{"metric", {patching.metric.a, patching.metric.b}},
                           {"corrupted_ids", corrupted},
                           {"clean", patched->clean},
                           {"corrupted", patched->corrupted},
                           {"heads", heads},
                           {"residual", residual},
                           {"runs", patched->runs},
                           {"reused_positions", patched->reusedPositions},
                           {"seconds", seconds}};
        const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>
            h = patched->heads,
            r = patched->residual;
        members["patch_heads"] = floatsMember({L, c.heads}, h.data(), h.size());
        members["patch_residual"] = floatsMember({L + 1, S}, r.data(), r.size());
        members["patch_clean"] = scalarMember(patched->clean);
        members["patch_corrupted"] = scalarMember(patched->corrupted);
        members["corrupted_ids"] = encodeNpyInt64({S}, corrupted);
        members["metric"] =
            encodeNpyInt64({2}, std::vector<std::int64_t>{patching.metric.a, patching.metric.b});
    }
    if (out)
        if (auto error = writeNpzMembers(*out, members)) fail(error->message);
    std::cout << (args.count("json")
                      ? report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                      : table.str());
    return 0;
}

int run(int argc, char** argv) {
    const Arguments args = parseArguments(argc, argv, kOptions, "model", kEmptyAllowed);
    if (args.count("help")) {
        std::cout << usage();
        return 0;
    }
    if (args.count("architectures")) {
        std::cout << model::architectureMarkdown();
        return 0;
    }
    if (args.count("list")) {
        const std::string root = model::hubCacheRoot();
        std::cout << model::cachedModelsTable(model::listHubCache(root), root);
        return 0;
    }
    const std::string dir = modelFolder(require(args, "model"));
    if (args.count("target-ids") || args.count("target-text") || args.count("translate")) {
        auto config = model::readConfig((std::filesystem::path(dir) / "config.json").string());
        if (config && config->kind != model::ModelKind::EncoderDecoder)
            fail(std::string("--target-ids/--target-text/--translate: ") + dir + " is a " +
                 std::string(config->arch().displayName) + " model, not an encoder-decoder");
        return runTranslationCommand(args, dir);
    }
    const bool lens = args.count("logit-lens") || args.count("attribution") ||
                      args.count("patch") || args.count("metric");
    if (auto config = model::readConfig((std::filesystem::path(dir) / "config.json").string());
        config && config->vision())
        return runImageCommand(args, dir, *config);
    if (args.count("image"))
        fail("--image: " + dir +
             " reads text (give --text or --ids); an image needs an image "
             "classifier such as ViT");
    if (auto config = model::readConfig((std::filesystem::path(dir) / "config.json").string());
        config && config->kind == model::ModelKind::EncoderDecoder)
        fail((lens ? "--logit-lens/--attribution/--patch: " : "") + dir +
             " is an encoder-decoder (" + std::string(config->arch().displayName) +
             (lens ? "): they read the one stack of a decoder-only model or an encoder"
                   : "): give --target-ids, --target-text or --translate"));
    if (lens) return runLensCommand(args, dir);
    const auto out = get(args, "out");
    const auto text = get(args, "text");
    const auto idsText = get(args, "ids");
    const auto probeText = get(args, "probe");
    if (int(text.has_value()) + int(idsText.has_value()) + int(probeText.has_value()) != 1)
        fail("give exactly one of --text, --ids and --probe");
    const bool roles = args.count("roles") > 0;
    const bool nextTokens = args.count("top-k") || args.count("temperature") || args.count("top-p");
    if (!out && !roles && !nextTokens)
        fail("nothing to do: give --out F.npz, --roles, or --top-k/--temperature/--top-p");
    for (const char* option : {"logits", "qkv", "heads"})
        if (!out && args.count(option)) fail(std::string("--") + option + " needs --out F.npz");
    if (args.count("seed") && !probeText) fail("--seed needs --probe N");
    if (args.count("sort") && !roles) fail("--sort needs --roles");
    const SortChoice sort = args.count("sort") ? parseSort(*get(args, "sort"))
                            : probeText        ? kSorts[2]
                                               : kSorts[0];
    model::SamplingOptions sampling;
    sampling.topK = 10;
    if (auto v = get(args, "top-k")) sampling.topK = parseAtLeast(*v, "--top-k", 0);
    if (auto v = get(args, "temperature")) sampling.temperature = parseReal(*v, "--temperature");
    if (auto v = get(args, "top-p")) sampling.topP = parseReal(*v, "--top-p");
    if (auto problem = model::validateSampling(sampling)) fail("--" + problem->message);
    model::RunOptions options;
    options.logits = args.count("logits") ? model::LogitRows::All
                     : nextTokens         ? model::LogitRows::Last
                                          : model::LogitRows::None;
    if (auto v = get(args, "ablate")) options.ablatedHeads = parseAblation(*v);
    if (auto threads = get(args, "threads"))
        options.threads =
            static_cast<int>(std::min<Index>(parseAtLeast(*threads, "--threads", 1), 1024));
    std::vector<std::int64_t> ids;
    if (idsText) ids = parseIds(*idsText);

    // The tokenizer, when --text needs it or (for display) when the folder has one.
    std::optional<model::Tokenizer> tokenizer = folderTokenizer(dir, text ? "--text" : nullptr);

    const auto started = std::chrono::steady_clock::now();
    // Pages read while loading: the forward's time (--stats) is its own arithmetic, as an
    // engine's whose weights were loaded before it ran. The whole process takes as long.
    model::LoadOptions load;
    load.touchPages = true;
    auto loaded = model::loadModel(dir, load);
    if (!loaded) fail(loaded.error());
    const model::Model& net = *loaded;
    const auto afterLoad = std::chrono::steady_clock::now();

    std::vector<std::string> tokens;
    if (text) {
        const model::Encoding encoding = tokenizer->encode(*text);
        ids = encoding.ids;
        tokens = encoding.display;
        if (ids.empty()) fail("--text: the tokenizer gives no tokens for this text");
    }
    if (probeText) {
        const Index length = parseAtLeast(*probeText, "--probe", 1);
        const std::uint64_t seed =
            args.count("seed")
                ? static_cast<std::uint64_t>(parseAtLeast(*get(args, "seed"), "--seed", 0))
                : 0;
        auto probe = model::inductionProbe(net.config, length, seed);
        if (!probe) fail("--probe: " + probe.error());
        ids = std::move(*probe);
    }
    if (auto problem = model::validateRun(net.config, ids, options)) {
        const bool aboutHeads = problem->message.rfind("ablated head", 0) == 0;
        fail((aboutHeads  ? "--ablate: "
              : idsText   ? "--ids: "
              : probeText ? "--probe: "
                          : "--text: ") +
             problem->message);
    }
    if (tokens.empty())
        for (std::int64_t id : ids)
            tokens.push_back(tokenizer ? tokenizer->displayToken(id) : std::to_string(id));
    model::RunNpzContents contents{args.count("logits") > 0, args.count("qkv") > 0, {},
                                   options.threads};
    if (auto v = get(args, "heads")) contents.heads = parseHeads(*v, net.config);
    if (out && contents.heads.empty()) {
        const double bytes = model::runNpzAttentionBytes(static_cast<Index>(ids.size()),
                                                         net.config, contents);
        if (bytes > kMaxFullRecordBytes)
            fail("the full record of " + std::to_string(ids.size()) + " tokens would be " +
                 gigabytes(bytes) + " (" + std::to_string(net.config.layers) + " layers x " +
                 std::to_string(net.config.heads) + " heads x " + std::to_string(ids.size()) +
                 "^2 x 4 bytes), more than the 2 GiB a full record may take: choose heads "
                 "with --heads L:H,...");
    }

    const auto beforeRun = std::chrono::steady_clock::now();
    auto textRun = model::runText(net, ids, model::TextRunOptions{options, {}});
    if (!textRun) fail(textRun.error());
    const model::ModelRun* result = &textRun->run;
    const auto afterRun = std::chrono::steady_clock::now();

    // Everything printed is computed before the archive is written, and printed after it.
    nlohmann::json report = nlohmann::json::object();
    std::ostringstream table;
    if (roles) {
        auto measured = model::headRoles(net, *result, options.threads);
        if (sort.score) measured = model::rankHeads(std::move(measured), *sort.score);
        nlohmann::json heads = nlohmann::json::array();
        table << "head roles over " << ids.size() << " tokens"
              << (probeText ? " (induction probe: " + *probeText + " tokens repeated twice" +
                                  (net.config.bosTokenId ? " after BOS" : "") + ")"
                            : std::string())
              << ", sorted by " << sort.name << "\n"
              << "layer  head  previous-token  induction  first-token    self  distance\n";
        for (const model::HeadRole& role : measured) {
            const bool hasInduction = role.inductionQueries > 0;
            heads.push_back({{"layer", role.layer},
                             {"head", role.head},
                             {"previous_token", role.previousToken},
                             {"induction", hasInduction ? nlohmann::json(role.induction)
                                                        : nlohmann::json(nullptr)},
                             {"induction_queries", role.inductionQueries},
                             {"first_token", role.firstToken},
                             {"self", role.self},
                             {"mean_distance", role.meanDistance},
                             {"ablated", options.ablatedHeads.count({role.layer, role.head}) > 0}});
            char line[160];
            std::snprintf(line, sizeof line, "%5lld  %4lld  %14s  %9s  %11s  %6s  %8s%s\n",
                          static_cast<long long>(role.layer), static_cast<long long>(role.head),
                          fixed(role.previousToken, 3).c_str(),
                          hasInduction ? fixed(role.induction, 3).c_str() : "-",
                          fixed(role.firstToken, 3).c_str(), fixed(role.self, 3).c_str(),
                          fixed(role.meanDistance, 2).c_str(),
                          options.ablatedHeads.count({role.layer, role.head}) ? "  (ablated)" : "");
            table << line;
        }
        report["roles"] = {{"sort", sort.name}, {"heads", heads}};
    }
    if (nextTokens) {
        const Matrix& logits = result->logits;
        const Index last = logits.rows() - 1;
        std::vector<float> row(logits.row(last).data(), logits.row(last).data() + logits.cols());
        const auto next = model::nextTokenDistribution(row, sampling);
        if (roles) table << "\n";
        table << "next token (temperature " << sampling.temperature << ", top-k " << sampling.topK
              << ", top-p " << sampling.topP << ")\n"
              << "rank      id  probability  model  token\n";
        nlohmann::json list = nlohmann::json::array();
        for (std::size_t rank = 0; rank < next.size(); ++rank) {
            const std::string piece =
                tokenizer ? tokenizer->displayToken(next[rank].id) : std::to_string(next[rank].id);
            list.push_back({{"id", next[rank].id},
                            {"token", piece},
                            {"probability", next[rank].probability},
                            {"model_probability", next[rank].modelProbability}});
            char line[96];
            std::snprintf(line, sizeof line, "%4zu  %6lld  %11s  %5s  ", rank + 1,
                          static_cast<long long>(next[rank].id),
                          fixed(next[rank].probability, 4).c_str(),
                          fixed(next[rank].modelProbability, 3).c_str());
            table << line << quoted(piece) << "\n";
        }
        report["next"] = {{"temperature", sampling.temperature},
                          {"top_k", sampling.topK},
                          {"top_p", sampling.topP},
                          {"tokens", list}};
    }
    if (out)
        if (auto error = model::writeRunNpz(*out, net, *result, tokens, contents))
            fail(error->message);
    if (args.count("stats")) {
        const auto milliseconds = [](auto from, auto to) {
            return std::chrono::duration<double, std::milli>(to - from).count();
        };
        const double peak = peakResidentBytes();
        const double size = static_cast<double>(net.checkpointBytes());
        std::fprintf(stderr,
                     "attnlab model: %zu tokens, load %.1f ms, forward %.1f ms, write %.1f ms; "
                     "peak RSS %.0f MB = %.2f x the checkpoint's %.0f MB\n",
                     ids.size(), milliseconds(started, afterLoad), milliseconds(beforeRun, afterRun),
                     milliseconds(afterRun, std::chrono::steady_clock::now()), peak / 1e6,
                     size > 0 ? peak / size : 0.0, size / 1e6);
    }
    if (roles || nextTokens) {
        if (args.count("json")) {
            report["ids"] = ids;
            report["tokens"] = tokens;
            std::cout << report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                      << '\n';
        } else {
            std::cout << table.str();
        }
    }
    return 0;
}

} // namespace

int modelCommand(int argc, char** argv) {
    return runCommandBody("model", run, argc, argv, "not enough memory for this model and input");
}

} // namespace attnlab::app
