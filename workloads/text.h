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

#include <stddef.h>

/* Copies src into dst (size > 0 bytes, always NUL-terminated): valid UTF-8 without control
 * characters, cut at the last whole character that fits. */
void ts_text_copy(char *dst, size_t size, const char *src);
/* The same in place. */
void ts_text_clean(char *s);
/* The offset of the first byte of s that is not part of valid UTF-8, or -1 when it all is. */
long ts_text_invalid_utf8(const char *s);

#endif
