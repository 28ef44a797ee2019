/* libFuzzer harness: simulates what the loaders accept (issue 20, class 10). The input is a
 * workload file, optionally followed by a line "#%platform" and a platform file (else the
 * built-in Frontier). Whatever loads, resolves and fits a small budget (at most 64 GPUs and
 * 200,000 events) plays one iteration: at the analytic fidelity in this process, then at the
 * hybrid fidelity (SimGrid) in a child process, because SimGrid's engine cannot start twice in
 * one process. Memory that does not fit is simulated anyway (run --ignore-memory). An error
 * must come with its message; every figure must be finite and positive; a crash, an abort or
 * a figure that is not is a finding (the child's become the parent's abort, so that libFuzzer
 * keeps the input). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h> /* WIFSIGNALED and the like */
#include <unistd.h>

#include "../../analysis/metrics.h"
#include "../../cli/args.h"
#include "../../sim/engine/engine.h"
#include "../../sim/network/placement.h"
#include "../../sim/simulate.h"
#include "../../workloads/schedule.h"
#include "child.h"

#define MAX_GPUS 64
#define MAX_EVENTS 2e5

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* How far inputs got, printed at exit: how much of the fuzzing reached the simulations. */
static long n_inputs, n_loaded, n_simulated, n_engine_errors;

static void print_counts(void) {
  fprintf(stderr,
          "fuzz_sim: %ld inputs, %ld loaded and resolved within the budget, %ld simulated at "
          "both fidelities, %ld refused by the engine with a message\n",
          n_inputs, n_loaded, n_simulated, n_engine_errors);
}

static void check_error(int rc, const ts_err *err, const char *what) {
  if (rc != 0 && !err->is_set) {
    fprintf(stderr, "fuzz_sim: %s failed without a message\n", what);
    abort();
  }
}

/* Plays the job at one fidelity (every rank playing, or with the engine's shortcuts) and checks
 * every figure; 0 when it ran, 1 on an input error the engine reported. *iteration_s and
 * *is_rail (rail play was used) when not NULL. */
static int simulate(const ts_platform *pf, const ts_workload *wl, ts_job *job, ts_fidelity fidelity,
                    bool every_rank, double *iteration_s, bool *is_rail) {
  ts_err err = {0};
  ts_engine_opts opts = {.fidelity = fidelity,
                         .overlap_slowdown = pf->ccl.overlap_slowdown,
                         .is_playing_every_rank = every_rank};
  ts_sim_result sim;
  int rc = ts_engine_run(pf, job, &opts, &sim, &err);
  check_error(rc, &err, "ts_engine_run");
  if (rc != 0)
    return 1;
  ts_metrics m;
  ts_metrics_compute(wl, &pf->gpu, &sim, &m);
  double figures[] = {m.iteration_s,       m.tokens_per_s, m.model_tflops_per_gpu,
                      m.hardware_flops,    m.mfu,          m.megatron_fraction_of_peak,
                      m.iteration_energy_j};
  for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++)
    if (!isfinite(figures[i]) || figures[i] < 0 || (i < 2 && !(figures[i] > 0))) {
      fprintf(stderr, "fuzz_sim: %s fidelity: figure %zu is %g\n", ts_fidelity_names[fidelity], i,
              figures[i]);
      abort();
    }
  for (int c = 0; c < TS_CAT_COUNT; c++)
    if (!isfinite(m.breakdown_s[c]) || m.breakdown_s[c] < 0)
      abort();
  if (iteration_s != NULL)
    *iteration_s = m.iteration_s;
  if (is_rail != NULL)
    *is_rail = sim.shortcut != NULL && strcmp(sim.shortcut, "rail play") == 0;
  ts_metrics_fini(&m);
  ts_sim_result_fini(&sim);
  return 0;
}

