/* doc: see doc.h. A first pass over libyaml's events refuses aliases, deep nesting and extra
 * documents, so the loaded tree is a plain tree of bounded depth. */
#include "doc.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "alloc.h"
#include "text.h"

/* Our schemas nest four levels at most; anything deeper is not one of our files. */
#define DOC_MAX_DEPTH 32
/* Platform and workload files are a few KiB; a bigger file is not one of ours. */
#define DOC_MAX_BYTES (16L * 1024 * 1024)

struct ts_doc {
  char *name;
  yaml_document_t yaml;
  int n_parsed; /* nodes from the text; later ones were made by --set */
  int *node_origin; /* [node - n_parsed - 1]: the override that made it */
  int n_made, cap_made;
  const char **node_key; /* [node - 1]: the node's key path (ts_loc.key), when first asked */
  int n_node_key;
};

static yaml_node_t *node_at(const ts_doc *doc, int node);

static ts_loc mark_loc(const char *name, yaml_mark_t mark) {
  ts_loc loc = {name, (int)mark.line + 1, (int)mark.column + 1, NULL, NULL};
  return loc;
}

/* libyaml gives reader errors (bad encoding) as a byte offset, others as a mark. */
static int syntax_error(const char *name, const char *text, const yaml_parser_t *parser,
                        ts_err *err) {
  yaml_mark_t mark = parser->problem_mark;
  if (parser->error == YAML_READER_ERROR) {
    mark.line = mark.column = 0;
    for (size_t i = 0; i < parser->problem_offset && text[i] != '\0'; i++) {
      mark.column++;
      if (text[i] == '\n') {
        mark.line++;
        mark.column = 0;
      }
    }
    return ts_err_at(err, mark_loc(name, mark), "invalid YAML: %s (files must be UTF-8)",
                     parser->problem);
  }
  if (parser->context != NULL)
    return ts_err_at(err, mark_loc(name, mark), "invalid YAML: %s %s", parser->problem,
                     parser->context);
  return ts_err_at(err, mark_loc(name, mark), "invalid YAML: %s",
                   parser->problem ? parser->problem : "unreadable input");
}

/* Event pass: rejects aliases, nesting deeper than DOC_MAX_DEPTH and multiple documents. */
static int prescan(const char *name, const char *text, size_t len, ts_err *err) {
  yaml_parser_t parser;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  int depth = 0, n_docs = 0, rc = 0;
  for (bool done = false; !done && rc == 0;) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&parser, &ev)) {
      rc = syntax_error(name, text, &parser, err);
      break;
    }
    ts_loc loc = mark_loc(name, ev.start_mark);
    switch (ev.type) {
    case YAML_ALIAS_EVENT:
      rc = ts_err_at(err, loc, "YAML aliases ('*%s') are not supported in trainsim files",
                     (const char *)ev.data.alias.anchor);
      break;
    case YAML_DOCUMENT_START_EVENT:
      if (++n_docs > 1)
        rc = ts_err_at(err, loc, "expected one YAML document, found a second one");
      break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
      if (++depth > DOC_MAX_DEPTH)
        rc = ts_err_at(err, loc, "nesting deeper than %d levels", DOC_MAX_DEPTH);
      break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
      depth--;
      break;
    case YAML_STREAM_END_EVENT:
      done = true;
      break;
    default:
      break;
    }
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&parser);
  return rc;
}

int ts_doc_parse(const char *name, const char *text, size_t len, ts_doc **out, ts_err *err) {
  if (memchr(text, '\0', len) != NULL) {
    ts_loc loc = {name, 0, 0, NULL, NULL};
    return ts_err_at(err, loc, "expected a YAML text file, found binary data (a NUL byte)");
  }
  if (prescan(name, text, len, err) != 0)
    return -1;
  ts_doc *doc = calloc(1, sizeof *doc);
  TS_ASSERT(doc != NULL);
  doc->name = strdup(name);
  TS_ASSERT(doc->name != NULL);
  yaml_parser_t parser;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  if (!yaml_parser_load(&parser, &doc->yaml)) {
    syntax_error(name, text, &parser, err);
    yaml_parser_delete(&parser);
    free(doc->name);
    free(doc);
    return -1;
  }
  yaml_parser_delete(&parser);
  doc->n_parsed = (int)(doc->yaml.nodes.top - doc->yaml.nodes.start);
  /* An escaped NUL ("\0", "\u0000") would end the C string early: text after it silently lost. */
  for (int node = 1; node <= doc->n_parsed; node++) {
    const yaml_node_t *n = node_at(doc, node);
    if (n->type == YAML_SCALAR_NODE &&
        strlen((const char *)n->data.scalar.value) != n->data.scalar.length) {
      int rc =
          ts_err_at(err, ts_doc_loc(doc, node), "expected text, found a NUL character after '%s'",
                    (const char *)n->data.scalar.value);
      ts_doc_free(doc);
      return rc;
    }
  }
  *out = doc;
  return 0;
}

