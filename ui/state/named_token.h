#pragma once
/// A token the user names in a field (the Attribution tab's target and contrast, the Patch tab's
/// metric tokens): the core's rule (model::readToken: a whole number is an id, any other text
/// must be one token), its failure worded in the user's language.

#include <QString>

#include <cstdint>
#include <optional>

#include "attnlab/model/lens.h"

namespace attnlab::ui {

/// The token `typed` names, or nullopt with `why` set to one translated sentence that starts
/// with the field's name (`field`, e.g. "Target").
std::optional<std::int64_t> namedTokenIn(const QString& typed, const model::Tokenizer* tokenizer,
                                         const model::ModelConfig& config, const QString& field,
                                         QString* why);

} // namespace attnlab::ui
