/* args: see args.h. */
#include "args.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../workloads/doc.h"

const char *const ts_args_override_options[] = {"--tp",
                                                "--pp",
                                                "--cp",
                                                "--ep",
                                                "--etp",
                                                "--micro-batch-size",
                                                "--global-batch-size",
                                                "--schedule",
                                                "--recompute",
                                                "--zero-stage",
                                                "--virtual-stages",
                                                "--dp-bucket-size",
                                                "--first-stage-layers",
                                                "--last-stage-layers",
                                                NULL};
const char *const ts_args_override_switches[] = {"--sequence-parallel", "--fsdp",
                                                 "--scatter-gather", NULL};

static bool listed(const char *const *names, const char *name) {
  for (const char *const *n = names; n != NULL && *n != NULL; n++)
    if (strcmp(*n, name) == 0)
      return true;
  return false;
}

int ts_args_next(ts_args *cli, const char **flag, const char **value, ts_err *err) {
  static char name[64];
  if (cli->i >= cli->argc)
    return TS_ARGS_END;
  const char *arg = cli->argv[cli->i++];
  if (strncmp(arg, "--", 2) != 0 && strcmp(arg, "-h") != 0) {
    *value = arg;
    return TS_ARGS_ARGUMENT;
  }
  const char *eq = strchr(arg, '=');
  snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
  if (strcmp(name, "-h") == 0)
    snprintf(name, sizeof name, "--help");
  *flag = name;
  *value = NULL;
  if (strcmp(name, "--set") == 0) {
    const char *kv = eq != NULL ? eq + 1 : cli->i < cli->argc ? cli->argv[cli->i++] : NULL;
    if (kv == NULL)
      return ts_err_plain(err, "--set: expected KEY=VALUE after the option");
    if (cli->skips_set)
      return ts_args_next(cli, flag, value, err);
    int workload_before = ts_doc_overrides_count(TS_DOC_WORKLOAD);
    if (ts_doc_override_add(kv, err) != 0)
      return -1;
    if (cli->reads_no_workload && ts_doc_overrides_count(TS_DOC_WORKLOAD) > workload_before)
      return ts_err_plain(err, "--set %s: 'trainsim %s' reads no workload file", kv, cli->command);
    return ts_args_next(cli, flag, value, err);
  }
  bool overrides = cli->takes_overrides;
  if (strcmp(name, "--help") == 0 || listed(cli->switches, name) ||
      (overrides && listed(ts_args_override_switches, name))) {
    if (eq != NULL)
      return ts_err_plain(err, "%s takes no value", name);
    return TS_ARGS_OPTION;
  }
  if (!listed(cli->options, name) && !(overrides && listed(ts_args_override_options, name))) {
    const char *const *lists[] = {cli->options, cli->switches,
                                  overrides ? ts_args_override_options : NULL,
                                  overrides ? ts_args_override_switches : NULL};
    const char *all[128] = {"--set"}; /* offered only for a near miss such as --sett */
    int n = strncmp(name, "--se", 4) == 0 ? 1 : 0;
    for (int l = 0; l < 4; l++)
      for (const char *const *o = lists[l]; o != NULL && *o != NULL && n < 127; o++)
        all[n++] = *o;
    all[n] = NULL;
    const char *hint = ts_did_you_mean(name, all);
    if (hint != NULL)
      return ts_err_plain(err, "unknown option '%s' (did you mean '%s'?)", name, hint);
    return ts_err_plain(err, "unknown option '%s' (see 'trainsim %s --help')", name, cli->command);
  }
  if (eq != NULL)
    *value = eq + 1;
  else if (cli->i < cli->argc)
    *value = cli->argv[cli->i++];
  else
    return ts_err_plain(err, "%s: expected a value after the option", name);
  return TS_ARGS_OPTION;
}

