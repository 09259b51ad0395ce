// `attnlab render`: draws any view to PNG, SVG or PDF with no display, through the same view
// classes and the same figure export code as the window (docs/render.md).
// Every problem with the arguments or the session becomes one line on stderr and exit
// status 2, found before anything is drawn; figures go to a temporary name and are renamed.

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHashFunctions>
#include <QImage>
#include <QSize>
#include <QString>
#include <QtGlobal>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "attnlab/attention/attention.h"
#include "attnlab/attention/mask.h"
#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"
#include "attnlab/io/npy.h"
#include "attnlab/lab/embedding.h"
#include "attnlab/lab/session.h"
#include "attnlab/lab/stats.h"
#include "attnlab/model/config.h"
#include "attnlab/model/image_processor.h"
#include "cli_options.h"
#include "commands.h"
#include "ui/export/figure_export.h"
#include "ui/export/step_export.h"
#include "ui/state/document.h"
#include "ui/state/dump_document.h"
#include "ui/state/image_file.h"
#include "ui/state/model_document.h"
#include "ui/state/patching_document.h"
#include "ui/views/colormap.h"
#include "ui/views/compare_view.h"
#include "ui/views/image_attention_view.h"
#include "ui/views/view.h"
#include "ui/views/view_registry.h"
#include "ui/widgets/theme.h"
#include "ui/window/language.h"

