/* The timeline picture of examples/frame_budget.c, drawn with cairo where
 * the build found it (FRAME_BUDGET_TIMELINE; tests/CMakeLists.txt). */
#ifndef FRAME_BUDGET_TIMELINE_H
#define FRAME_BUDGET_TIMELINE_H

#include <stdbool.h>

/* One frame's GPU times: the app's render pass, then the attention slice;
 * pass 0 is the slicer's learning pass. */
typedef struct frame_times {
    double render_us, slice_us;
    int pass;
} frame_times;

/* Writes a PNG to path: title and subtitle on top; GPU time along x in ms,
 * each frame's render and slice as bars as tall as they took; the budget
 * as a labelled line; slices over it in red; the y axis stops at 3x the
 * budget and a taller slice is cut there and marked with its time; the
 * passes marked; a legend. compute_row NULL: one row, each frame's render
 * then its slice. Else a row per queue, the graphics queue's renders above,
 * the slices below in a row labelled compute_row, both from the frame's
 * start (the two queues run side by side), each frame as wide as its longer
 * bar. False when it cannot be written. */
bool frame_timeline_write(const char *path, const char *title, const char *subtitle,
                          const frame_times *f, unsigned n, double budget_us,
                          const char *compute_row);

#endif