int ts_doc_load_file(const char *path, ts_doc **out, ts_err *err) {
  struct stat st;
  if (stat(path, &st) != 0)
    return ts_err_plain(err, "cannot open '%s': %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode))
    return ts_err_plain(err, "'%s' is a directory, expected a YAML file", path);
  if (!S_ISREG(st.st_mode))
    return ts_err_plain(err, "'%s' is not a regular file, expected a YAML file", path);
  if (st.st_size > DOC_MAX_BYTES)
    return ts_err_plain(err, "'%s' is %lld bytes, more than the %ld a trainsim file may have", path,
                        (long long)st.st_size, DOC_MAX_BYTES);
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return ts_err_plain(err, "cannot open '%s': %s", path, strerror(errno));
  size_t cap = (size_t)st.st_size + 1;
  char *text = malloc(cap);
  TS_ASSERT(text != NULL);
  size_t len = fread(text, 1, cap, f);
  bool failed = ferror(f) != 0;
  fclose(f);
  if (failed) {
    free(text);
    return ts_err_plain(err, "cannot read '%s'", path);
  }
  int rc = ts_doc_parse(path, text, len, out, err);
  free(text);
  return rc;
}

void ts_doc_free(ts_doc *doc) {
  if (doc == NULL)
    return;
  yaml_document_delete(&doc->yaml);
  free(doc->node_origin);
  free(doc->node_key);
  free(doc->name);
  free(doc);
}

const char *ts_doc_name(const ts_doc *doc) {
  return doc->name;
}

static yaml_node_t *node_at(const ts_doc *doc, int node) {
  if (node <= 0)
    return NULL;
  return yaml_document_get_node((yaml_document_t *)&doc->yaml, node);
}

int ts_doc_root(const ts_doc *doc) {
  return node_at(doc, 1) != NULL ? 1 : 0;
}

static const char *override_text(int i);

/* The collection holding node (as a key, a value or an item) and the step from it to node
 * (".key" or "[i]", into step); 0 for the root. Documents are a few hundred nodes: a scan. */
static int parent_of(const ts_doc *doc, int node, char *step, size_t size) {
  int n = (int)(doc->yaml.nodes.top - doc->yaml.nodes.start);
  for (int id = 1; id <= n; id++) {
    const yaml_node_t *c = node_at(doc, id);
    if (c->type == YAML_MAPPING_NODE) {
      for (const yaml_node_pair_t *p = c->data.mapping.pairs.start; p < c->data.mapping.pairs.top;
           p++)
        if (p->key == node || p->value == node) {
          const char *k = ts_doc_scalar(doc, p->key);
          snprintf(step, size, ".%s", k != NULL ? k : "?");
          return id;
        }
    } else if (c->type == YAML_SEQUENCE_NODE) {
      for (const yaml_node_item_t *it = c->data.sequence.items.start;
           it < c->data.sequence.items.top; it++)
        if (*it == node) {
          snprintf(step, size, "[%d]", (int)(it - c->data.sequence.items.start));
          return id;
        }
    }
  }
  return 0;
}

/* Key paths for the life of the process: a ts_loc outlives its document (a workload keeps
 * where each value came from for the checks after loading). A few hundred distinct paths in
 * practice; past KEY_SLOTS / 2 (inputs made of random keys) no more are kept, and those
 * locations carry no key. */
#define KEY_SLOTS 8192
static const char *interned[KEY_SLOTS];
static int n_interned;

static const char *intern(const char *path) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (const char *c = path; *c != '\0'; c++)
    h = (h ^ (uint8_t)*c) * 1099511628211ull;
  for (size_t i = h % KEY_SLOTS;; i = (i + 1) % KEY_SLOTS) {
    if (interned[i] == NULL) {
      if (n_interned >= KEY_SLOTS / 2)
        return NULL;
      interned[i] = strdup(path);
      TS_ASSERT(interned[i] != NULL);
      n_interned++;
      return interned[i];
    }
    if (strcmp(interned[i], path) == 0)
      return interned[i];
  }
}

