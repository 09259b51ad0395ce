// libFuzzer harness: parseNpy on arbitrary bytes. A parsed array must describe exactly the
// values it holds and survive an encode / parse round trip.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "attnlab/io/npy.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    NpyReadOptions options;
    options.allowHalf = true;
    options.minRank = 1;
    options.maxRank = 5;
    auto parsed = parseNpy(bytes, "fuzz.npy", options);
    if (!parsed) return 0;
    if (parsed->elementCount() != static_cast<Index>(parsed->data.size())) std::abort();
    auto again = parseNpy(encodeNpy(*parsed, DType::Float64), "again.npy", options);
    if (!again || again->shape != parsed->shape || again->data.size() != parsed->data.size())
        std::abort();
    if (parsed->rank() >= 2 && parsed->rank() <= 4) {
        const Tensor4 t = toTensor4(*parsed);
        if (t.batch * t.heads * t.seq * t.dim != parsed->elementCount()) std::abort();
    }
    return 0;
}
