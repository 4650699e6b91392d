/* See regular_file.h. */
#include "regular_file.h"

#include <errno.h>
#include <sys/stat.h>
#ifndef S_ISREG /* MSVC's <sys/stat.h> has the mode bits, not the POSIX tests */
#define S_ISREG(m) (((m) & S_IFMT) == S_IFREG)
#endif
#ifndef S_ISDIR
#define S_ISDIR(m) (((m) & S_IFMT) == S_IFDIR)
#endif

ab_file_kind ab_regular_file(const char *path, uint64_t *size, const char **why)
{
    struct stat st;
    *size = 0;
    *why = "";
    errno = 0;
    if (stat(path, &st) != 0)
        return AB_FILE_MISSING;
    if (!S_ISREG(st.st_mode)) {
        *why = S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file";
        return AB_FILE_OTHER;
    }
    *size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
    return AB_FILE_REGULAR;
}
