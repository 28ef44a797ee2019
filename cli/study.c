/* study: see study.h. */
#include "study.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../analysis/metrics.h"
#include "../workloads/schedule.h"
#include "progress.h"

/* Events beyond which a study point is refused (as `run` does without --force). */
#define STUDY_MAX_EVENTS 1e9

typedef struct child_reply {
  int rc;
  ts_scaling_point point;
  ts_err err;
} child_reply;

static void simulate(const ts_platform *pf, const ts_workload *wl, ts_fidelity fidelity,
                     const char *progress_label, child_reply *reply) {
  ts_metrics mem;
  ts_metrics_memory(wl, pf->gpu.hbm_bytes, &mem);
  double peak = mem.stage_memory[mem.peak_memory_stage].total_bytes;
  bool fits = mem.is_memory_ok;
  long stage = mem.peak_memory_stage;
  ts_metrics_fini(&mem);
  if (!fits) {
    reply->rc = ts_err_plain(&reply->err,
                             "out of memory: pipeline stage %ld needs %.2f GiB per GPU, the GPU "
                             "has %.2f GiB",
                             stage, peak / 1073741824.0, pf->gpu.hbm_bytes / 1073741824.0);
    return;
  }
  ts_job job;
  if (ts_schedule_build(wl, &pf->gpu, &job, &reply->err) != 0) {
    reply->rc = -1;
    return;
  }
  double events = ts_engine_count_events(&job, NULL);
  if (events > STUDY_MAX_EVENTS) {
    reply->rc = ts_err_plain(&reply->err, "%.3g events, more than the %.0e a study point may have",
                             events, STUDY_MAX_EVENTS);
    ts_job_fini(&job);
    return;
  }
  ts_progress progress;
  ts_progress_init(&progress, progress_label != NULL ? progress_label : "", progress_label == NULL);
  ts_progress_engine progress_events = {&progress, events};
  ts_engine_opts opts = {.fidelity = fidelity,
                         .on_progress = progress.is_on ? ts_progress_engine_cb : NULL,
                         .progress_ctx = &progress_events};
  ts_progress_show(&progress, 0, events, "building the platform");
  ts_sim_result sim;
  int rc = ts_engine_run(pf, &job, &opts, &sim, &reply->err);
  ts_progress_clear(&progress);
  if (rc != 0) {
    reply->rc = -1;
  } else {
    ts_metrics m;
    ts_metrics_compute(wl, pf->gpu.peak_flops_per_s[wl->precision], pf->gpu.hbm_bytes,
                       pf->gpu.power_w, &sim, &m);
    ts_scaling_point *p = &reply->point;
    snprintf(p->workload, sizeof p->workload, "%s", wl->name);
    p->gpus = wl->n_gpus;
    p->tp = wl->tp;
    p->pp = wl->pp;
    p->dp = wl->dp;
    p->global_batch = wl->global_batch;
    p->iteration_s = m.iteration_s;
    p->tokens_per_s = m.tokens_per_s;
    p->model_tflops_per_gpu = m.model_tflops_per_gpu;
    p->megatron_percent = 100 * m.megatron_fraction_of_peak;
    p->mfu_percent = 100 * m.mfu;
    p->peak_memory_gib = peak / 1073741824.0;
    memcpy(p->breakdown_s, m.breakdown_s, sizeof p->breakdown_s);
    reply->rc = 0;
    ts_metrics_fini(&m);
    ts_sim_result_fini(&sim);
  }
  ts_job_fini(&job);
}

/* Stopping a study (Ctrl-C, kill): the parent passes the signal to the point's process, waits
 * for it, says so in one line and dies of the same signal; whatever was written (scale.csv after
 * each point) stays whole. */
static volatile sig_atomic_t stop_signal;
static volatile pid_t running_point;

static void on_stop(int sig) {
  stop_signal = sig;
  if (running_point > 0)
    kill(running_point, SIGTERM);
}

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
enum { N_STOP_SIGNALS = sizeof stop_signals / sizeof *stop_signals };

int ts_study_point(const ts_platform *pf, const ts_workload *wl, ts_fidelity fidelity,
                   const char *progress_label, ts_scaling_point *out, ts_err *err) {
  int fds[2];
  if (pipe(fds) != 0)
    return ts_err_plain(err, "cannot create a pipe for a study point");
  struct sigaction stop, old[N_STOP_SIGNALS];
  memset(&stop, 0, sizeof stop);
  stop.sa_handler = on_stop; /* no SA_RESTART: the waits below see EINTR and go on */
  sigemptyset(&stop.sa_mask);
  for (int i = 0; i < N_STOP_SIGNALS; i++)
    sigaction(stop_signals[i], &stop, &old[i]);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    for (int i = 0; i < N_STOP_SIGNALS; i++)
      sigaction(stop_signals[i], &old[i], NULL);
    return ts_err_plain(err, "cannot fork a study point");
  }
  if (pid == 0) { /* the point: stopped by its default actions, silently */
    for (int i = 0; i < N_STOP_SIGNALS; i++)
      signal(stop_signals[i], SIG_DFL);
    if (stop_signal != 0)
      _exit(1);
    close(fds[0]);
    child_reply reply;
    memset(&reply, 0, sizeof reply);
    simulate(pf, wl, fidelity, progress_label, &reply);
    ssize_t n = write(fds[1], &reply, sizeof reply);
    _exit(n == (ssize_t)sizeof reply ? 0 : 1);
  }
  running_point = pid;
  if (stop_signal != 0) /* a signal between fork and here */
    kill(pid, SIGTERM);
  close(fds[1]);
  child_reply reply;
  ssize_t got = 0;
  while (got < (ssize_t)sizeof reply) {
    ssize_t n = read(fds[0], (char *)&reply + got, sizeof reply - (size_t)got);
    if (n > 0)
      got += n;
    else if (n == 0 || errno != EINTR)
      break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  running_point = 0;
  for (int i = 0; i < N_STOP_SIGNALS; i++)
    sigaction(stop_signals[i], &old[i], NULL);
  if (stop_signal != 0) {
    int sig = stop_signal;
    fprintf(stderr, /* after a progress line, on a line of its own */
            "%strainsim: stopped by signal %d while simulating %ld GPUs; results written so far "
            "are kept\n",
            isatty(STDERR_FILENO) ? "\n" : "", sig, wl->n_gpus);
    signal(sig, SIG_DFL);
    raise(sig);
    _exit(128 + sig); /* where the signal is blocked or ignored by whoever started us */
  }
  if (got != (ssize_t)sizeof reply || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return ts_err_plain(err, "the simulation of %ld GPUs ended without a result (status %d)",
                        wl->n_gpus, status);
  if (reply.rc != 0) {
    *err = reply.err;
    return -1;
  }
  *out = reply.point;
  return 0;
}
