// loadModel: config.json + safetensors, every tensor the architecture needs bound to a view
// of the mapping and checked against the config's shapes.

#include "attnlab/model/model.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <utility>

#include "attnlab/base/check.h"
#include "attnlab/model/image_processor.h"

namespace attnlab::model {
namespace {

/// Where touch() leaves its sum, so the reads are not optimised away.
std::atomic<unsigned> g_touchSink{0};

struct LoadError {
    std::string message;
};

/// How a tensor is held once bound: the projections' matrices and the embeddings in the
/// checkpoint's precision (16-bit ones widened where they are used), vectors and small tables
/// widened to float32 once.
enum class Held { Own, Float32 };

/// Binds tensor names to Weights, checking presence, shape and dtype.
class Binder {
public:
    Binder(const SafeTensors& tensors, std::string checkpointName,
           std::vector<std::unique_ptr<std::vector<float>>>& widened,
           std::vector<std::unique_ptr<std::vector<std::uint16_t>>>& realigned,
           const LoadOptions& options)
        : m_tensors(tensors), m_checkpoint(std::move(checkpointName)), m_widened(widened),
          m_realigned(realigned), m_options(options),
          m_total(std::max<std::size_t>(1, tensors.mappedBytes())) {}

    bool has(const std::string& name) const { return m_tensors.find(name) != nullptr; }
    const std::string& checkpoint() const { return m_checkpoint; }
    bool hasShape(const std::string& name, const std::vector<Index>& shape) const {
        const TensorEntry* entry = m_tensors.find(name);
        return entry && entry->shape == shape;
    }

    /// The tensor `name` of shape `shape`, held as `held` says: a vector or matrix as it is (rank
    /// 1 or 2), or, with `as` {rows, cols}, a tensor of any rank read as that matrix (a
    /// convolution's [out, C, P, P] as [out, C * P * P]; a parameter [1, T, D] as [T, D]).
    Weight bind(const std::string& name, std::vector<Index> shape, Held held = Held::Float32,
                std::optional<std::pair<Index, Index>> as = std::nullopt) {
        const TensorEntry* entry = m_tensors.find(name);
        if (!entry)
            throw LoadError{m_checkpoint + ": tensor '" + name + "' is missing (the config needs " +
                            shapeText(shape) + ")"};
        if (entry->shape != shape)
            throw LoadError{m_tensors.filePath(*entry) + ": tensor '" + name + "' has shape " +
                            shapeText(entry->shape) + " but the config needs " + shapeText(shape)};
        if (m_options.cancel && m_options.cancel->load()) throw LoadError{"cancelled"};
        Weight weight;
        weight.rows = as ? as->first : shape.size() == 2 ? shape[0] : 1;
        weight.cols = as ? as->second : shape.size() == 2 ? shape[1] : shape[0];
        ATTN_CHECK(weight.rows * weight.cols == entry->elementCount(),
                   "Binder::bind: " << name << " read as " << weight.rows << " x " << weight.cols);
        const bool sixteen = entry->dtype == TensorDType::F16 || entry->dtype == TensorDType::BF16;
        bool inMapping = true;
        if (sixteen && held == Held::Own) {
            weight.type = entry->dtype == TensorDType::F16 ? WeightType::F16 : WeightType::BF16;
            const unsigned char* bytes = m_tensors.raw(*entry);
            if (reinterpret_cast<std::uintptr_t>(bytes) % alignof(std::uint16_t) == 0) {
                weight.halves = reinterpret_cast<const std::uint16_t*>(bytes);
            } else { // a header may place a tensor at an odd offset
                auto copy = std::make_unique<std::vector<std::uint16_t>>(
                    static_cast<std::size_t>(entry->elementCount()));
                if (!copy->empty())
                    std::memcpy(copy->data(), bytes, copy->size() * sizeof(std::uint16_t));
                weight.halves = copy->data();
                m_realigned.push_back(std::move(copy));
                inMapping = false;
            }
        } else {
            auto storage = std::make_unique<std::vector<float>>();
            auto values = m_tensors.floats(*entry, *storage);
            if (!values) throw LoadError{values.error()};
            weight.values = *values;
            // Read before the move below: `storage` is null after it (bench --model, which
            // touches the pages of a mapped checkpoint, crashed on every F16/BF16 one).
            inMapping = storage->empty();
            if (!inMapping) m_widened.push_back(std::move(storage));
        }
        if (m_options.touchPages && inMapping) touch(*entry); // copies are in memory already
        m_done += entry->bytes;
        if (m_options.progress)
            m_options.progress(
                std::min(1.0, static_cast<double>(m_done) / static_cast<double>(m_total)));
        return weight;
    }

