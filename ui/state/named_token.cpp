#include "ui/state/named_token.h"

#include <QCoreApplication>

namespace attnlab::ui {

std::optional<std::int64_t> namedTokenIn(const QString& typed, const model::Tokenizer* tokenizer,
                                         const model::ModelConfig& config, const QString& field,
                                         QString* why) {
    const model::TokenReading reading = model::readToken(typed.toStdString(), tokenizer, config);
    using Problem = model::TokenReading::Problem;
    switch (reading.problem) {
    case Problem::None:
        return reading.id;
    case Problem::NoTokenizer:
        *why = QCoreApplication::translate(
                   "attnlab::ui::NamedToken",
                   "%1: \"%2\" is not an id, and the model has no tokenizer.json to read "
                   "it as text.")
                   .arg(field, typed);
        break;
    case Problem::NotOneToken:
        *why = QCoreApplication::translate(
                   "attnlab::ui::NamedToken",
                   "%1: \"%2\" is %3 tokens (%4), not one. Type it as the model reads "
                   "it, with its leading space: \" dog\".")
                   .arg(field, typed)
                   .arg(reading.count)
                   .arg(QString::fromStdString(reading.pieces));
        break;
    case Problem::OutsideVocabulary:
        *why = QCoreApplication::translate("attnlab::ui::NamedToken",
                                           "%1: token %2 is not in the vocabulary (ids 0 to %3).")
                   .arg(field)
                   .arg(reading.id)
                   .arg(config.vocab - 1);
        break;
    }
    return std::nullopt;
}

} // namespace attnlab::ui
