/* args: see args.h. */
#include "args.h"

#include <math.h>
#include <string.h>

#include "../workloads/doc.h"

/* Choices are stored through an int: the enums they fill must be of int's size. */
_Static_assert(sizeof(ts_schedule_kind) == sizeof(int) && sizeof(ts_recompute) == sizeof(int),
               "enums stored by TS_FLAG_CHOICE must be int-sized");

#define HELP_COLUMN 29 /* where a flag's help starts */
#define WIDTH 96 /* of the help text */

static const char set_help[] =
    "any key of the platform or workload file, checked as there (repeatable; e.g. --set "
    "network.global_link.bandwidth=50GBps, --set model.num_layers=64); result.json lists them";

const ts_command *ts_args_command(const char *name) {
  for (const ts_command *const *c = ts_commands; *c != NULL; c++)
    if (strcmp((*c)->name, name) == 0)
      return *c;
  return NULL;
}

/* The flag of c called name (or with that alias), and its group; NULL when there is none. */
static const ts_flag *find_flag(const ts_command *c, const char *name, const ts_flag_group **in) {
  for (const ts_flag_group *g = c->groups; g->flags != NULL; g++)
    for (const ts_flag *f = g->flags; f->name != NULL; f++)
      if (strcmp(f->name, name) == 0 || (f->alias != NULL && strcmp(f->alias, name) == 0)) {
        *in = g;
        return f;
      }
  return NULL;
}

/* Megatron-LM's flags for what trainsim's take under another name (Megatron-LM's
 * megatron/training/arguments.py): a user pasting a launch line is told which to use. */
static const struct {
  const char *megatron, *trainsim;
} megatron_flags[] = {
    {"--tensor-model-parallel-size", "--tp"},
    {"--pipeline-model-parallel-size", "--pp"},
    {"--context-parallel-size", "--cp"},
    {"--expert-model-parallel-size", "--ep"},
    {"--expert-tensor-parallel-size", "--etp"},
    {"--virtual-pipeline-model-parallel-size", "--virtual-stages"},
    {"--num-layers-per-virtual-pipeline-stage", "--virtual-stages (chunks per stage, not layers)"},
    {"--decoder-first-pipeline-num-layers", "--first-stage-layers"},
    {"--decoder-last-pipeline-num-layers", "--last-stage-layers"},
    {"--recompute-granularity", "--recompute"},
    {"--recompute-activations", "--recompute selective"},
    {"--use-distributed-optimizer", "--zero-stage 1"},
    {"--overlap-grad-reduce", "--dp-bucket-size 160MB"},
    {"--overlap-param-gather", "--set parallelism.overlap_param_gather=true"},
    {"--tp-comm-overlap", "--set parallelism.tp_comm_overlap=true"},
    {"--no-overlap-p2p-communication", "--set parallelism.overlap_p2p_comm=false"},
    {"--grad-reduce-in-bf16", "--set parallelism.grad_reduce_in_bf16=true"},
    {"--main-params-dtype", "--set training.master_weights=fp32|fp16"},
    {"--exp-avg-dtype", "--set training.exp_avg_dtype=fp32|fp16|bf16|fp8"},
    {"--exp-avg-sq-dtype", "--set training.exp_avg_sq_dtype=fp32|fp16|bf16|fp8"},
    {"--num-layers", "--set model.num_layers=N"},
    {"--hidden-size", "--set model.hidden_size=N"},
    {"--ffn-hidden-size", "--set model.ffn_hidden_size=N"},
    {"--num-attention-heads", "--set model.num_attention_heads=N"},
    {"--num-query-groups", "--set model.num_query_groups=N"},
    {"--seq-length", "--set model.seq_length=N"},
    {"--num-experts", "--set model.num_experts=N"},
    {"--moe-router-topk", "--set model.moe_router_topk=N"},
    {"--bf16", "--set training.precision=bf16"},
    {"--fp16", "--set training.precision=fp16"},
    {"--fp8-format", "--set training.fp8=e4m3|hybrid"},
    {"--fp8-recipe", "--set training.fp8_recipe=delayed|tensorwise|blockwise"},
    {"--train-iters", "--set training.train_tokens=N (tokens, not iterations)"},
    {NULL, NULL}};

