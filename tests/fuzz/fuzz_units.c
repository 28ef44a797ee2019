/* libFuzzer harness: the units parser on arbitrary text, every kind. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../workloads/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0';
  for (int k = TS_UNITS_BYTES; k <= TS_UNITS_TIME; k++) {
    double v = -1;
    const char *expected = NULL;
    if (ts_units_parse(text, (ts_unit_kind)k, &v, &expected) == 0 && !(v >= 0))
      abort(); /* a parsed quantity is finite and not negative */
    if (expected == NULL)
      abort();
  }
  free(text);
  return 0;
}
