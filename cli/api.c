/* api: see api.h. The child runs the command line's own dispatch (cli.h) with its stdout and
 * stderr on pipes, and sends its first reported error (args.h) as fields on a third pipe:
 * message, file, line, column, key and flag, each ended by a NUL. */
#define _GNU_SOURCE /* dladdr: the library's own path, digested into results */
#include "api.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../workloads/err.h"
#include "args.h"
#include "cli.h"

#ifndef TS_VERSION
#error "TS_VERSION comes from CMakeLists.txt (the project's version)"
#endif

const char *ts_api_version(void) {
  return TS_VERSION;
}

int ts_api_flags(const char *command, char *buf, int size) {
  const ts_command *c = command != NULL ? ts_args_command(command) : NULL;
  if (c == NULL)
    return -1;
  int len = 0;
  for (const ts_flag_group *g = c->groups; g->flags != NULL; g++)
    for (const ts_flag *f = g->flags; f->name != NULL; f++) {
      int n = snprintf(len < size ? buf + len : NULL, len < size ? (size_t)(size - len) : 0,
                       "%s\t%s\n", f->name, f->value != NULL ? f->value : "");
      len += n > 0 ? n : 0;
    }
  int n = snprintf(len < size ? buf + len : NULL, len < size ? (size_t)(size - len) : 0,
                   "--set\tKEY=VALUE\n");
  return len + (n > 0 ? n : 0);
}

/* A growing NUL-terminated buffer; on allocation failure it stops growing and says so. */
typedef struct buffer {
  char *data;
  size_t len, cap;
  int fd; /* the pipe it drains; -1 once at its end */
  int is_short;
} buffer;

static void buffer_read(buffer *b) {
  if (b->cap - b->len < 4096) {
    size_t cap = b->cap * 2 + 8192;
    char *grown = realloc(b->data, cap);
    if (grown == NULL) {
      b->is_short = 1;
      char sink[4096];
      if (read(b->fd, sink, sizeof sink) <= 0 && errno != EINTR) {
        close(b->fd);
        b->fd = -1;
      }
      return;
    }
    b->data = grown;
    b->cap = cap;
  }
  ssize_t n = read(b->fd, b->data + b->len, b->cap - b->len - 1);
  if (n > 0) {
    b->len += (size_t)n;
  } else if (n == 0 || errno != EINTR) {
    close(b->fd);
    b->fd = -1;
  }
  if (b->data != NULL)
    b->data[b->len] = '\0';
}

static char *own_copy(const char *text) {
  char *copy = strdup(text != NULL ? text : "");
  return copy != NULL ? copy : calloc(1, 1);
}

static const char library_anchor = 0;

/* The child: the command, then its first error's fields on fd. Never returns. */
_Noreturn static void child(int argc, const char *const *argv, int out_fd, int err_fd,
                            int report_fd) {
  /* The caller's handlers (Python's) would only set flags nobody reads here. */
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(err_fd, STDERR_FILENO) < 0)
    _exit(1);
  close(out_fd);
  close(err_fd);
  Dl_info self; /* any object of this library names its file */
  if (dladdr(&library_anchor, &self) != 0 && self.dli_fname != NULL)
    ts_args_set_library(self.dli_fname);
  else
    ts_args_set_library("libtrainsim.so");
  char **args = calloc((size_t)argc + 2, sizeof *args);
  if (args == NULL)
    _exit(1);
  args[0] = (char *)"trainsim";
  for (int i = 0; i < argc; i++)
    args[i + 1] = (char *)argv[i];
  int status = ts_cli_main(argc + 1, args);
  fflush(NULL);
  const ts_err *e = ts_args_first_report();
  if (e != NULL) {
    FILE *report = fdopen(report_fd, "w");
    if (report != NULL) {
      fprintf(report, "%s%c%s%c%d%c%d%c%s%c%s%c", e->msg, 0, e->file, 0, e->line, 0, e->col, 0,
              e->key, 0, e->flag, 0);
      fclose(report);
    }
  }
  _exit(status);
}

/* The report's fields into out; when the command reported none but failed, its first error
 * line on stderr (a few messages are printed without a ts_err). */
