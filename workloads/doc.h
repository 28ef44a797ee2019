/* doc: YAML documents with positions, for our own schemas (platform and workload files).
 *
 * Wraps libyaml's document API. Nodes are addressed by int ids (0 = none). Every typed getter
 * checks type and range and, on failure, records an error at the offending node:
 *   platforms/x.yaml:14:16: error: key 'bandwidth': expected a bandwidth such as '25GBps',
 *   found '25 GBps'
 * Mapping checks reject unknown keys (with a "did you mean") and duplicate keys. Aliases are
 * refused: our schemas never need them and they make documents explode in size.
 * Getters return 1 when the key was present and *out written, 0 when absent (out untouched),
 * -1 on error.
 */
#ifndef TS_DOC_H
#define TS_DOC_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "units.h"

typedef struct ts_doc ts_doc;

/* Parses text (not necessarily NUL-terminated) named `name` in messages. On success *out owns
 * a new document (free with ts_doc_free); the name is copied. */
int ts_doc_parse(const char *name, const char *text, size_t len, ts_doc **out, ts_err *err);
/* Reads and parses a file; a missing, unreadable or non-regular file is an input error. */
int ts_doc_load_file(const char *path, ts_doc **out, ts_err *err);
void ts_doc_free(ts_doc *doc);

const char *ts_doc_name(const ts_doc *doc); /* lives as long as doc */
int ts_doc_root(const ts_doc *doc); /* 0 for an empty document */
ts_loc ts_doc_loc(const ts_doc *doc, int node);

bool ts_doc_is_map(const ts_doc *doc, int node);
bool ts_doc_is_seq(const ts_doc *doc, int node);
int ts_doc_seq_len(const ts_doc *doc, int node);
int ts_doc_seq_item(const ts_doc *doc, int node, int index);
const char *ts_doc_scalar(const ts_doc *doc, int node); /* NULL unless a scalar */

/* doc is JSON, not YAML's wider syntax: every key and string double-quoted (no single-quoted or
 * plain keys), so that a value's quotes say whether it is a string. */
int ts_doc_check_json(const ts_doc *doc, ts_err *err);
/* Whether node is a quoted scalar (a string in JSON). */
bool ts_doc_is_quoted(const ts_doc *doc, int node);
/* Every mapping in doc has each key once (JSON and YAML leave a repeated key's meaning open:
 * libyaml keeps both, and a reader that takes the first would silently drop the second). */
int ts_doc_check_unique_keys(const ts_doc *doc, ts_err *err);
/* Requires node to be a mapping whose keys are scalars from `allowed` (NULL-terminated), each
 * at most once; `what` names the mapping in messages ("model", "network"). */
int ts_doc_check_map(const ts_doc *doc, int node, const char *what, const char *const *allowed,
                     ts_err *err);
/* The index-th pair of a mapping, in file order: 0, or -1 past the last (or not a mapping). */
int ts_doc_map_item(const ts_doc *doc, int map, int index, int *key, int *value);
/* The value node of key in a mapping, or 0. */
int ts_doc_get(const ts_doc *doc, int map, const char *key);
/* Records "missing required key 'key' in 'what'" at the mapping. Returns -1. */
int ts_doc_missing(const ts_doc *doc, int map, const char *what, const char *key, ts_err *err);

int ts_doc_get_long(const ts_doc *doc, int map, const char *key, long lo, long hi, long *out,
                    ts_err *err);
int ts_doc_get_double(const ts_doc *doc, int map, const char *key, double lo, double hi,
                      double *out, ts_err *err);
/* A quantity with a unit; must be > 0 unless allow_zero. */
int ts_doc_get_unit(const ts_doc *doc, int map, const char *key, ts_unit_kind kind, bool allow_zero,
                    double *out, ts_err *err);
int ts_doc_get_bool(const ts_doc *doc, int map, const char *key, bool *out, ts_err *err);
/* One of names (NULL-terminated); *out is its index. */
int ts_doc_get_enum(const ts_doc *doc, int map, const char *key, const char *const *names, int *out,
                    ts_err *err);
int ts_doc_get_string(const ts_doc *doc, int map, const char *key, const char **out, ts_err *err);

/* --set KEY=VALUE: overrides of any key of the platform or the workload, for the whole
 * process. KEY is a path such as network.link.bandwidth or node.nics[0].bandwidth (nics[*]: every
 * item of the list); its first
 * key says which file it belongs to (gpu, node, network, nodes, collectives: the platform;
 * model, training, parallelism, placement: the workload), or a prefix platform. or workload.
 * says so (platform.name). The loaders apply them to the document before reading it, so a
 * value is checked exactly as in a file, and its messages name the flag:
 *   trainsim: error: --set network.link.bandwidth=fast: key 'bandwidth': expected ... */
typedef enum ts_doc_kind { TS_DOC_PLATFORM, TS_DOC_WORKLOAD } ts_doc_kind;
/* Registers one override ("KEY=VALUE"); -1 with a message when it names no file's key. */
int ts_doc_override_add(const char *key_value, ts_err *err);
int ts_doc_overrides_count(ts_doc_kind kind);
/* The i-th override as given ("KEY=VALUE"), or NULL past the last. */
const char *ts_doc_override(int i);
void ts_doc_overrides_clear(void);
/* Applies the overrides of `kind` to a freshly parsed document, in the order given. */
int ts_doc_apply_overrides(ts_doc *doc, ts_doc_kind kind, ts_err *err);

/* Value parsers shared with the command line: return 0 or -1 (no message). */
int ts_parse_long(const char *text, long *out);
int ts_parse_double(const char *text, double *out);
/* The closest of names to word by edit distance, or NULL when none is close. */
const char *ts_did_you_mean(const char *word, const char *const *names);

#endif
