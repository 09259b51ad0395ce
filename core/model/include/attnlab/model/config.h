#pragma once
/// config.json of a Hugging Face checkpoint, for the architectures AttnLab runs: gpt2, llama,
/// qwen2, qwen3 and mistral. Anything else is refused with a message naming model_type.

#include <cstdint>
#include <optional>
#include <string>

#include "attnlab/base/result.h"
#include "attnlab/base/tensor.h"

namespace attnlab::model {

enum class Architecture { Gpt2, Llama, Qwen2, Qwen3, Mistral };

const char* architectureName(Architecture a);

enum class RopeScalingType { None, Linear, Llama3 };

/// rope_scaling: `linear` divides positions by factor; `llama3` rescales the frequencies
/// (low-frequency bands by 1/factor, high ones kept, a smooth blend between).
struct RopeScaling {
    RopeScalingType type = RopeScalingType::None;
    double factor = 1.0;
    double lowFreqFactor = 1.0;
    double highFreqFactor = 4.0;
    double originalMaxPositions = 8192;
};

struct ModelConfig {
    Architecture architecture = Architecture::Llama;
    Index layers = 0;
    Index hidden = 0;       ///< d_model
    Index heads = 0;        ///< query heads
    Index kvHeads = 0;      ///< key/value heads (== heads for gpt2)
    Index headDim = 0;      ///< may differ from hidden / heads (qwen3, explicit head_dim)
    Index intermediate = 0; ///< MLP width
    Index vocab = 0;
    Index maxPositions = 0;
    double normEps = 1e-5;
    double ropeTheta = 10000.0;
    RopeScaling ropeScaling;
    bool tiedEmbeddings = false; ///< lm head is the embedding matrix
    bool qkvBias = false;        ///< q/k/v projections carry a bias (qwen2, attention_bias)
    bool outputBias = false;     ///< o_proj carries a bias (llama attention_bias)
    bool qkNorm = false;         ///< qwen3: RMSNorm over each head of q and k before RoPE
    Index slidingWindow = -1;    ///< mistral: query i sees keys i - W < j <= i; -1 = none
    std::optional<std::int64_t> bosTokenId;
    std::optional<std::int64_t> eosTokenId;

    bool llamaFamily() const { return architecture != Architecture::Gpt2; }
};

/// Parses config.json's text; `name` (the file) starts every message.
Result<ModelConfig> parseConfig(const std::string& text, const std::string& name);
/// Reads and parses a config.json file.
Result<ModelConfig> readConfig(const std::string& path);

} // namespace attnlab::model
