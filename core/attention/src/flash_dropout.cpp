// FlashAttention with train-mode dropout (flash_run.h's recurrence with kDropout): in its own
// translation unit, so the eval kernels in flash.cpp compile exactly as without dropout.

#include "flash_run.h"

namespace attnlab::kernels {

template <typename T>
void flashHeadDropout(const HeadJobT<T>& job, Index qBlock, Index kvBlock,
                      std::type_identity_t<FlashHeadTraceT<T>>* trace) {
    if (trace)
        flashRun<T, true, true>(job, qBlock, kvBlock, trace, StateSink<T>{});
    else
        flashRun<T, false, true>(job, qBlock, kvBlock, nullptr, StateSink<T>{});
}

template void flashHeadDropout(const HeadJobT<float>&, Index, Index, FlashHeadTraceT<float>*);
template void flashHeadDropout(const HeadJobT<double>&, Index, Index, FlashHeadTraceT<double>*);

} // namespace attnlab::kernels
