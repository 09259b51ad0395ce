// tokenizer.json: the pipeline lands here shortly; until then loading reports that it is missing.
#include "attnlab/model/tokenizer.h"

namespace attnlab::model {

struct Tokenizer::Impl {
    std::string source;
};

Tokenizer::Tokenizer(std::shared_ptr<const Impl> impl) : m_impl(std::move(impl)) {}

Result<Tokenizer> Tokenizer::fromFile(const std::string& path) {
    return Error{path + ": tokenizer.json support is not built yet"};
}
Result<Tokenizer> Tokenizer::fromJson(std::string_view, const std::string& name) {
    return Error{name + ": tokenizer.json support is not built yet"};
}
Encoding Tokenizer::encode(std::string_view, bool) const { return {}; }
int64_t Tokenizer::vocabSize() const { return 0; }
std::optional<std::string> Tokenizer::idToToken(int64_t) const { return std::nullopt; }
std::optional<int64_t> Tokenizer::tokenToId(std::string_view) const { return std::nullopt; }
std::string Tokenizer::displayToken(int64_t) const { return {}; }
std::string Tokenizer::decode(std::span<const int64_t>, bool) const { return {}; }
std::optional<int64_t> Tokenizer::bosId() const { return std::nullopt; }
std::optional<int64_t> Tokenizer::eosId() const { return std::nullopt; }
bool Tokenizer::isSpecial(int64_t) const { return false; }
const std::string& Tokenizer::source() const { return m_impl->source; }

} // namespace attnlab::model
