// loadModel: config.json + safetensors, every tensor the architecture needs bound to a view
// of the mapping and checked against the config's shapes.

#include "attnlab/model/model.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <sstream>

namespace attnlab::model {
namespace {

/// Where touch() leaves its sum, so the reads are not optimised away.
std::atomic<unsigned> g_touchSink{0};

struct LoadError {
    std::string message;
};

/// Binds tensor names to Weights, checking presence, shape and dtype; widens F16/BF16 once.
class Binder {
public:
    Binder(const SafeTensors& tensors, std::string checkpointName,
           std::vector<std::unique_ptr<std::vector<float>>>& widened, const LoadOptions& options)
        : m_tensors(tensors), m_checkpoint(std::move(checkpointName)), m_widened(widened),
          m_options(options), m_total(std::max<std::size_t>(1, tensors.mappedBytes())) {}

    bool has(const std::string& name) const { return m_tensors.find(name) != nullptr; }
    bool hasShape(const std::string& name, const std::vector<Index>& shape) const {
        const TensorEntry* entry = m_tensors.find(name);
        return entry && entry->shape == shape;
    }

    /// The tensor `name` of shape `shape` (rank 1 or 2).
    Weight bind(const std::string& name, std::vector<Index> shape) {
        const TensorEntry* entry = m_tensors.find(name);
        if (!entry)
            throw LoadError{m_checkpoint + ": tensor '" + name + "' is missing (the config needs " +
                            shapeText(shape) + ")"};
        if (entry->shape != shape)
            throw LoadError{m_tensors.filePath(*entry) + ": tensor '" + name + "' has shape " +
                            shapeText(entry->shape) + " but the config needs " + shapeText(shape)};
        if (m_options.cancel && m_options.cancel->load()) throw LoadError{"cancelled"};
        auto storage = std::make_unique<std::vector<float>>();
        auto values = m_tensors.floats(*entry, *storage);
        if (!values) throw LoadError{values.error()};
        // Read before the move below: `storage` is null after it (bench --model, which touches
        // the pages of a mapped checkpoint, crashed on every F16/BF16 one).
        const bool widened = !storage->empty();
        if (widened) m_widened.push_back(std::move(storage));
        Weight weight;
        weight.values = *values;
        weight.rows = shape.size() == 2 ? shape[0] : 1;
        weight.cols = shape.size() == 2 ? shape[1] : shape[0];
        if (m_options.touchPages && !widened) touch(*entry); // widened values are in memory
        m_done += entry->bytes;
        if (m_options.progress)
            m_options.progress(
                std::min(1.0, static_cast<double>(m_done) / static_cast<double>(m_total)));
        return weight;
    }

    /// bind() when the tensor is present, an empty Weight otherwise.
    Weight optional(const std::string& name, std::vector<Index> shape) {
        return has(name) ? bind(name, std::move(shape)) : Weight{};
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
        m_model.tokenEmbedding = m_bind.bind(name(a.names.embed, ".weight"), {m_c.vocab, d});
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
                m_bind.bind(std::string(a.names.lmHead) + ".weight", {m_c.vocab, d});
        if (!a.names.logitsBias.empty()) {
            // BART and Marian keep theirs as a [1, V] buffer.
            const std::string bias(a.names.logitsBias);
            m_model.lmHead.bias = m_bind.hasShape(bias, {1, m_c.vocab})
                                      ? m_bind.bind(bias, {1, m_c.vocab})
                                      : m_bind.bind(bias, {m_c.vocab});
        }
    }

private:
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
        if (!names.positions.empty()) {
            const Index rows = m_c.maxPositions + static_cast<Index>(m_c.arch().positionOffset);
            s.positions = m_bind.bind(name(names.positions, ".weight"), {rows, d});
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
        p.weight = m_bind.bind(name(base, ".weight"), inOut ? std::vector<Index>{in, out}
                                                           : std::vector<Index>{out, in});
        p.weight.inOut = inOut;
        if (bias) p.bias = m_bind.bind(name(base, ".bias"), {out});
        return p;
    }

    Linear unprefixedLinear(std::string_view module, Index out, Index in, bool bias) {
        Linear p;
        p.weight = m_bind.bind(std::string(module) + ".weight", {out, in});
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

    Model model;
    model.config = *config;
    model.directory = directory;
    model.name = fs::path(directory).lexically_normal().filename().string();
    if (model.name.empty()) model.name = fs::path(directory).parent_path().filename().string();
    model.m_tensors = std::make_shared<SafeTensors>(std::move(*tensors));

    const fs::path single = fs::path(directory) / "model.safetensors";
    const std::string checkpoint =
        fs::exists(single, ec) ? single.string()
                               : (fs::path(directory) / "model.safetensors.index.json").string();
    Binder binder(*model.m_tensors, checkpoint, model.m_widened, options);
    try {
        ArchitectureBinder(model, binder).bindAll();
    } catch (const LoadError& e) {
        return Error{e.message};
    }

    if (options.progress) options.progress(1.0);
    return model;
}

} // namespace attnlab::model
