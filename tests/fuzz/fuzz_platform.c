/* libFuzzer harness: the platform loader on arbitrary bytes; what loads must route. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../sim/network/platform.h"
#include "../../sim/network/route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0';
  static ts_platform pf;
  ts_err err = {0};
  if (ts_platform_load_string("fuzz.yaml", text, &pf, &err) == 0) {
    long n = ts_platform_n_gpus(&pf);
    long last = n - 1;
    ts_route r;
    if (n > 1) {
      ts_route_between(&pf, 0, last, &r);
      ts_route_between(&pf, last, 0, &r);
      ts_route_between(&pf, 0, 1, &r);
    }
  } else if (!err.is_set) {
    abort(); /* every failure explains itself */
  }
  free(text);
  return 0;
}
