// A file on the bottom floor that includes the lab's session: check_floors must name it.
#include "attnlab/base/tensor.h"
#include "attnlab/lab/session.h"
