/* units: the one parser for human-readable quantities in platform and workload files.
 *
 * Every dimensioned input goes through here and comes out in SI base units (bytes, bytes/s,
 * flop/s, seconds), which is also what SimGrid uses. Accepted forms (no spaces inside):
 *   bytes      "512", "64GiB", "1.5MB", "2KiB"      (bare integers are bytes)
 *   bandwidth  "25GBps", "25GB/s", "200Gbps", "200Gb/s"   (b = bit, B = byte)
 *   flop rate  "191.5Tf", "191.5TFLOPS", "47.9Tflops"
 *   time       "2us", "1.5ms", "350ns", "1s"
 *   power      "250W", "1.5kW"
 *   span       "30s", "10min", "2h", "1.5d"     (long durations: restarts, intervals)
 *   rate       "5e-3/day", "7.8e-7/h", "2/year"  (events per unit of time: failure rates)
 * Decimal prefixes k M G T P are powers of 1000; binary prefixes Ki Mi Gi Ti Pi of 1024.
 * Numbers must be finite and >= 0; nan, inf, hex and signs other than none are refused.
 */
#ifndef TS_UNITS_H
#define TS_UNITS_H

typedef enum ts_unit_kind {
  TS_UNITS_BYTES,
  TS_UNITS_BANDWIDTH,
  TS_UNITS_FLOP_RATE,
  TS_UNITS_TIME,
  TS_UNITS_POWER,
  TS_UNITS_SPAN,
  TS_UNITS_RATE,
} ts_unit_kind;

/* Parses text as a quantity of the given kind into *out (SI base units). Returns 0 on success;
 * on failure returns -1, leaves *out alone and, if expected != NULL, points it at a static
 * description of the accepted form (e.g. "a bandwidth such as '25GBps'"). */
int ts_units_parse(const char *text, ts_unit_kind kind, double *out, const char **expected);

/* A static description of the accepted form for a kind, for error messages. */
const char *ts_units_expected(ts_unit_kind kind);

/* The plausible range of a kind, outside which a value is refused as an input error wherever it
 * is read (platforms/README.md): sizes 1 B to 1 PiB, bandwidths 1 MB/s to 100 TB/s, flop rates
 * 1 GFLOPS to 100 PFLOPS, durations 1 ns to 1 s (or 0 where allowed), powers 1 W to 100 kW,
 * spans 1 s to 10 years, rates one in 10^9 years to one a minute (events per second). So every
 * product the simulator forms stays finite. *lo_text and *hi_text say them for messages. */
void ts_units_range(ts_unit_kind kind, double *lo, double *hi, const char **lo_text,
                    const char **hi_text);

#endif
