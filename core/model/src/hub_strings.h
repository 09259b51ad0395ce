#pragma once
// What the Hugging Face cache (hub_cache.cpp) and the downloader (hub_download.cpp) both read
// the same way: an environment variable (unset and empty alike), and a text without the
// whitespace around it (a token file, an HTTP header's value).

#include <cctype>
#include <cstdlib>
#include <string>

namespace attnlab::model::hub {

inline std::string environment(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
}

inline std::string trimmed(std::string text) {
    const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
    while (!text.empty() && space(static_cast<unsigned char>(text.back())))
        text.pop_back();
    std::size_t first = 0;
    while (first < text.size() && space(static_cast<unsigned char>(text[first])))
        ++first;
    return text.substr(first);
}

} // namespace attnlab::model::hub