    /// bind() when the tensor is present, an empty Weight otherwise.
    Weight optional(const std::string& name, std::vector<Index> shape, Held held = Held::Float32) {
        return has(name) ? bind(name, std::move(shape), held) : Weight{};
    }

private:
    /// Reads one byte per page so the mapping is resident before the first run.
    void touch(const TensorEntry& entry) const {
        const unsigned char* bytes = m_tensors.raw(entry);
        unsigned sum = 0;
        for (std::size_t at = 0; at < entry.bytes; at += 4096)
            sum += bytes[at];
        g_touchSink.store(sum, std::memory_order_relaxed);
    }

    const SafeTensors& m_tensors;
    std::string m_checkpoint;
    std::vector<std::unique_ptr<std::vector<float>>>& m_widened;
    std::vector<std::unique_ptr<std::vector<std::uint16_t>>>& m_realigned;
    const LoadOptions& m_options;
    std::size_t m_total;
    std::size_t m_done = 0;
};

/// Binds every tensor the row names, with the shapes the config implies.
class ArchitectureBinder {
public:
    ArchitectureBinder(Model& model, Binder& bind) : m_model(model), m_bind(bind), m_c(model.config) {}

    void bindAll() {
        const Architecture& a = m_c.arch();
        const Index d = m_c.hidden;
        const bool seq2seq = m_c.kind == ModelKind::EncoderDecoder;
        m_prefix = prefixOf(a.names);
        if (m_c.vision()) {
            bindVision();
            return;
        }
        m_model.tokenEmbedding =
            m_bind.bind(name(a.names.embed, ".weight"), {m_c.vocab, d}, Held::Own);
        if (seq2seq) m_model.encoder = stack(a.encoderNames, m_c.encoderLayers, false);
        m_model.main = stack(a.names, m_c.layers, seq2seq);
        if (!a.names.headTransform.empty()) {
            m_model.headTransform = unprefixedLinear(a.names.headTransform, d, d, true);
            m_model.headNorm.weight = m_bind.bind(std::string(a.names.headNorm) + ".weight", {d});
            if (a.normBias)
                m_model.headNorm.bias = m_bind.bind(std::string(a.names.headNorm) + ".bias", {d});
        }
        if (m_c.tiedEmbeddings)
            m_model.lmHead.weight = m_model.tokenEmbedding;
        else
            m_model.lmHead.weight =
                m_bind.bind(std::string(a.names.lmHead) + ".weight", {m_c.vocab, d}, Held::Own);
        if (!a.names.logitsBias.empty()) {
            // BART and Marian keep theirs as a [1, V] buffer.
            const std::string bias(a.names.logitsBias);
            m_model.lmHead.bias = m_bind.hasShape(bias, {1, m_c.vocab})
                                      ? m_bind.bind(bias, {1, m_c.vocab})
                                      : m_bind.bind(bias, {m_c.vocab});
        }
    }

private:
    /// An image model: the patch convolution, the class token and the learned positions
    /// (parameters, named without ".weight"; CLIP's as an embedding table), the encoder, and
    /// the classifier where the checkpoint has one (else the labels go: the model gives the
    /// image's embedding, CLIP's through its pooled norm and projection).
    void bindVision() {
        const Architecture& a = m_c.arch();
        const Index d = m_c.hidden;
        const Index p = m_c.patchSize;
        const Index table = m_c.positionGrid * m_c.positionGrid + m_c.leadingTokens;
        m_model.patchEmbedding.weight =
            m_bind.bind(name(a.names.embed, ".weight"), {d, m_c.channels, p, p}, Held::Own,
                        std::pair{d, m_c.channels * p * p});
        if (a.vision.patchBias)
            m_model.patchEmbedding.bias = m_bind.bind(name(a.names.embed, ".bias"), {d});
        m_model.classToken = tokenParameter(a.names.classToken);
        m_model.main = stack(a.names, m_c.layers, false);
        const std::string positions = name(a.names.positions, "");
        m_model.main.positions =
            m_bind.hasShape(positions, {table, d})
                ? m_bind.bind(positions, {table, d}, Held::Own)
                : m_bind.bind(positions, {1, table, d}, Held::Own, std::pair{table, d});
        std::string head(a.names.lmHead);
        if (!a.names.distillationToken.empty()) {
            m_model.distillationToken = tokenParameter(a.names.distillationToken);
            const std::string teacher(a.names.distillationHead);
            if (m_bind.has(teacher + ".weight")) {
                // DeiTForImageClassificationWithTeacher: both heads, averaged.
                m_model.distillationHead.weight =
                    m_bind.bind(teacher + ".weight", {m_c.vocab, d}, Held::Own);
                m_model.distillationHead.bias = m_bind.bind(teacher + ".bias", {m_c.vocab});
            } else {
                head = "classifier"; // DeiTForImageClassification: the class token's alone
            }
        }
        if (!head.empty() && m_bind.has(head + ".weight")) {
            if (m_c.vocab == 0)
                throw LoadError{m_bind.checkpoint() + ": it has a classifier ('" + head +
                                ".weight') but config.json names no classes ('id2label')"};
            const Index in = a.vision.headReadsPatchMean ? 2 * d : d;
            m_model.lmHead.weight = m_bind.bind(head + ".weight", {m_c.vocab, in}, Held::Own);
            m_model.lmHead.bias = m_bind.bind(head + ".bias", {m_c.vocab});
        } else {
            // No classifier (ViTModel, Dinov2Model, CLIP): no classes, whatever id2label says.
            m_model.config.labels.clear();
            m_model.config.vocab = 0;
        }
        m_model.poolNorm = norm("", a.names.poolNorm, d);
        const std::string projection = std::string(a.names.projection) + ".weight";
        if (!a.names.projection.empty() && m_bind.has(projection))
            m_model.projection.weight = m_bind.bind(projection, {m_c.projectionDim, d}, Held::Own);
        else
            m_model.config.projectionDim = 0;
    }