/* node's key path (parallelism.tensor, node.nics[0].bandwidth), cached by node; NULL for the
 * root. */
static const char *key_path(ts_doc *doc, int node) {
  if (node <= 0)
    return NULL;
  if (node > doc->n_node_key) {
    doc->node_key = realloc(doc->node_key, (size_t)node * sizeof *doc->node_key);
    TS_ASSERT(doc->node_key != NULL);
    memset(doc->node_key + doc->n_node_key, 0,
           (size_t)(node - doc->n_node_key) * sizeof *doc->node_key);
    doc->n_node_key = node;
  }
  if (doc->node_key[node - 1] == NULL) {
    char path[512] = "", step[160];
    for (int at = node, up; (up = parent_of(doc, at, step, sizeof step)) != 0; at = up) {
      size_t n_step = strlen(step), n_path = strlen(path);
      if (n_step + n_path >= sizeof path)
        return NULL; /* deeper than any file of ours: no key */
      memmove(path + n_step, path, n_path + 1); /* the step in front */
      memcpy(path, step, n_step);
    }
    if (path[0] == '\0')
      return NULL;
    doc->node_key[node - 1] = intern(path + (path[0] == '.'));
  }
  return doc->node_key[node - 1];
}

ts_loc ts_doc_loc(const ts_doc *doc, int node) {
  /* The key cache is filled lazily: a detail of the document, not a change of it. */
  const char *key = key_path((ts_doc *)doc, node);
  if (node > doc->n_parsed && node - doc->n_parsed <= doc->n_made) {
    ts_loc loc = {NULL, 0, 0, override_text(doc->node_origin[node - doc->n_parsed - 1]), key};
    return loc;
  }
  const yaml_node_t *n = node_at(doc, node);
  if (n == NULL) {
    ts_loc loc = {doc->name, 0, 0, NULL, NULL};
    return loc;
  }
  ts_loc loc = mark_loc(doc->name, n->start_mark);
  loc.key = key;
  return loc;
}

bool ts_doc_is_map(const ts_doc *doc, int node) {
  const yaml_node_t *n = node_at(doc, node);
  return n != NULL && n->type == YAML_MAPPING_NODE;
}

bool ts_doc_is_seq(const ts_doc *doc, int node) {
  const yaml_node_t *n = node_at(doc, node);
  return n != NULL && n->type == YAML_SEQUENCE_NODE;
}

int ts_doc_seq_len(const ts_doc *doc, int node) {
  const yaml_node_t *n = node_at(doc, node);
  if (n == NULL || n->type != YAML_SEQUENCE_NODE)
    return 0;
  return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
}

int ts_doc_seq_item(const ts_doc *doc, int node, int index) {
  const yaml_node_t *n = node_at(doc, node);
  TS_ASSERT(n != NULL && n->type == YAML_SEQUENCE_NODE && index >= 0 &&
            index < ts_doc_seq_len(doc, node));
  return n->data.sequence.items.start[index];
}

const char *ts_doc_scalar(const ts_doc *doc, int node) {
  const yaml_node_t *n = node_at(doc, node);
  if (n == NULL || n->type != YAML_SCALAR_NODE)
    return NULL;
  return (const char *)n->data.scalar.value;
}

static const char *node_kind(const ts_doc *doc, int node) {
  const yaml_node_t *n = node_at(doc, node);
  if (n == NULL)
    return "nothing";
  switch (n->type) {
  case YAML_MAPPING_NODE:
    return "a mapping";
  case YAML_SEQUENCE_NODE:
    return "a list";
  default:
    return n->data.scalar.length == 0 ? "an empty value" : "a scalar";
  }
}

static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64)
    return SIZE_MAX;
  size_t row[65];
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t best = diag + (a[i - 1] == b[j - 1] ? 0 : 1);
      if (up + 1 < best)
        best = up + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

