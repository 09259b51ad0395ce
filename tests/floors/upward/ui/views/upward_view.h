// A view that includes the main window above it: check_floors must name it.
#include "ui/state/document.h"
#include "ui/window/main_window.h"