static void take_report(const buffer *report, const buffer *errors, ts_api_outcome *out) {
  const char *field[6] = {"", "", "0", "0", "", ""};
  const char *p = report->data, *end = report->data + report->len;
  for (int k = 0; k < 6 && p != NULL && p < end; k++) {
    field[k] = p;
    p = memchr(p, '\0', (size_t)(end - p));
    if (p != NULL)
      p++;
  }
  out->error = own_copy(field[0]);
  out->error_file = own_copy(field[1]);
  out->error_line = atoi(field[2]);
  out->error_col = atoi(field[3]);
  out->error_key = own_copy(field[4]);
  out->error_flag = own_copy(field[5]);
  if (out->error[0] == '\0' && out->status != 0 && errors->data != NULL) {
    for (const char *line = errors->data; *line != '\0';) {
      size_t len = strcspn(line, "\n");
      const char *mark = strstr(line, "error: ");
      if (mark != NULL && (size_t)(mark - line) < len) {
        free(out->error);
        out->error = strndup(line, len);
        if (out->error == NULL)
          out->error = own_copy("");
        break;
      }
      line += len + (line[len] == '\n');
    }
  }
}

static pthread_mutex_t one_call = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t child_pid, was_interrupted;

static void pass_interrupt(int sig) {
  was_interrupted = 1;
  if (child_pid > 0)
    kill((pid_t)child_pid, sig);
}

int ts_api_call(int argc, const char *const *argv, ts_api_outcome *out) {
  memset(out, 0, sizeof *out);
  out->status = -1;
  buffer bufs[3] = {{.fd = -1}, {.fd = -1}, {.fd = -1}}; /* stdout, stderr, report */
  int pipes[3][2];
  int made = 0;
  for (; made < 3 && pipe(pipes[made]) == 0; made++)
    ;
  if (made < 3 || argc < 1 || argv == NULL) {
    for (int k = 0; k < made; k++) {
      close(pipes[k][0]);
      close(pipes[k][1]);
    }
    out->errors = own_copy(argc < 1 || argv == NULL
                               ? "trainsim: error: a call needs a command ('run', 'scale', ...)\n"
                               : "trainsim: error: cannot make the pipes to a command\n");
    out->output = own_copy("");
    take_report(&bufs[2], &bufs[1], out);
    free(out->error);
    out->error = strndup(out->errors, strcspn(out->errors, "\n"));
    return out->status;
  }
  pthread_mutex_lock(&one_call);
  struct sigaction pass = {.sa_handler = pass_interrupt}, old;
  sigemptyset(&pass.sa_mask);
  was_interrupted = 0;
  child_pid = 0;
  sigaction(SIGINT, &pass, &old);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0)
    child(argc, argv, pipes[0][1], pipes[1][1], pipes[2][1]);
  child_pid = pid;
  for (int k = 0; k < 3; k++) {
    close(pipes[k][1]);
    bufs[k].fd = pipes[k][0];
  }
  if (pid < 0) {
    for (int k = 0; k < 3; k++)
      close(bufs[k].fd);
    bufs[1].fd = bufs[0].fd = bufs[2].fd = -1;
  }
  while (bufs[0].fd >= 0 || bufs[1].fd >= 0 || bufs[2].fd >= 0) {
    struct pollfd fds[3];
    for (int k = 0; k < 3; k++)
      fds[k] = (struct pollfd){.fd = bufs[k].fd, .events = POLLIN};
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    for (int k = 0; k < 3; k++)
      if (bufs[k].fd >= 0 && fds[k].revents != 0)
        buffer_read(&bufs[k]);
  }
  for (int k = 0; k < 3; k++)
    if (bufs[k].fd >= 0)
      close(bufs[k].fd);
  int wstatus = 0;
  if (pid > 0) {
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
      ;
    out->status = WIFEXITED(wstatus)     ? WEXITSTATUS(wstatus)
                  : WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus)
                                         : -1;
  }
  child_pid = 0;
  sigaction(SIGINT, &old, NULL);
  int interrupted = was_interrupted;
  pthread_mutex_unlock(&one_call);

  out->output = own_copy(bufs[0].data);
  out->errors = own_copy(bufs[1].data);
  if (pid < 0) {
    free(out->errors);
    out->errors = own_copy("trainsim: error: cannot start a process for the command\n");
  } else if (bufs[0].is_short || bufs[1].is_short) {
    out->status = out->status == 0 ? 1 : out->status;
  }
  take_report(&bufs[2], &bufs[1], out);
  if (pid < 0) {
    free(out->error);
    out->error = own_copy("trainsim: error: cannot start a process for the command");
  }
  for (int k = 0; k < 3; k++)
    free(bufs[k].data);
  if (interrupted)
    raise(SIGINT); /* the caller's own handler: Python's KeyboardInterrupt */
  return out->status;
}

void ts_api_outcome_free(ts_api_outcome *out) {
  if (out == NULL)
    return;
  free(out->output);
  free(out->errors);
  free(out->error);
  free(out->error_file);
  free(out->error_key);
  free(out->error_flag);
  memset(out, 0, sizeof *out);
}
