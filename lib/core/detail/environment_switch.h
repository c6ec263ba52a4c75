#pragma once
// Internal to the library: the on/off settings read from environment variables.

namespace kusari::detail {

// The switch environment variable `name` sets: `fallback` where it is unset or empty, false for "0",
// true for "1"; ValueError naming the variable and its value for anything else.
bool environment_switch(const char* name, bool fallback);

}  // namespace kusari::detail