const char *ts_did_you_mean(const char *word, const char *const *names) {
  const char *best = NULL;
  size_t best_d = SIZE_MAX;
  for (const char *const *n = names; *n != NULL; n++) {
    size_t d = edit_distance(word, *n);
    if (d < best_d) {
      best_d = d;
      best = *n;
    }
  }
  return best_d <= strlen(word) / 3 + 1 ? best : NULL;
}

bool ts_doc_is_quoted(const ts_doc *doc, int node) {
  const yaml_node_t *n = node_at(doc, node);
  return n != NULL && n->type == YAML_SCALAR_NODE &&
         (n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
          n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE);
}

int ts_doc_check_json(const ts_doc *doc, ts_err *err) {
  for (int node = 1; node <= doc->n_parsed && node_at(doc, node) != NULL; node++) {
    const yaml_node_t *n = node_at(doc, node);
    if (n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE)
      return ts_err_at(err, ts_doc_loc(doc, node),
                       "expected JSON: strings in double quotes, found '%s' in single quotes",
                       ts_doc_scalar(doc, node));
    for (yaml_node_pair_t *p = n->type == YAML_MAPPING_NODE ? n->data.mapping.pairs.start : NULL;
         p != NULL && p < n->data.mapping.pairs.top; p++) {
      const yaml_node_t *k = node_at(doc, p->key);
      if (k == NULL || k->type != YAML_SCALAR_NODE ||
          k->data.scalar.style != YAML_DOUBLE_QUOTED_SCALAR_STYLE)
        return ts_err_at(err, ts_doc_loc(doc, p->key),
                         "expected JSON: every key a string in double quotes, found '%s'",
                         k != NULL && k->type == YAML_SCALAR_NODE ? ts_doc_scalar(doc, p->key)
                                                                  : "a key that is not a string");
    }
  }
  return 0;
}

typedef struct keyed {
  const char *key;
  int node;
} keyed;

static int by_key_then_node(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c != 0 ? c : x->node - y->node;
}

int ts_doc_check_unique_keys(const ts_doc *doc, ts_err *err) {
  for (int node = 1; node_at(doc, node) != NULL; node++) {
    const yaml_node_t *n = node_at(doc, node);
    if (n->type != YAML_MAPPING_NODE)
      continue;
    size_t count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start), k = 0;
    keyed *keys = ts_alloc(count > 0 ? count : 1, sizeof *keys);
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++)
      if (ts_doc_scalar(doc, p->key) != NULL) /* sorted by text, then by position */
        keys[k++] = (keyed){ts_doc_scalar(doc, p->key), p->key};
    qsort(keys, k, sizeof *keys, by_key_then_node);
    for (size_t i = 1; i < k; i++)
      if (strcmp(keys[i].key, keys[i - 1].key) == 0) {
        int first = ts_doc_loc(doc, keys[i - 1].node).line;
        int rc = ts_err_at(err, ts_doc_loc(doc, keys[i].node),
                           "duplicate key '%s' (first at line %d): expected each key once",
                           keys[i].key, first);
        free(keys);
        return rc;
      }
    free(keys);
  }
  return 0;
}

int ts_doc_check_map(const ts_doc *doc, int node, const char *what, const char *const *allowed,
                     ts_err *err) {
  const yaml_node_t *n = node_at(doc, node);
  if (n == NULL || n->type != YAML_MAPPING_NODE)
    return ts_err_at(err, ts_doc_loc(doc, node), "'%s': expected a mapping, found %s", what,
                     node_kind(doc, node));
  for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
    const char *key = ts_doc_scalar(doc, p->key);
    if (key == NULL)
      return ts_err_at(err, ts_doc_loc(doc, p->key), "'%s': expected scalar keys, found %s", what,
                       node_kind(doc, p->key));
    bool known = false;
    for (const char *const *a = allowed; *a != NULL; a++)
      known = known || strcmp(*a, key) == 0;
    if (!known) {
      const char *hint = ts_did_you_mean(key, allowed);
      if (hint != NULL)
        return ts_err_at(err, ts_doc_loc(doc, p->key),
                         "unknown key '%s' in '%s' (did you mean '%s'?)", key, what, hint);
      return ts_err_at(err, ts_doc_loc(doc, p->key), "unknown key '%s' in '%s'", key, what);
    }
    for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++)
      if (strcmp(ts_doc_scalar(doc, q->key), key) == 0) {
        ts_loc first = ts_doc_loc(doc, q->key);
        return ts_err_at(err, ts_doc_loc(doc, p->key),
                         "duplicate key '%s' in '%s' (first at line %d)", key, what, first.line);
      }
  }
  return 0;
}

