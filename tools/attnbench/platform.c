/* platform.h on POSIX and on Windows. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L /* mkdir, access */
#endif

#include "platform.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <direct.h>
#include <io.h>

int ab_mkdir(const char *path) { return _mkdir(path); }

int ab_dir_writable(const char *dir) { return _access(dir, 2 /* write */); }

int ab_path_kind(const char *path, bool *is_dir)
{
    struct _stat64 st;
    if (_stat64(path, &st) != 0)
        return -1;
    *is_dir = (st.st_mode & _S_IFDIR) != 0;
    return 0;
}

int ab_replace_file(const char *from, const char *to)
{
    if (MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
        return 0;
    errno = EACCES;
    return -1;
}

bool ab_user_cache_dir(char *dir, size_t size)
{
    const char *base = getenv("LOCALAPPDATA");
    if (!base || !*base)
        return false;
    int n = snprintf(dir, size, "%s/vkattn", base);
    return n > 0 && (size_t)n < size;
}

#else
#include <unistd.h>

int ab_mkdir(const char *path) { return mkdir(path, 0777); }

int ab_dir_writable(const char *dir) { return access(dir, W_OK | X_OK); }

int ab_path_kind(const char *path, bool *is_dir)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    *is_dir = S_ISDIR(st.st_mode);
    return 0;
}

int ab_replace_file(const char *from, const char *to) { return rename(from, to); }

bool ab_user_cache_dir(char *dir, size_t size)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (xdg && *xdg == '/')
        n = snprintf(dir, size, "%s/vkattn", xdg);
    else if (home && *home)
        n = snprintf(dir, size, "%s/.cache/vkattn", home);
    else
        return false;
    return n > 0 && (size_t)n < size;
}
#endif
