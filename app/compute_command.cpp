// Placeholder until the compute command lands.
#include <iostream>

#include "commands.h"

namespace attnlab::app {
int computeCommand(int, char**) {
    std::cerr << "attnlab compute: not available yet\n";
    return 2;
}
} // namespace attnlab::app
