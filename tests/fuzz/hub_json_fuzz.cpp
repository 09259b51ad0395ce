// libFuzzer harness: the Hub's model API answer (hub_download.h), the server's JSON read before
// anything is downloaded. What is read is a 40-hex commit and file names; of those, the files
// AttnLab fetches are names from the list, in the top folder, that cannot leave the snapshot.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "attnlab/model/hub_download.h"

using namespace attnlab::model;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view json(reinterpret_cast<const char*>(data), size);
    const auto info = parseHubModelInfo(json);
    if (!info) {
        if (info.error().empty()) std::abort();
        return 0;
    }
    if (info->commit.size() != 40 ||
        !std::all_of(info->commit.begin(), info->commit.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
        }))
        std::abort();
    for (const auto& name : filesAttnLabReads(info->files)) {
        if (std::find(info->files.begin(), info->files.end(), name) == info->files.end())
            std::abort();
        if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
            name.find('\\') != std::string::npos)
            std::abort();
    }
    return 0;
}
