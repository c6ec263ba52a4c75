#pragma once
// KUSARI_API marks what libkusari exports. The library is built with hidden visibility, so a
// declaration without it (everything under detail/) is not part of the shared library's interface.

#define KUSARI_API __attribute__((visibility("default")))