static int unknown_option(const ts_command *c, const char *name, ts_err *err) {
  for (int i = 0; megatron_flags[i].megatron != NULL; i++) {
    size_t n = strlen(megatron_flags[i].megatron);
    if (strncmp(name, megatron_flags[i].megatron, n) == 0 && (name[n] == '\0' || name[n] == '=')) {
      const char *hint = megatron_flags[i].trainsim;
      char flag[64];
      snprintf(flag, sizeof flag, "%.*s", (int)strcspn(hint, " "), hint);
      const ts_flag_group *g = NULL;
      if (strcmp(flag, "--set") == 0 || find_flag(c, flag, &g) != NULL)
        return ts_err_plain(err,
                            "unknown option '%s': that is Megatron-LM's flag; trainsim's is "
                            "'%s'",
                            name, hint);
    }
  }
  const char *all[256] = {"--set"}; /* offered only for a near miss such as --sett */
  int n = strncmp(name, "--se", 4) == 0 ? 1 : 0;
  for (const ts_flag_group *g = c->groups; g->flags != NULL; g++)
    for (const ts_flag *f = g->flags; f->name != NULL && n < 255; f++)
      all[n++] = f->name;
  all[n] = NULL;
  const char *hint = ts_did_you_mean(name, all);
  if (hint != NULL)
    return ts_err_plain(err, "unknown option '%s' (did you mean '%s'?)", name, hint);
  return ts_err_plain(err, "unknown option '%s' (see 'trainsim %s --help')", name, c->name);
}

/* Checks value and stores it where flag f of group g goes in out. */
static int store(const ts_flag *f, const ts_flag_group *g, void *out, const char *value,
                 ts_err *err) {
  char *at = (char *)out + g->base;
  int rc = 0, choice = 0;
  switch (f->kind) {
  case TS_FLAG_SWITCH:
    *(bool *)(at + f->offset) = true;
    break;
  case TS_FLAG_COUNT:
    rc = ts_args_count(f->name, value, f->lo, f->hi, (long *)(at + f->offset), err);
    break;
  case TS_FLAG_CHOICE:
    rc = ts_args_choice(f->name, value, f->choices, &choice, err);
    if (rc == 0)
      *(int *)(at + f->offset) = choice;
    break;
  case TS_FLAG_BYTES:
    rc = ts_args_bytes(f->name, value, (double *)(at + f->offset), err);
    break;
  case TS_FLAG_TEXT:
    *(const char **)(at + f->offset) = value;
    break;
  case TS_FLAG_CUSTOM:
    rc = f->parse(at, f->name, value, err);
    break;
  }
  if (rc == 0 && f->set_offset > 0)
    *(bool *)(at + f->set_offset - 1) = true;
  return rc;
}