    /// A learned token, [1, 1, D] (ViT's cls_token) or [D] (CLIP's class_embedding), as [1, D].
    Weight tokenParameter(std::string_view module) {
        const Index d = m_c.hidden;
        const std::string full = name(module, "");
        return m_bind.hasShape(full, {d})
                   ? m_bind.bind(full, {d}, Held::Float32, std::pair{1, d})
                   : m_bind.bind(full, {1, 1, d}, Held::Float32, std::pair{1, d});
    }

    /// The names' prefix when the checkpoint uses it ("model.", "bert."); a bare base model
    /// saves without.
    std::string prefixOf(const TensorNames& names) const {
        const std::string embed = std::string(names.prefix) + std::string(names.embed);
        return m_bind.has(embed + ".weight") ? std::string(names.prefix) : std::string();
    }

    std::string name(std::string_view module, const char* suffix) const {
        return m_prefix + std::string(module) + suffix;
    }

    StackWeights stack(const TensorNames& names, Index layers, bool cross) {
        const Index d = m_c.hidden;
        StackWeights s;
        if (!names.positions.empty() && !m_c.vision()) { // a vision model's: bindVision()
            const Index rows = m_c.maxPositions + static_cast<Index>(m_c.arch().positionOffset);
            s.positions = m_bind.bind(name(names.positions, ".weight"), {rows, d}, Held::Own);
        }
        if (!names.tokenTypes.empty())
            s.tokenTypes = m_bind.bind(name(names.tokenTypes, ".weight"), {m_c.typeVocab, d});
        s.embedNorm = norm("", names.embedNorm, d);
        for (Index l = 0; l < layers; ++l)
            s.layers.push_back(layer(names, l, cross));
        s.finalNorm = norm("", names.finalNorm, d);
        if (!names.relativeBias.empty())
            s.relativeBias = m_bind.bind(name(std::string(names.layers) + ".0." +
                                                  std::string(names.relativeBias),
                                              ".weight"),
                                         {m_c.relativeBuckets, m_c.heads});
        return s;
    }

    /// A norm of `width` values, with a bias where the family's norms have one.
    Norm norm(const std::string& layer, std::string_view module, Index width) {
        Norm n;
        if (module.empty()) return n;
        const std::string base = layer + std::string(module);
        n.weight = m_bind.bind(name(base, ".weight"), {width});
        if (m_c.arch().normBias) n.bias = m_bind.bind(name(base, ".bias"), {width});
        return n;
    }

