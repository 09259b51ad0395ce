#pragma once
/// A hand-made .npy image for tests of files from a stranger: any descr and any shape text
/// (a lying, overflowing or malformed shape included), version 1.0, the header padded to 64
/// bytes as numpy pads it, then `data` as given. The core's writers only write honest files.

#include <string>

namespace attnlab::test {

inline std::string npyImage(const std::string& descr, const std::string& shape,
                            const std::string& data) {
    std::string dict =
        "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
    dict.push_back('\n');
    std::string out("\x93NUMPY\x01\x00", 8);
    out.push_back(static_cast<char>(dict.size() & 0xff));
    out.push_back(static_cast<char>(dict.size() >> 8));
    return out + dict + data;
}

} // namespace attnlab::test
