/* ccl: NCCL's and RCCL's tuning models; see ccl.h. Constants are copied from the libraries'
 * sources, which are cited per table; the formulas follow ncclTopoTuneModel and
 * ncclTopoGetAlgoTime line by line (their order is kept so the two can be compared). */
#include "ccl.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "../../workloads/stack.h"

const char *const ts_ccl_algo_names[] = {"ring", "tree", "pat", NULL};
const char *const ts_ccl_proto_names[] = {"LL", "LL128", "Simple", NULL};

enum { HW_NVLINK, HW_PCI, HW_NET };

// clang-format off: the tables keep the libraries' layout, row for row
/* ---- NCCL 2.30.7, src/graph/tuning.cc (ncclTunerConstantsDefaults), microseconds and GB/s.
 * Rows: tree, ring, PAT; columns: LL, LL128, Simple. */
static const double nccl_base_lat[3][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {8.0, 8.0, 8.0}};
static const double nccl_hw_lat[3][3][3] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 4.0}}, /* NVLink */
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 4.0}}, /* PCI */
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 14}}, /* network */
};
/* [arch on one node, else the CPU: 0 Intel, 1 AMD][1 node, 2 nodes, more] */
static const double nccl_ll_max_bw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}};
/* [arch][1 node, 2 nodes, more] */
static const double nccl_per_ch_ring_ll128[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
static const double nccl_per_ch_tree_ll128[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
static const double nccl_per_ch_tree[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
/* Tree bandwidth corrections for medium sizes, by log2(bytes / 64), 64 B to 256 MB. */
static const double nccl_tree_correction[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

/* ---- RCCL 2.21.5 (ROCm 6.3), src/graph/tuning.cc: base latencies (tree and ring alike) and
 * the six per-platform tuning models that src/graph/rome_models.cc assigns to node types.
 * hw_lat[NVLink(xGMI), PCI, network][tree, ring][LL, LL128, Simple]; bw_ratio[2 nodes or
 * fewer, more][tree, ring][protocol]; corrections by log2(bytes / 64), clamped at 26. */
static const double rccl_base_lat[3] = {12.0, 12.0, 17.0};
typedef struct rccl_model {
  double hw_lat[3][2][3];
  double bw_ratio[2][2][3];
  double tree_correction[3][27];
  double ring_correction[3][27];
} rccl_model;
static const rccl_model rccl_models[6] = {
    {/* tuning_model_0 */
     .hw_lat = {{{0.8, 1.4, 2.5}, {0.8, 2.2, 3.6}},
                {{2.2, 2.2, 5.7}, {2.2, 2.2, 5.7}},
                {{11.8, 18.2, 20.8}, {9.5, 19.8, 15.1}}},
     .bw_ratio = {{{0.04, 0.22, 0.91}, {0.04, 0.34, 1}}, {{0.04, 0.22, 0.95}, {0.04, 0.34, 1}}},
     .tree_correction = {{0.1, 0.2, 0.1, 0.1, 0.9, 0.3, 0.4, 0.1, 0.2, 0.4, 0.2, 0.1, 0.3, 0.3,
                          0.2, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 0.3, 1,   0.1, 0.5, 1,   0.9, 1,   1,   1,   0.3, 0.1, 0.4, 0.5,
                          0.5, 0.4, 0.4, 0.3, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2},
                         {0.2, 1, 0.1, 0.1, 0.7, 0.2, 0.4, 0.1, 0.1, 0.3, 0.4, 0.3, 0.6, 0.8,
                          1,   1, 1,   1,   0.9, 0.8, 0.8, 0.8, 0.8, 0.8, 0.9, 0.9, 0.9}},
     .ring_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.4, 0.2, 0.3, 0.5, 0.3, 0.1, 0.5, 0.5,
                          0.3, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.3, 1,   1,   1,  1,
                          1,   1,   0.8, 0.7, 0.5, 0.4, 0.4, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3},
                         {1,   0.8, 0.2, 1,   1, 0.3, 1, 0.1, 0.1, 0.2, 0.2, 0.1, 0.5, 1,
                          0.8, 0.8, 1,   0.9, 1, 1,   1, 1,   1,   1,   1,   1,   1}}},
    {/* tuning_model_1 */
     .hw_lat = {{{1.5, 1.5, 4.5}, {1.5, 1.5, 4.5}},
                {{2.2, 2.2, 5.7}, {2.2, 2.2, 5.7}},
                {{33, 33, 15.8}, {5.1, 5.1, 68.8}}},
     .bw_ratio = {{{0.12, 1, 0.99}, {0.12, 1, 1}}, {{0.15, 1, 0.42}, {0.2, 1, 1}}},
     .tree_correction = {{0.5, 0.4, 0.7, 0.6, 1,   1,   0.5, 0.4, 0.1, 0.5, 0.4, 0.6, 1,  1,
                          1,   1,   1,   0.8, 0.6, 0.5, 0.4, 0.4, 0.3, 0.2, 0.1, 0.1, 0.1},
                         {0.5, 0.4, 0.7, 0.6, 1,   1,   0.5, 0.4, 0.1, 0.5, 0.4, 0.6, 1,  1,
                          1,   1,   1,   0.8, 0.6, 0.5, 0.4, 0.4, 0.3, 0.2, 0.1, 0.1, 0.1},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.3, 0.4, 0.5, 0.1, 0.6, 1,   1,   1,  0.6,
                          0.5, 0.7, 1,   1,   1,   1,   1,   1,   1,   0.7, 0.5, 0.3, 0.3}},
     .ring_correction = {{1, 0.5, 1,   1,   0.6, 0.7, 1,   1,   0.2, 1,   0.9, 0.7, 1,  1,
                          1, 0.9, 0.9, 0.8, 0.8, 0.7, 0.6, 0.5, 0.5, 0.3, 0.2, 0.1, 0.1},
                         {1, 0.5, 1,   1,   0.6, 0.7, 1,   1,   0.2, 1,   0.9, 0.7, 1,  1,
                          1, 0.9, 0.9, 0.8, 0.8, 0.7, 0.6, 0.5, 0.5, 0.3, 0.2, 0.1, 0.1},
                         {0.3, 1,   0.3, 0.1, 0.1, 0.1, 0.3, 0.7, 1,   0.2, 0.1, 0.1, 0.1, 0.1,
                          0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.3, 0.5, 0.9, 1,   1,   1,   1}}},
    {/* tuning_model_2 */
     .hw_lat = {{{1.5, 1.5, 4.5}, {1.5, 1.5, 4.5}},
                {{2.2, 2.2, 5.7}, {2.2, 2.2, 5.7}},
                {{27.9, 27.9, 15.8}, {12.1, 12.1, 68.8}}},
     .bw_ratio = {{{0.07, 1, 0.99}, {0.08, 1, 1}}, {{0.07, 1, 0.42}, {0.08, 1, 1}}},
     .tree_correction = {{0.1, 0.4, 0.3, 0.3, 0.2, 0.4, 0.5, 0.1, 0.1, 0.6, 0.7, 0.7, 0.8, 1,
                          0.9, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2},
                         {0.1, 0.4, 0.3, 0.3, 0.2, 0.4, 0.5, 0.1, 0.1, 0.6, 0.7, 0.7, 0.8, 1,
                          0.9, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2},
                         {1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.3, 0.5, 0.1, 0.6, 0.9, 0.8, 0.7, 0.9,
                          1, 1,   1,   1,   1,   1,   1,   0.7, 0.9, 0.9, 1,   1,   1}},
     .ring_correction = {{0.1, 1,   1,   1,   1,   1,   1,   1,   0.4, 1,   1,   1,   1,  0.7,
                          0.6, 0.5, 0.4, 0.3, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 1,   1,   1,   1,   1,   1,   1,   0.4, 1,   1,   1,   1,  0.7,
                          0.6, 0.5, 0.4, 0.3, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1, 0.2, 0.2, 0.1, 0.1, 0.1,
                          0.1, 0.1, 0.2, 0.4, 0.5, 0.6, 0.9, 1,   1, 1,   1,   1,   1}}},
    {/* tuning_model_3 */
     .hw_lat = {{{0.8, 0, 2.5}, {0.8, 0, 3.6}},
                {{2.2, 2.2, 5.7}, {2.2, 2.2, 5.7}},
                {{12.5, 0, 22.4}, {9.5, 0, 19.8}}},
     .bw_ratio = {{{0.2, 0, 1.75}, {0.2, 0, 1}}, {{0.2, 0, 0.96}, {0.2, 0, 1}}},
     .tree_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1,   1,   0.2, 1,   0.9, 1,   0.6, 0.4,
                          0.6, 0.4, 0.3, 0.3, 0.3, 0.3, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2},
                         {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                          0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                         {1, 1, 1, 1, 1, 1, 0.1, 0.1, 0.1, 0.2, 1,   0.8, 1,  1,
                          1, 1, 1, 1, 1, 1, 1,   0.8, 0.7, 0.8, 0.9, 0.7, 0.7}},
     .ring_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 0.3, 0.1, 0.2, 0.1, 0.4, 0.4, 0.2, 0.2, 0.3,
                          0.7, 0.5, 0.4, 0.3, 0.3, 0.3, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2},
                         {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                          0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.5, 1, 0.1, 0.3, 0.1, 0.1, 0.1,
                          0.2, 0.2, 0.2, 0.3, 0.4, 0.7, 1,   1,   1, 1,   1,   1,   1}}},
    {/* tuning_model_4 */
     .hw_lat = {{{0.8, 1.4, 2.5}, {0.8, 2.2, 3.6}},
                {{2.2, 2.2, 5.7}, {2.2, 2.2, 5.7}},
                {{32.2, 34.4, 47.6}, {35.4, 87.8, 209.2}}},
     .bw_ratio = {{{0.16, 1.09, 1.61}, {0.15, 0.41, 1}}, {{0.16, 1.09, 1.08}, {0.15, 0.41, 1}}},
     .tree_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1,   0.1, 0.1, 0.2, 0.4, 0.6,
                          0.5, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.1, 0.1, 0.2, 1,
                          0.5, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2},
                         {1, 1, 1,   1,   1,   1,   1,   1,   0.8, 0.4, 0.3, 0.3, 0.1, 0.1,
                          1, 1, 0.7, 0.5, 0.6, 0.5, 0.6, 0.6, 0.5, 0.6, 0.6, 0.6, 0.7}},
     .ring_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.2, 0.1,
                          0.3, 0.1, 0.1, 0.1, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0.4, 0.5, 0.5, 0.4, 0.4, 0.4, 0.4, 0.2, 0.2, 0.1, 0.3, 1,   1,  0.7,
                          0.8, 0.5, 1,   1,   1,   1,   1,   0.9, 0.8, 0.5, 0.4, 0.3, 0.3},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1, 1, 0.8, 0.5, 0.1,
                          0.7, 0.2, 0.4, 0.4, 0.6, 0.7, 0.9, 1,   1,   1, 1, 1,   1}}},
    {/* tuning_model_5 */
     .hw_lat = {{{0.9, 0, 2.3}, {0.8, 0, 2.1}},
                {{2.2, 2.2, 5.7}, {2.2, 2.2, 5.7}},
                {{10.5, 0, 25}, {9.5, 0, 320}}},
     .bw_ratio = {{{0.06, 0, 0.11}, {0.08, 0, 1}}, {{0.06, 0, 0.59}, {0.08, 0, 1}}},
     .tree_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1,   1,   1,   1,   1,   0.6, 1,  0.9,
                          1,   1,   0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                          0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1,
                          0.1, 0.7, 1,   1,   1,   1,   1,   1,   1,   1,   1,   1,   0.8}},
     .ring_correction = {{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1,   0.2, 1,
                          0.4, 0.4, 0.1, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
                         {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                          0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                         {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1,
                          0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.8, 1,   1,   1}}},
};

