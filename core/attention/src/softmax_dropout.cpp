// Softmax attention with train-mode dropout (softmax_run.h with kDropout), in its own
// translation unit so the eval kernel in softmax.cpp compiles exactly as without dropout.

#include "softmax_run.h"

namespace attnlab::kernels {

template <typename T> void softmaxHeadDropout(const HeadJobT<T>& job) {
    softmaxRun<T, true>(job);
}

template void softmaxHeadDropout(const HeadJobT<float>&);
template void softmaxHeadDropout(const HeadJobT<double>&);

} // namespace attnlab::kernels
