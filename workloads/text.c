/* text: see text.h. */
#include "text.h"

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (1 to 4), or 0 when it is not one. */
static int utf8_length(const unsigned char *p) {
  int n = p[0] < 0x80             ? 1
          : (p[0] & 0xe0) == 0xc0 ? 2
          : (p[0] & 0xf0) == 0xe0 ? 3
          : (p[0] & 0xf8) == 0xf0 ? 4
                                  : 0;
  if (n == 0 || (n == 2 && p[0] < 0xc2) || (n == 4 && p[0] > 0xf4))
    return 0; /* a continuation byte, an overlong lead, beyond U+10FFFF */
  for (int i = 1; i < n; i++)
    if ((p[i] & 0xc0) != 0x80)
      return 0;
  if ((n == 3 && p[0] == 0xe0 && p[1] < 0xa0) || (n == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
      (n == 4 && p[0] == 0xf0 && p[1] < 0x90) || (n == 4 && p[0] == 0xf4 && p[1] >= 0x90))
    return 0; /* overlong, a surrogate, beyond U+10FFFF */
  return n;
}

void ts_text_copy(char *dst, size_t size, const char *src) {
  const unsigned char *p = (const unsigned char *)src;
  size_t out = 0;
  while (*p != '\0') {
    int n = utf8_length(p);
    if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f))) {
      if (out + 1 >= size)
        break;
      dst[out++] = '?';
      p += 1;
      continue;
    }
    if (out + (size_t)n >= size)
      break;
    for (int i = 0; i < n; i++)
      dst[out++] = (char)p[i];
    p += n;
  }
  dst[out] = '\0';
}

long ts_text_invalid_utf8(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  for (long i = 0; p[i] != '\0';) {
    int n = utf8_length(p + i);
    if (n == 0)
      return i;
    i += n;
  }
  return -1;
}

void ts_text_clean(char *s) {
  /* The clean text is never longer than the original: copy through a cursor in place. */
  unsigned char *r = (unsigned char *)s, *w = (unsigned char *)s;
  while (*r != '\0') {
    int n = utf8_length(r);
    if (n == 0 || (n == 1 && (*r < 0x20 || *r == 0x7f))) {
      *w++ = '?';
      r++;
      continue;
    }
    for (int i = 0; i < n; i++)
      *w++ = *r++;
  }
  *w = '\0';
}

void ts_text_csv_field(FILE *f, const char *v, bool always_quoted) {
  char *end = NULL;
  bool is_number = *v != '\0' && (strtod(v, &end), *end == '\0');
  bool is_formula = strchr("=+-@", *v) != NULL && *v != '\0' && !is_number;
  bool is_quoted = always_quoted || is_formula || strpbrk(v, ",\"\n\r") != NULL;
  if (is_quoted)
    fputc('"', f);
  if (is_formula)
    fputc('\'', f);
  for (; *v != '\0'; v++) {
    if (*v == '"')
      fputc('"', f);
    fputc(*v, f);
  }
  if (is_quoted)
    fputc('"', f);
}
