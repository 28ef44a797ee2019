/* study: see study.h. */
#include "study.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../analysis/metrics.h"
#include "progress.h"

typedef struct child_reply {
  int rc;
  ts_scaling_point point;
  ts_err err;
} child_reply;

/* Point's simulation through the job pipeline, tabulated as a study's row. */
static void simulate(const ts_platform *pf, const ts_workload *wl, const ts_simulate_opts *so,
                     const char *progress_label, child_reply *reply) {
  ts_simulate_opts opts = *so;
  ts_progress progress;
  ts_progress_init(&progress, progress_label != NULL ? progress_label : "", progress_label == NULL);
  ts_progress_engine progress_events = {&progress, 0};
  ts_progress_follow(&progress_events, &opts);
  ts_simulation sim;
  int rc = ts_simulate_workload(pf, wl, &opts, &sim, &reply->err);
  ts_progress_clear(&progress);
  if (rc != 0) {
    reply->rc = -1;
    return;
  }
  ts_metrics m;
  ts_metrics_compute(wl, &pf->gpu, &sim.result, &m);
  ts_simulate_reliability(pf, wl, &sim.job, m.iteration_s, m.train_s, &m.reliability);
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
  p->peak_memory_gib = m.stage_memory[m.peak_memory_stage].total_bytes / 1073741824.0;
  memcpy(p->breakdown_s, m.breakdown_s, sizeof p->breakdown_s);
  p->goodput = m.reliability.is_modelled ? m.reliability.goodput : -1;
  reply->rc = 0;
  ts_metrics_fini(&m);
  ts_simulate_fini(&sim);
}

/* Stopping a study (Ctrl-C, kill): the parent passes the signal to the points' processes,
 * waits for them, reports what finished, and ends by the same signal. */
static volatile sig_atomic_t stop_signal;
static pid_t *running_pids; /* [jobs]: the points' processes (0: free) */
static int n_running_slots;

static void on_stop(int sig) {
  stop_signal = sig;
  for (int i = 0; i < n_running_slots; i++)
    if (running_pids[i] > 0)
      kill(running_pids[i], SIGTERM);
}

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
enum { N_STOP_SIGNALS = sizeof stop_signals / sizeof *stop_signals };

typedef struct slot {
  int index; /* the point, or -1 when free */
  int fd;
  child_reply reply;
  size_t got;
} slot;

/* The point's process: loads its inputs, simulates, writes the reply, exits. */
static void run_child(int fd, int i, ts_study_load_fn load, void *ctx, const char *label) {
  for (int k = 0; k < N_STOP_SIGNALS; k++)
    signal(stop_signals[k], SIG_DFL);
  if (stop_signal != 0)
    _exit(1);
  child_reply reply;
  memset(&reply, 0, sizeof reply);
  ts_platform *pf = malloc(sizeof *pf);
  ts_workload wl;
  ts_simulate_opts opts = ts_simulate_defaults();
  if (pf == NULL)
    _exit(1);
  if (load(ctx, i, pf, &wl, &opts, &reply.err) != 0)
    reply.rc = -1;
  else
    simulate(pf, &wl, &opts, label, &reply);
  ssize_t n = write(fd, &reply, sizeof reply);
  _exit(n == (ssize_t)sizeof reply ? 0 : 1);
}

/* Reads what the point in s has sent; at its end, waits for its process and reports it. */
static void collect(slot *s, pid_t *pid, ts_study_done_fn done, void *ctx) {
  ssize_t n = read(s->fd, (char *)&s->reply + s->got, sizeof s->reply - s->got);
  if (n > 0) {
    s->got += (size_t)n;
    if (s->got < sizeof s->reply)
      return;
  } else if (n < 0 && errno == EINTR) {
    return;
  }
  close(s->fd);
  int status = 0;
  while (waitpid(*pid, &status, 0) < 0 && errno == EINTR)
    ;
  *pid = 0;
  int i = s->index;
  s->index = -1;
  if (stop_signal != 0)
    return; /* stopped: not a result */
  if (s->got != sizeof s->reply || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ts_err err = {0};
    ts_err_plain(&err, "the simulation ended without a result (status %d)", status);
    done(ctx, i, -1, NULL, &err);
  } else {
    done(ctx, i, s->reply.rc, s->reply.rc == 0 ? &s->reply.point : NULL, &s->reply.err);
  }
}