/* ---- RCCL 2.12.12-2.13.4 (ROCm 5.2.3-5.4): tuning_model_3 before commit 94ad7f6f
 * (2022-11-04, "Update tuning table and fix topo_expl", first released in ROCm 5.5, RCCL
 * 2.15.5); src/graph/tuning.cc at tag rocm-5.4.0. */
static const rccl_model rccl_model_3_rocm54 = {
    .hw_lat = {{{1.5, 1.5, 4.5}, {1.5, 1.5, 4.5}},
               {{2.2, 2.2, 5.7}, {2.2, 2.2, 5.7}},
               {{17.4, 17.4, 40.3}, {4.1, 4.1, 40.6}}},
    .bw_ratio = {{{0.08, 1, 0.95}, {0.08, 1, 1}}, {{0.08, 1, 0.41}, {0.08, 1, 1}}},
    .tree_correction = {{0.6, 1.0, 1.0, 1.0, 0.1, 0.2, 0.1, 0.2, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
                         0.9, 0.9, 0.8, 0.6, 0.4, 0.5, 0.4, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1},
                        {0.6, 1.0, 1.0, 1.0, 0.1, 0.2, 0.1, 0.2, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
                         0.9, 0.9, 0.8, 0.6, 0.4, 0.5, 0.4, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1},
                        {1.0, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 0.7, 1.0, 1.0, 1.0, 1.0, 1.0,
                         1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.6, 0.6, 0.6, 0.6}},
    .ring_correction = {{0.5, 0.2, 0.1, 0.1, 0.3, 0.3, 0.1, 0.3, 0.7, 0.8, 0.5, 0.4, 0.2, 0.1,
                         0.1, 0.1, 0.3, 0.5, 0.4, 0.4, 0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1},
                        {0.5, 0.2, 0.1, 0.1, 0.3, 0.3, 0.1, 0.3, 0.7, 0.8, 0.5, 0.4, 0.2, 0.1,
                         0.1, 0.1, 0.3, 0.5, 0.4, 0.4, 0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1},
                        {0.2, 0.3, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 1.0, 0.1, 0.1, 0.1, 0.1, 0.1,
                         0.1, 0.1, 0.1, 0.2, 0.2, 0.6, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0}}};
