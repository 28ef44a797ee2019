/* units: see units.h. Suffix tables are matched longest first so "GiB" is not read as "G". */
#include "units.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct unit_suffix {
  const char *text;
  double factor;
} unit_suffix;

/* Dimension suffixes per kind; the multiplier turns the dimension into the base unit. */
static const unit_suffix bytes_units[] = {{"B", 1.0}, {"", 1.0}, {NULL, 0}};
static const unit_suffix bw_units[] = {
    {"Bps", 1.0}, {"B/s", 1.0}, {"bps", 0.125}, {"b/s", 0.125}, {NULL, 0}};
static const unit_suffix flop_units[] = {
    {"FLOPS", 1.0}, {"flops", 1.0}, {"f", 1.0}, {"F", 1.0}, {NULL, 0}};
/* Sub-second units divide (350 / 1e9 rounds exactly as the literal 350e-9; 350 * 1e-9 does
 * not): their factor is stored negated, as a divisor. */
static const unit_suffix power_units[] = {{"W", 1.0}, {NULL, 0}};
/* A month is a twelfth of a Julian year (365.25 days), as field studies count them. */
static const unit_suffix span_units[] = {
    {"s", 1.0}, {"min", 60.0}, {"h", 3600.0}, {"d", 86400.0}, {NULL, 0}};
static const unit_suffix rate_units[] = {
    {"/s", 1.0},        {"/min", -60.0},        {"/h", -3600.0},
    {"/day", -86400.0}, {"/month", -2629800.0}, {"/year", -31557600.0},
    {NULL, 0}};
static const unit_suffix time_units[] = {
    {"s", 1.0}, {"ms", -1e3}, {"us", -1e6}, {"ns", -1e9}, {NULL, 0}};

static const unit_suffix prefixes[] = {{"Ki", 1024.0},
                                       {"Mi", 1048576.0},
                                       {"Gi", 1073741824.0},
                                       {"Ti", 1099511627776.0},
                                       {"Pi", 1125899906842624.0},
                                       {"k", 1e3},
                                       {"K", 1e3},
                                       {"M", 1e6},
                                       {"G", 1e9},
                                       {"T", 1e12},
                                       {"P", 1e15},
                                       {"", 1.0},
                                       {NULL, 0}};

void ts_units_range(ts_unit_kind kind, double *lo, double *hi, const char **lo_text,
                    const char **hi_text) {
  static const struct {
    double lo, hi;
    const char *lo_text, *hi_text;
  } ranges[] = {
      [TS_UNITS_BYTES] = {1, 1125899906842624.0, "1", "1PiB"},
      [TS_UNITS_BANDWIDTH] = {1e6, 1e14, "1MBps", "100TBps"},
      [TS_UNITS_FLOP_RATE] = {1e9, 1e17, "1Gf", "100Pf"},
      [TS_UNITS_TIME] = {1e-9, 1, "1ns", "1s"},
      [TS_UNITS_POWER] = {1, 1e5, "1W", "100kW"},
      [TS_UNITS_SPAN] = {1, 315576000, "1s", "3652.5d"},
      [TS_UNITS_RATE] = {1e-9 / 31557600, 1.0 / 60, "1e-9/year", "1/min"},
  };
  *lo = ranges[kind].lo;
  *hi = ranges[kind].hi;
  *lo_text = ranges[kind].lo_text;
  *hi_text = ranges[kind].hi_text;
}

const char *ts_units_expected(ts_unit_kind kind) {
  switch (kind) {
  case TS_UNITS_BYTES:
    return "a size such as '64GiB' or '512'";
  case TS_UNITS_BANDWIDTH:
    return "a bandwidth such as '25GBps' or '200Gbps'";
  case TS_UNITS_FLOP_RATE:
    return "a flop rate such as '191.5Tf'";
  case TS_UNITS_TIME:
    return "a duration such as '2us'";
  case TS_UNITS_POWER:
    return "a power such as '250W'";
  case TS_UNITS_SPAN:
    return "a duration such as '10min', '2h' or '30s'";
  case TS_UNITS_RATE:
    return "a rate such as '5e-3/day' or '7.8e-7/h'";
  }
  return "a quantity";
}

/* Time, span and rate units carry no prefix table: "ms", "min", "/day" are whole suffixes. */
static int match_suffix(const char *rest, ts_unit_kind kind, double *factor) {
  const unit_suffix *dims = kind == TS_UNITS_BYTES       ? bytes_units
                            : kind == TS_UNITS_BANDWIDTH ? bw_units
                            : kind == TS_UNITS_FLOP_RATE ? flop_units
                            : kind == TS_UNITS_POWER     ? power_units
                            : kind == TS_UNITS_SPAN      ? span_units
                            : kind == TS_UNITS_RATE      ? rate_units
                                                         : time_units;
  if (kind == TS_UNITS_TIME || kind == TS_UNITS_SPAN || kind == TS_UNITS_RATE) {
    for (const unit_suffix *d = dims; d->text != NULL; d++)
      if (strcmp(rest, d->text) == 0) {
        *factor = d->factor;
        return 0;
      }
    return -1;
  }
  for (const unit_suffix *p = prefixes; p->text != NULL; p++) {
    size_t plen = strlen(p->text);
    if (strncmp(rest, p->text, plen) != 0)
      continue;
    for (const unit_suffix *d = dims; d->text != NULL; d++)
      if (strcmp(rest + plen, d->text) == 0) {
        /* A bare number is only a byte count, and a lone prefix ("64G") is ambiguous. */
        if (d->text[0] == '\0' && plen > 0)
          continue;
        *factor = p->factor * d->factor;
        return 0;
      }
  }
  return -1;
}

int ts_units_parse(const char *text, ts_unit_kind kind, double *out, const char **expected) {
  if (expected != NULL)
    *expected = ts_units_expected(kind);
  if (text == NULL || !(isdigit((unsigned char)text[0]) || text[0] == '.'))
    return -1;
  /* Digits, one dot and an exponent only: strtod alone would accept hex, inf and nan. */
  const char *p = text;
  while (isdigit((unsigned char)*p) || *p == '.')
    p++;
  if ((*p == 'e' || *p == 'E') &&
      (isdigit((unsigned char)p[1]) ||
       ((p[1] == '-' || p[1] == '+') && isdigit((unsigned char)p[2])))) {
    p += 2;
    while (isdigit((unsigned char)*p))
      p++;
  }
  char *end = NULL;
  double value = strtod(text, &end);
  if (end != p || !isfinite(value) || value < 0)
    return -1;
  double factor = 0;
  if (match_suffix(p, kind, &factor) != 0)
    return -1;
  double result = factor < 0 ? value / -factor : value * factor;
  if (!isfinite(result))
    return -1;
  *out = result;
  return 0;
}
