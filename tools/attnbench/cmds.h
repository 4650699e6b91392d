/* attnbench's subcommands; each returns the process exit status. */
#ifndef ATTNBENCH_CMDS_H
#define ATTNBENCH_CMDS_H

#include "args.h"

int ab_cmd_devices(const ab_args *a); /* devices.c */
int ab_cmd_peak(const ab_args *a);    /* main.c */
int ab_cmd_demo(void);                /* main.c */
int ab_cmd_check(const ab_args *a);   /* check.c */

#endif
