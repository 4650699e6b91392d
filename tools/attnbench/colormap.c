/* Viridis from nine evenly spaced anchors, linear in sRGB between them: at
 * this spacing the steps stay below what a reader can tell apart. */
#include "colormap.h"

static const ab_rgb ANCHORS[9] = {
    {0x44, 0x01, 0x54}, {0x47, 0x2d, 0x7b}, {0x3b, 0x52, 0x8b}, {0x2c, 0x72, 0x8e},
    {0x21, 0x91, 0x8c},
    {0x28, 0xae, 0x80}, {0x5e, 0xc9, 0x62}, {0xad, 0xdc, 0x30}, {0xfd, 0xe7, 0x25},
};

static uint8_t mix(uint8_t a, uint8_t b, double f) { return (uint8_t)(a + (b - a) * f + 0.5); }

ab_rgb ab_viridis(double t)
{
    if (!(t > 0.0))
        t = 0.0;
    if (t > 1.0)
        t = 1.0;
    double x = t * 8.0;
    int i = (int)x;
    if (i >= 8)
        return ANCHORS[8];
    double f = x - i;
    ab_rgb a = ANCHORS[i], b = ANCHORS[i + 1];
    return (ab_rgb){mix(a.r, b.r, f), mix(a.g, b.g, f), mix(a.b, b.b, f)};
}
