// Attention dropout: the rate's validation (the drop pattern itself is inline in dropout.h,
// where the kernels and the views read it).

#include "attnlab/attention/dropout.h"

#include <cmath>
#include <sstream>

namespace attnlab {

Status validateDropoutRate(double rate) {
    if (std::isfinite(rate) && rate >= 0 && rate < 1) return std::nullopt;
    std::ostringstream out;
    out << "the dropout rate must be at least 0 and less than 1 (got " << rate << ")";
    return Error{out.str()};
}

} // namespace attnlab
