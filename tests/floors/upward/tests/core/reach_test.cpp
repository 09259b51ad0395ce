// A test that reaches into attention's src/ by a relative path instead of through its seam
// target: check_floors must name it.
#include "../../core/attention/src/kernels.h"
#include "reference.h"
