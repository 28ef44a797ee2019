/* libFuzzer harness: the kernel-table loader on arbitrary bytes (4-axis grouped-GEMM tables,
 * software figures); what loads must answer every kind's lookup, inside, between, below and
 * past its grid, with a finite positive time or the model. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../workloads/kernels.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0';
  ts_kernel_table *t = NULL;
  ts_err err = {0};
  if (ts_kernels_parse_string("fuzz.yaml", text, &t, &err) == 0) {
    static const double probes[] = {1, 16, 100, 777, 4096, 1e5, 1e9};
    for (int k = 0; k < TS_KERNEL_COUNT; k++)
      for (int p = 0; p < 7; p++) {
        double point[4], s = 0;
        for (int a = 0; a < 4; a++)
          point[a] = probes[(p + a) % 7];
        ts_kernel_source src = ts_kernels_time(t, (ts_kernel_kind)k, point, &s);
        if (src != TS_KERNEL_SRC_MODEL && !(isfinite(s) && s > 0))
          abort(); /* a time from the table must be a time */
        (void)ts_kernels_axis_min(t, (ts_kernel_kind)k, p % 4);
      }
    ts_kernels_free(t);
  } else if (!err.is_set) {
    abort(); /* every failure explains itself */
  }
  free(text);
  return 0;
}