int ts_doc_map_item(const ts_doc *doc, int map, int index, int *key, int *value) {
  const yaml_node_t *n = node_at(doc, map);
  if (n == NULL || n->type != YAML_MAPPING_NODE || index < 0 ||
      index >= n->data.mapping.pairs.top - n->data.mapping.pairs.start)
    return -1;
  *key = n->data.mapping.pairs.start[index].key;
  *value = n->data.mapping.pairs.start[index].value;
  return 0;
}

int ts_doc_get(const ts_doc *doc, int map, const char *key) {
  const yaml_node_t *n = node_at(doc, map);
  if (n == NULL || n->type != YAML_MAPPING_NODE)
    return 0;
  for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
    const char *k = ts_doc_scalar(doc, p->key);
    if (k != NULL && strcmp(k, key) == 0)
      return p->value;
  }
  return 0;
}

int ts_doc_missing(const ts_doc *doc, int map, const char *what, const char *key, ts_err *err) {
  ts_loc at = ts_doc_loc(doc, map);
  char path[512];
  snprintf(path, sizeof path, "%s%s%s", at.key ? at.key : "", at.key ? "." : "", key);
  at.key = path; /* the missing key's own path; ts_err_at copies it */
  return ts_err_at(err, at, "missing required key '%s' in '%s'", key, what);
}

int ts_parse_long(const char *text, long *out) {
  if (text == NULL || !(text[0] == '-' || (text[0] >= '0' && text[0] <= '9')))
    return -1;
  for (const char *p = text + 1; *p != '\0'; p++)
    if (*p < '0' || *p > '9')
      return -1;
  if (text[0] == '-' && text[1] == '\0')
    return -1;
  errno = 0;
  long v = strtol(text, NULL, 10);
  if (errno == ERANGE)
    return -1;
  *out = v;
  return 0;
}

int ts_parse_double(const char *text, double *out) {
  if (text == NULL || text[0] == '\0')
    return -1;
  for (const char *p = text; *p != '\0'; p++)
    if (!strchr("0123456789.eE+-", *p))
      return -1; /* refuses nan, inf and hex, which strtod would take */
  char *end = NULL;
  double v = strtod(text, &end); /* overflow gives inf; underflow a tiny or zero value, kept */
  if (*end != '\0' || !isfinite(v))
    return -1;
  *out = v;
  return 0;
}

/* A scalar value node, or an error naming the key. */
static const char *scalar_value(const ts_doc *doc, int value, const char *key, const char *expected,
                                ts_err *err) {
  const char *s = ts_doc_scalar(doc, value);
  if (s == NULL || s[0] == '\0') {
    ts_err_at(err, ts_doc_loc(doc, value), "key '%s': expected %s, found %s", key, expected,
              node_kind(doc, value));
    return NULL;
  }
  return s;
}

int ts_doc_get_long(const ts_doc *doc, int map, const char *key, long lo, long hi, long *out,
                    ts_err *err) {
  int v = ts_doc_get(doc, map, key);
  if (v == 0)
    return 0;
  char expected[96];
  if (hi == LONG_MAX)
    snprintf(expected, sizeof expected, "an integer >= %ld", lo);
  else
    snprintf(expected, sizeof expected, "an integer from %ld to %ld", lo, hi);
  const char *s = scalar_value(doc, v, key, expected, err);
  if (s == NULL)
    return -1;
  long x = 0;
  if (ts_parse_long(s, &x) != 0 || x < lo || x > hi)
    return ts_err_at(err, ts_doc_loc(doc, v), "key '%s': expected %s, found '%s'", key, expected,
                     s);
  *out = x;
  return 1;
}

