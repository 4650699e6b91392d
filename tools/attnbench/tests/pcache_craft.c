/* Test helper: writes a copy of a pipeline cache file (IN, as attnbench
 * --pipeline-cache saved it) whose header's headerSize (the first uint32,
 * little-endian) claims one byte more than the file holds; the rest, the
 * device's own ids and UUID, stays valid, so only that check can refuse it.
 *   attnbench_pcache_craft IN OUT */
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s IN OUT\n", argv[0]);
        return 2;
    }
    static unsigned char buf[1 << 20];
    FILE *in = fopen(argv[1], "rb");
    size_t n = in ? fread(buf, 1, sizeof buf, in) : 0;
    if (in)
        fclose(in);
    if (n < 32 || n >= sizeof buf) {
        fprintf(stderr, "%s: %zu bytes; expected a pipeline cache (32 bytes to 1 MiB)\n", argv[1], n);
        return 1;
    }
    uint32_t claim = (uint32_t)n + 1;
    for (int i = 0; i < 4; i++)
        buf[i] = (unsigned char)(claim >> (8 * i));
    FILE *out = fopen(argv[2], "wb");
    if (!out || fwrite(buf, 1, n, out) != n || fclose(out) != 0) {
        fprintf(stderr, "%s: cannot write\n", argv[2]);
        return 1;
    }
    return 0;
}
