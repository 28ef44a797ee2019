/* json: see json.h. */
#include "json.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
  const char *p;
  bool failed;
} parser;

static void skip_ws(parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\t' || *ps->p == '\r')
    ps->p++;
}

static json *new_node(json_type t) {
  json *j = calloc(1, sizeof *j);
  j->type = t;
  return j;
}

static char *parse_string(parser *ps) {
  if (*ps->p != '"') {
    ps->failed = true;
    return NULL;
  }
  ps->p++;
  size_t cap = 16, n = 0;
  char *s = malloc(cap);
  while (*ps->p != '"') {
    unsigned char c = (unsigned char)*ps->p;
    if (c == '\0' || c < 0x20) {
      ps->failed = true;
      break;
    }
    if (c == '\\') {
      ps->p++;
      if (strchr("\"\\/bfnrt", *ps->p) != NULL && *ps->p != '\0')
        c = (unsigned char)*ps->p;
      else if (*ps->p == 'u' && isxdigit((unsigned char)ps->p[1]) &&
               isxdigit((unsigned char)ps->p[2]) && isxdigit((unsigned char)ps->p[3]) &&
               isxdigit((unsigned char)ps->p[4])) {
        c = '?';
        ps->p += 4;
      } else {
        ps->failed = true;
        break;
      }
    }
    if (n + 2 > cap)
      s = realloc(s, cap *= 2);
    s[n++] = (char)c;
    ps->p++;
  }
  s[n] = '\0';
  if (!ps->failed)
    ps->p++;
  return s;
}

static json *parse_value(parser *ps, int depth);

static json *parse_container(parser *ps, int depth, bool is_object) {
  json *j = new_node(is_object ? JSON_OBJECT : JSON_ARRAY);
  ps->p++;
  skip_ws(ps);
  char close = is_object ? '}' : ']';
  if (*ps->p == close) {
    ps->p++;
    return j;
  }
  for (;;) {
    char *key = NULL;
    if (is_object) {
      skip_ws(ps);
      key = parse_string(ps);
      skip_ws(ps);
      if (ps->failed || *ps->p != ':') {
        free(key);
        ps->failed = true;
        return j;
      }
      ps->p++;
    }
    json *item = parse_value(ps, depth + 1);
    j->items = realloc(j->items, (j->n + 1) * sizeof *j->items);
    j->keys = realloc(j->keys, (j->n + 1) * sizeof *j->keys);
    j->items[j->n] = item;
    j->keys[j->n] = key;
    j->n++;
    if (ps->failed)
      return j;
    skip_ws(ps);
    if (*ps->p == ',') {
      ps->p++;
      continue;
    }
    if (*ps->p == close) {
      ps->p++;
      return j;
    }
    ps->failed = true;
    return j;
  }
}

static json *parse_value(parser *ps, int depth) {
  skip_ws(ps);
  if (depth > 64) {
    ps->failed = true;
    return NULL;
  }
  char c = *ps->p;
  if (c == '{' || c == '[')
    return parse_container(ps, depth, c == '{');
  if (c == '"') {
    json *j = new_node(JSON_STRING);
    j->string = parse_string(ps);
    return j;
  }
  static const struct {
    const char *word;
    json_type type;
    double value;
  } words[] = {{"true", JSON_BOOL, 1}, {"false", JSON_BOOL, 0}, {"null", JSON_NULL, 0}};
  for (size_t i = 0; i < 3; i++)
    if (strncmp(ps->p, words[i].word, strlen(words[i].word)) == 0) {
      ps->p += strlen(words[i].word);
      json *j = new_node(words[i].type);
      j->number = words[i].value;
      return j;
    }
  /* number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
  const char *q = ps->p;
  if (*q == '-')
    q++;
  if (*q == '0')
    q++;
  else if (isdigit((unsigned char)*q))
    while (isdigit((unsigned char)*q))
      q++;
  else {
    ps->failed = true;
    return NULL;
  }
  if (*q == '.') {
    q++;
    if (!isdigit((unsigned char)*q)) {
      ps->failed = true;
      return NULL;
    }
    while (isdigit((unsigned char)*q))
      q++;
  }
  if (*q == 'e' || *q == 'E') {
    q++;
    if (*q == '+' || *q == '-')
      q++;
    if (!isdigit((unsigned char)*q)) {
      ps->failed = true;
      return NULL;
    }
    while (isdigit((unsigned char)*q))
      q++;
  }
  json *j = new_node(JSON_NUMBER);
  j->number = strtod(ps->p, NULL);
  ps->p = q;
  return j;
}

json *json_parse(const char *text) {
  parser ps = {text, false};
  json *j = parse_value(&ps, 0);
  skip_ws(&ps);
  if (ps.failed || *ps.p != '\0') {
    json_free(j);
    return NULL;
  }
  return j;
}

void json_free(json *j) {
  if (j == NULL)
    return;
  for (size_t i = 0; i < j->n; i++) {
    json_free(j->items[i]);
    if (j->keys)
      free(j->keys[i]);
  }
  free(j->items);
  free(j->keys);
  free(j->string);
  free(j);
}

const json *json_at(const json *j, const char *path) {
  char buf[256];
  strncpy(buf, path, sizeof buf - 1);
  buf[sizeof buf - 1] = '\0';
  for (char *part = strtok(buf, "."); part != NULL && j != NULL; part = strtok(NULL, ".")) {
    const json *next = NULL;
    if (j->type == JSON_OBJECT) {
      for (size_t i = 0; i < j->n; i++)
        if (strcmp(j->keys[i], part) == 0)
          next = j->items[i];
    } else if (j->type == JSON_ARRAY) {
      size_t idx = (size_t)strtoul(part, NULL, 10);
      if (idx < j->n)
        next = j->items[idx];
    }
    j = next;
  }
  return j;
}

double json_num(const json *j, const char *path) {
  const json *v = json_at(j, path);
  return v != NULL && v->type == JSON_NUMBER ? v->number : NAN;
}