int ts_doc_get_double(const ts_doc *doc, int map, const char *key, double lo, double hi,
                      double *out, ts_err *err) {
  int v = ts_doc_get(doc, map, key);
  if (v == 0)
    return 0;
  char expected[96];
  snprintf(expected, sizeof expected, "a number from %g to %g", lo, hi);
  const char *s = scalar_value(doc, v, key, expected, err);
  if (s == NULL)
    return -1;
  double x = 0;
  if (ts_parse_double(s, &x) != 0 || x < lo || x > hi)
    return ts_err_at(err, ts_doc_loc(doc, v), "key '%s': expected %s, found '%s'", key, expected,
                     s);
  *out = x;
  return 1;
}

int ts_doc_get_unit(const ts_doc *doc, int map, const char *key, ts_unit_kind kind, bool allow_zero,
                    double *out, ts_err *err) {
  int v = ts_doc_get(doc, map, key);
  if (v == 0)
    return 0;
  const char *expected = ts_units_expected(kind);
  const char *s = scalar_value(doc, v, key, expected, err);
  if (s == NULL)
    return -1;
  double x = 0;
  if (ts_units_parse(s, kind, &x, NULL) != 0)
    return ts_err_at(err, ts_doc_loc(doc, v), "key '%s': expected %s, found '%s'", key, expected,
                     s);
  if (x == 0 && !allow_zero)
    return ts_err_at(err, ts_doc_loc(doc, v), "key '%s': expected a value above zero, found '%s'",
                     key, s);
  double lo = 0, hi = 0;
  const char *lo_text = NULL, *hi_text = NULL;
  ts_units_range(kind, &lo, &hi, &lo_text, &hi_text);
  if (x != 0 && (x < lo || x > hi))
    return ts_err_at(err, ts_doc_loc(doc, v), "key '%s': expected %s%s to %s, found '%s'", key,
                     allow_zero ? "0 or " : "", lo_text, hi_text, s);
  *out = x;
  return 1;
}

int ts_doc_get_bool(const ts_doc *doc, int map, const char *key, bool *out, ts_err *err) {
  static const char *const names[] = {"false", "true", NULL};
  int idx = 0;
  int rc = ts_doc_get_enum(doc, map, key, names, &idx, err);
  if (rc == 1)
    *out = idx == 1;
  return rc;
}

int ts_doc_get_enum(const ts_doc *doc, int map, const char *key, const char *const *names, int *out,
                    ts_err *err) {
  int v = ts_doc_get(doc, map, key);
  if (v == 0)
    return 0;
  char expected[256] = "one of";
  for (const char *const *n = names; *n != NULL; n++) {
    size_t used = strlen(expected);
    snprintf(expected + used, sizeof expected - used, "%s '%s'", n == names ? "" : ",", *n);
  }
  const char *s = scalar_value(doc, v, key, expected, err);
  if (s == NULL)
    return -1;
  for (int i = 0; names[i] != NULL; i++)
    if (strcmp(names[i], s) == 0) {
      *out = i;
      return 1;
    }
  return ts_err_at(err, ts_doc_loc(doc, v), "key '%s': expected %s, found '%s'", key, expected, s);
}

int ts_doc_get_string(const ts_doc *doc, int map, const char *key, const char **out, ts_err *err) {
  int v = ts_doc_get(doc, map, key);
  if (v == 0)
    return 0;
  const char *s = scalar_value(doc, v, key, "a string", err);
  if (s == NULL)
    return -1;
  *out = s;
  return 1;
}

/* ---- --set KEY=VALUE ----------------------------------------------------------------------- */

static const char *const platform_roots[] = {"gpu",         "node",        "network", "nodes",
                                             "collectives", "reliability", NULL};
static const char *const workload_roots[] = {"model", "training",   "parallelism", "placement",
                                             "stack", "checkpoint", NULL};

typedef struct override {
  char *text; /* "--set KEY=VALUE", for messages */
  char *path; /* KEY without its platform. / workload. prefix */
  char *value;
  ts_doc_kind kind;
} override;

/* The process's overrides, in the order given (a later one for the same key wins). */
static override *overrides;
static int n_overrides;

static const char *override_text(int i) {
  return overrides[i].text;
}

static bool is_in(const char *word, size_t len, const char *const *names) {
  for (; *names != NULL; names++)
    if (strlen(*names) == len && strncmp(*names, word, len) == 0)
      return true;
  return false;
}

