#pragma once
// KUSARI_API marks what libkusari exports. The library is built with hidden visibility, so a
// declaration without it (everything under detail/) is not part of the shared library's interface.

#define KUSARI_API __attribute__((visibility("default")))

// Every public header includes this one, so each refuses a standard older than C++20.
#if __cplusplus < 202002L
#error "kusari needs C++20 or newer (-std=c++20)"
#endif
