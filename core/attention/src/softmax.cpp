// Dense softmax attention of one head (softmax_run.h), and the masked row softmax it is
// built on.

#include "softmax_run.h"

namespace attnlab {

bool softmaxRow(Eigen::Ref<RowVector> row, KeyRange range, const bool* customRow) {
    return softmaxRowT<float>(row, range, customRow);
}
bool softmaxRow(Eigen::Ref<RowVectorD> row, KeyRange range, const bool* customRow) {
    return softmaxRowT<double>(row, range, customRow);
}

namespace kernels {

template <typename T> void softmaxHead(const HeadJobT<T>& job) {
    // Dispatched once per head: eval mode runs the loop it ran before dropout existed.
    if (job.dropout)
        softmaxHeadDropout(job);
    else
        softmaxRun<T, false>(job);
}

template void softmaxHead(const HeadJobT<float>&);
template void softmaxHead(const HeadJobT<double>&);

} // namespace kernels
} // namespace attnlab