int ts_study_pool(int n, const int *pending, int jobs, ts_study_load_fn load, ts_study_done_fn done,
                  ts_study_label_fn label, void *ctx) {
  if (jobs < 1)
    jobs = 1;
  slot *slots = calloc((size_t)jobs, sizeof *slots);
  pid_t *pids = calloc((size_t)jobs, sizeof *pids);
  struct pollfd *fds = calloc((size_t)jobs, sizeof *fds);
  TS_ASSERT(slots != NULL && pids != NULL && fds != NULL);
  for (int k = 0; k < jobs; k++)
    slots[k].index = -1;
  struct sigaction stop, old[N_STOP_SIGNALS];
  memset(&stop, 0, sizeof stop);
  stop.sa_handler = on_stop; /* no SA_RESTART: the waits below see EINTR and go on */
  sigemptyset(&stop.sa_mask);
  running_pids = pids;
  n_running_slots = jobs;
  for (int k = 0; k < N_STOP_SIGNALS; k++)
    sigaction(stop_signals[k], &stop, &old[k]);
  int next = 0, busy = 0;
  while ((next < n && stop_signal == 0) || busy > 0) {
    for (int k = 0; k < jobs && next < n && stop_signal == 0; k++) {
      if (slots[k].index >= 0)
        continue;
      int pipe_fds[2];
      if (pipe(pipe_fds) != 0) {
        ts_err err = {0};
        done(ctx, pending[next++], -1, NULL,
             (ts_err_plain(&err, "cannot create a pipe for a study point"), &err));
        continue;
      }
      char text[192];
      bool shows = label != NULL && jobs == 1;
      if (shows)
        label(ctx, pending[next], text, sizeof text);
      fflush(NULL);
      pid_t pid = fork();
      if (pid == 0) {
        close(pipe_fds[0]);
        run_child(pipe_fds[1], pending[next], load, ctx, shows ? text : NULL);
      }
      close(pipe_fds[1]);
      if (pid < 0) {
        close(pipe_fds[0]);
        ts_err err = {0};
        done(ctx, pending[next++], -1, NULL,
             (ts_err_plain(&err, "cannot fork a study point"), &err));
        continue;
      }
      pids[k] = pid;
      if (stop_signal != 0) /* a signal between fork and here */
        kill(pid, SIGTERM);
      slots[k] = (slot){.index = pending[next++], .fd = pipe_fds[0]};
      busy++;
    }
    int n_fds = 0;
    for (int k = 0; k < jobs; k++)
      if (slots[k].index >= 0)
        fds[n_fds++] = (struct pollfd){.fd = slots[k].fd, .events = POLLIN};
    if (n_fds == 0)
      continue;
    if (poll(fds, (nfds_t)n_fds, -1) < 0)
      continue; /* EINTR: a signal; the loop sees it */
    for (int k = 0, f = 0; k < jobs; k++) {
      if (slots[k].index < 0)
        continue;
      if (fds[f++].revents != 0) {
        collect(&slots[k], &pids[k], done, ctx);
        busy -= slots[k].index < 0;
      }
    }
  }
  n_running_slots = 0;
  running_pids = NULL;
  for (int k = 0; k < N_STOP_SIGNALS; k++)
    sigaction(stop_signals[k], &old[k], NULL);
  free(slots);
  free(pids);
  free(fds);
  return stop_signal;
}

void ts_study_keep_first_failure(int i, const ts_err *err, int *failed, ts_err *kept) {
  if (*failed < 0 || i < *failed) {
    *failed = i;
    *kept = *err;
  }
}

_Noreturn void ts_study_stopped(int sig, const char *what) {
  fprintf(stderr, /* after a progress line, on a line of its own */
          "%strainsim: stopped by signal %d while simulating %s; results written so far are "
          "kept\n",
          isatty(STDERR_FILENO) ? "\n" : "", sig, what);
  signal(sig, SIG_DFL);
  raise(sig);
  _exit(128 + sig); /* where the signal is blocked or ignored by whoever started us */
}
