#pragma once
/// The core's public headers the window draws from, in one include.

#include "attnlab/attention.h"
#include "attnlab/embedding.h"
#include "attnlab/mask.h"
#include "attnlab/npy.h"
#include "attnlab/result.h"
#include "attnlab/session.h"
#include "attnlab/stats.h"
#include "attnlab/tensor.h"
