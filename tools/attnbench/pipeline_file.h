/* bench --pipeline-cache FILE: the context's pipeline cache kept in a file
 * between runs (vkattn_context_desc.pipeline_cache_data in,
 * vkattn_context_get_pipeline_cache_data out). */
#ifndef ATTNBENCH_PIPELINE_FILE_H
#define ATTNBENCH_PIPELINE_FILE_H

#include <stddef.h>

#include <vkattn/vkattn.h>

/* The largest FILE read: 64 MiB. The cap keeps a wrong path (/dev/urandom, a
 * disk image) from reading until memory runs out; a cache holds the compiled
 * pipelines of a few dozen compute shaders, far below it (lavapipe writes a
 * 32-byte header only). */
#define AB_PIPELINE_FILE_MAX (64u << 20)

/* Reads FILE whole into *data (malloc'd, the caller frees) and *size. A file
 * that does not exist is no error: *data NULL, *size 0 (a first run).
 * Returns an exit status: ATTNBENCH_EXIT_CHECK when the file exists but
 * cannot be read or is over AB_PIPELINE_FILE_MAX (message on stderr naming
 * it and why). */
int ab_pipeline_file_load(const char *path, void **data, size_t *size);

/* Writes ctx's pipeline cache data to FILE (through a temporary file and a
 * rename, so a reader never sees half a cache); *size = bytes written.
 * Returns an exit status (message on stderr on failure). */
int ab_pipeline_file_save(vkattn_context *ctx, const char *path, size_t *size);

#endif
