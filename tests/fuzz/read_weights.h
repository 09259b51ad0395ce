#pragma once
// What the weights harnesses do with a checkpoint that opens: read every tensor as floats, and
// stop (a crash libFuzzer saves) when one comes back with another element count.
#include <cstdlib>
#include <string>
#include <vector>

#include "attnlab/model/safetensors.h"

namespace attnlab::fuzz {

inline void readEveryTensor(const std::string& path) {
    auto file = model::SafeTensors::open(path);
    if (!file) return;
    std::vector<float> storage;
    for (const auto& [name, entry] : file->entries()) {
        auto values = file->floats(entry, storage);
        if (values && static_cast<Index>(values->size()) != entry.elementCount()) std::abort();
    }
}

} // namespace attnlab::fuzz
