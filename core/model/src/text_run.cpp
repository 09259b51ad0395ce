#include "attnlab/model/text_run.h"

namespace attnlab::model {

LogitRows textLogits(const ModelConfig& config) {
    return config.kind == ModelKind::Encoder ? LogitRows::All : LogitRows::Last;
}

Result<TextRun> runText(const Model& model, std::span<const std::int64_t> ids,
                        const TextRunOptions& options, const ModelRun* previous) {
    RunOptions run = options.run;
    run.reuseCommonPrefix = true;
    TextRun out;
    if (model.config.kind == ModelKind::EncoderDecoder) {
        auto translation = translate(model, ids, options.decoding, run, previous);
        if (!translation) return Error{translation.error()};
        out.run = std::move(translation->run);
        out.generated = std::move(translation->generated);
        out.steps = std::move(translation->steps);
        return out;
    }
    auto forward = runModel(model, ids, run, previous);
    if (!forward) return Error{forward.error()};
    out.run = std::move(*forward);
    return out;
}

} // namespace attnlab::model
