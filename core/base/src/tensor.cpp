#include "attnlab/base/tensor.h"

#include <sstream>

namespace attnlab {

std::string shapeText(const std::vector<Index>& shape) {
    std::ostringstream out;
    out << '[';
    for (std::size_t i = 0; i < shape.size(); ++i)
        out << (i ? ", " : "") << shape[i];
    out << ']';
    return out.str();
}

} // namespace attnlab
