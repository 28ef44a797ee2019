/* import_cmd: `trainsim import hf CONFIG.json`: a workload file, on stdout, from a Hugging Face
 * model config (the Llama, Mistral, Mixtral, Qwen2, Qwen3, Qwen2-MoE, Qwen3-MoE, DeepSeek-V2
 * and DeepSeek-V3 model types), each value with the config key it came from; what a model
 * config does not hold (sequence length, batch) from flags, marked as such. */
#ifndef TS_IMPORT_CMD_H
#define TS_IMPORT_CMD_H

#include "args.h"

/* `import` in the command table (args.h). */
extern const ts_command ts_import_command;

/* Runs `trainsim import ...` (argv after "import"); returns the exit status. */
int ts_import_main(int argc, char **argv);

#endif
