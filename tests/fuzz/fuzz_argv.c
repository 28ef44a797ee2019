/* libFuzzer harness: the command line (issue 20, class 10). The input is an argument list, one
 * argument per line (or NUL-separated), given to trainsim's dispatcher as `trainsim ARGS...`
 * in a child process. Built with FUZZ_SWEEP_SPEC (fuzz_sweep, issue 36), the input is a sweep
 * spec instead, run as `trainsim sweep SPEC --slurm ...`: the spec is read, every point loaded
 * and checked, and the job array's script written, nothing simulated. The child process: commands
 * simulate (SimGrid starts once per process), write files and may run long. The child works in a
 * private directory holding copies of workloads/, platforms/ and tests/data/ (so that the seeds'
 * relative paths resolve and no fuzzed --out can touch the source tree), with its output discarded
 * and 10 seconds of CPU at most (a longer simulation is stopped, not reported). A crash, an abort,
 * an exit status other than 0, 1 and 2, or "internal error" on stderr is a finding: the
 * child's stderr is replayed and the parent aborts, so that libFuzzer keeps the input. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h> /* WIFSIGNALED and the like */
#include <unistd.h>

#include "../../cli/cli.h"
#include "child.h"

#define MAX_ARGS 24

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef FUZZ_SWEEP_SPEC
#define HARNESS "fuzz_sweep"
#else
#define HARNESS "fuzz_argv"
#endif

static char work_dir[] = "/tmp/trainsim-" HARNESS "-XXXXXX";
static pid_t owner; /* the process that made it: a child that calls exit() must not remove it */
static long n_by_status[3], n_stopped; /* exit statuses 0, 1, 2; out of CPU time */

static void child(char *text, size_t size) {
  static char program[] = "trainsim";
  char *argv[MAX_ARGS + 2] = {program};
  int argc = 1;
#ifdef FUZZ_SWEEP_SPEC
  static char spec_args[] = "sweep\0spec.yaml\0--slurm\0--account\0a\0--partition\0p\0--time\0"
                            "01:00:00\0--out\0out\0--quiet";
  FILE *spec = chdir(work_dir) == 0 ? fopen("spec.yaml", "w") : NULL;
  if (spec == NULL || fwrite(text, 1, size, spec) != size || fclose(spec) != 0)
    _exit(1);
  for (char *a = spec_args; a < spec_args + sizeof spec_args; a += strlen(a) + 1)
    argv[argc++] = a;
  size = 0; /* the spec is not an argument list */
#endif
  for (size_t i = 0, start = 0; size > 0 && i <= size && argc <= MAX_ARGS; i++)
    if (i == size || text[i] == '\n' || text[i] == '\0') {
      text[i] = '\0';
      if (i > start || i < size) /* an empty line is an empty argument */
        argv[argc++] = text + start;
      start = i + 1;
    }
  argv[argc] = NULL;
  /* run --explain ends by exec'ing /proc/self/exe as `trainsim explain`: here that is this
   * harness, not trainsim, so such a line is passed over (explain alone is fuzzed). */
  for (int k = 1; k < argc; k++)
    if (strcmp(argv[k], "--explain") == 0)
      _exit(0);
  if (chdir(work_dir) != 0 || freopen("/dev/null", "w", stdout) == NULL ||
      freopen("stderr.txt", "w", stderr) == NULL)
    _exit(1);
  fuzz_child_init();
  struct rlimit cpu = {10, 11};
  setrlimit(RLIMIT_CPU, &cpu);
  fflush(NULL);
  fuzz_child_exit(ts_cli_main(argc, argv));
}

/* A harness failure (not a finding): says what and why, then aborts. */
static _Noreturn void fail(const char *what, const char *object) {
  fprintf(stderr, HARNESS ": %s %s: %s\n", what, object, strerror(errno));
  abort();
}

static void remove_work_dir(void) {
  if (getpid() != owner)
    return;
  fprintf(stderr,
          HARNESS ": %ld inputs succeeded, %ld failed (status 1), %ld refused "
                  "(status 2), %ld stopped at their CPU limit\n",
          n_by_status[0], n_by_status[1], n_by_status[2], n_stopped);
  char cmd[sizeof work_dir + 16];
  snprintf(cmd, sizeof cmd, "rm -rf %s", work_dir);
  if (system(cmd) != 0)
    fprintf(stderr, HARNESS ": could not remove %s\n", work_dir);
}

/* The private directory, made once per process and removed at its exit. */
static void make_work_dir(void) {
  if (mkdtemp(work_dir) == NULL)
    fail("cannot make", work_dir);
  owner = getpid();
  atexit(remove_work_dir);
  char cmd[4096];
  snprintf(
      cmd, sizeof cmd,
      "mkdir -p %s/tests && cp -r %s/workloads %s/platforms %s && cp -r %s/tests/data %s/tests",
      work_dir, TS_SOURCE_DIR, TS_SOURCE_DIR, work_dir, TS_SOURCE_DIR, work_dir);
  if (system(cmd) != 0)
    fail("cannot fill", work_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* made once: mkdtemp's name may itself end in 'X', so the template is no test */
  static bool is_made;
  if (!is_made) {
    make_work_dir();
    is_made = true;
  }
  char *text = malloc(size + 1);
  if (text == NULL)
    fail("out of memory for", "an input");
  memcpy(text, data, size);
  text[size] = '\0';
  fflush(NULL);
  fuzz_coverage_init();
  pid_t pid = fork();
  if (pid < 0)
    fail("cannot fork for", "an input");
  if (pid == 0)
    child(text, size);
  free(text);
  int status = fuzz_wait_child(pid);
  char path[sizeof work_dir + 16], line[512];
  snprintf(path, sizeof path, "%s/stderr.txt", work_dir);
  bool internal = false;
  FILE *f = fopen(path, "r");
  while (f != NULL && fgets(line, sizeof line, f) != NULL)
    internal = internal || strstr(line, "internal error") != NULL;
  if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL)) {
    if (f != NULL)
      fclose(f);
    n_stopped++;
    return 0; /* out of its CPU time: a long simulation, stopped */
  }
  if (WIFSIGNALED(status) || WEXITSTATUS(status) > 2 || internal) {
    fprintf(stderr, HARNESS ": trainsim %s %d; its stderr:\n",
            WIFSIGNALED(status) ? "died of signal" : "exited with",
            WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    if (f != NULL) {
      rewind(f);
      while (fgets(line, sizeof line, f) != NULL)
        fputs(line, stderr);
    }
    abort();
  }
  if (f != NULL)
    fclose(f);
  n_by_status[WEXITSTATUS(status)]++;
  return 0;
}
