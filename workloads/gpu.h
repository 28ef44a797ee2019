/* gpu: what the cost model needs to know about one accelerator (one GCD on Frontier).
 *
 * Filled from a platform file by sim/network/platform.c; workloads/ only reads it. All values
 * in SI base units.
 */
#ifndef TS_GPU_H
#define TS_GPU_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels.h"
#include "power.h"

typedef enum ts_precision {
  TS_PREC_BF16,
  TS_PREC_FP16,
  TS_PREC_FP32,
  TS_PREC_FP64,
  TS_PREC_COUNT
} ts_precision;

/* Lower-case names as used in files ("bf16"), indexed by ts_precision; NULL-terminated. */
extern const char *const ts_precision_names[];

/* What the GPU memory of the collective library depends on (workloads/ccl_memory.h), from the
 * platform's `collectives:` and node (sim/network/platform.c fills it). */
typedef struct ts_ccl_site {
  bool is_nccl; /* false: another library (RCCL) or none, whose memory is not modelled */
  long version; /* the platform's release (stack.h encoding); a workload may name another */
  int channels; /* a communicator's channels inside one node (platform collectives.channels) */
  int gpus_per_node, nics_per_node;
  double nic_Bps; /* what NCCL sees of a GPU's NIC: the slower of the NIC and its PCIe link */
  bool is_p2p_read; /* NCCL's P2P read mode (Ampere over NVLink): the Simple buffer sender-side */
} ts_ccl_site;

typedef struct ts_gpu {
  char model[96];
  double peak_flops_per_s[TS_PREC_COUNT]; /* dense matrix peak; 0 = not supported */
  double peak_fp8_flops_per_s; /* dense FP8 matrix peak (gpu.peak.fp8); 0 = no FP8 */
  double hbm_bytes;
  /* HBM that a training process cannot give its framework's allocator (platform
   * `runtime_memory`): what the driver keeps (nvidia-smi's total less cudaMemGetInfo's) and the
   * process's own context and library handles; 0 when the platform gives none. */
  double runtime_bytes;
  double hbm_Bps;
  double gemm_ceiling; /* best measured GEMM throughput / peak, 0..1 */
  long gemm_tile_m; /* output tile of one workgroup, for wave quantisation */
  long gemm_tile_n;
  long n_compute_units; /* workgroups that run at once (one per CU) */
  double kernel_launch_s; /* fixed cost per kernel */
  double power_w; /* board power while training (0 = not given): energy figures */
  /* The clock the board's power limit sets for a mix of kernels (platform `power_limit`;
   * limit_w 0: none, the kernel tables' times as they are). */
  ts_power_model power_limit;
  /* Relative standard deviation of sustained speed across the machine's GPUs (0: alike); a
   * job runs at its slowest GPU's pace (variation.h). */
  double speed_spread;
  /* Measured kernel times (NULL: none; the roofline prices every kernel), shared and immutable
   * (kernels.h), and the host's costs outside kernels of the framework measured with them. */
  const ts_kernel_table *kernels;
  ts_software software;
  /* The host's time per collective call (the framework's and the library's enqueue), and what
   * FSDP adds per wrapped unit over a forward and a backward pass (platform `collectives:`);
   * counted where the host model applies (a kernel table's software section). */
  double collective_launch_s, fsdp_unit_s;
  /* What attention dropout adds inside fused attention kernels, per score computed (the mask
   * drawn per element, Philox), [backend][0 forward, 1 backward]: TS_DROPOUT_SDPA for PyTorch's
   * own SDPA choice and cuDNN's fused attention, TS_DROPOUT_FLASH for the flash kernels
   * (platform `attention_dropout`); has_attention_dropout false: the platform gives none, and
   * such dropout goes unpriced (the run report warns). */
  double attention_dropout_s[2][2];
  bool has_attention_dropout;
  ts_ccl_site ccl;
} ts_gpu;

enum { TS_DROPOUT_SDPA, TS_DROPOUT_FLASH };

/* The kernel table that prices work in precision prec: the GPU's table (measured in bf16) for
 * bf16, and for fp16 where the GPU runs fp16 matrices at bf16's peak (the A100's, H100's, H200's
 * and MI250X's datasheets: the same tensor-core rate) and, element for element, moves the same
 * bytes; NULL otherwise (the roofline prices every kernel). */
static inline const ts_kernel_table *ts_gpu_kernels_for(const ts_gpu *g, ts_precision prec) {
  bool same = prec == TS_PREC_BF16 ||
              (prec == TS_PREC_FP16 &&
               g->peak_flops_per_s[TS_PREC_FP16] == g->peak_flops_per_s[TS_PREC_BF16]);
  return same ? g->kernels : NULL;
}

/* Bytes the framework can allocate before any collective library holds its buffers (a run's:
 * ccl_memory.h, ts_usable_bytes). */
static inline double ts_gpu_usable_bytes(const ts_gpu *g) {
  return g->hbm_bytes - g->runtime_bytes;
}

#endif
