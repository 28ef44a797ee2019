/* main: the trainsim executable (cli.h). */
#include "cli.h"

int main(int argc, char **argv) {
  return ts_cli_main(argc, argv);
}