static int flag_error(ts_err *err, const char *flag, const char *expected, const char *found) {
  ts_loc loc = {NULL, 0, 0, flag};
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

int ts_args_override(const char *flag, const char *value, ts_overrides *ov, ts_err *err) {
  static const char *const stages[] = {"0", "1", "2", "3", NULL};
  const long max = TS_ARGS_MAX_COUNT;
  int choice = 0, rc = 0;
  if (strcmp(flag, "--sequence-parallel") == 0) {
    ov->is_sequence_parallel_set = true;
  } else if (strcmp(flag, "--tp") == 0) {
    rc = ts_args_count(flag, value, 1, max, &ov->tp, err);
    ov->is_tp_set = true;
  } else if (strcmp(flag, "--pp") == 0) {
    rc = ts_args_count(flag, value, 1, max, &ov->pp, err);
    ov->is_pp_set = true;
  } else if (strcmp(flag, "--cp") == 0) {
    rc = ts_args_count(flag, value, 1, max, &ov->cp, err);
    ov->is_cp_set = true;
  } else if (strcmp(flag, "--ep") == 0) {
    rc = ts_args_count(flag, value, 1, max, &ov->ep, err);
    ov->is_ep_set = true;
  } else if (strcmp(flag, "--etp") == 0) {
    rc = ts_args_count(flag, value, 1, max, &ov->etp, err);
    ov->is_etp_set = true;
  } else if (strcmp(flag, "--micro-batch-size") == 0) {
    rc = ts_args_count(flag, value, 1, max, &ov->micro_batch, err);
    ov->is_micro_batch_set = true;
  } else if (strcmp(flag, "--global-batch-size") == 0) {
    rc = ts_args_count(flag, value, 1, max, &ov->global_batch, err);
    ov->is_global_batch_set = true;
  } else if (strcmp(flag, "--zero-stage") == 0) {
    rc = ts_args_choice(flag, value, stages, &choice, err);
    ov->zero_stage = choice;
    ov->is_zero_stage_set = true;
  } else if (strcmp(flag, "--schedule") == 0) {
    rc = ts_args_choice(flag, value, ts_schedule_names, &choice, err);
    ov->schedule = (ts_schedule_kind)choice;
    ov->is_schedule_set = true;
  } else if (strcmp(flag, "--scatter-gather") == 0) {
    ov->is_scatter_gather_set = true;
  } else if (strcmp(flag, "--fsdp") == 0) { /* PyTorch FSDP's FULL_SHARD is ZeRO-3 */
    ov->zero_stage = 3;
    ov->is_zero_stage_set = true;
    ov->is_fsdp = true;
  } else if (strcmp(flag, "--dp-bucket-size") == 0) {
    rc = strcmp(value, "0") == 0 ? 0 : ts_args_bytes(flag, value, &ov->dp_bucket_bytes, err);
    if (strcmp(value, "0") == 0)
      ov->dp_bucket_bytes = 0;
    ov->is_dp_bucket_set = true;
  } else if (strcmp(flag, "--first-stage-layers") == 0) {
    rc = ts_args_count(flag, value, 1, max, &ov->first_stage_layers, err);
    ov->is_first_stage_layers_set = true;
  } else if (strcmp(flag, "--last-stage-layers") == 0) {
    rc = ts_args_count(flag, value, 1, max, &ov->last_stage_layers, err);
    ov->is_last_stage_layers_set = true;
  } else if (strcmp(flag, "--virtual-stages") == 0) {
    rc = ts_args_count(flag, value, 1, max, &ov->virtual_stages, err);
    ov->is_virtual_stages_set = true;
  } else if (strcmp(flag, "--recompute") == 0) {
    rc = ts_args_choice(flag, value, ts_recompute_names, &choice, err);
    ov->recompute = (ts_recompute)choice;
    ov->is_recompute_set = true;
  } else {
    return 0;
  }
  return rc != 0 ? -1 : 1;
}

int ts_args_load_platform(const char *path, ts_platform *pf, ts_err *err) {
  if (path != NULL)
    return ts_platform_load_file(path, pf, err);
  return ts_platform_load_string(ts_platform_default_name, ts_platform_default_text, pf, err);
}
