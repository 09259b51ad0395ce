// Placeholder until the bench command lands.
#include <iostream>

#include "commands.h"

namespace attnlab::app {
int benchCommand(int, char**) {
    std::cerr << "attnlab bench: not available yet\n";
    return 2;
}
} // namespace attnlab::app
