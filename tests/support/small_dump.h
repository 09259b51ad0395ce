#pragma once
// A tiny attention dump for window tests that need "a dump is on screen": [L=1, H=2, 3, 3],
// every row the uniform distribution, as if read from /tmp/model_dump.npz.

#include "attnlab/io/dump.h"

namespace attnlab::test {

inline AttentionDump uniformDump() {
    AttentionDump dump;
    dump.source = "/tmp/model_dump.npz";
    dump.storedRank = 4;
    dump.batch = 1;
    dump.layers = 1;
    dump.heads = 2;
    dump.sq = 3;
    dump.sk = 3;
    dump.weights.assign(2 * 3 * 3, 1.0f / 3.0f);
    return dump;
}

} // namespace attnlab::test