int ts_args_next(ts_args *cli, const ts_flag **flag, const char **value, ts_err *err) {
  static char name[64];
  const ts_command *c = cli->command;
  if (cli->i >= cli->argc)
    return TS_ARGS_END;
  const char *arg = cli->argv[cli->i++];
  const ts_flag_group *g = NULL;
  *flag = NULL;
  *value = NULL;
  if (strcmp(arg, "-h") == 0)
    return TS_ARGS_HELP;
  const ts_flag *f = arg[0] == '-' && arg[1] != '-' ? find_flag(c, arg, &g) : NULL;
  if (f == NULL && strncmp(arg, "--", 2) != 0) {
    *value = arg;
    return TS_ARGS_ARGUMENT;
  }
  const char *eq = f == NULL ? strchr(arg, '=') : NULL;
  snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
  if (strcmp(name, "--help") == 0) {
    if (eq != NULL)
      return ts_err_plain(err, "--help takes no value");
    return TS_ARGS_HELP;
  }
  if (strcmp(name, "--set") == 0) {
    const char *kv = eq != NULL ? eq + 1 : cli->i < cli->argc ? cli->argv[cli->i++] : NULL;
    if (kv == NULL)
      return ts_err_plain(err, "--set: expected KEY=VALUE after the option");
    if (cli->skips_set)
      return ts_args_next(cli, flag, value, err);
    int workload_before = ts_doc_overrides_count(TS_DOC_WORKLOAD);
    if (ts_doc_override_add(kv, err) != 0)
      return -1;
    if (c->reads_no_workload && ts_doc_overrides_count(TS_DOC_WORKLOAD) > workload_before)
      return ts_err_plain(err, "--set %s: 'trainsim %s' reads no workload file", kv, c->name);
    return ts_args_next(cli, flag, value, err);
  }
  if (f == NULL && (f = find_flag(c, name, &g)) == NULL)
    return unknown_option(c, name, err);
  if (f->value == NULL) { /* a switch (TS_FLAG_SWITCH, or a custom one) */
    if (eq != NULL)
      return ts_err_plain(err, "%s takes no value", f->name);
  } else if (eq != NULL) {
    *value = eq + 1;
  } else if (cli->i < cli->argc) {
    *value = cli->argv[cli->i++];
  } else {
    return ts_err_plain(err, "%s: expected a value after the option", f->name);
  }
  if (cli->out != NULL && store(f, g, cli->out, *value, err) != 0)
    return -1;
  *flag = f;
  return TS_ARGS_OPTION;
}

int ts_args_apply(const ts_command *c, void *out, const char *name, const char *value,
                  ts_err *err) {
  const ts_flag_group *g = NULL;
  const ts_flag *f = find_flag(c, name, &g);
  TS_ASSERT(f != NULL); /* callers name flags of the tables */
  return store(f, g, out, value, err);
}

static int flag_error(ts_err *err, const char *flag, const char *expected, const char *found) {
  ts_loc loc = {NULL, 0, 0, flag, NULL};
  return ts_err_at(err, loc, "expected %s, found '%s'", expected, found);
}

int ts_args_count(const char *flag, const char *text, long lo, long hi, long *out, ts_err *err) {
  long v = 0;
  char expected[64];
  snprintf(expected, sizeof expected, "an integer from %ld to %ld", lo, hi);
  if (ts_parse_long(text, &v) != 0 || v < lo || v > hi)
    return flag_error(err, flag, expected, text);
  *out = v;
  return 0;
}

int ts_args_choice(const char *flag, const char *text, const char *const *names, int *out,
                   ts_err *err) {
  for (int i = 0; names[i] != NULL; i++)
    if (strcmp(text, names[i]) == 0) {
      *out = i;
      return 0;
    }
  char expected[160] = "one of";
  for (int i = 0; names[i] != NULL; i++) {
    size_t n = strlen(expected);
    snprintf(expected + n, sizeof expected - n, "%s '%s'", i ? "," : "", names[i]);
  }
  return flag_error(err, flag, expected, text);
}

int ts_args_bytes(const char *flag, const char *text, double *out, ts_err *err) {
  double v = 0;
  if (ts_units_parse(text, TS_UNITS_BYTES, &v, NULL) != 0 || v < 1)
    return flag_error(err, flag, ts_units_expected(TS_UNITS_BYTES), text);
  if (v != floor(v))
    return flag_error(err, flag, "a whole number of bytes such as 4096 or 64KiB", text);
  double lo = 0, hi = 0;
  const char *lo_text = NULL, *hi_text = NULL;
  ts_units_range(TS_UNITS_BYTES, &lo, &hi, &lo_text, &hi_text);
  if (v > hi) {
    char expected[64];
    snprintf(expected, sizeof expected, "a size from %s to %s", lo_text, hi_text);
    return flag_error(err, flag, expected, text);
  }
  *out = v;
  return 0;
}

/* ---- the layout overrides, shared by the commands that read a workload ---- */

static const char *const zero_stages[] = {"0", "1", "2", "3", NULL};

/* --fsdp: PyTorch FSDP's FULL_SHARD is ZeRO-3. */
static int parse_fsdp(void *group, const char *flag, const char *value, ts_err *err) {
  (void)flag, (void)value, (void)err;
  ts_overrides *ov = group;
  ov->zero_stage = 3;
  ov->is_zero_stage_set = true;
  ov->is_fsdp = true;
  return 0;
}

