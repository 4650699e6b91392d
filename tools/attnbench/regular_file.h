/* Files named on attnbench's command line (check FILE.json, --pipeline-cache
 * FILE) must be regular files, found out by stat before any open: fopen of a
 * FIFO blocks until a writer comes (the run hangs), and a device such as
 * /dev/zero never ends. One check for every such file. */
#ifndef ATTNBENCH_REGULAR_FILE_H
#define ATTNBENCH_REGULAR_FILE_H

#include <stdint.h>

typedef enum ab_file_kind {
    AB_FILE_REGULAR = 0, /* *size set */
    AB_FILE_MISSING,     /* stat failed; errno says why (ENOENT: not there) */
    AB_FILE_OTHER,       /* *why: "is a directory" or "not a regular file" */
} ab_file_kind;

ab_file_kind ab_regular_file(const char *path, uint64_t *size, const char **why);

#endif
