/* platform: the Frontier file as REFERENCE.md section 2 describes it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "fixtures.h"

static void test_frontier(void **state) {
  (void)state;
  static ts_platform pf;
  load_frontier(&pf);
  assert_string_equal(pf.name, "frontier");
  assert_rel(pf.gpu.peak_flops_per_s[TS_PREC_BF16], 191.5e12, 1e-15);
  assert_rel(pf.gpu.hbm_bytes, 64.0 * 1073741824.0, 1e-15);
  assert_rel(pf.gpu.hbm_Bps, 1.35e12, 1e-15);
  assert_int_equal(pf.gpus_per_node, 8);
  assert_int_equal(pf.n_node_links, 12);
  /* Node links as RCCL drives them: the file's figures x node_link_efficiency. */
  assert_int_equal(pf.ccl.library, TS_CCL_RCCL);
  assert_int_equal(pf.ccl.tuning_model, 3);
  assert_rel(pf.ccl.node_link_efficiency, 0.72, 1e-15);
  assert_rel(pf.node_links[ts_platform_node_link(&pf, 1, 0)].bw_Bps, 200e9 * 0.72, 1e-15);
  assert_rel(pf.node_links[ts_platform_node_link(&pf, 2, 4)].bw_Bps, 100e9 * 0.72, 1e-15);
  assert_rel(pf.node_links[ts_platform_node_link(&pf, 7, 3)].bw_Bps, 50e9 * 0.72, 1e-15);
  assert_int_equal(ts_platform_node_link(&pf, 0, 3), -1);
  assert_int_equal(pf.n_nics, 4);
  const int nic_gpu[4] = {1, 3, 5, 7};
  for (int i = 0; i < 4; i++) {
    assert_int_equal(pf.nics[i].gpu, nic_gpu[i]);
    assert_rel(pf.nics[i].bw_Bps, 25e9, 1e-15);
  }
  /* Both GCDs of a package use the package's NIC. */
  for (int g = 0; g < 8; g++)
    assert_int_equal(pf.gpu_nic[g], g / 2);
  assert_int_equal(pf.net.n_groups, 74);
  assert_int_equal(pf.net.switches_per_group, 32);
  assert_int_equal(pf.net.nodes_per_switch, 4);
  assert_int_equal(pf.net.global_links_per_pair, 4);
  assert_int_equal(pf.n_nodes, 9408);
  assert_int_equal(ts_platform_n_gpus(&pf), 75264);
}

static void test_embedded_matches_file(void **state) {
  (void)state;
  static ts_platform file, embedded;
  ts_err err = {0};
  load_frontier(&file);
  assert_int_equal(
      ts_platform_load_string(ts_platform_default_name, ts_platform_default_text, &embedded, &err),
      0);
  memset(file.source_name, 0, sizeof file.source_name);
  memset(embedded.source_name, 0, sizeof embedded.source_name);
  /* The kernel table too is compiled in: the same times at measured and interpolated points. */
  assert_non_null(file.gpu.kernels);
  assert_non_null(embedded.gpu.kernels);
  double points[][3] = {{2048, 4608, 12288}, {3000, 5000, 7000}};
  for (int i = 0; i < 2; i++) {
    double a = 0, b = 0;
    assert_int_equal(ts_kernels_time(file.gpu.kernels, TS_KERNEL_GEMM_FWD, points[i], &a),
                     ts_kernels_time(embedded.gpu.kernels, TS_KERNEL_GEMM_FWD, points[i], &b));
    assert_true(a > 0 && a == b);
  }
  file.gpu.kernels = embedded.gpu.kernels = NULL;
  assert_memory_equal(&file, &embedded, sizeof file);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_frontier),
                                     cmocka_unit_test(test_embedded_matches_file)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
