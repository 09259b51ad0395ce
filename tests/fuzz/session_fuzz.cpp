// libFuzzer harness: sessionFromJson on arbitrary text. A session that parses must be
// validated without throwing, write back to JSON that parses to the same JSON, and, when valid
// and small, run.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "attnlab/lab/session.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto session = sessionFromJson(text);
    if (!session) return 0;
    const auto problems = validate(*session);
    const std::string json = sessionToJson(*session);
    auto again = sessionFromJson(json);
    if (!again || sessionToJson(*again) != json) std::abort();
    // Valid sessions run; keep them small so the fuzzer explores parsing, not matrix products.
    if (problems.empty() && session->text.size() <= 64 && session->sourceText.size() <= 64 &&
        session->dModel <= 64 && session->heads <= 8)
        (void)run(*session);
    return 0;
}
