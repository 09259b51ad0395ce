#pragma once
// An internal header of the bottom floor: the core's parts may include it, ui/ and app/ not.