namespace attnlab::app {
namespace {

constexpr const char* kUsage =
    "usage: attnlab render (--session S.json | --tokens \"...\" | --dump F.npz) [overrides]\n"
    "                      --view NAME"
    "                      --out F.png|F.svg|F.pdf and/or --data F.csv|F.npy|F.json\n"
    "                      [figure options]\n"
    "       attnlab render --list-views\n"
    "\n"
    "Session overrides (applied on top of --session, or of the defaults with --tokens):\n"
    "  --tokens \"...\"             the query text (self-attention unless --source)\n"
    "  --source \"...\"             cross-attention: keys and values come from this text\n"
    "  --tokenizer whitespace|character\n"
    "  --variant NAME             softmax, flash, linear, additive\n"
    "  --mask KIND[,KIND...]      none, causal, padding, window, causal-window\n"
    "  --valid-len N              padding: keys j < N allowed\n"
    "  --window W                 window / causal-window width\n"
    "  --heads H  --kv-heads G    query heads and key/value heads (H % G == 0)\n"
    "  --d-model D                model width\n"
    "  --positional NAME          none, sinusoidal, rope-interleaved, rope-half\n"
    "  --seed N                   projection seed\n"
    "  --identity                 Q = K = V = X (no projections)\n"
    "  --block-size B             flash: key/value tile columns\n"
    "  --q-block-size B           flash: query tile rows\n"
    "  --kv-cache-prefill N       run as a KV-cache prefill of N rows, then decode\n"
    "  --head N                   the head the figure shows\n"
    "  --query N                  the selected query row\n"
    "  --colormap NAME            viridis, magma, cividis, grayscale, print, diverging\n"
    "  --color-scale S            fixed (0 to 1, default), data, row (each row over its\n"
    "                             largest), log or range: how weights map to colours\n"
    "  --color-range LO,HI        the range scale: colours from LO to HI (e.g. 0,0.01),\n"
    "                             weights outside take the end colours\n"
    "  --show WHAT                weights, scores, scaled, mask, output, q, k, v\n"
    "\n"
    "Model dumps (docs/dumps.md):\n"
    "  --dump FILE                attention weights .npy/.npz of a real model ([S,S], [H,S,S],\n"
    "                             [L,H,S,S] or [B,L,H,S,S]); --head picks the head\n"
    "  --tokens-file FILE         tokens, .json list or .txt one per line\n"
    "  --batch N  --layer N       batch entry and layer of the dump (default 0)\n"
    "  --attention KIND           a translation run's cross (default), encoder or decoder\n"
    "                             attention (attnlab model --target-ids / --translate)\n"
    "\n"
    "Real models (docs/models.md):\n"
    "  --model DIR --text \"...\"   run a checkpoint folder on the text; --layer and --head\n"
    "                             pick what the figure shows (default 0)\n"
    "  --model DIR --image X.png  an image model (ViT, DeiT, DINOv2, CLIP) on an image;\n"
    "                             --view image-attention draws the class token's attention on\n"
    "                             it (--query N: token N's;\n"
    "                             --layer, --head; --mean-heads: the layer's heads averaged;\n"
    "                             --rollout: rollout through layers 0..--layer)\n"
    "  --patch \"CORRUPTED\"        --view patching: the corrupted text (as many tokens as\n"
    "                             --text); --metric logit-diff:A,B (default: each text's\n"
    "                             prediction), --patch-target heads (default) or residual\n"
    "\n"
    "Figure:\n"
    "  --view NAME                see --list-views\n"
    "  --out FILE                 .png, .svg or .pdf (with --all-steps: a directory or .pdf)\n"
    "  --data FILE                .csv, .npy or .json: the numbers the view draws\n"
    "  --size PRESET              column (3.3 in), page (6.9 in), slide (16:9), poster:\n"
    "                             the size in points and text that prints at 7-9 pt\n"
    "                             (slide 18 pt, poster 24 pt); a column is as tall as\n"
    "                             its figure needs (a heatmap: square cells)\n"
    "  --width W --height H       logical size (default 900 x 600; points for PDF)\n"
    "  --font-size PT             text size in points (overrides the preset's)\n"
    "  --caption TEXT             the figure's title (default: what it shows: model or\n"
    "                             random projections, layer, head, variant, mask)\n"
    "  --no-title                 no title line\n"
    "  --show-selection           draw the selected query (figures leave it out)\n"
    "  --compare KIND             compare view: B = causal, linear, gqa, mqa or rope\n"
    "  --compare-session S.json   compare view: B = this session\n"
    "  --scale-factor F           PNG pixels per unit (default 1)\n"
    "  --theme light|dark|projector  (a session file's theme is not used)\n"
    "  --language en|zh_CN        the figure's texts (default en)\n"
    "  --step N                   flash: tiles done; kv-cache: step index; translation:\n"
    "                             the word being written (0 = the first)\n"
    "  --all-steps                every step: numbered PNG frames in the --out directory\n"
    "                             (frame_0001.png, ...) or one page per step of a .pdf\n"
    "\n"
    "Options take their value as --opt VALUE or --opt=VALUE. Bad input exits with status 2\n"
    "and one line on stderr; nothing is written then.\n";

constexpr OptionSpec kOptions[] = {
    {"session", true},
    {"tokens", true},
    {"source", true},
    {"tokenizer", true},
    {"variant", true},
    {"mask", true},
    {"valid-len", true},
    {"window", true},
    {"heads", true},
    {"kv-heads", true},
    {"d-model", true},
    {"positional", true},
    {"seed", true},
    {"identity", false},
    {"block-size", true},
    {"q-block-size", true},
    {"kv-cache-prefill", true},
    {"head", true},
    {"query", true},
    {"colormap", true},
    {"color-scale", true},
    {"color-range", true},
    {"show", true},
    {"view", true},
    {"out", true},
    {"width", true},
    {"height", true},
    {"scale-factor", true},
    {"theme", true},
    {"step", true},
    {"all-steps", false},
    {"list-views", false},
    {"help", false},
    {"dump", true},
    {"tokens-file", true},
    {"attention", true},
    {"batch", true},
    {"layer", true},
    {"model", true},
    {"text", true},
    {"language", true},
    {"data", true},
    {"size", true},
    {"font-size", true},
    {"caption", true},
    {"no-title", false},
    {"show-selection", false},
    {"compare", true},
    {"compare-session", true},
    {"patch", true},
    {"metric", true},
    {"patch-target", true},
    {"image", true},
    {"rollout", false},
    {"mean-heads", false},
};

/// Token text may legitimately be empty (an empty sequence); other values may not.
constexpr std::string_view kMayBeEmpty[] = {"tokens", "source", "caption"};

/// A real number > 0.
double parsePositiveReal(const std::string& text, const std::string& what) {
    const double value = parseReal(text, what);
    if (value <= 0) fail(what + " must be positive, got " + text);
    return value;
}

/// What --view NAME draws: a registered view, possibly with a forced quantity.
struct ViewChoice {
    QString id;
    std::string show; ///< non-empty: the heatmap quantity this name stands for
};

/// The names render accepts: the registry's, plus "mask" and "scores" (the heatmap showing
/// the mask or the raw scores) when the registry has no view of that name.
QStringList renderViewNames() {
    QStringList names = ui::viewIds();
    for (const QString& alias : {QStringLiteral("mask"), QStringLiteral("scores")})
        if (!names.contains(alias)) names << alias;
    return names;
}

ViewChoice chooseView(const std::string& name) {
    const QString id = QString::fromStdString(name);
    if (ui::viewIds().contains(id)) return {id, {}};
    if (id == QLatin1String("mask") || id == QLatin1String("scores"))
        return {QStringLiteral("heatmap"), name};
    fail("--view: unknown view '" + name +
         "' (one of: " + renderViewNames().join(QStringLiteral(", ")).toStdString() + ")");
}

/// The session to draw: --session or the defaults, with every override applied and checked.
Session buildSession(const Arguments& args, const ViewChoice& choice) {
    const auto sessionPath = get(args, "session");
    const auto tokens = get(args, "tokens");
    if (!sessionPath && !tokens && !get(args, "dump") && !get(args, "model"))
        fail("give --session S.json, --tokens \"...\", --dump F.npz or --model DIR");
    Session session;
    if (sessionPath) {
        auto loaded = loadSession(*sessionPath);
        if (!loaded) fail(loaded.error());
        session = std::move(loaded).value();
    }
    if (tokens) session.text = *tokens;
    if (auto v = get(args, "source")) session.sourceText = *v;
    if (auto v = get(args, "tokenizer")) {
        const auto tokenizer = parseTokenizer(*v);
        if (!tokenizer) fail("--tokenizer: unknown tokenizer '" + *v + "' (whitespace, character)");
        session.tokenizer = *tokenizer;
    }
    if (auto v = get(args, "variant")) {
        const auto variant = parseVariant(*v);
        if (!variant)
            fail("--variant: unknown variant '" + *v + "' (softmax, flash, linear, additive)");
        session.variant = *variant;
    }
    if (auto maskText = get(args, "mask")) {
        MaskSpec mask;
        bool padding = false, window = false, causalWindow = false;
        if (auto problem = parseMaskKinds(*maskText, mask, padding, window, causalWindow))
            fail("--mask: " + problem->message);
        const auto validLen = get(args, "valid-len");
        const auto width = get(args, "window");
        if (padding && !validLen) fail("--mask padding needs --valid-len N");
        if ((window || causalWindow) && !width) fail("--mask " + *maskText + " needs --window W");
        session.mask.causal = mask.causal;
        session.mask.window = -1;
        session.mask.causalWindow = -1;
        session.mask.validLen.clear();
        if (padding) session.mask.validLen = {parseAtLeast(*validLen, "--valid-len", 0)};
        if (window) session.mask.window = parseAtLeast(*width, "--window", 0);
        if (causalWindow) session.mask.causalWindow = parseAtLeast(*width, "--window", 0);
    } else {
        if (auto v = get(args, "valid-len"))
            session.mask.validLen = {parseAtLeast(*v, "--valid-len", 0)};
        if (auto v = get(args, "window")) {
            const Index width = parseAtLeast(*v, "--window", 0);
            if (session.mask.causalWindow >= 0)
                session.mask.causalWindow = width;
            else
                session.mask.window = width;
        }
    }
    if (auto v = get(args, "heads")) session.heads = parseAtLeast(*v, "--heads", 1);
    if (auto v = get(args, "kv-heads")) session.kvHeads = parseAtLeast(*v, "--kv-heads", 1);
    if (auto v = get(args, "d-model")) session.dModel = parseAtLeast(*v, "--d-model", 1);
    if (auto v = get(args, "positional")) {
        const auto positional = parsePositional(*v);
        if (!positional)
            fail("--positional: unknown encoding '" + *v +
                 "' (none, sinusoidal, rope-interleaved, rope-half)");
        session.positional = *positional;
    }
    if (auto v = get(args, "seed"))
        session.seed = static_cast<std::uint64_t>(parseAtLeast(*v, "--seed", 0));
    if (get(args, "identity")) session.identityProjections = true;
    if (auto v = get(args, "block-size")) session.kvBlock = parseAtLeast(*v, "--block-size", 1);
    if (auto v = get(args, "q-block-size")) session.qBlock = parseAtLeast(*v, "--q-block-size", 1);
    if (auto v = get(args, "kv-cache-prefill"))
        session.kvPrefill = parseAtLeast(*v, "--kv-cache-prefill", 0);
    ViewState& state = session.viewState;
    if (auto v = get(args, "head")) state.head = parseAtLeast(*v, "--head", 0);
    if (auto v = get(args, "query")) state.query = parseAtLeast(*v, "--query", 0);
    if (auto v = get(args, "colormap")) {
        if (!ui::colormapNames().contains(QString::fromStdString(*v)))
            fail("--colormap: unknown colormap '" + *v + "' (" +
                 ui::colormapNames().join(QStringLiteral(", ")).toStdString() + ")");
        state.colormap = *v;
    }
    const auto colorRange = get(args, "color-range");
    if (auto v = get(args, "color-scale")) {
        if (!isColorScale(*v))
            fail("--color-scale: unknown scale '" + *v + "' (fixed, data, row, log, range)");
        if (*v != "range" && colorRange)
            fail("--color-range sets the range scale; it cannot go with --color-scale " + *v);
        if (*v == "range" && !colorRange && state.colorScale != "range")
            fail("--color-scale range needs --color-range LO,HI");
        state.colorScale = *v;
    }
    if (colorRange) {
        const auto comma = colorRange->find(',');
        if (comma == std::string::npos || colorRange->find(',', comma + 1) != std::string::npos)
            fail("--color-range: expected LO,HI (e.g. 0,0.01), got '" + *colorRange + "'");
        const double low = parseReal(colorRange->substr(0, comma), "--color-range");
        const double high = parseReal(colorRange->substr(comma + 1), "--color-range");
        if (const auto problem = colorRangeProblem(low, high))
            fail("--color-range: " + problem->message);
        state.colorScale = "range";
        state.colorLow = low;
        state.colorHigh = high;
    }
    if (auto v = get(args, "show")) {
        static const QStringList kShow = {"weights", "scores", "scaled", "mask",
                                          "output",  "q",      "k",      "v"};
        if (!kShow.contains(QString::fromStdString(*v)))
            fail("--show: unknown quantity '" + *v + "' (" +
                 kShow.join(QStringLiteral(", ")).toStdString() + ")");
        state.show = *v;
    }
    if (auto v = get(args, "theme")) {
        if (!ui::themeNames().contains(QString::fromStdString(*v)))
            fail("--theme: unknown theme '" + *v + "' (" +
                 ui::themeNames().join(QStringLiteral(", ")).toStdString() + ")");
        state.theme = *v;
    }
    if (!choice.show.empty()) state.show = choice.show;
    state.view = choice.id.toStdString();
    // The KV-cache view steps through decoding: without a prefill it would have nothing to
    // show, so it decodes the second half of the tokens (as the window's "Use a KV cache").
    if (choice.id == QLatin1String("kv-cache") && session.kvPrefill < 0 &&
        session.sourceText.empty())
        session.kvPrefill = defaultKvPrefill(session);
    const QStringList problems = ui::Document::problemsOf(session);
    if (!problems.isEmpty()) {
        const std::string where = sessionPath ? *sessionPath + ": " : std::string("session: ");
        fail(where + problems.first().toStdString());
    }
    return session;
}

/// A checkpoint to draw (render --model DIR --text "..."), checked before Qt starts.
struct ModelInput {
    std::string directory;
    std::string text;
    Index layer = 0;
    std::shared_ptr<const model::Model> model;
    std::shared_ptr<const model::Tokenizer> tokenizer;
    /// An image classifier's: its processor and the image it reads.
    std::shared_ptr<const model::ImageProcessor> processor;
    QImage picture;
    QString imageName;
};

/// The layer --layer asks for (0 by default), checked with --head against the model's shape.
Index shownLayer(const Arguments& args, const std::string& directory,
                 const model::ModelConfig& config, const Session& session) {
    const Index layer = parseAtLeast(get(args, "layer").value_or("0"), "--layer", 0);
    if (layer >= config.layers)
        fail("--layer " + std::to_string(layer) + ": " + directory + " has " +
             std::to_string(config.layers) + " layers");
    if (session.viewState.head >= config.heads)
        fail("--head " + std::to_string(session.viewState.head) + ": " + directory + " has " +
             std::to_string(config.heads) + " heads");
    return layer;
}

/// An image classifier and the image it reads (render --model DIR --image X.png).
ModelInput loadImageInput(const Arguments& args, const std::string& directory,
                          const Session& session) {
    if (get(args, "text")) fail("--text: " + directory + " is an image model; give --image X.png");
    const auto imagePath = get(args, "image");
    if (!imagePath) fail("--model " + directory + " is an image model: give --image X.png");
    ModelInput input;
    input.directory = directory;
    auto loaded = model::loadModel(directory);
    if (!loaded) fail(loaded.error());
    const model::ModelConfig& config = loaded->config;
    auto processor = model::readModelImageProcessor(directory, config);
    if (!processor) fail(processor.error());
    input.layer = shownLayer(args, directory, config, session);
    if (session.viewState.query >= config.maxPositions)
        fail("--query " + std::to_string(session.viewState.query) + ": " + directory + " reads " +
             std::to_string(config.maxPositions) + " tokens");
    auto picture = ui::readImageFile(QString::fromStdString(*imagePath));
    if (!picture) fail(picture.error());
    if (auto pixels = model::processImage(ui::rgbBytesOf(*picture), picture->width(),
                                          picture->height(), *processor);
        !pixels)
        fail(*imagePath + ": " + pixels.error());
    input.picture = std::move(*picture);
    input.imageName = QFileInfo(QString::fromStdString(*imagePath)).fileName();
    input.model = std::make_shared<const model::Model>(std::move(loaded).value());
    input.processor = std::make_shared<const model::ImageProcessor>(std::move(*processor));
    return input;
}

ModelInput loadModelInput(const Arguments& args, const std::string& directory,
                          const Session& session) {
    if (get(args, "dump")) fail("--model and --dump do not go together");
    if (get(args, "session") || get(args, "tokens"))
        fail("--model runs --text \"...\"; --session and --tokens are the lab's");
    ModelInput input;
    input.directory = directory;
    if (auto config = model::readConfig(directory + "/config.json"); config && config->vision())
        return loadImageInput(args, directory, session);
    if (get(args, "image"))
        fail("--image: " + directory +
             " reads text; --image is for an image model (ViT, DINOv2, CLIP)");
    const auto text = get(args, "text");
    if (!text) fail("--model needs --text \"...\"");
    input.text = *text;
    auto tokenizer = model::Tokenizer::fromFile(directory);
    if (!tokenizer) fail(tokenizer.error());
    auto loaded = model::loadModel(directory);
    if (!loaded) fail(loaded.error());
    const model::ModelConfig& config = loaded->config;
    input.layer = shownLayer(args, directory, config, session);
    const auto ids = tokenizer->encode(input.text).ids;
    if (auto problem = model::validateRun(config, ids, {})) fail("--text: " + problem->message);
    input.model = std::make_shared<const model::Model>(std::move(loaded).value());
    input.tokenizer = std::make_shared<const model::Tokenizer>(std::move(tokenizer).value());
    return input;
}

/// Qt's own chatter (font and platform notices) would break the one-line contract.
void quietMessages(QtMsgType, const QMessageLogContext&, const QString&) {}

int run(int argc, char** argv) {
    // Same input, same bytes: Qt seeds its hashes per process unless told otherwise, and the PDF
    // engine wrote a figure's font objects in an order that changed from run to run.
    QHashSeed::setDeterministicGlobalSeed();
    const Arguments args = parseArguments(argc, argv, kOptions, "render", kMayBeEmpty);
    if (get(args, "help")) {
        std::cout << kUsage;
        return 0;
    }
    if (get(args, "list-views")) {
        for (const QString& name : renderViewNames())
            std::cout << name.toStdString() << '\n';
        return 0;
    }
    const auto viewName = get(args, "view");
    if (!viewName) fail("missing required option --view (see --list-views)");
    const ViewChoice choice = chooseView(*viewName);
    // The views that probe a model draw a real model's run: without one the window shows how
    // to open one, which is no figure.
    if (ui::viewGroupOf(choice.id) == QLatin1String("probe") && !get(args, "model"))
        fail("--view " + *viewName + " needs a real model: --model DIR --text \"...\"");
    const bool patchingView = choice.id == QLatin1String("patching");
    if (patchingView && get(args, "model") && !get(args, "patch"))
        fail("--view patching needs a corrupted text: --patch \"CORRUPTED\" (as many tokens "
             "as --text)");
    const bool imageView = choice.id == QLatin1String("image-attention");
    if (imageView && !get(args, "model"))
        fail("--view image-attention needs an image model: --model DIR --image X.png");
    if (get(args, "image") && !get(args, "model")) fail("--image needs --model DIR");
    if (get(args, "rollout") && get(args, "mean-heads"))
        fail("--rollout and --mean-heads do not go together");
    for (const char* option : {"rollout", "mean-heads"})
        if (get(args, option) && !imageView)
            fail(std::string("--") + option + " needs --view image-attention");
    for (const char* option : {"patch", "metric", "patch-target"})
        if (get(args, option) && !(patchingView && get(args, "model")))
            fail(std::string("--") + option + " needs --view patching and --model DIR");
    ui::PatchingInputs patchingInputs;
    if (patchingView && get(args, "patch")) {
        patchingInputs.corrupted = QString::fromStdString(*get(args, "patch"));
        if (auto v = get(args, "metric")) {
            // logit-diff:A,B split at the last comma (a token may itself be a comma); an empty
            // side is that text's prediction.
            const std::string prefix = "logit-diff:";
            const auto comma = v->rfind(',');
            if (v->rfind(prefix, 0) != 0 || comma == std::string::npos || comma < prefix.size())
                fail("--metric: '" + *v + "' is not logit-diff:A,B");
            patchingInputs.tokenA =
                QString::fromStdString(v->substr(prefix.size(), comma - prefix.size()));
            patchingInputs.tokenB = QString::fromStdString(v->substr(comma + 1));
        }
        const std::string target = get(args, "patch-target").value_or("heads");
        if (target != "heads" && target != "residual")
            fail("--patch-target: unknown target '" + target + "' (heads, residual)");
        patchingInputs.target =
            target == "heads" ? ui::PatchTarget::Heads : ui::PatchTarget::Residual;
    }
    const auto dataOut = get(args, "data");
    if (dataOut) {
        ui::ExportFormat dataFormat;
        if (!ui::exportFormatFor(QString::fromStdString(*dataOut), &dataFormat) ||
            ui::isFigureFormat(dataFormat))
            fail("--data " + *dataOut + ": unknown data type (use .csv, .npy or .json)");
        const QFileInfo dataInfo(QString::fromStdString(*dataOut));
        if (dataInfo.isDir()) fail("--data " + *dataOut + " is a directory");
        if (!QDir(dataInfo.absolutePath()).exists())
            fail("--data " + *dataOut + ": folder " + dataInfo.absolutePath().toStdString() +
                 " does not exist");
    }
    const auto out = get(args, "out");
    if (!out && !dataOut) fail("missing required option --out (or --data)");
    const bool allSteps = get(args, "all-steps").has_value();
    if (allSteps && dataOut) fail("--data and --all-steps do not go together");
    const QString outPath = out ? QString::fromStdString(*out) : QString();
    if (out && dataOut &&
        QFileInfo(outPath).absoluteFilePath() ==
            QFileInfo(QString::fromStdString(*dataOut)).absoluteFilePath())
        fail("--out and --data name the same file");
    ui::ExportFormat format = ui::ExportFormat::Png;
    const bool knownFormat = out && ui::exportFormatFor(outPath, &format);
    if (allSteps) {
        if (!ui::isStepView(choice.id))
            fail("--all-steps: view '" + *viewName +
                 "' has no steps (use flash, kv-cache or translation)");
        if (knownFormat && format != ui::ExportFormat::Pdf)
            fail("--all-steps --out " + *out + ": give a directory or a .pdf file");
        if (!knownFormat && QFileInfo(outPath).exists() && !QFileInfo(outPath).isDir())
            fail("--all-steps --out " + *out + ": exists and is not a directory");
    } else if (out) {
        if (!knownFormat || !ui::isFigureFormat(format))
            fail("--out " + *out + ": unknown figure type (use .png, .svg or .pdf)");
    }
    // --size PRESET sets the size and the text size; --width/--height/--font-size refine it.
    std::optional<ui::FigurePreset> preset;
    if (auto v = get(args, "size")) {
        preset = ui::figurePresetNamed(QString::fromStdString(*v));
        if (!preset) {
            QStringList names;
            for (const ui::FigurePreset& p : ui::figurePresets())
                names << p.name;
            fail("--size: unknown size '" + *v + "' (" +
                 names.join(QStringLiteral(", ")).toStdString() + ")");
        }
    }
    const std::string defaultWidth = preset ? std::to_string(preset->size.width()) : "900";
    const std::string defaultHeight = preset ? std::to_string(preset->size.height()) : "600";
    const int width =
        static_cast<int>(parseAtLeast(get(args, "width").value_or(defaultWidth), "--width", 16));
    const int height =
        static_cast<int>(parseAtLeast(get(args, "height").value_or(defaultHeight), "--height", 16));
    ui::FigureStyle figureStyle = ui::exportFigureStyle();
    if (preset) {
        figureStyle.fontPoints = preset->fontPoints;
        figureStyle.minFontPoints = preset->minFontPoints;
    }
    if (auto v = get(args, "font-size")) {
        const Index points = parseAtLeast(*v, "--font-size", 4);
        if (points > 200) fail("--font-size must be at most 200, got " + *v);
        figureStyle.fontPoints = static_cast<int>(points);
        figureStyle.minFontPoints = 0; // the size asked for, not shrunk to fit
    }
    figureStyle.showSelection = get(args, "show-selection").has_value();
    figureStyle.showTitle = !get(args, "no-title").has_value();
    if (auto v = get(args, "caption")) figureStyle.caption = QString::fromStdString(*v);
    std::optional<ui::Comparison> comparison;
    if (auto v = get(args, "compare")) {
        static const std::map<std::string, ui::Comparison> kComparisons = {
            {"causal", ui::Comparison::FullVsCausal},
            {"linear", ui::Comparison::SoftmaxVsLinear},
            {"gqa", ui::Comparison::MhaVsGqa},
            {"mqa", ui::Comparison::MhaVsMqa},
            {"rope", ui::Comparison::NoneVsRope}};
        const auto found = kComparisons.find(*v);
        if (found == kComparisons.end())
            fail("--compare: unknown comparison '" + *v + "' (causal, linear, gqa, mqa, rope)");
        comparison = found->second;
    }
    std::optional<Session> compareSession;
    if (auto v = get(args, "compare-session")) {
        if (comparison) fail("--compare and --compare-session do not go together");
        auto loaded = loadSession(*v);
        if (!loaded) fail(loaded.error());
        const QStringList problems = ui::Document::problemsOf(loaded.value());
        if (!problems.isEmpty()) fail(*v + ": " + problems.first().toStdString());
        compareSession = std::move(loaded).value();
    }
    if ((comparison || compareSession) && choice.id != QLatin1String("compare"))
        fail(std::string(comparison ? "--compare" : "--compare-session") + " needs --view compare");
    if (width > 20000 || height > 20000) fail("--width and --height must be at most 20000");
    const double scale =
        parsePositiveReal(get(args, "scale-factor").value_or("1"), "--scale-factor");
    if (width * scale > 30000 || height * scale > 30000)
        fail("--scale-factor: the image would be larger than 30000 pixels on a side");
    std::optional<Index> step;
    if (auto v = get(args, "step")) {
        if (!ui::isStepView(choice.id))
            fail("--step: view '" + *viewName +
                 "' has no steps (use flash, kv-cache or translation)");
        if (allSteps) fail("--step and --all-steps do not go together");
        step = parseAtLeast(*v, "--step", 0);
    }
    if (out) {
        if (!allSteps && QFileInfo(outPath).isDir()) fail("--out " + *out + " is a directory");
        const QFileInfo outInfo(outPath);
        const QString parent = allSteps && !knownFormat
                                   ? QFileInfo(outInfo.absoluteFilePath()).path()
                                   : outInfo.absolutePath();
        if (!QDir(parent).exists())
            fail("--out " + *out + ": folder " + parent.toStdString() + " does not exist");
    }

    const Session session = buildSession(args, choice);
    const QString language =
        ui::normalizedLanguage(QString::fromStdString(get(args, "language").value_or("en")));
    if (language.isEmpty())
        fail("--language: unknown language '" + *get(args, "language") + "' (en, zh_CN)");

    // A model dump: read and checked before anything is drawn.
    std::optional<AttentionDump> dump;
    Index dumpBatch = 0, dumpLayer = 0;
    if (auto path = get(args, "dump")) {
        auto loaded = loadAttentionDump(*path, get(args, "tokens-file").value_or(""),
                                        get(args, "attention").value_or(""));
        if (!loaded) fail(loaded.error());
        dump = std::move(loaded).value();
        if (auto v = get(args, "batch")) dumpBatch = parseAtLeast(*v, "--batch", 0);
        if (auto v = get(args, "layer")) dumpLayer = parseAtLeast(*v, "--layer", 0);
        if (dumpBatch >= dump->batch)
            fail("--batch " + std::to_string(dumpBatch) + ": " + *path + " has " +
                 std::to_string(dump->batch) + " batch entries");
        if (dumpLayer >= dump->layers)
            fail("--layer " + std::to_string(dumpLayer) + ": " + *path + " has " +
                 std::to_string(dump->layers) + " layers");
        if (session.viewState.head >= dump->heads)
            fail("--head " + std::to_string(session.viewState.head) + ": " + *path + " has " +
                 std::to_string(dump->heads) + " heads");
    } else {
        for (const char* option : {"tokens-file", "batch", "layer", "attention"})
            if (get(args, option) && !(get(args, "model") && option == std::string("layer")))
                fail(std::string("--") + option + " needs --dump");
    }

    // A real model: loaded, tokenized and checked before anything is drawn.
    ModelInput modelInput;
    if (auto dir = get(args, "model"))
        modelInput = loadModelInput(args, modelFolder(*dir), session);
    else if (get(args, "text"))
        fail("--text needs --model DIR");

    // Offscreen unless the caller chose a platform: render needs no display.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    qInstallMessageHandler(quietMessages);
    int qtArgc = 1;
    char programName[] = "attnlab";
    char* qtArgv[] = {programName, nullptr};
    QApplication app(qtArgc, qtArgv);
    // The theme is a preference of the run (--theme), not of the session file.
    const QString themeName = QString::fromStdString(get(args, "theme").value_or("light"));
    ui::applyTheme(app, ui::themeNamed(themeName));
    if (!ui::setLanguage(language))
        fail("--language: the " + language.toStdString() +
             " translation is missing from this build");

    ui::Document document;
    document.setTheme(themeName);
    document.reset(session);
    document.flush();
    if (!document.experiment()) {
        const QString problem = document.problems().isEmpty() ? QStringLiteral("cannot compute")
                                                              : document.problems().first();
        fail("session: " + problem.toStdString());
    }
    if (modelInput.model) {
        ui::ModelDocument* models = ui::ModelDocument::of(&document);
        QString problem;
        QObject::connect(models, &ui::ModelDocument::errorOccurred, &document,
                         [&problem](const QString& message) { problem = message; });
        models->setModel(modelInput.model, modelInput.tokenizer, modelInput.processor);
        if (modelInput.processor)
            models->setImage(modelInput.picture, modelInput.imageName);
        else
            models->setText(QString::fromStdString(modelInput.text));
        models->waitForIdle();
        if (!models->run() || !models->active())
            fail("--model " + modelInput.directory + ": " +
                 (problem.isEmpty() ? std::string("the run failed") : problem.toStdString()));
        models->focus(modelInput.layer, session.viewState.head);
        if (patchingView) {
            ui::PatchingDocument* patching = ui::PatchingDocument::of(&document);
            patching->applyInputs(patchingInputs);
            QString why;
            if (!patching->currentKey(&why)) fail("--patch: " + why.toStdString());
        }
    }
    if (dump) {
        ui::DumpDocument* dumps = ui::DumpDocument::of(&document);
        dumps->showAttention(std::move(*dump), dumpBatch);
        dumps->focus(dumpLayer, session.viewState.head);
    }
    std::unique_ptr<ui::View> view(ui::createView(choice.id, &document));
    if (!view) fail("--view: cannot create view '" + *viewName + "'");
    if (auto* image = qobject_cast<ui::ImageAttentionView*>(view.get()))
        image->setMode(get(args, "rollout")      ? ui::ImageAttentionView::Mode::Rollout
                       : get(args, "mean-heads") ? ui::ImageAttentionView::Mode::MeanOfHeads
                                                 : ui::ImageAttentionView::Mode::Head);
    // A view that does not apply (the flash stepper on a dump of weights) is refused, not
    // drawn as an empty figure.
    if (const QString why = view->notApplicable(); !why.isEmpty())
        fail("--view " + *viewName + ": " + why.toStdString());
    if (auto* compare = qobject_cast<ui::CompareView*>(view.get())) {
        if (compareSession)
            compare->compareWithSession(
                *compareSession,
                QFileInfo(QString::fromStdString(*get(args, "compare-session"))).fileName());
        else
            compare->compareWith(comparison.value_or(ui::Comparison::FullVsCausal));
        document.flush();
        if (!document.comparisonExperiment())
            fail(compareSession ? *get(args, "compare-session") +
                                      ": B cannot be computed (its tokens must match A's)"
                                : std::string("--compare: B cannot be computed for this session"));
        const Experiment& a = *document.experiment();
        const Experiment& b = *document.comparisonExperiment();
        if (a.queryTokens.size() != b.queryTokens.size() ||
            a.keyTokens.size() != b.keyTokens.size())
            fail(get(args, "compare-session").value_or("--compare") + ": B has " +
                 std::to_string(b.queryTokens.size()) + " tokens, A has " +
                 std::to_string(a.queryTokens.size()) + ": B - A needs the same tokens");
    }
    const QSize size(width, height);
    view->resize(size);
    // Work a view asks the document for (the flash walk of the focused head) or starts on a
    // worker (a lens, the patching) is done now.
    view->ensureComplete();
    document.flush();
    if (patchingView && modelInput.model && !ui::PatchingDocument::of(&document)->result())
        fail("--patch: " + ui::PatchingDocument::of(&document)->message().toStdString());
    ui::FigureOptions figure;
    figure.size = size;
    figure.scale = scale;
    figure.style = figureStyle;
    // A column figure's page is as tall as its matrix needs, unless --height says otherwise.
    figure.fitHeight = preset && preset->fitsHeight && !get(args, "height");
    Status error;
    if (allSteps) {
        view->setFigureStyle(figureStyle);
        error = ui::exportSteps(*view, document, outPath, size, scale);
    } else {
        if (step) {
            const auto [first, last] = ui::stepRange(*view);
            if (*step < first || *step > last)
                fail("--step " + std::to_string(*step) + ": this view has steps " +
                     std::to_string(first) + ".." + std::to_string(last));
            ui::setStep(*view, document, *step);
        }
        view->ensureFresh();
        // Data and figure commit together: the data goes to a temporary name first and is
        // renamed only once the figure is written.
        const QString dataPath = dataOut ? QString::fromStdString(*dataOut) : QString();
        const QString dataTemporary =
            dataOut ? QFileInfo(dataPath).absolutePath() + QStringLiteral("/.") +
                          QFileInfo(dataPath).fileName() + QStringLiteral(".part.") +
                          QFileInfo(dataPath).suffix()
                    : QString();
        if (dataOut) error = ui::exportData(*view, dataTemporary);
        if (!error && out) error = ui::exportView(*view, outPath, figure);
        if (dataOut) {
            if (!error) {
                QFile::remove(dataPath);
                if (!QFile::rename(dataTemporary, dataPath)) {
                    error = ui::exportError(QStringLiteral("Cannot write %1").arg(dataPath));
                    if (out) QFile::remove(outPath);
                }
            }
            QFile::remove(dataTemporary);
            if (error)
                error->message = QString::fromStdString(error->message)
                                     .replace(dataTemporary, dataPath)
                                     .toStdString();
        }
    }
    if (error) fail(error->message);
    return 0;
}

} // namespace

int renderCommand(int argc, char** argv) {
    return runCommandBody("render", run, argc, argv);
}

} // namespace attnlab::app