// clang-format on

/* RCCL releases by what changed in their tuning for the models carried here (rccl's
 * makefiles/version.mk and src/graph/tuning.cc at each rocm-* tag):
 *   2.12.12-2.13.4 (ROCm 5.2.3-5.4): tuning_model_3's older table (above);
 *   2.15.5-2.17.1 (ROCm 5.5-5.7): today's tables, no network post overhead on ring steps;
 *   2.18.3-2.21.5 (ROCm 6.0-6.3): that overhead too (merge d97a32fa, "2.18.1-1").
 * Before 2.12.12 (ROCm 5.1-5.2.1, RCCL 2.11.4) the tuning used hard-coded factors or
 * tuning_model_0's older table, 24 GB/s xGMI links, 2 (nodes - 1) network steps and no tree
 * on one node: not carried. */
enum { RCCL_FIRST = 21212, RCCL_NEW_TABLES = 21500, RCCL_NET_OVERHEAD = 21801 };

bool ts_ccl_version_modelled(const ts_ccl_config *cfg, long version, char *why, size_t n) {
  char v[16], newest[16];
  ts_stack_version_text(version, v, sizeof v);
  bool nccl = cfg->library == TS_CCL_NCCL;
  ts_stack_version_text(nccl ? TS_NCCL_VERSION : TS_RCCL_VERSION, newest, sizeof newest);
  if (cfg->library == TS_CCL_IDEAL)
    snprintf(why, n, "the platform's collectives are the ideal library, which has no versions");
  else if (nccl && version != TS_NCCL_VERSION)
    snprintf(why, n, "trainsim carries the tuning constants of NCCL %s only, not %s", newest, v);
  else if (!nccl && version > TS_RCCL_VERSION)
    snprintf(why, n, "trainsim carries RCCL's tuning constants up to %s, not %s", newest, v);
  else if (!nccl && version < RCCL_FIRST)
    snprintf(why, n,
             "RCCL %s (before 2.12.12, ROCm 5.2.3) tuned with hard-coded factors and 24 GB/s "
             "xGMI links, which trainsim does not carry: RCCL 2.12.12 to %s are modelled",
             v, newest);
  else if (!nccl && version < RCCL_NEW_TABLES && cfg->tuning_model != 3)
    snprintf(why, n,
             "RCCL %s's tuning_model_%d (before 2.15.5) is not carried, only tuning_model_3's "
             "(MI250X nodes with 4 NICs)",
             v, cfg->tuning_model);
  else
    return true;
  return false;
}

