/* attnbench's file-system needs, on POSIX and on Windows: the one place in
 * the tool that forks on the platform (the library's is src/core/threads.h). */
#ifndef ATTNBENCH_PLATFORM_H
#define ATTNBENCH_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>

/* Creates one folder; 0, or -1 with errno set (EEXIST if it is there). */
int ab_mkdir(const char *path);
/* 0 and *is_dir if path exists; -1 with errno set if it does not. */
int ab_path_kind(const char *path, bool *is_dir);
/* 0 if files can be created in the folder; -1 with errno set if not. */
int ab_dir_writable(const char *dir);
/* Renames from over to, replacing an existing file (atomically where the
 * system can: POSIX rename; MoveFileEx on Windows); 0 or -1 with errno. */
int ab_replace_file(const char *from, const char *to);
/* The user's cache folder for vkattn: $XDG_CACHE_HOME/vkattn, else
 * ~/.cache/vkattn; on Windows %LOCALAPPDATA%/vkattn. false if none is known
 * or it does not fit. */
bool ab_user_cache_dir(char *dir, size_t size);

#endif /* ATTNBENCH_PLATFORM_H */
