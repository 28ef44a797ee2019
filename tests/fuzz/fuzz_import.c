/* libFuzzer harness: `trainsim import hf` on arbitrary config.json bytes (issue 36: the imports).
 * The input is written to a file and imported in this process (its stdout discarded); an exit
 * status other than 0 (a workload) or 2 (an input error) is a finding, as is any crash. What
 * import writes must load as a workload file: the same run parses it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../cli/import_cmd.h"
#include "../../workloads/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char config[] = "/tmp/trainsim-fuzz-import-XXXXXX";
static char out[] = "/tmp/trainsim-fuzz-import-out-XXXXXX";

static void remove_files(void) {
  unlink(config);
  unlink(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int fd = -1, out_fd = -1;
  if (fd < 0) {
    fd = mkstemp(config);
    out_fd = mkstemp(out);
    if (fd < 0 || out_fd < 0)
      abort();
    atexit(remove_files);
  }
  FILE *f = fopen(config, "wb");
  if (f == NULL)
    abort();
  fwrite(data, 1, size, f);
  fclose(f);
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  if (freopen(out, "w", stdout) == NULL) /* the workload written goes to `out` */
    abort();
  char a0[] = "hf", *argv[] = {a0, config, NULL};
  int rc = ts_import_main(2, argv);
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  if (rc != 0 && rc != 2)
    abort();
  if (rc == 0) { /* a written workload must parse */
    FILE *w = fopen(out, "rb");
    char *text = malloc(1 << 20);
    size_t n = w != NULL ? fread(text, 1, (1 << 20) - 1, w) : 0;
    if (w != NULL)
      fclose(w);
    static ts_workload wl;
    ts_err err = {0};
    if (ts_workload_parse("imported.yaml", text, n, &wl, &err) != 0) {
      fprintf(stderr, "imported workload does not parse: %s\n", err.msg);
      abort();
    }
    free(text);
  }
  return 0;
}
