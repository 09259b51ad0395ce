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

void bindGpt2(Model& model, Binder& bind) {
    const ModelConfig& c = model.config;
    const std::string prefix = bind.has("wte.weight") ? "" : "transformer.";
    const Index d = c.hidden;
    const Index inner = c.intermediate;
    model.tokenEmbedding = bind.bind(prefix + "wte.weight", {c.vocab, d});
    model.positionEmbedding = bind.bind(prefix + "wpe.weight", {c.maxPositions, d});
    for (Index l = 0; l < c.layers; ++l) {
        const std::string p = prefix + "h." + std::to_string(l) + ".";
        LayerWeights layer;
        layer.norm1 = bind.bind(p + "ln_1.weight", {d});
        layer.norm1Bias = bind.bind(p + "ln_1.bias", {d});
        layer.attnQkv = bind.bind(p + "attn.c_attn.weight", {d, 3 * d});
        layer.attnQkvBias = bind.bind(p + "attn.c_attn.bias", {3 * d});
        layer.o = bind.bind(p + "attn.c_proj.weight", {d, d});
        layer.oBias = bind.bind(p + "attn.c_proj.bias", {d});
        layer.norm2 = bind.bind(p + "ln_2.weight", {d});
        layer.norm2Bias = bind.bind(p + "ln_2.bias", {d});
        layer.mlpIn = bind.bind(p + "mlp.c_fc.weight", {d, inner});
        layer.mlpInBias = bind.bind(p + "mlp.c_fc.bias", {inner});
        layer.mlpOut = bind.bind(p + "mlp.c_proj.weight", {inner, d});
        layer.mlpOutBias = bind.bind(p + "mlp.c_proj.bias", {d});
        model.layers.push_back(layer);
    }
    model.finalNorm = bind.bind(prefix + "ln_f.weight", {d});
    model.finalNormBias = bind.bind(prefix + "ln_f.bias", {d});
    model.lmHead =
        c.tiedEmbeddings ? model.tokenEmbedding : bind.bind("lm_head.weight", {c.vocab, d});
}

void bindLlama(Model& model, Binder& bind) {
    const ModelConfig& c = model.config;
    const std::string prefix = bind.has("model.embed_tokens.weight") ? "model." : "";
    const Index d = c.hidden;
    const Index qDim = c.heads * c.headDim;
    const Index kvDim = c.kvHeads * c.headDim;
    model.tokenEmbedding = bind.bind(prefix + "embed_tokens.weight", {c.vocab, d});
    for (Index l = 0; l < c.layers; ++l) {
        const std::string p = prefix + "layers." + std::to_string(l) + ".";
        LayerWeights layer;
        layer.norm1 = bind.bind(p + "input_layernorm.weight", {d});
        layer.q = bind.bind(p + "self_attn.q_proj.weight", {qDim, d});
        layer.k = bind.bind(p + "self_attn.k_proj.weight", {kvDim, d});
        layer.v = bind.bind(p + "self_attn.v_proj.weight", {kvDim, d});
        if (c.qkvBias) {
            layer.qBias = bind.bind(p + "self_attn.q_proj.bias", {qDim});
            layer.kBias = bind.bind(p + "self_attn.k_proj.bias", {kvDim});
            layer.vBias = bind.bind(p + "self_attn.v_proj.bias", {kvDim});
        }
        layer.o = bind.bind(p + "self_attn.o_proj.weight", {d, qDim});
        if (c.outputBias) layer.oBias = bind.bind(p + "self_attn.o_proj.bias", {d});
        if (c.qkNorm) {
            layer.qNorm = bind.bind(p + "self_attn.q_norm.weight", {c.headDim});
            layer.kNorm = bind.bind(p + "self_attn.k_norm.weight", {c.headDim});
        }
        layer.norm2 = bind.bind(p + "post_attention_layernorm.weight", {d});
        layer.gate = bind.bind(p + "mlp.gate_proj.weight", {c.intermediate, d});
        layer.up = bind.bind(p + "mlp.up_proj.weight", {c.intermediate, d});
        layer.down = bind.bind(p + "mlp.down_proj.weight", {d, c.intermediate});
        model.layers.push_back(layer);
    }
    model.finalNorm = bind.bind(prefix + "norm.weight", {d});
    model.lmHead =
        c.tiedEmbeddings ? model.tokenEmbedding : bind.bind("lm_head.weight", {c.vocab, d});
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
        if (model.config.architecture == Architecture::Gpt2)
            bindGpt2(model, binder);
        else
            bindLlama(model, binder);
    } catch (const LoadError& e) {
        return Error{e.message};
    }

    if (options.progress) options.progress(1.0);
    return model;
}

} // namespace attnlab::model
