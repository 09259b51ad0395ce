// The app, on the top floor, includes an internal header of base: check_floors must name it.
#include "attnlab/base/pool.h"
#include "attnlab/base/tensor.h"