static int log2i(double x) {
  if (x < 1)
    return -1;
  int n = 0;
  for (unsigned long long v = (unsigned long long)x; v > 1; v >>= 1)
    n++;
  return n;
}

static int steps_of(ts_coll_op op, int n) {
  return op == TS_COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
}

/* NCCL's network post overhead per ring step (getNetOverhead): 1 us on Intel hosts, 2 us on
 * AMD ones, x3 for Simple. */
static double net_overhead_us(const ts_ccl_config *cfg, const ts_ccl_comm *c, ts_ccl_proto p) {
  if (c->n_nodes <= 1 || (cfg->library == TS_CCL_RCCL && cfg->version < RCCL_NET_OVERHEAD))
    return 0;
  return (cfg->cpu == TS_CPU_AMD ? 2.0 : 1.0) * (p == TS_PROTO_SIMPLE ? 3 : 1);
}

static double min2(double a, double b) {
  return a < b ? a : b;
}

static bool nccl_cost(const ts_ccl_config *cfg, const ts_ccl_comm *c, ts_coll_op op, double bytes,
                      ts_ccl_algo a, ts_ccl_proto p, ts_ccl_call *out) {
  int n = c->n_ranks, nodes = c->n_nodes, steps = steps_of(op, n);
  int arch = (int)cfg->arch, i2 = nodes <= 2 ? nodes - 1 : 2;
  bool gather = op == TS_COLL_ALLGATHER || op == TS_COLL_REDUCE_SCATTER;
  if ((a == TS_CCL_TREE && op != TS_COLL_ALLREDUCE) || (a == TS_CCL_PAT && !gather) ||
      (a == TS_CCL_PAT && (p != TS_PROTO_SIMPLE || nodes != n)))
    return false;
  double ch = cfg->channels, ppn = (double)n / nodes;
  double ll_max = nccl_ll_max_bw[nodes == 1 ? arch : cfg->cpu == TS_CPU_AMD ? 1 : 0][i2];
  double bus = c->bus_Bps / 1e9;
  if (a == TS_CCL_RING && p == TS_PROTO_LL)
    bus = min2(ll_max, bus * .5);
  if (a == TS_CCL_RING && p == TS_PROTO_LL128)
    bus = min2(bus * 0.92, ch * nccl_per_ch_ring_ll128[arch][i2]);
  if (a == TS_CCL_TREE)
    bus = min2(bus * .92, ch * nccl_per_ch_tree[arch][i2]);
  if (a == TS_CCL_TREE && p == TS_PROTO_LL)
    bus = min2(bus * 1.0 / 3.8, ll_max);
  if (a == TS_CCL_TREE && p == TS_PROTO_LL128)
    bus =
        min2(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), ch * nccl_per_ch_tree_ll128[arch][i2]);
  if (a == TS_CCL_PAT)
    bus *= .75;
  double alg = a == TS_CCL_RING ? bus * n / steps : a == TS_CCL_TREE ? bus * .5 : bus;

  int row = a == TS_CCL_TREE ? 0 : a == TS_CCL_RING ? 1 : 2;
  double lat = nccl_base_lat[row][p], intra = nccl_hw_lat[HW_NVLINK][row][p];
  double inter = ppn == 1 ? nccl_hw_lat[HW_NET][0][p] : nccl_hw_lat[HW_NET][row][p];
  if (a == TS_CCL_RING) {
    intra = fmax(intra, net_overhead_us(cfg, c, p));
    int inter_steps = nodes == 1 ? 0 : op == TS_COLL_ALLREDUCE ? 2 * (nodes - 1) : nodes - 1;
    lat += (steps - inter_steps) * intra + inter_steps * inter;
  } else if (a == TS_CCL_TREE) {
    lat += 2 * ((n / nodes - 1) * intra + log2i(nodes) * inter);
  } else {
    lat += log2i(nodes) * (inter / 3.5) + n * 2.8;
  }

  /* ncclTopoGetAlgoTime */
  int log_size = log2i(bytes / 64);
  if (a == TS_CCL_TREE && log_size >= 0 && log_size < 23)
    alg *= nccl_tree_correction[p][log_size];
  if (a == TS_CCL_RING && p == TS_PROTO_SIMPLE && nodes > 1 && op == TS_COLL_ALLREDUCE &&
      bytes / (ch * n) >= 64)
    lat *= arch < TS_ARCH_AMPERE ? 1.9 : 1.4; /* "plateau effect of ring" */
  out->lat_s = lat * 1e-6;
  out->alg_Bps = alg * 1e9;
  return true;
}