    /// A projection from `in` to `out` features.
    Linear linear(const std::string& layer, std::string_view module, Index out, Index in,
                  bool bias) {
        Linear p;
        if (module.empty()) return p;
        const std::string base = layer + std::string(module);
        const bool inOut = m_c.arch().weightsInOut;
        p.weight = m_bind.bind(name(base, ".weight"),
                               inOut ? std::vector<Index>{in, out} : std::vector<Index>{out, in},
                               Held::Own);
        p.weight.inOut = inOut;
        if (bias) p.bias = m_bind.bind(name(base, ".bias"), {out});
        return p;
    }

    Linear unprefixedLinear(std::string_view module, Index out, Index in, bool bias) {
        Linear p;
        p.weight = m_bind.bind(std::string(module) + ".weight", {out, in}, Held::Own);
        if (bias) p.bias = m_bind.bind(std::string(module) + ".bias", {out});
        return p;
    }

    LayerWeights layer(const TensorNames& n, Index l, bool cross) {
        const Index d = m_c.hidden;
        const Index qDim = m_c.heads * m_c.headDim;
        const Index kvDim = m_c.kvHeads * m_c.headDim;
        const Index inner = m_c.intermediate;
        const std::string at = std::string(n.layers) + "." + std::to_string(l) + ".";
        LayerWeights w;
        w.attnNormIn = norm(at, n.attnNormIn, d);
        w.attnNormOut = norm(at, n.attnNormOut, d);
        w.attnNormAfter = norm(at, n.attnNormAfter, d);
        w.mlpNormIn = norm(at, n.mlpNormIn, d);
        w.mlpNormOut = norm(at, n.mlpNormOut, d);
        w.mlpNormAfter = norm(at, n.mlpNormAfter, d);
        w.q = linear(at, n.q, qDim, d, m_c.qkvBias);
        w.k = linear(at, n.k, kvDim, d, m_c.qkvBias);
        w.v = linear(at, n.v, kvDim, d, m_c.qkvBias);
        w.qkv = linear(at, n.qkv, qDim + 2 * kvDim, d, m_c.qkvBias);
        w.o = linear(at, n.o, d, qDim, m_c.outputBias);
        const bool perHead = m_c.arch().qkNorm == QkNorm::PerHead;
        w.qNorm = norm(at, n.qNorm, perHead ? m_c.headDim : qDim);
        w.kNorm = norm(at, n.kNorm, perHead ? m_c.headDim : kvDim);
        w.gate = linear(at, n.gate, inner, d, m_c.mlpBias);
        w.up = linear(at, n.up, inner, d, m_c.mlpBias);
        w.gateUp = linear(at, n.gateUp, 2 * inner, d, m_c.mlpBias);
        w.down = linear(at, n.down, d, inner, m_c.mlpBias);
        if (!n.attnScale.empty()) {
            w.attnScale = m_bind.bind(name(at + std::string(n.attnScale), ""), {d});
            w.mlpScale = m_bind.bind(name(at + std::string(n.mlpScale), ""), {d});
        }
        if (cross) {
            w.crossNormIn = norm(at, n.crossNormIn, d);
            w.crossQ = linear(at, n.crossQ, qDim, d, m_c.qkvBias);
            w.crossK = linear(at, n.crossK, kvDim, d, m_c.qkvBias);
            w.crossV = linear(at, n.crossV, kvDim, d, m_c.qkvBias);
            w.crossO = linear(at, n.crossO, d, qDim, m_c.outputBias);
            w.crossNormAfter = norm(at, n.crossNormAfter, d);
        }
        return w;
    }

