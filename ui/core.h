#pragma once
/// The core's public headers as the window sees them. attnlab/tensor.h refuses to compile
/// when QT_CORE_LIB is defined (its guard against Qt leaking into the core); the UI links
/// Qt by design, so the macro is hidden while the core headers are read and restored after.

#pragma push_macro("QT_CORE_LIB")
#undef QT_CORE_LIB
#include "attnlab/attention.h"
#include "attnlab/embedding.h"
#include "attnlab/mask.h"
#include "attnlab/npy.h"
#include "attnlab/result.h" // session.h uses Result/Status
#include "attnlab/session.h"
#include "attnlab/stats.h"
#include "attnlab/tensor.h"
#pragma pop_macro("QT_CORE_LIB")