int ts_doc_override_add(const char *key_value, ts_err *err) {
  char *text = malloc(strlen(key_value) + 7);
  TS_ASSERT(text != NULL);
  sprintf(text, "--set %s", key_value);
  long bad = ts_text_invalid_utf8(key_value);
  if (bad >= 0) { /* libyaml takes UTF-8 only */
    unsigned char byte = (unsigned char)key_value[bad];
    ts_text_clean(text);
    ts_err_at(err, (ts_loc){NULL, 0, 0, text, NULL},
              "expected UTF-8 text, found the byte 0x%02x at character %ld", byte, bad + 1);
    free(text);
    return -1;
  }
  ts_loc loc = {NULL, 0, 0, text, NULL};
  const char *eq = strchr(key_value, '=');
  if (eq == NULL || eq == key_value) {
    ts_err_at(err, loc, "expected KEY=VALUE, such as network.link.bandwidth=50GBps");
    free(text);
    return -1;
  }
  const char *path = key_value;
  size_t path_len = (size_t)(eq - key_value);
  ts_doc_kind kind;
  size_t root = strcspn(path, ".[");
  root = root < path_len ? root : path_len;
  if (root == 8 && strncmp(path, "platform", 8) == 0 && path_len > 9 && path[8] == '.') {
    kind = TS_DOC_PLATFORM;
    path += 9, path_len -= 9;
  } else if (root == 8 && strncmp(path, "workload", 8) == 0 && path_len > 9 && path[8] == '.') {
    kind = TS_DOC_WORKLOAD;
    path += 9, path_len -= 9;
  } else if (is_in(path, root, platform_roots)) {
    kind = TS_DOC_PLATFORM;
  } else if (is_in(path, root, workload_roots)) {
    kind = TS_DOC_WORKLOAD;
  } else {
    ts_err_at(err, loc,
              "'%.*s' is not a platform key (gpu, node, network, nodes, collectives, "
              "reliability, or platform.KEY) or a workload key (model, training, parallelism, "
              "placement, stack, checkpoint, or workload.KEY)",
              (int)path_len, path);
    free(text);
    return -1;
  }
  override *grown = realloc(overrides, (size_t)(n_overrides + 1) * sizeof *grown);
  TS_ASSERT(grown != NULL);
  overrides = grown;
  override *o = &overrides[n_overrides++];
  o->text = text;
  o->path = strndup(path, path_len);
  o->value = strdup(eq + 1);
  TS_ASSERT(o->path != NULL && o->value != NULL);
  o->kind = kind;
  return 0;
}

int ts_doc_overrides_count(ts_doc_kind kind) {
  int n = 0;
  for (int i = 0; i < n_overrides; i++)
    n += overrides[i].kind == kind;
  return n;
}

const char *ts_doc_override(int i) {
  return i >= 0 && i < n_overrides ? overrides[i].text + strlen("--set ") : NULL;
}

void ts_doc_overrides_clear(void) {
  for (int i = 0; i < n_overrides; i++) {
    free(overrides[i].text);
    free(overrides[i].path);
    free(overrides[i].value);
  }
  free(overrides);
  overrides = NULL;
  n_overrides = 0;
}

/* A node made for override i: its messages name the flag. */
static int made(ts_doc *doc, int node, int i) {
  TS_ASSERT(node > 0);
  if (doc->n_made == doc->cap_made) {
    doc->cap_made = doc->cap_made > 0 ? 2 * doc->cap_made : 8;
    doc->node_origin = realloc(doc->node_origin, (size_t)doc->cap_made * sizeof(int));
    TS_ASSERT(doc->node_origin != NULL);
  }
  TS_ASSERT(node == doc->n_parsed + doc->n_made + 1); /* libyaml appends */
  doc->node_origin[doc->n_made++] = i;
  return node;
}

static int add_scalar(ts_doc *doc, const char *text, int i) {
  return made(
      doc,
      yaml_document_add_scalar(&doc->yaml, NULL, (yaml_char_t *)text, -1, YAML_PLAIN_SCALAR_STYLE),
      i);
}

/* Applies override i below node: walks the rest of its path p (KEY.KEY[INDEX].KEY, an index
 * of * meaning every item of the list), making the mappings and keys that are missing, and sets
 * the last key's value. */