static bool rccl_cost(const ts_ccl_config *cfg, const ts_ccl_comm *c, ts_coll_op op, double bytes,
                      ts_ccl_algo a, ts_ccl_proto p, ts_ccl_call *out) {
  const rccl_model *m = cfg->version < RCCL_NEW_TABLES && cfg->tuning_model == 3
                            ? &rccl_model_3_rocm54
                            : &rccl_models[cfg->tuning_model];
  int n = c->n_ranks, nodes = c->n_nodes, steps = steps_of(op, n);
  if (a == TS_CCL_PAT || (a == TS_CCL_TREE && op != TS_COLL_ALLREDUCE))
    return false;
  /* LL128 is on by default only on gfx90a nodes whose rome model sets ll128Enabled, all of
   * which use tuning model 4 (rome_models.cc). */
  if (p == TS_PROTO_LL128 && cfg->tuning_model != 4)
    return false;
  int row = a == TS_CCL_TREE ? 0 : 1;
  double ratio = m->bw_ratio[nodes <= 2 ? 0 : 1][row][p];
  if (ratio <= 0)
    return false;
  double bus = c->bus_Bps / 1e9 * ratio;
  double alg = a == TS_CCL_RING ? bus * n / steps : bus * .5;

  double lat = rccl_base_lat[p], intra = m->hw_lat[HW_NVLINK][row][p];
  double inter = m->hw_lat[HW_NET][row][p];
  if (a == TS_CCL_RING) {
    intra = fmax(intra, net_overhead_us(cfg, c, p));
    int inter_steps = op == TS_COLL_ALLREDUCE ? (nodes > 1 ? 2 * nodes : 0) : nodes - 1;
    lat += (steps - inter_steps) * intra + inter_steps * inter;
  } else {
    lat += 2 * ((n / nodes - 1) * intra + log2i(nodes) * inter);
  }

  int log_size = log2i(bytes / 64);
  int k = log_size < 0 ? 0 : log_size < 27 ? log_size : 26;
  if (a == TS_CCL_TREE)
    alg *= m->tree_correction[p][k];
  else if (nodes > 1)
    alg *= m->ring_correction[p][k];
  if (alg <= 0)
    return false;
  out->lat_s = lat * 1e-6;
  out->alg_Bps = alg * 1e9;
  return true;
}

