/* attnbench sweep OP --tq N,N,..: bench over a series of lengths
 * (docs/ATTNBENCH.md, "sweep"). */
#ifndef ATTNBENCH_SWEEP_H
#define ATTNBENCH_SWEEP_H

/* The whole subcommand, from main's argv (argv[1] is "sweep"). Returns the
 * exit status. */
int ab_cmd_sweep(int argc, char **argv);

#endif
