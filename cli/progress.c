/* progress: see progress.h. */
#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* Fewest seconds between two updates: fast enough to look alive, rare enough to cost nothing. */
#define MIN_INTERVAL_S 0.2

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* m:ss, or h:mm:ss from an hour on. */
static void format_duration(double s, char *buf, size_t size) {
  long t = s > 0 && s < 1e8 ? (long)(s + 0.5) : 0;
  if (t >= 3600)
    snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
}

void ts_progress_init(ts_progress *p, const char *label, bool is_quiet) {
  memset(p, 0, sizeof *p);
  p->is_on = !is_quiet && isatty(STDERR_FILENO);
  p->start_s = now_s();
  p->last_s = -1;
  snprintf(p->label, sizeof p->label, "%s", label);
}

void ts_progress_show(ts_progress *p, double done, double total, const char *what) {
  if (!p->is_on)
    return;
  double t = now_s();
  if (p->last_s >= 0 && t - p->last_s < MIN_INTERVAL_S)
    return;
  p->last_s = t;
  int n = 0;
  char line[256], elapsed[32], eta[32] = "";
  format_duration(t - p->start_s, elapsed, sizeof elapsed);
  bool has_share = total > 0 && done > 0 && done <= total;
  if (has_share) {
    format_duration((t - p->start_s) * (total - done) / done, eta, sizeof eta);
    n = snprintf(line, sizeof line, "%s: %.0f%%, %s, %s elapsed, ETA %s", p->label,
                 100 * done / total, what, elapsed, eta);
  } else {
    n = snprintf(line, sizeof line, "%s: %s, %s elapsed", p->label, what, elapsed);
  }
  if (n < 0)
    return;
  int len = (size_t)n < sizeof line ? n : (int)sizeof line - 1;
  /* A line wider than the terminal wraps, and "\r" would then rewrite only its last row. */
  struct winsize ws;
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && len >= ws.ws_col) {
    len = ws.ws_col - 1;
    line[len] = '\0';
  }
  /* Pad over the rest of a longer previous line. */
  fprintf(stderr, "\r%s%*s", line, p->shown_chars > len ? p->shown_chars - len : 0, "");
  fflush(stderr);
  p->shown_chars = len;
}

void ts_progress_clear(ts_progress *p) {
  if (!p->is_on || p->shown_chars == 0)
    return;
  fprintf(stderr, "\r%*s\r", p->shown_chars, "");
  fflush(stderr);
  p->shown_chars = 0;
  p->last_s = -1;
}

bool ts_progress_is_due(const ts_progress *p) {
  return p->is_on && (p->last_s < 0 || now_s() - p->last_s >= MIN_INTERVAL_S);
}

void ts_progress_engine_cb(void *ctx, double events_played, double simulated_s) {
  ts_progress_engine *pe = ctx;
  if (!ts_progress_is_due(pe->progress)) /* called after every block: format only when shown */
    return;
  char what[96];
  snprintf(what, sizeof what, "%.3g of %.3g events, simulated %.4g s", events_played,
           pe->total_events, simulated_s);
  ts_progress_show(pe->progress, events_played, pe->total_events, what);
}

static void simulation_started(void *ctx, double total_events) {
  ts_progress_engine *pe = ctx;
  pe->total_events = total_events;
  ts_progress_show(pe->progress, 0, total_events, "building the platform");
}

/* The label says what a declined periodic play estimated while every microbatch plays. */
static void periodic_declined(void *ctx, double iteration_s, double error_s) {
  ts_progress *p = ((ts_progress_engine *)ctx)->progress;
  size_t n = strlen(p->label);
  snprintf(p->label + n, sizeof p->label - n, " (periodic: %.4f s +- %.2g s; all microbatches now)",
           iteration_s, error_s);
}

void ts_progress_follow(ts_progress_engine *pe, ts_simulate_opts *opts) {
  if (!pe->progress->is_on)
    return;
  opts->on_periodic_declined = periodic_declined;
  opts->on_start = simulation_started;
  opts->start_ctx = pe;
  opts->engine.on_progress = ts_progress_engine_cb;
  opts->engine.progress_ctx = pe;
}