/* --dp-bucket-size: a size, or 0 for no buckets. */
static int parse_bucket(void *group, const char *flag, const char *value, ts_err *err) {
  ts_overrides *ov = group;
  if (strcmp(value, "0") == 0) {
    ov->dp_bucket_bytes = 0;
    return 0;
  }
  return ts_args_bytes(flag, value, &ov->dp_bucket_bytes, err);
}

#define COUNT(name_, field)                                                                        \
  .name = name_, .value = "N", .kind = TS_FLAG_COUNT, .offset = offsetof(ts_overrides, field),     \
  .set_offset = TS_FLAG_SET(ts_overrides, is_##field##_set), .lo = 1, .hi = TS_ARGS_MAX_COUNT

const ts_flag ts_args_override_flags[] = {
    {COUNT("--tp", tp), .help = "tensor-parallel size (parallelism.tensor)"},
    {COUNT("--pp", pp), .help = "pipeline-parallel size (parallelism.pipeline)"},
    {COUNT("--cp", cp),
     .help = "context-parallel size: ring attention over N ranks that split each sequence "
             "(parallelism.context)"},
    {COUNT("--ep", ep),
     .help = "expert-parallel size of a mixture-of-experts model (parallelism.expert)"},
    {COUNT("--etp", etp), .help = "expert tensor-parallel size of a mixture-of-experts model "
                                  "(parallelism.expert_tensor)"},
    {COUNT("--micro-batch-size", micro_batch),
     .help = "sequences per microbatch (training.micro_batch_size)"},
    {COUNT("--global-batch-size", global_batch),
     .help = "sequences per iteration (training.global_batch_size)"},
    {.name = "--schedule",
     .value = "gpipe|1f1b|interleaved|zb-h1|zb-v|dualpipe",
     .kind = TS_FLAG_CHOICE,
     .offset = offsetof(ts_overrides, schedule),
     .set_offset = TS_FLAG_SET(ts_overrides, is_schedule_set),
     .choices = ts_schedule_names,
     .help = "pipeline schedule (parallelism.schedule); zb-h1: zero bubble H1, each backward "
             "split into input and weight gradients, the weight gradients deferred into the "
             "drain (Qi et al., ICLR 2024); zb-v: two chunks a rank in a V, the weight gradients "
             "filling the bubbles (PyTorch's ScheduleZBVZeroBubble); dualpipe: DeepSeek-V3's, half "
             "the microbatches from "
             "each end, two chunks a rank (two copies of the weights), a forward run with another "
             "microbatch's backward to hide the expert all-to-alls"},
    {COUNT("--virtual-stages", virtual_stages),
     .help = "model chunks per pipeline rank; > 1 makes 1f1b the interleaved schedule "
             "(parallelism.virtual_stages)"},
    {COUNT("--first-stage-layers", first_stage_layers),
     .help = "layers of the first pipeline stage, the rest split evenly "
             "(parallelism.decoder_first_pipeline_num_layers)"},
    {COUNT("--last-stage-layers", last_stage_layers),
     .help = "layers of the last pipeline stage, the rest split evenly "
             "(parallelism.decoder_last_pipeline_num_layers)"},
    {.name = "--recompute",
     .value = "none|selective|full|op",
     .kind = TS_FLAG_CHOICE,
     .offset = offsetof(ts_overrides, recompute),
     .set_offset = TS_FLAG_SET(ts_overrides, is_recompute_set),
     .choices = ts_recompute_names,
     .help = "activation recomputation (parallelism.recompute)"},
    {.name = "--sequence-parallel",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(ts_overrides, is_sequence_parallel_set),
     .help = "Megatron sequence parallelism: layer norms and dropouts on s/tp of the sequence, "
             "each TP all-reduce a reduce-scatter and an all-gather "
             "(parallelism.sequence_parallel)"},
    {.name = "--zero-stage",
     .value = "0|1|2|3",
     .kind = TS_FLAG_CHOICE,
     .offset = offsetof(ts_overrides, zero_stage),
     .set_offset = TS_FLAG_SET(ts_overrides, is_zero_stage_set),
     .choices = zero_stages,
     .help =
         "0: all-reduce gradients; 1: shard optimizer states (reduce-scatter gradients, "
         "all-gather weights); 2: shard gradients too, reduce-scattered every microbatch; 3: "
         "shard weights too, all-gathered per layer in forward and backward with the next "
         "layer prefetched (2 and 3 need --pp 1, as in DeepSpeed; FSDP with pipelines keeps its "
         "weights through the iteration, as torchtitan runs it: "
         "parallelism.reshard_after_forward)"},
    {.name = "--fsdp",
     .kind = TS_FLAG_CUSTOM,
     .parse = parse_fsdp,
     .help = "PyTorch FSDP (FULL_SHARD): the same as --zero-stage 3"},
    {.name = "--scatter-gather",
     .kind = TS_FLAG_SWITCH,
     .offset = offsetof(ts_overrides, is_scatter_gather_set),
     .help = "pipeline activations cross as 1/tp per TP rank, then an all-gather inside the "
             "stage (Megatron-LM's default; parallelism.scatter_gather_tensors_in_pipeline)"},
    {.name = "--dp-bucket-size",
     .value = "BYTES",
     .kind = TS_FLAG_CUSTOM,
     .parse = parse_bucket,
     .set_offset = TS_FLAG_SET(ts_overrides, is_dp_bucket_set),
     .help = "reduce gradients in buckets of BYTES (fp32) while the backward pass runs, "
             "overlapped with it (Megatron-LM's --overlap-grad-reduce: 160MB = its 40M "
             "parameters); 0 (default): after the pipeline flush, as DeepSpeed does"},
    {.name = NULL}};

#undef COUNT

/* ---- help and docs, from the tables ---- */

/* Words of text from column col (the line's start already printed), wrapped at WIDTH with
 * continuation lines indented by indent; ends the line. */
static void wrap(FILE *f, int col, int indent, const char *text) {
  for (const char *s = text; *s != '\0';) {
    while (*s == ' ')
      s++;
    size_t n = strcspn(s, " ");
    if (n == 0)
      break;
    if (col > indent && col + 1 + (int)n > WIDTH) {
      fprintf(f, "\n%*s", indent, "");
      col = indent;
    } else if (col > indent) {
      fputc(' ', f);
      col++;
    } else if (col < indent) {
      fprintf(f, "%*s", indent - col, "");
      col = indent;
    }
    fprintf(f, "%.*s", (int)n, s);
    col += (int)n;
    s += n;
  }
  fputc('\n', f);
}

/* "-j N, --jobs N" */
static void flag_label(const ts_flag *fl, char *out, size_t size) {
  const char *v = fl->value != NULL ? fl->value : "";
  const char *space = fl->value != NULL ? " " : "";
  if (fl->alias != NULL)
    snprintf(out, size, "%s%s%s, %s%s%s", fl->alias, space, v, fl->name, space, v);
  else
    snprintf(out, size, "%s%s%s", fl->name, space, v);
}

static void flag_line(FILE *f, const char *label, const char *help) {
  int col = fprintf(f, "  %s", label);
  if (col + 1 > HELP_COLUMN - 1) {
    fputc('\n', f);
    col = 0;
  }
  wrap(f, col, HELP_COLUMN, help);
}

static void synopsis(FILE *f, const char *lead, const ts_command *c) {
  const char *s = c->synopsis;
  for (int line = 0; *s != '\0'; line++) {
    size_t n = strcspn(s, "\n");
    fprintf(f, "%s trainsim %s %.*s\n", line == 0 ? lead : "      ", c->name, (int)n, s);
    s += n + (s[n] == '\n');
  }
}

void ts_args_usage(FILE *f, const ts_command *c) {
  synopsis(f, "usage:", c);
  fprintf(f, "\n%s", c->description);
  for (const ts_flag_group *g = c->groups; g->flags != NULL; g++) {
    fprintf(f, "\n%s:\n", g->title);
    for (const ts_flag *fl = g->flags; fl->name != NULL; fl++) {
      char label[96];
      flag_label(fl, label, sizeof label);
      flag_line(f, label, fl->help);
    }
  }
  fputs(c->groups[0].flags != NULL ? "\n" : "\noptions:\n", f);
  flag_line(f, "--set KEY=VALUE",
            c->reads_no_workload ? "any key of the platform file, checked as there (repeatable)"
                                 : set_help);
  flag_line(f, "-h, --help", "show this help");
}

void ts_args_usage_all(FILE *f) {
  fputs("usage: trainsim <command> [options]\n"
        "\n"
        "Simulates large-scale LLM training on a described machine (default: Frontier, OLCF).\n"
        "\n"
        "commands:\n",
        f);
  for (const ts_command *const *c = ts_commands; *c != NULL; c++) {
    char label[128];
    snprintf(label, sizeof label, "%s %.*s", (*c)->name, (int)strcspn((*c)->synopsis, "\n"),
             (*c)->synopsis);
    flag_line(f, label, (*c)->summary);
  }
  fputs("\nRun 'trainsim COMMAND --help' for a command's options; 'trainsim help --markdown'\n"
        "prints every command's flags as docs/cli.md tables them.\n"
        "Exit status: 0 success, 2 input error, 1 other failure.\n",
        f);
}

static void markdown_cell(FILE *f, const char *text) {
  for (const char *s = text; *s != '\0'; s++) {
    if (*s == '|')
      fputc('\\', f);
    fputc(*s, f);
  }
}

static void markdown_row(FILE *f, const char *label, const char *help) {
  fputs("| `", f);
  markdown_cell(f, label);
  fputs("` | ", f);
  markdown_cell(f, help);
  fputs(" |\n", f);
}

void ts_args_markdown(FILE *f) {
  for (const ts_command *const *c = ts_commands; *c != NULL; c++) {
    fprintf(f, "### trainsim %s\n\n", (*c)->name);
    const char *s = (*c)->synopsis;
    for (size_t n; *s != '\0'; s += n + (s[n] == '\n')) {
      n = strcspn(s, "\n");
      fprintf(f, "`trainsim %s %.*s`  \n", (*c)->name, (int)n, s);
    }
    fprintf(f, "%s.\n\n| flag | what it does |\n|---|---|\n", (*c)->summary);
    for (const ts_flag_group *g = (*c)->groups; g->flags != NULL; g++)
      for (const ts_flag *fl = g->flags; fl->name != NULL; fl++) {
        char label[96];
        flag_label(fl, label, sizeof label);
        markdown_row(f, label, fl->help);
      }
    markdown_row(f, "--set KEY=VALUE",
                 (*c)->reads_no_workload
                     ? "any key of the platform file, checked as there (repeatable)"
                     : set_help);
    fputc('\n', f);
  }
}

int ts_args_load_platform(const char *path, ts_platform *pf, ts_err *err) {
  if (path != NULL)
    return ts_platform_load_file(path, pf, err);
  return ts_platform_load_string(ts_platform_default_name, ts_platform_default_text, pf, err);
}

static ts_err first_report;

void ts_args_report(const ts_err *err, const char *note) {
  fprintf(stderr, "%s%s\n", err->msg, note != NULL ? note : "");
  if (first_report.is_set)
    return;
  first_report = *err;
  first_report.is_set = true;
  if (note != NULL) {
    size_t used = strlen(first_report.msg);
    snprintf(first_report.msg + used, sizeof first_report.msg - used, "%s", note);
  }
}

const ts_err *ts_args_first_report(void) {
  return first_report.is_set ? &first_report : NULL;
}

static const char *library_path; /* NULL: the trainsim executable */

void ts_args_set_library(const char *path) {
  library_path = path;
}

const char *ts_args_program(void) {
  return library_path != NULL ? library_path : "/proc/self/exe";
}

const char *ts_args_executable(void) {
  return library_path != NULL ? NULL : "/proc/self/exe";
}