    Model& m_model;
    Binder& m_bind;
    const ModelConfig& m_c;
    std::string m_prefix;
};

} // namespace

namespace {
TensorDType storedAs(WeightType type) {
    switch (type) {
    case WeightType::F16:
        return TensorDType::F16;
    case WeightType::BF16:
        return TensorDType::BF16;
    case WeightType::F32:
        break;
    }
    return TensorDType::F32;
}
} // namespace

std::size_t Weight::bytes() const {
    return static_cast<std::size_t>(rows * cols) * (isFloat32() ? sizeof(float) : sizeof(std::uint16_t));
}

Eigen::Map<const Matrix> Weight::matrix() const {
    ATTN_CHECK(isFloat32(), "Weight::matrix(): a " << tensorDTypeName(storedAs(type))
                                                   << " weight is read through widen()");
    return Eigen::Map<const Matrix>(values.data(), rows, cols);
}

Eigen::Map<const Vector> Weight::vector() const {
    ATTN_CHECK(isFloat32(), "Weight::vector(): a " << tensorDTypeName(storedAs(type))
                                                   << " weight is read through widen()");
    return Eigen::Map<const Vector>(values.data(), static_cast<Index>(values.size()));
}

void Weight::widenRows(Index first, Index count, float* out) const {
    ATTN_CHECK(first >= 0 && count >= 0 && first + count <= rows,
               "Weight::widenRows: rows [" << first << ", " << first + count << ") of " << rows);
    const auto at = static_cast<std::size_t>(first * cols);
    const auto n = static_cast<std::size_t>(count * cols);
    if (isFloat32())
        std::copy_n(values.data() + at, n, out);
    else
        widenHalves(halves + at, n, storedAs(type), out);
}

void Weight::widenColumns(Index first, Index count, float* out) const {
    ATTN_CHECK(first >= 0 && count >= 0 && first + count <= cols,
               "Weight::widenColumns: columns [" << first << ", " << first + count << ") of "
                                                 << cols);
    const auto n = static_cast<std::size_t>(count);
    for (Index r = 0; r < rows; ++r) {
        const auto at = static_cast<std::size_t>(r * cols + first);
        float* row = out + r * count;
        if (isFloat32())
            std::copy_n(values.data() + at, n, row);
        else
            widenHalves(halves + at, n, storedAs(type), row);
    }
}

void Weight::widenOutput(Index output, float* out) const {
    if (inOut)
        widenColumns(output, 1, out);
    else
        widenRows(output, 1, out);
}

Matrix Weight::widen() const {
    Matrix out(rows, cols);
    widenRows(0, rows, out.data());
    return out;
}

std::size_t Model::copiedBytes() const {
    std::size_t total = 0;
    for (const auto& copy : m_widened)
        total += copy->size() * sizeof(float);
    for (const auto& copy : m_realigned)
        total += copy->size() * sizeof(std::uint16_t);
    return total;
}

namespace {

/// DINOv2 reads the image its processor makes (224 x 224 after the crop), not config.json's
/// image_size (518, the positions' grid), and interpolates its positions to that grid. A folder
/// without a processor, or with one the model cannot read, keeps image_size
/// (readModelImageProcessor names what does not fit when the image is processed).
void readsItsProcessorsImages(const std::string& directory, ModelConfig& config) {
    const Result<ImageProcessor> processor = readModelImageProcessor(directory, config);
    if (!processor) return;
    config.imageSize = processor->outputSize().first;
    config.maxPositions = config.patchGrid() * config.patchGrid() + config.leadingTokens;
}

} // namespace

Result<Model> loadModel(const std::string& directory, const LoadOptions& options) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(directory, ec))
        return Error{directory + ": not a folder (a model folder holds config.json and "
                                 "model.safetensors)"};
    auto config = readConfig((fs::path(directory) / "config.json").string());
    if (!config) return Error{config.error()};
    auto tensors = SafeTensors::open(directory);
    if (!tensors) return Error{tensors.error()};

    if (config->arch().vision.interpolatedPositions) readsItsProcessorsImages(directory, *config);

    Model model;
    model.config = *config;
    model.directory = directory;
    model.name = fs::path(directory).lexically_normal().filename().string();
    if (model.name.empty()) model.name = fs::path(directory).parent_path().filename().string();
    // A snapshot of the Hugging Face cache (hub_cache.h) is titled by its model's id, not its
    // commit: CACHE/models--ORG--NAME/snapshots/COMMIT.
    fs::path folder = fs::path(directory).lexically_normal();
    if (folder.filename().empty()) folder = folder.parent_path(); // "DIR/"
    if (const fs::path snapshots = folder.parent_path(); snapshots.filename() == "snapshots") {
        std::string repo = snapshots.parent_path().filename().string();
        if (repo.rfind("models--", 0) == 0) {
            repo.erase(0, 8);
            if (const auto dash = repo.find("--"); dash != std::string::npos)
                repo.replace(dash, 2, "/");
            model.name = repo;
        }
    }
    model.m_tensors = std::make_shared<SafeTensors>(std::move(*tensors));

    Binder binder(*model.m_tensors, model.m_tensors->source(), model.m_widened, model.m_realigned,
                  options);
    try {
        ArchitectureBinder(model, binder).bindAll();
    } catch (const LoadError& e) {
        return Error{e.message};
    }

    if (options.progress) options.progress(1.0);
    return model;
}

} // namespace attnlab::model