bool ts_ccl_cost(const ts_ccl_config *cfg, const ts_ccl_comm *comm, ts_coll_op op, double bytes,
                 ts_ccl_algo algo, ts_ccl_proto proto, ts_ccl_call *out) {
  ts_ccl_call call = {.algo = algo, .proto = proto};
  bool ok = cfg->library == TS_CCL_NCCL ? nccl_cost(cfg, comm, op, bytes, algo, proto, &call)
                                        : rccl_cost(cfg, comm, op, bytes, algo, proto, &call);
  if (!ok || comm->n_ranks < 2)
    return false;
  int n = comm->n_ranks, steps = steps_of(op, n);
  call.bus_Bps = algo == TS_CCL_RING   ? call.alg_Bps * steps / n
                 : algo == TS_CCL_TREE ? call.alg_Bps * 2
                                       : call.alg_Bps;
  call.wire = proto == TS_PROTO_LL ? 2.0 : proto == TS_PROTO_LL128 ? 128.0 / 120.0 : 1.0;
  call.time_s = call.lat_s + bytes / call.alg_Bps;
  *out = call;
  return true;
}

double ts_ccl_base_latency_s(const ts_ccl_config *cfg, ts_ccl_algo algo, ts_ccl_proto proto) {
  int row = algo == TS_CCL_TREE ? 0 : algo == TS_CCL_RING ? 1 : 2;
  return (cfg->library == TS_CCL_NCCL ? nccl_base_lat[row][proto] : rccl_base_lat[proto]) * 1e-6;
}

ts_ccl_call ts_ccl_choose(const ts_ccl_config *cfg, const ts_ccl_comm *comm, ts_coll_op op,
                          double bytes, unsigned allowed) {
  ts_ccl_call best = {.algo = TS_CCL_RING, .proto = TS_PROTO_SIMPLE, .time_s = INFINITY};
  for (int a = 0; a < TS_CCL_ALGO_COUNT; a++)
    for (int p = 0; p < TS_PROTO_COUNT; p++) {
      ts_ccl_call c;
      if ((allowed >> a & 1) &&
          ts_ccl_cost(cfg, comm, op, bytes, (ts_ccl_algo)a, (ts_ccl_proto)p, &c) &&
          c.time_s < best.time_s)
        best = c;
    }
  if (isinf(best.time_s)) /* none of those offered: the ring with Simple always is */
    ts_ccl_cost(cfg, comm, op, bytes, TS_CCL_RING, TS_PROTO_SIMPLE, &best);
  return best;
}
