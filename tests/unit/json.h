/* json: a strict JSON parser for tests (RFC 8259 grammar; numbers as doubles). */
#ifndef TS_TEST_JSON_H
#define TS_TEST_JSON_H

#include <stdbool.h>
#include <stddef.h>

typedef enum json_type {
  JSON_NULL,
  JSON_BOOL,
  JSON_NUMBER,
  JSON_STRING,
  JSON_ARRAY,
  JSON_OBJECT
} json_type;

typedef struct json {
  json_type type;
  double number; /* JSON_NUMBER; JSON_BOOL: 0 or 1 */
  char *string; /* JSON_STRING */
  size_t n; /* JSON_ARRAY / JSON_OBJECT: children */
  char **keys; /* JSON_OBJECT */
  struct json **items;
} json;

/* Parses text; NULL if it is not exactly one valid JSON value (whitespace around allowed). */
json *json_parse(const char *text);
void json_free(json *j);
/* Follows a dotted path ("metrics.mfu", "stages.0.stage"); NULL when absent. */
const json *json_at(const json *j, const char *path);
/* The number at path, or NaN. */
double json_num(const json *j, const char *path);

#endif
