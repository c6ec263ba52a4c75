#pragma once
// JSON text as kusari writes it in every file (the trainer's log, a recipe's args.json, the timeline):
// one rule for strings, one for numbers, both read back by Python's json module as they were written.

#include <string>
#include <string_view>

#include <kusari/core/api.h>

namespace kusari {

// `text` as a JSON string literal, quotes included, as Python's json module writes it: quotes,
// backslashes, \b \f \n \r \t escaped by their two-character forms, other control characters as
// \u00XX; and each byte that is not part of well-formed UTF-8 (a file name in another encoding) as
// \udcXX, the lone surrogate that Python's json and os.fsencode turn back into that byte.
KUSARI_API std::string json_string(std::string_view text);

// `value` as the shortest text that reads back to the same double (a whole number without a fraction:
// 2, not 2.0), NaN, Infinity and -Infinity by name as Python's json module writes and reads them.
KUSARI_API std::string json_number(double value);

}  // namespace kusari
