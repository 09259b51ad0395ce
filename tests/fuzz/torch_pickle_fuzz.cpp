// libFuzzer harness: PyTorch checkpoints from arbitrary bytes. Every input goes to the
// restricted pickle reader (data.pkl) as it is; one that starts like a zip or like the legacy
// format is also written to a file and opened as a checkpoint, and every tensor it yields must
// lie inside its bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "attnlab/model/torch_checkpoint.h"
#include "fuzz_support.h"

using namespace attnlab;
using namespace attnlab::model;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto records = readTorchPickle(data, size, "fuzz.pkl");
    if (records)
        for (const TorchTensorRecord& r : *records)
            if (r.shape.size() != r.strides.size() || r.name.empty()) std::abort();
    // A zip, or the legacy format (its magic number's pickle): opened as a checkpoint.
    if (size < 4 ||
        (std::memcmp(data, "PK\x03\x04", 4) != 0 && std::memcmp(data, "\x80\x02\x8a\x0a", 4) != 0))
        return 0;
    const std::string path = fuzz::writeInput(data, size, "bin");
    auto checkpoint = openTorchCheckpoint(path);
    if (!checkpoint) return 0;
    std::vector<float> storage;
    for (const auto& [name, entry] : checkpoint->entries()) {
        if (entry.bytes !=
            static_cast<std::size_t>(entry.elementCount()) * tensorDTypeBytes(entry.dtype))
            std::abort();
        auto values = checkpoint->floats(entry, storage);
        if (values && static_cast<Index>(values->size()) != entry.elementCount()) std::abort();
    }
    return 0;
}
