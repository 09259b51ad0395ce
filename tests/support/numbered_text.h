#pragma once
// A text of `count` whitespace tokens, each naming its position ("w0 w1 ... w<count-1>"), for
// tests of long texts: a label read back tells where it came from.

#include <string>

namespace attnlab::test {

inline std::string numberedText(int count, const std::string& stem = "w") {
    std::string text;
    for (int i = 0; i < count; ++i)
        text += (i ? " " : "") + stem + std::to_string(i);
    return text;
}

} // namespace attnlab::test