static char *dup_text(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (s == NULL)
    abort();
  memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static ts_platform frontier, pf;
  static bool has_frontier;
  ts_err err = {0};
  n_inputs++;
  if (!has_frontier) {
    atexit(print_counts);
    check_error(ts_args_load_platform(NULL, &frontier, &err), &err, "the built-in platform");
    has_frontier = true;
  }
  char *text = dup_text(data, size);
  char *cut = strstr(text, "\n#%platform\n");
  size_t wl_size = cut != NULL ? (size_t)(cut - text) : size;
  pf = frontier;
  if (cut != NULL) {
    int rc =
        ts_platform_load_string("fuzz-platform.yaml", cut + strlen("\n#%platform\n"), &pf, &err);
    check_error(rc, &err, "ts_platform_load_string");
    if (rc != 0) {
      free(text);
      return 0;
    }
  }
  ts_workload wl;
  ts_overrides none;
  memset(&none, 0, sizeof none);
  int rc = ts_workload_parse("fuzz.yaml", text, wl_size, &wl, &err);
  check_error(rc, &err, "ts_workload_parse");
  free(text);
  if (rc != 0)
    return 0;
  rc = ts_workload_resolve(&wl, &none, &err);
  check_error(rc, &err, "ts_workload_resolve");
  if (rc != 0 || wl.n_gpus > MAX_GPUS)
    return 0;
  rc = ts_simulate_check(&pf, &wl, &err); /* the workload against the platform, as a run */
  check_error(rc, &err, "ts_simulate_check");
  if (rc != 0)
    return 0;
  ts_job job;
  rc = ts_schedule_build(&wl, &pf.gpu, &job, &err);
  check_error(rc, &err, "ts_schedule_build");
  if (rc != 0)
    return 0;
  if (ts_engine_count_events(&job, NULL) > MAX_EVENTS) {
    ts_job_fini(&job);
    return 0;
  }
  n_loaded++;
  job.rank_gpu = ts_placement_gpus(&pf, TS_PLACEMENT_CONTIGUOUS, 0, job.n_ranks);
  if (job.rank_gpu == NULL)
    abort(); /* n_gpus fits the platform: contiguous placement always succeeds */
  n_engine_errors += simulate(&pf, &wl, &job, TS_FIDELITY_ANALYTIC, false, NULL, NULL);
  /* The hybrid play, then, where it used rail play, every rank playing: the two must agree
   * (rail play is exact: sim/engine/engine.h). Each in a child (SimGrid runs once a process),
   * which reports its iteration through a pipe. */
  double iteration[2] = {0, 0};
  bool is_rail = false;
  for (int every = 0; every < 1 + is_rail; every++) {
    int fds[2];
    if (pipe(fds) != 0)
      abort();
    fflush(stderr);
    fuzz_coverage_init();
    pid_t pid = fork();
    if (pid < 0)
      abort();
    if (pid == 0) { /* exit status 0: it ran; 10: an input error the engine reported */
      fuzz_child_init();
      close(fds[0]);
      struct {
        double iteration_s;
        bool is_rail;
      } said = {0, false};
      int played =
          simulate(&pf, &wl, &job, TS_FIDELITY_HYBRID, every, &said.iteration_s, &said.is_rail);
      if (write(fds[1], &said, sizeof said) != (ssize_t)sizeof said)
        abort();
      fuzz_child_exit(played == 0 ? 0 : 10);
    }
    close(fds[1]);
    struct {
      double iteration_s;
      bool is_rail;
    } heard = {0, false};
    bool got = read(fds[0], &heard, sizeof heard) == (ssize_t)sizeof heard;
    close(fds[0]);
    int status = fuzz_wait_child(pid);
    if (WIFSIGNALED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 10)) {
      fprintf(stderr, "fuzz_sim: the hybrid simulation failed (%s %d)\n",
              WIFSIGNALED(status) ? "signal" : "exit status",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
      abort();
    }
    if (WEXITSTATUS(status) != 0 || !got)
      break;
    iteration[every] = heard.iteration_s;
    if (every == 0) {
      n_simulated++;
      is_rail = heard.is_rail;
    }
  }
  ts_job_fini(&job);
  if (is_rail && fabs(iteration[0] - iteration[1]) > 1e-9 * iteration[1]) {
    fprintf(stderr, "fuzz_sim: rail play gives %.17g s, every rank %.17g s\n", iteration[0],
            iteration[1]);
    abort();
  }
  return 0;
}
