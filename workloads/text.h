/* text: strings from users (names, paths, values in messages) made safe for every output.
 *
 * Outputs are UTF-8 (JSON, CSV, XHTML, the terminal). A name taken from a file or the command
 * line may hold control characters, which XML forbids and which move a terminal's cursor, or
 * be cut to fit a buffer in the middle of a character. These helpers replace each control
 * character and each byte that is not part of valid UTF-8 with '?', and cut only between
 * characters.
 */
#ifndef TS_TEXT_H
#define TS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Copies src into dst (size > 0 bytes, always NUL-terminated): valid UTF-8 without control
 * characters, cut at the last whole character that fits. */
void ts_text_copy(char *dst, size_t size, const char *src);
/* The same in place. */
void ts_text_clean(char *s);
/* The offset of the first byte of s that is not part of valid UTF-8, or -1 when it all is. */
long ts_text_invalid_utf8(const char *s);
/* Writes v as one CSV field: quoted where it holds a comma, a quote or a line break, or always
 * (RFC 4180, quotes doubled), and, where it starts as a spreadsheet formula would (=, +, -, @)
 * without being a number, after an apostrophe, so that a spreadsheet shows it as text (OWASP's
 * advice on CSV injection). */
void ts_text_csv_field(FILE *f, const char *v, bool always_quoted);

#endif
