/* cli: the trainsim command line, dispatched to its commands. The only place that picks an
 * exit status: 0 success, 2 input error (bad file, flag or layout, or a model that does not
 * fit), 1 other failures (cannot write results). A function apart from main so that the
 * argv fuzzer (tests/fuzz/fuzz_argv.c) runs the same dispatch. */
#ifndef TS_CLI_H
#define TS_CLI_H

/* argv[0] is the program; argv[1] the command. Returns the exit status. */
int ts_cli_main(int argc, char **argv);

#endif
