/* The perceptual colour scale of attnbench's pictures: viridis (dark blue
 * through green to yellow, lightness rising steadily, readable in grey and
 * by most colour-blind readers), interpolated from nine anchors. */
#ifndef ATTNBENCH_COLORMAP_H
#define ATTNBENCH_COLORMAP_H

#include <stdint.h>

typedef struct ab_rgb {
    uint8_t r, g, b;
} ab_rgb;

/* t in [0, 1] (clamped; NaN gives the low end). */
ab_rgb ab_viridis(double t);

#endif