static int apply_at(ts_doc *doc, int i, int node, const char *p, ts_err *err) {
  const override *o = &overrides[i];
  ts_loc loc = {NULL, 0, 0, o->text, NULL};
  while (*p != '\0') {
    size_t len = strcspn(p, ".[");
    if (len == 0)
      return ts_err_at(err, loc, "expected KEY.KEY... with a key before '%c'", *p);
    char key[128];
    if (len >= sizeof key)
      return ts_err_at(err, loc, "a key of %zu characters is not one of ours", len);
    memcpy(key, p, len);
    key[len] = '\0';
    p += len;
    if (!ts_doc_is_map(doc, node))
      return ts_err_at(err, loc, "'%s' sits under a value that is not a mapping", key);
    int value = ts_doc_get(doc, node, key);
    bool last = *p == '\0';
    if (last) {
      int scalar = add_scalar(doc, o->value, i);
      if (value != 0) {
        if (!ts_doc_is_map(doc, value) && !ts_doc_is_seq(doc, value)) {
          yaml_node_t *m = node_at(doc, node);
          for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < m->data.mapping.pairs.top;
               q++)
            if (q->value == value)
              q->value = scalar;
          return 0;
        }
        return ts_err_at(err, loc, "'%s' is a %s: set its %s one by one", key,
                         ts_doc_is_map(doc, value) ? "mapping" : "list",
                         ts_doc_is_map(doc, value) ? "keys" : "items ([*] for all)");
      }
      if (!yaml_document_append_mapping_pair(&doc->yaml, node, add_scalar(doc, key, i), scalar))
        return ts_err_at(err, loc, "out of memory");
      return 0;
    }
    if (value == 0) { /* a missing section: made, to hold the key */
      value = made(doc, yaml_document_add_mapping(&doc->yaml, NULL, YAML_BLOCK_MAPPING_STYLE), i);
      if (!yaml_document_append_mapping_pair(&doc->yaml, node, add_scalar(doc, key, i), value))
        return ts_err_at(err, loc, "out of memory");
    }
    node = value;
    while (*p == '[') {
      if (strncmp(p, "[*]", 3) == 0) { /* every item: the rest of the path on each */
        if (!ts_doc_is_seq(doc, node))
          return ts_err_at(err, loc, "'%s' is not a list, so [*] selects nothing", key);
        const char *rest = p + 3;
        if (*rest == '.')
          rest++;
        else if (*rest != '\0')
          return ts_err_at(err, loc, "expected '.' after '%s[*]', found '%c'", key, *rest);
        if (*rest == '\0')
          return ts_err_at(err, loc, "'%s[*]' names whole items: name the key to set in each", key);
        for (int k = 0; k < ts_doc_seq_len(doc, node); k++)
          if (apply_at(doc, i, ts_doc_seq_item(doc, node, k), rest, err) != 0)
            return -1;
        return 0;
      }
      char *end = NULL;
      long index = strtol(p + 1, &end, 10);
      if (end == p + 1 || *end != ']' || index < 0)
        return ts_err_at(err, loc, "expected [INDEX] with an index from 0, or [*], after '%s'",
                         key);
      if (!ts_doc_is_seq(doc, node) || index >= ts_doc_seq_len(doc, node))
        return ts_err_at(err, loc, "'%s' has no item %ld (%s)", key, index,
                         ts_doc_is_seq(doc, node) ? "it has fewer" : "it is not a list");
      node = ts_doc_seq_item(doc, node, (int)index);
      p = end + 1;
    }
    if (*p == '.')
      p++;
    else if (*p != '\0')
      return ts_err_at(err, loc, "expected '.' or '[' after '%s', found '%c'", key, *p);
    if (*p == '\0')
      return ts_err_at(err, loc, "the key ends with '.' or ']': name the value to set");
  }
  return 0;
}

static int apply(ts_doc *doc, int i, ts_err *err) {
  if (ts_doc_root(doc) == 0 || !ts_doc_is_map(doc, 1))
    return 0; /* the loader reports the empty or odd document itself */
  return apply_at(doc, i, 1, overrides[i].path, err);
}

int ts_doc_apply_overrides(ts_doc *doc, ts_doc_kind kind, ts_err *err) {
  for (int i = 0; i < n_overrides; i++)
    if (overrides[i].kind == kind && apply(doc, i, err) != 0)
      return -1;
  return 0;
}
